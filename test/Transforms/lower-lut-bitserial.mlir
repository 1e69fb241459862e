// RUN: lowbit-opt %s --lowbit-lower-lut-bitserial=target=x86-avx512vnni --cse | FileCheck %s --check-prefix=AVX512
// RUN: lowbit-opt %s --lowbit-lower-lut-bitserial=target=x86-avx2 --cse | FileCheck %s --check-prefix=AVX2

// i2s GEMV as two bit planes, M = 33 (a partial last tile), K = 300 (Kp =
// 320: 10 blocks of 32, 2 planes x 64 bytes each, 1280 bytes per 16-row
// tile). kfactor = 32 widens the int16 sums every 4 blocks: an scf.for over
// 2 groups of 4 carries the int32 sums of both planes (rows 0..7 and 8..15
// of every lane), the last 2 blocks follow it. One table build per block
// (width 4: the ±1 sums of 4 activations), whose 4 registers serve both
// planes; planes combined as 2 A_1 + A_0, then (fold + 3 S) / 2 = D and
// ternary_scale subtracts S.
// AVX512-LABEL: func.func @i2s_gemv(
// AVX512-SAME: %[[CODES:.*]]: memref<?xui8> {lowbit.readonly}, %{{.*}}: memref<?xui16> {lowbit.readonly}, %{{.*}}: memref<?xui16> {lowbit.readonly}, %[[XQ:.*]]: memref<?xi8> {lowbit.readonly}, %[[XS:.*]]: memref<?xf32> {lowbit.readonly}, %[[SUMS:.*]]: memref<?xi32> {lowbit.readonly}, %[[Y:.*]]: memref<?xf32>, %[[N:.*]]: i64, %[[TB:.*]]: i64, %[[TE:.*]]: i64, %[[WS:.*]]: f32) {
// AVX512: %[[T:.*]] = lowbit.uk.stack_buffer {bytes = 2560 : i64} : memref<?xi8>
// AVX512: scf.for %[[COL:.*]] = %c0 to %{{.*}} step %c1 {
// AVX512: scf.for %{{.*}} = %c0 to %c10 step %c1 {
// AVX512: lowbit.uk.lut_tables %[[XQ]][%{{.*}}], %[[T]][%{{.*}}] {width = 4 : i64} : memref<?xi8>, memref<?xi8>
// AVX512: scf.for %[[TILE:.*]] = %{{.*}} to %{{.*}} step %c1 {
// AVX512: %[[BASE:.*]] = arith.muli %[[TILE]], %c1280 : index
// AVX512: %[[ACC:.*]]:4 = scf.for %{{.*}} = %c0 to %c2 step %c1 iter_args(%[[A0:.*]] = %{{.*}}, %[[A1:.*]] = %{{.*}}, %[[A2:.*]] = %{{.*}}, %[[A3:.*]] = %{{.*}}) -> (vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>) {
// AVX512: %[[T0:.*]] = lowbit.uk.load %[[T]][%{{.*}}] : memref<?xi8> -> vector<64xi8>
// AVX512: %[[T1:.*]] = lowbit.uk.load %[[T]][%{{.*}}] : memref<?xi8> -> vector<64xi8>
// AVX512: %[[T2:.*]] = lowbit.uk.load %[[T]][%{{.*}}] : memref<?xi8> -> vector<64xi8>
// AVX512: %[[T3:.*]] = lowbit.uk.load %[[T]][%{{.*}}] : memref<?xi8> -> vector<64xi8>
// AVX512: lowbit.uk.prefetch %[[CODES]]
// AVX512: %[[P0:.*]] = lowbit.uk.load %[[CODES]][%{{.*}}] : memref<?xui8> -> vector<64xi8>
// AVX512: %[[L0:.*]], %[[H0:.*]] = lowbit.uk.lut_lookup %{{.*}}, %{{.*}}, %[[P0]], %[[T0]], %[[T1]], %[[T2]], %[[T3]] : vector<64xi8>, vector<32xi16>
// AVX512: %[[P1:.*]] = lowbit.uk.load %[[CODES]][%{{.*}}] : memref<?xui8> -> vector<64xi8>
// AVX512: lowbit.uk.lut_lookup %{{.*}}, %{{.*}}, %[[P1]], %[[T0]], %[[T1]], %[[T2]], %[[T3]] : vector<64xi8>, vector<32xi16>
// AVX512-COUNT-6: lowbit.uk.lut_lookup
// AVX512: lowbit.uk.widen_add %[[A0]], %{{.*}} : vector<32xi16> -> vector<16xi32>
// AVX512: lowbit.uk.widen_add %[[A1]], %{{.*}} : vector<32xi16> -> vector<16xi32>
// AVX512: lowbit.uk.widen_add %[[A2]], %{{.*}} : vector<32xi16> -> vector<16xi32>
// AVX512: lowbit.uk.widen_add %[[A3]], %{{.*}} : vector<32xi16> -> vector<16xi32>
// AVX512: scf.yield
// The remaining 2 blocks, widened on their own.
// AVX512-COUNT-4: lowbit.uk.lut_lookup
// AVX512: %[[R0:.*]] = lowbit.uk.widen_add %[[ACC]]#0
// AVX512: %[[R1:.*]] = lowbit.uk.widen_add %[[ACC]]#1
// AVX512: %[[R2:.*]] = lowbit.uk.widen_add %[[ACC]]#2
// AVX512: %[[R3:.*]] = lowbit.uk.widen_add %[[ACC]]#3
// AVX512: %[[D2:.*]] = arith.addi %[[R2]], %[[R2]] : vector<16xi32>
// AVX512: %[[LOW:.*]] = arith.addi %[[D2]], %[[R0]] : vector<16xi32>
// AVX512: %[[D3:.*]] = arith.addi %[[R3]], %[[R3]] : vector<16xi32>
// AVX512: %[[HIGH:.*]] = arith.addi %[[D3]], %[[R1]] : vector<16xi32>
// AVX512: %[[S:.*]] = memref.load %[[SUMS]][%[[COL]]] : memref<?xi32>
// AVX512: %[[SX:.*]] = memref.load %[[XS]][%[[COL]]] : memref<?xf32>
// AVX512: %[[ROWS:.*]] = lowbit.uk.fold_rows %[[LOW]], %[[HIGH]] {part = 0 : i64} : vector<16xi32>
// AVX512: %[[S3:.*]] = arith.muli %[[S]], %c3_i32 : i32
// AVX512: %[[B:.*]] = vector.broadcast %[[S3]] : i32 to vector<16xi32>
// AVX512: %[[TWICE:.*]] = arith.addi %[[ROWS]], %[[B]] : vector<16xi32>
// AVX512: %[[DOT:.*]] = lowbit.uk.shr_exact %[[TWICE]] {shift = 1 : i64} : vector<16xi32>
// AVX512: %[[OUT:.*]] = lowbit.uk.ternary_scale %[[DOT]], %[[S]], %[[WS]], %[[SX]] : vector<16xi32> -> vector<16xf32>
// AVX512: lowbit.uk.store %[[OUT]], %[[Y]][%{{.*}}], %{{.*}} : vector<16xf32>, memref<?xf32>

// On AVX2 a plane vector is two 32-byte halves (lanes 0-1, 2-3) adding into
// the same int16 sums; 8 int32 lanes, so two row parts per tile.
// AVX2-LABEL: func.func @i2s_gemv(
// AVX2: lowbit.uk.stack_buffer {bytes = 2560 : i64} : memref<?xi8>
// AVX2: scf.for %{{.*}} = %c0 to %c2 step %c1 iter_args({{.*}}) -> (vector<8xi32>, vector<8xi32>, vector<8xi32>, vector<8xi32>) {
// AVX2: lowbit.uk.lut_lookup {{.*}} : vector<32xi8>, vector<16xi16>
// AVX2: lowbit.uk.widen_add {{.*}} : vector<16xi16> -> vector<8xi32>
// AVX2: lowbit.uk.fold_rows %{{.*}}, %{{.*}} {part = 0 : i64} : vector<8xi32>
// AVX2: lowbit.uk.ternary_scale
// AVX2: lowbit.uk.store {{.*}} : vector<8xf32>, memref<?xf32>
// AVX2: lowbit.uk.fold_rows %{{.*}}, %{{.*}} {part = 1 : i64} : vector<8xi32>
// AVX2: lowbit.uk.ternary_scale
// AVX2: lowbit.uk.store {{.*}} : vector<8xf32>, memref<?xf32>
func.func @i2s_gemv(%x: tensor<?x300xf32>, %w: tensor<3x1280xi8>, %s: tensor<1xf32>) -> tensor<?x33xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<bitplanes, tile_m = 16, tile_k = 32, interleave = 16>,
         config = #lowbit.lut_bitserial<bm = 16, kfactor = 32>}
       : (tensor<?x300xf32>, tensor<3x1280xi8>, tensor<1xf32>) -> tensor<?x33xf32>
  return %y : tensor<?x33xf32>
}

// w2g64 GEMM, bm = 32 (groups of 2 tiles), bn = 2: per 32-k block (the
// activation block) the scf.for carries one f32 output per (tile, column);
// each plane register serves both columns; per block the planes are
// weighted in int16 (plane 1 looked up, doubled, plane 0 added: 2 A_1 +
// A_0), widened once, folded, D = (... + 3 S_b) / 2, and block_combine
// applies the group's scale and zero point (w2g64: block / 2).
// AVX512-LABEL: func.func @w2g64_gemm(
// AVX512: lowbit.uk.stack_buffer {bytes = 2048 : i64} : memref<?xi8>
// AVX512: scf.for %{{.*}} = %c0 to %{{.*}} step %c2 {
// AVX512-COUNT-2: lowbit.uk.lut_tables
// AVX512: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c2 {
// AVX512: scf.for %[[BLOCK:.*]] = %c0 to %c4 step %{{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// AVX512: %[[W1:.*]] = lowbit.uk.load %{{.*}}[%{{.*}}] : memref<?xui8> -> vector<64xi8>
// AVX512: %[[L1:.*]], %[[H1:.*]] = lowbit.uk.lut_lookup %[[Z16:.*]], %[[Z16]], %[[W1]]
// AVX512: lowbit.uk.lut_lookup %[[Z16]], %[[Z16]], %[[W1]]
// AVX512: %[[L2:.*]] = arith.addi %[[L1]], %[[L1]] : vector<32xi16>
// AVX512: %[[H2:.*]] = arith.addi %[[H1]], %[[H1]] : vector<32xi16>
// AVX512: %[[W0:.*]] = lowbit.uk.load %{{.*}}[%{{.*}}] : memref<?xui8> -> vector<64xi8>
// AVX512: %[[L0:.*]], %[[H0:.*]] = lowbit.uk.lut_lookup %[[L2]], %[[H2]], %[[W0]]
// AVX512: lowbit.uk.lut_lookup %{{.*}}, %{{.*}}, %[[W0]]
// AVX512: %[[WL:.*]] = lowbit.uk.widen_add %{{.*}}, %[[L0]] : vector<32xi16> -> vector<16xi32>
// AVX512: %[[WH:.*]] = lowbit.uk.widen_add %{{.*}}, %[[H0]] : vector<32xi16> -> vector<16xi32>
// AVX512-NOT: arith.addi %[[WL]], %[[WL]]
// AVX512: lowbit.uk.fold_rows %[[WL]], %[[WH]]
// AVX512: arith.muli %{{.*}}, %c3_i32 : i32
// AVX512: lowbit.uk.shr_exact
// AVX512: %[[G:.*]] = arith.divsi %[[BLOCK]], %c2 : index
// AVX512: %[[SC:.*]] = lowbit.uk.load_half %{{.*}}[%{{.*}}] : memref<?xui16> -> vector<16xf32>
// AVX512: %[[Z:.*]] = lowbit.uk.load_half %{{.*}}[%{{.*}}] : memref<?xui16> -> vector<16xf32>
// AVX512: lowbit.uk.block_combine %{{.*}}, %{{.*}}, %[[SC]], %{{.*}} zero(%[[Z]], %{{.*}} : vector<16xf32>) : vector<16xi32> -> vector<16xf32>
// AVX512: scf.yield
// AVX512-COUNT-4: lowbit.uk.store
func.func @w2g64_gemm(%x: tensor<?x128xf32>, %w: tensor<2x512xi8>, %s: tensor<20x2x2xf16>) -> tensor<?x20xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = unsigned, group = 64, scale = per_group>,
         layout = #lowbit.layout<bitplanes, tile_m = 16, tile_k = 32, interleave = 16>,
         config = #lowbit.lut_bitserial<bm = 32, bn = 2, kfactor = 64>}
       : (tensor<?x128xf32>, tensor<2x512xi8>, tensor<20x2x2xf16>) -> tensor<?x20xf32>
  return %y : tensor<?x20xf32>
}

// w1gG: one plane, 2 D - S = A_0, so the folded sum goes to block_combine
// as it is (no zero point, no transform).
// AVX512-LABEL: func.func @w1g32(
// AVX512: %[[R:.*]] = lowbit.uk.fold_rows
// AVX512-NOT: shr_exact
// AVX512: lowbit.uk.block_combine %{{.*}}, %[[R]], %{{.*}}, %{{.*}} : vector<16xi32> -> vector<16xf32>
func.func @w1g32(%x: tensor<?x64xf32>, %w: tensor<1x128xi8>, %s: tensor<16x2xf16>) -> tensor<?x16xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 1, encoding = binary, group = 32, scale = per_group>,
         layout = #lowbit.layout<bitplanes, tile_m = 16, tile_k = 32, interleave = 16>,
         config = #lowbit.lut_bitserial<bm = 16, kfactor = 8>}
       : (tensor<?x64xf32>, tensor<1x128xi8>, tensor<16x2xf16>) -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}
