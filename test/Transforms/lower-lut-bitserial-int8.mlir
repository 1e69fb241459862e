// RUN: lowbit-opt %s --lowbit-select-config=target=x86-avx512vnni --lowbit-lower-lut-bitserial --cse | FileCheck %s

// lut-bitserial with int8 tables (table_bits = 8, bitserial_abi.h "INT8
// TABLES"): per act_group of each activation row the prologue finds the
// largest sum of |x_i| over its groups of 4, a = max(1, (d max + 126) /
// 127) with d = 127 / (4 * 2^(P-1)) (15 for 2 planes), writes the 4
// multiplier bytes a << p of each plane after the row's tables and the
// entries round(T[e] * d / a) (float, half away from zero)
// of 128-byte blocks (64 per nibble), entry 15 - e as the negation of entry
// e. The lookups are lowbit.uk.lut_dot8 with the act_group's multipliers
// (lowbit.uk.broadcast4 of the 4 bytes of the plane), zero sums without a
// bias and no lut_combine.

// w2g64 GEMV, K = 192: 6 blocks, act_group = 64 so 3 act_groups of 2
// blocks; per row 6 x 128 table bytes + 3 x 16 multiplier bytes = 816.
// The sums are 15 sum_p 2^p A_p: 2 D is that + 15 (2^2 - 1) S (45 S), not
// halved, so block_combine gets the zero term's sum as 30 S and the
// activation scale as 1 / (30 s_b).
// CHECK-LABEL: func.func @w2g64_int8(
// CHECK-SAME: %[[CODES:.*]]: memref<?xui8> {lowbit.readonly}, %{{.*}}: memref<?xui16> {lowbit.readonly}, %{{.*}}: memref<?xui16> {lowbit.readonly}, %[[XQ:.*]]: memref<?xi8> {lowbit.readonly}, %[[XS:.*]]: memref<?xf32> {lowbit.readonly}, %[[SUMS:.*]]: memref<?xi32> {lowbit.readonly}
// CHECK: %[[T:.*]] = lowbit.uk.stack_buffer {bytes = 816 : i64} : memref<?xi8>
// CHECK: scf.for %[[COL:.*]] = %c0 to %{{.*}} step %c1 {
// CHECK: scf.for %[[AG:.*]] = %c0 to %c3 step %c1 {
// The largest sum over the blocks of the act_group and the 8 groups of 4
// of each block (loops, not unrolled).
// CHECK: %[[MAX:.*]] = scf.for %{{.*}} = %c0 to %c2 step %c1 iter_args(%{{.*}} = %c0_i32) -> (i32) {
// CHECK: scf.for %[[GMAX:.*]] = %c0 to %c8{{.*}} step %c1 iter_args(
// CHECK: %[[G4:.*]] = arith.muli %[[GMAX]], %c4{{.*}} : index
// CHECK-COUNT-4: memref.load %[[XQ]]
// CHECK-NOT: memref.load
// CHECK: scf.yield
// CHECK: scf.yield
// CHECK: %[[M3:.*]] = arith.muli %[[MAX]], %c15_i32 : i32
// CHECK: %[[M3R:.*]] = arith.addi %[[M3]], %c126_i32 : i32
// CHECK: %[[CEIL:.*]] = arith.divsi %[[M3R]], %c127_i32 : i32
// CHECK: %[[SMALL:.*]] = arith.cmpi slt, %[[CEIL]], %c1_i32 : i32
// CHECK: %[[A:.*]] = arith.select %[[SMALL]], %c1_i32, %[[CEIL]] : i32
// CHECK: %[[AF:.*]] = arith.sitofp %[[A]] : i32 to f32
// CHECK: %[[R:.*]] = arith.divf %cst{{.*}}, %[[AF]] : f32
// The multipliers of act_group g at 768 + 16 g: plane p's a << p, 4 times.
// CHECK: %[[G16:.*]] = arith.muli %[[AG]], %c16{{.*}} : index
// CHECK: %[[MAT:.*]] = arith.addi %[[G16]], %c768 : index
// CHECK: %[[A1:.*]] = arith.shli %[[A]], %c1_i32 : i32
// CHECK: %[[B1:.*]] = arith.trunci %[[A1]] : i32 to i8
// CHECK: memref.store %[[B1]], %[[T]][%{{.*}}] : memref<?xi8>
// CHECK: arith.shli %[[A]], %c3_i32 : i32
// The entries of group g of a block at 16 g: e = 0 is -x0 - x1 - x2 - x3,
// scaled by 15 / a and rounded half away from zero, at byte 16 g; its
// negation at 16 g + 15.
// CHECK: scf.for %{{.*}} = %c0 to %c2 step %c1 {
// CHECK: scf.for %[[GT:.*]] = %c0 to %c8{{.*}} step %c1 {
// CHECK-COUNT-4: memref.load %[[XQ]]
// CHECK: %[[G16T:.*]] = arith.muli %[[GT]], %c16{{.*}} : index
// CHECK: %[[NX3:.*]] = arith.subi %c0_i32, %{{.*}} : i32
// CHECK-NEXT: %[[E0A:.*]] = arith.subi %[[NX3]], %{{.*}} : i32
// CHECK-NEXT: %[[E0B:.*]] = arith.subi %[[E0A]], %{{.*}} : i32
// CHECK-NEXT: %[[E0:.*]] = arith.subi %[[E0B]], %{{.*}} : i32
// CHECK-NEXT: %[[E0F:.*]] = arith.sitofp %[[E0]] : i32 to f32
// CHECK: %[[E0S:.*]] = arith.mulf %[[E0F]], %[[R]] : f32
// CHECK: %[[NEG:.*]] = arith.cmpi slt, %[[E0]], %c0_i32 : i32
// CHECK: %[[HALF:.*]] = arith.select %[[NEG]], %cst{{.*}}, %cst{{.*}} : f32
// CHECK: %[[E0H:.*]] = arith.addf %[[E0S]], %[[HALF]] : f32
// CHECK: %[[Q:.*]] = arith.fptosi %[[E0H]] : f32 to i32
// CHECK: %[[Q8:.*]] = arith.trunci %[[Q]] : i32 to i8
// CHECK: memref.store %[[Q8]], %[[T]][%[[AT0:.*]]] : memref<?xi8>
// CHECK: %[[MQ:.*]] = arith.subi %c0_i32, %[[Q]] : i32
// CHECK: %[[MQ8:.*]] = arith.trunci %[[MQ]] : i32 to i8
// CHECK: %[[AT15:.*]] = arith.addi %[[AT0]], %c15 : index
// CHECK: memref.store %[[MQ8]], %[[T]][%[[AT15]]] : memref<?xi8>
// The 7 other entries and their negations: 14 stores, then the loops end.
// CHECK-COUNT-14: memref.store
// CHECK-NOT: memref.store
// CHECK: }
// Per scale group of 2 blocks its zero points, then its blocks, one per
// iteration of an inner loop (kfactor = 8). The lookups of a block: the
// multipliers of its act_group (block / 2), both nibbles of both planes
// into one zero-started sum.
// CHECK: %[[Y:.*]] = scf.for %[[GROUP:.*]] = %c0 to %c3 step %c1 iter_args(%[[YA:.*]] = %{{.*}}) -> (vector<16xf32>) {
// CHECK: %[[FIRST:.*]] = arith.muli %[[GROUP]], %c2 : index
// CHECK: %[[ZP:.*]] = lowbit.uk.load_half %{{.*}}[%[[SOFF:.*]]] : memref<?xui16> -> vector<16xf32>
// CHECK: %[[GSUMS:.*]] = scf.for %[[IN:.*]] = %c0 to %c2 step %c1 iter_args(%[[G:.*]] = %{{.*}}) -> (vector<16xf32>) {
// CHECK: %[[BLOCK:.*]] = arith.addi %[[IN]], %[[FIRST]] : index
// CHECK: %[[TB:.*]] = arith.muli %[[BLOCK]], %c128 : index
// CHECK: %[[GRP:.*]] = arith.divsi %[[BLOCK]], %c2 : index
// CHECK: %[[GM:.*]] = arith.muli %[[GRP]], %c16{{.*}} : index
// CHECK: %[[MUL0:.*]] = arith.addi %[[GM]], %c768 : index
// CHECK: %[[W0:.*]] = lowbit.uk.broadcast4 %[[T]][%[[MUL0]]] : memref<?xi8> -> vector<64xi8>
// CHECK: %[[MUL1:.*]] = arith.addi %[[MUL0]], %c4 : index
// CHECK: %[[W1:.*]] = lowbit.uk.broadcast4 %[[T]][%[[MUL1]]] : memref<?xi8> -> vector<64xi8>
// CHECK: %[[P0:.*]] = lowbit.uk.load %[[CODES]]
// CHECK: %[[S0:.*]] = lowbit.uk.lut_dot8 %[[ZERO:.*]], %[[P0]], %[[T]][%[[TB]]], %[[W0]] {high = false} : vector<64xi8>, memref<?xi8>, vector<16xi32>
// CHECK: %[[TB64:.*]] = arith.addi %[[TB]], %c64 : index
// CHECK: %[[S1:.*]] = lowbit.uk.lut_dot8 %[[S0]], %[[P0]], %[[T]][%[[TB64]]], %[[W0]] {high = true}
// CHECK: %[[P1:.*]] = lowbit.uk.load %[[CODES]]
// CHECK: %[[S2:.*]] = lowbit.uk.lut_dot8 %[[S1]], %[[P1]], %[[T]][%[[TB]]], %[[W1]] {high = false}
// CHECK: %[[S3:.*]] = lowbit.uk.lut_dot8 %[[S2]], %[[P1]], %[[T]][%[[TB64]]], %[[W1]] {high = true}
// CHECK-NOT: lut_combine
// CHECK: %[[S:.*]] = memref.load %[[SUMS]]
// CHECK: %[[SX:.*]] = memref.load %[[XS]]
// CHECK: %[[SX6:.*]] = arith.mulf %[[SX]], %cst{{.*}} : f32
// CHECK: %[[INV:.*]] = arith.divf %cst{{.*}}, %[[SX6]] : f32
// CHECK: %[[S9:.*]] = arith.muli %[[S]], %c45_i32 : i32
// CHECK: %[[S9V:.*]] = vector.broadcast %[[S9]] : i32 to vector<16xi32>
// CHECK: %[[DOT:.*]] = arith.addi %[[S3]], %[[S9V]] : vector<16xi32>
// CHECK-NOT: shr_exact
// CHECK: %[[S6:.*]] = arith.muli %[[S]], %c30_i32 : i32
// CHECK: %[[G1:.*]] = lowbit.uk.block_combine %[[G]], %[[DOT]], %[[INV]] zero(%[[ZP]], %[[S6]] : vector<16xf32>) : vector<16xi32> -> vector<16xf32>
// CHECK-NEXT: scf.yield %[[G1]]
// CHECK: %[[SC:.*]] = lowbit.uk.load_half %{{.*}}[%[[SOFF]]] : memref<?xui16> -> vector<16xf32>
// CHECK-NEXT: %[[Y1:.*]] = lowbit.uk.group_combine %[[YA]], %[[GSUMS]], %[[SC]] : vector<16xf32>
// CHECK-NEXT: scf.yield %[[Y1]]
func.func @w2g64_int8(%x: tensor<?x192xf32>, %w: tensor<2x768xi8>, %s: tensor<20x3x2xf16>) -> tensor<?x20xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = unsigned, group = 64, scale = per_group>,
         layout = #lowbit.layout<bitplanes, tile_m = 16, tile_k = 32, interleave = 16>,
         config = #lowbit.lut_bitserial<bm = 16, kfactor = 8, act_group = 64, table_bits = 8>}
       : (tensor<?x192xf32>, tensor<2x768xi8>, tensor<20x3x2xf16>) -> tensor<?x20xf32>
  return %y : tensor<?x20xf32>
}

// i2s GEMV, K = 300: 10 blocks, act_group = 128 (4 blocks): 2 whole
// act_groups in a loop, then the last one of 2 blocks (its multipliers at
// 1280 + 2 x 16). Whole-row sums (two sets of a pair of nibble chains),
// added without lut_combine; D - S = (sums + 45 S - 30 S) / 30:
// ternary_scale takes 30 S and 30 x_scale.
// CHECK-LABEL: func.func @i2s_int8(
// CHECK: lowbit.uk.stack_buffer {bytes = 1328 : i64} : memref<?xi8>
// CHECK: scf.for %{{.*}} = %c0 to %c2 step %c1 {
// CHECK: scf.for %{{.*}} = %c0 to %c4 step %c1 iter_args(
// CHECK: scf.for %{{.*}} = %c0 to %c2 step %c1 iter_args(
// CHECK: lowbit.uk.lut_dot8
// CHECK: lowbit.uk.broadcast4 %{{.*}}[%c1312]
// CHECK: lowbit.uk.broadcast4 %{{.*}}[%c1316]
// CHECK-COUNT-8: lowbit.uk.lut_dot8
// CHECK-NOT: lut_combine
// CHECK: %[[S:.*]] = memref.load %{{.*}} : memref<?xi32>
// CHECK: %[[SX:.*]] = memref.load %{{.*}} : memref<?xf32>
// CHECK: arith.addi {{.*}} : vector<16xi32>
// CHECK: arith.addi {{.*}} : vector<16xi32>
// CHECK: %[[SUM:.*]] = arith.addi {{.*}} : vector<16xi32>
// CHECK: %[[S9:.*]] = arith.muli %[[S]], %c45_i32 : i32
// CHECK: %[[B:.*]] = vector.broadcast %[[S9]] : i32 to vector<16xi32>
// CHECK: %[[DOT:.*]] = arith.addi %[[SUM]], %[[B]] : vector<16xi32>
// CHECK: %[[S6:.*]] = arith.muli %[[S]], %c30_i32 : i32
// CHECK: %[[SX6:.*]] = arith.mulf %[[SX]], %cst{{.*}} : f32
// CHECK: lowbit.uk.ternary_scale %[[DOT]], %[[S6]], %{{.*}}, %[[SX6]] : vector<16xi32> -> vector<16xf32>
func.func @i2s_int8(%x: tensor<?x300xf32>, %w: tensor<3x1280xi8>, %s: tensor<1xf32>) -> tensor<?x33xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<bitplanes, tile_m = 16, tile_k = 32, interleave = 16>,
         config = #lowbit.lut_bitserial<bm = 16, kfactor = 32, act_group = 128, table_bits = 8>}
       : (tensor<?x300xf32>, tensor<3x1280xi8>, tensor<1xf32>) -> tensor<?x33xf32>
  return %y : tensor<?x33xf32>
}
