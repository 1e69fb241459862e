// RUN: lowbit-opt %s --lowbit-select-config=target=x86-avx512vnni --lowbit-lower-lut-bitserial --cse | FileCheck %s --check-prefix=AVX512
// The kernels of x86-avx2 read bitserial_abi.h's lane order (lane_order =
// lanes, as pack-layout writes it there).
// RUN: sed 's/interleave = 16>/interleave = 16, lane_order = lanes>/' %s | lowbit-opt --lowbit-select-config=target=x86-avx2 --lowbit-lower-lut-bitserial --cse | FileCheck %s --check-prefix=AVX2

// i2s GEMV as two bit planes, M = 33 (a partial last tile), K = 300 (Kp =
// 320: 10 blocks of 32, 2 planes x 64 bytes each, 1280 bytes per 16-row
// tile). kfactor = 32: 4 blocks per iteration of an scf.for (2 iterations)
// whose int32 lut_dot sums are loop-carried, the last 2 blocks after it.
// One table build per block (width 4: the ±1 sums of 4 activations, 256
// bytes: lut_dot's 128 per nibble) serves both planes; plane 1 is looked up
// with multiplier bytes 2 and takes the second accumulator set (4 dot
// chains on AVX512). The high sums of set 0 start at -128 * 3 * 80 (80
// groups of 4 per row): lut_combine then gives 2 A_1 + A_0, (+ 3 S) / 2 =
// D, and ternary_scale subtracts S.
// AVX512-LABEL: func.func @i2s_gemv(
// AVX512-SAME: %[[CODES:.*]]: memref<?xui8> {lowbit.readonly}, %{{.*}}: memref<?xui16> {lowbit.readonly}, %{{.*}}: memref<?xui16> {lowbit.readonly}, %[[XQ:.*]]: memref<?xi8> {lowbit.readonly}, %[[XS:.*]]: memref<?xf32> {lowbit.readonly}, %[[SUMS:.*]]: memref<?xi32> {lowbit.readonly}, %[[Y:.*]]: memref<?xf32>, %[[N:.*]]: i64, %[[TB:.*]]: i64, %[[TE:.*]]: i64, %[[WS:.*]]: f32) {
// AVX512: %[[T:.*]] = lowbit.uk.stack_buffer {bytes = 2560 : i64} : memref<?xi8>
// AVX512: %[[TWO:.*]] = arith.constant dense<2> : vector<64xi8>
// AVX512: scf.for %[[COL:.*]] = %c0 to %{{.*}} step %c1 {
// AVX512: scf.for %{{.*}} = %c0 to %c10 step %c1 {
// AVX512: lowbit.uk.lut_tables %[[XQ]][%{{.*}}], %[[T]][%{{.*}}] {width = 4 : i64} : memref<?xi8>, memref<?xi8>
// AVX512: scf.for %[[TILE:.*]] = %{{.*}} to %{{.*}} step %c1 {
// AVX512: %[[BASE:.*]] = arith.muli %[[TILE]], %c1280 : index
// AVX512-DAG: %[[Z:.*]] = arith.constant dense<0> : vector<16xi32>
// AVX512-DAG: %[[BIAS:.*]] = arith.constant dense<-30720> : vector<16xi32>
// AVX512: %[[ACC:.*]]:8 = scf.for %{{.*}} = %c0 to %c2 step %c1 iter_args(%[[A0:.*]] = %[[Z]], %[[A1:.*]] = %[[BIAS]], %[[A2:.*]] = %[[Z]], %[[A3:.*]] = %[[Z]], %[[A4:.*]] = %[[Z]], %[[A5:.*]] = %[[Z]], %[[A6:.*]] = %[[Z]], %[[A7:.*]] = %[[Z]]) -> (vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>) {
// AVX512: lowbit.uk.prefetch %[[CODES]]
// AVX512: %[[P0:.*]] = lowbit.uk.load %[[CODES]][%{{.*}}] : memref<?xui8> -> vector<64xi8>
// AVX512: lowbit.uk.lut_dot %[[A0]], %[[A1]], %[[P0]], %[[T]][%[[TB0:.*]]] {high = false} : vector<64xi8>, memref<?xi8>, vector<16xi32>
// AVX512: lowbit.uk.lut_dot %[[A2]], %[[A3]], %[[P0]], %[[T]][%{{.*}}] {high = true}
// AVX512: %[[P1:.*]] = lowbit.uk.load %[[CODES]][%{{.*}}] : memref<?xui8> -> vector<64xi8>
// AVX512: lowbit.uk.lut_dot %[[A4]], %[[A5]], %[[P1]], %[[T]][%[[TB0]]] signs(%[[TWO]] : vector<64xi8>) {high = false}
// AVX512: lowbit.uk.lut_dot %[[A6]], %[[A7]], %[[P1]], %[[T]][%{{.*}}] signs(%[[TWO]] : vector<64xi8>) {high = true}
// AVX512-COUNT-12: lowbit.uk.lut_dot
// AVX512: scf.yield
// The remaining 2 blocks.
// AVX512-COUNT-8: lowbit.uk.lut_dot
// AVX512: %[[S:.*]] = memref.load %[[SUMS]][%[[COL]]] : memref<?xi32>
// AVX512: %[[SX:.*]] = memref.load %[[XS]][%[[COL]]] : memref<?xf32>
// AVX512-COUNT-4: lowbit.uk.lut_combine
// AVX512: %[[SUM:.*]] = arith.addi %{{.*}}, %{{.*}} : vector<16xi32>
// AVX512: %[[S3:.*]] = arith.muli %[[S]], %c3_i32 : i32
// AVX512: %[[B:.*]] = vector.broadcast %[[S3]] : i32 to vector<16xi32>
// AVX512: %[[TWICE:.*]] = arith.addi %[[SUM]], %[[B]] : vector<16xi32>
// AVX512: %[[DOT:.*]] = lowbit.uk.shr_exact %[[TWICE]] {shift = 1 : i64} : vector<16xi32>
// AVX512: %[[OUT:.*]] = lowbit.uk.ternary_scale %[[DOT]], %[[S]], %[[WS]], %[[SX]] : vector<16xi32> -> vector<16xf32>
// AVX512: lowbit.uk.store %[[OUT]], %[[Y]][%{{.*}}], %{{.*}} : vector<16xf32>, memref<?xf32>

// On AVX2 (T-MAC's AVX2 formulation in bitserial_abi.h's lane order) each
// register is looked up as loaded, per nibble and table byte, and
// multiplied by the bytes 1, 2 (a row's two planes side by side: dot2 of
// the zipped splats) into int16 sums over the iteration's 4 blocks, which
// are then widened into the 4 int32 sums low + 256 high (one per quarter
// of the rows; they start at minus the tables' bias, half of it per lane:
// 16384 x 3 x 80 groups = 3932160); at the end per half of the rows the
// quarters' lanes are folded.
// AVX2-LABEL: func.func @i2s_gemv(
// AVX2: lowbit.uk.stack_buffer {bytes = 2560 : i64} : memref<?xi8>
// AVX2: %[[ONE:.*]] = arith.constant dense<1> : vector<32xi8>
// AVX2: %[[TWO:.*]] = arith.constant dense<2> : vector<32xi8>
// AVX2: %[[PAIRS:.*]] = lowbit.uk.zip %[[ONE]], %[[TWO]] {high = false} : vector<32xi8>
// AVX2: %[[BIAS:.*]] = arith.constant dense<-3932160> : vector<8xi32>
// AVX2: scf.for %{{.*}} = %c0 to %c2 step %c1 iter_args(%[[A0:[a-z0-9_]+]] = %[[BIAS]], %{{[a-z0-9_]+}} = %[[BIAS]], %{{[a-z0-9_]+}} = %[[BIAS]], %{{[a-z0-9_]+}} = %[[BIAS]]) -> (vector<8xi32>, vector<8xi32>, vector<8xi32>, vector<8xi32>) {
// AVX2-NOT: lowbit.uk.zip
// AVX2: %[[W0:.*]] = lowbit.uk.load %{{.*}} : memref<?xui8> -> vector<32xi8>
// AVX2: %[[L0:.*]] = lowbit.uk.lut_lookup %[[W0]], %{{.*}} {high = false}
// AVX2-NEXT: lowbit.uk.dot2 %[[L0]], %[[PAIRS]] : vector<32xi8> -> vector<16xi16>
// AVX2: lowbit.uk.lut_lookup %[[W0]], %{{.*}} {high = true}
// 4 blocks x 4 registers x 2 nibbles x 2 table bytes: 62 more.
// AVX2-COUNT-62: lowbit.uk.dot2 %{{.*}}, %[[PAIRS]]
// AVX2-NOT: lowbit.uk.dot2
// AVX2: %[[E:.*]] = lowbit.uk.extend %{{.*}}, %{{.*}} {high_half = false} : vector<16xi16> -> vector<8xi32>
// AVX2: arith.addi %[[A0]], %[[E]] : vector<8xi32>
// AVX2: scf.yield
// AVX2: lowbit.uk.lane_fold {{.*}} : vector<8xi32>
// AVX2: lowbit.uk.ternary_scale
// AVX2: lowbit.uk.store {{.*}} : vector<8xf32>, memref<?xf32>
// AVX2: lowbit.uk.lane_fold {{.*}} : vector<8xi32>
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
// activation block) fresh sums, whose high halves start at -128 * 3 * 8;
// each plane register serves both columns (tables at 0 and 1024); both
// nibbles and plane 1 (multiplier bytes 2) chain into one pair per (tile,
// column): blocks are independent chains. One lut_combine, D = (... + 3
// S_b) / 2 and block_combine into the float sums of the scale group with
// its zero points (w2g64: block / 2; loaded once per group, before its
// blocks), then group_combine of the group's sums with its scales.
// kfactor = 64 is more than the 4 blocks: all unrolled, the outputs
// carried in registers.
// AVX512-LABEL: func.func @w2g64_gemm(
// AVX512: lowbit.uk.stack_buffer {bytes = 2048 : i64} : memref<?xi8>
// AVX512: %[[TWO:.*]] = arith.constant dense<2> : vector<64xi8>
// AVX512: scf.for %{{.*}} = %c0 to %{{.*}} step %c2 {
// AVX512-COUNT-2: lowbit.uk.lut_tables
// AVX512: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c2 {
// AVX512: %[[ZP:.*]] = lowbit.uk.load_half %[[ZEROS:[a-z0-9_]+]][%[[ZOFF:.*]]] : memref<?xui16> -> vector<16xf32>
// AVX512-DAG: %[[Z:.*]] = arith.constant dense<0> : vector<16xi32>
// AVX512-DAG: %[[BIAS:.*]] = arith.constant dense<-3072> : vector<16xi32>
// AVX512: %[[W1:.*]] = lowbit.uk.load %{{.*}}[%{{.*}}] : memref<?xui8> -> vector<64xi8>
// AVX512: %[[L0:.*]], %[[H0:.*]] = lowbit.uk.lut_dot %[[Z]], %[[BIAS]], %[[W1]], %{{.*}}[%c0] {high = false}
// AVX512: lowbit.uk.lut_dot %[[Z]], %[[BIAS]], %[[W1]], %{{.*}}[%c1024] {high = false}
// AVX512: %[[L1:.*]], %[[H1:.*]] = lowbit.uk.lut_dot %[[L0]], %[[H0]], %[[W1]], %{{.*}}[%c128] {high = true}
// AVX512: lowbit.uk.lut_dot %{{.*}}, %{{.*}}, %[[W1]], %{{.*}}[%c1152] {high = true}
// AVX512: %[[W2:.*]] = lowbit.uk.load %{{.*}}[%{{.*}}] : memref<?xui8> -> vector<64xi8>
// AVX512: %[[L2:.*]], %[[H2:.*]] = lowbit.uk.lut_dot %[[L1]], %[[H1]], %[[W2]], %{{.*}}[%c0] signs(%[[TWO]] : vector<64xi8>) {high = false}
// AVX512: lowbit.uk.lut_dot
// AVX512: %[[L3:.*]], %[[H3:.*]] = lowbit.uk.lut_dot %[[L2]], %[[H2]], %[[W2]], %{{.*}}[%c128] signs(%[[TWO]] : vector<64xi8>) {high = true}
// AVX512: %[[C:.*]] = lowbit.uk.lut_combine %[[L3]], %[[H3]]
// AVX512-NOT: lut_combine
// AVX512: arith.muli %{{.*}}, %c3_i32 : i32
// AVX512: arith.addi %[[C]], %{{.*}} : vector<16xi32>
// AVX512: lowbit.uk.shr_exact
// AVX512-NOT: load_half
// AVX512: %[[G:.*]] = lowbit.uk.block_combine %{{.*}}, %{{.*}}, %{{.*}} zero(%[[ZP]], %{{.*}} : vector<16xf32>) : vector<16xi32> -> vector<16xf32>
// AVX512: lowbit.uk.block_combine %[[G]], %{{.*}}, %{{.*}} zero(%[[ZP]], %{{.*}} : vector<16xf32>) : vector<16xi32> -> vector<16xf32>
// AVX512: %[[SC:.*]] = lowbit.uk.load_half %[[SCALES:[a-z0-9_]+]][%[[ZOFF]]] : memref<?xui16> -> vector<16xf32>
// AVX512: lowbit.uk.group_combine %{{.*}}, %{{.*}}, %[[SC]] : vector<16xf32>
// AVX512-COUNT-4: lowbit.uk.store
func.func @w2g64_gemm(%x: tensor<?x128xf32>, %w: tensor<2x512xi8>, %s: tensor<20x2x2xf16>) -> tensor<?x20xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = unsigned, group = 64, scale = per_group>,
         layout = #lowbit.layout<bitplanes, tile_m = 16, tile_k = 32, interleave = 16>,
         config = #lowbit.lut_bitserial<bm = 32, bn = 2, kfactor = 64>}
       : (tensor<?x128xf32>, tensor<2x512xi8>, tensor<20x2x2xf16>) -> tensor<?x20xf32>
  return %y : tensor<?x20xf32>
}

// w1gG: one plane (no multiplier), 2 D - S = A_0, so the combined sum goes
// to block_combine as it is (no zero point, no transform). Two blocks, one
// per iteration (kfactor = 8), no loop for 2 iterations; g32: each block is
// its own scale group, folded right after it.
// AVX512-LABEL: func.func @w1g32(
// AVX512-NOT: signs(
// AVX512: %[[R:.*]] = lowbit.uk.lut_combine
// AVX512-NOT: shr_exact
// AVX512: %[[G:.*]] = lowbit.uk.block_combine %{{.*}}, %[[R]], %{{.*}} : vector<16xi32> -> vector<16xf32>
// AVX512-NOT: lut_combine
// AVX512: %[[S:.*]] = lowbit.uk.load_half
// AVX512-NEXT: lowbit.uk.group_combine %{{.*}}, %[[G]], %[[S]] : vector<16xf32>
func.func @w1g32(%x: tensor<?x64xf32>, %w: tensor<1x128xi8>, %s: tensor<16x2xf16>) -> tensor<?x16xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 1, encoding = binary, group = 32, scale = per_group>,
         layout = #lowbit.layout<bitplanes, tile_m = 16, tile_k = 32, interleave = 16>,
         config = #lowbit.lut_bitserial<bm = 16, kfactor = 8>}
       : (tensor<?x64xf32>, tensor<1x128xi8>, tensor<16x2xf16>) -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// w1g128, K = 2176: 68 blocks in two K panels of whole scale groups
// (bitserial_abi.h: ceil(68 / 2) = 34 rounded up to 4 blocks per group:
// 36 and 32), M = 40: 3 tiles, pieces of 36 x 64 = 2304 bytes (then 32 x
// 64 = 2048), panel 1 at 3 x 2304 = 6912; its scales at 3 x 9 x 16 = 432,
// each tile's 8 groups of it 8 x 16 apart. The prologue prefetches the
// thread's first 4 KiB (from tile_begin x 2304). Then its tiles, in
// ranges of as many as 512 KiB of partial sums hold but at most all 3
// (their end clamped to tile_end), sweep panel 0 (9 scale groups, each a
// loop of 2 iterations of 2 blocks whose float sums group_combine folds
// with the group's scales) and panel 1 (8); between the panels the f32
// outputs of a tile are spilled to a 3 x 64-byte buffer and loaded back;
// only the last panel stores y. The tables of all 68 blocks (256 bytes
// each) are built once.
// AVX512-LABEL: func.func @w1g128_panels(
// AVX512: %[[T:.*]] = lowbit.uk.stack_buffer {bytes = 17408 : i64} : memref<?xi8>
// AVX512: %[[P:.*]] = lowbit.uk.stack_buffer {bytes = 192 : i64} : memref<?xi8>
// AVX512: %[[START:.*]] = arith.muli %{{.*}}, %c2304 : index
// AVX512: scf.for %[[AT:.*]] = %[[START]] to %{{.*}} step %c64 {
// AVX512-NEXT: lowbit.uk.prefetch %{{.*}}[%[[AT]]] : memref<?xui8>
// AVX512: scf.for %{{.*}} = %c0 to %c68 step %c1 {
// AVX512: lowbit.uk.lut_tables
// AVX512: scf.for %[[G:.*]] = %{{.*}} to %[[END:.*]] step %c3 {
// AVX512: %[[GEND:.*]] = arith.select %{{.*}}, %{{.*}}, %[[END]] : index
// Panel 0: fresh outputs, the tile's 9 scale groups, spilled.
// AVX512: scf.for %[[TILE:.*]] = %[[G]] to %[[GEND]] step %c1 {
// AVX512: arith.muli %[[TILE]], %c2304 : index
// AVX512: scf.for %{{.*}} = %c0 to %c9 step %c1 iter_args(%[[Y0:[a-z0-9_]+]] = %cst) -> (vector<16xf32>) {
// AVX512: %[[SUMS:.*]] = scf.for %{{.*}} = %c0 to %c2 step %c1 iter_args(%{{.*}} = %cst) -> (vector<16xf32>) {
// AVX512: lowbit.uk.prefetch
// AVX512-COUNT-2: lowbit.uk.block_combine
// AVX512: scf.yield
// AVX512: arith.muli %[[TILE]], %c9 : index
// AVX512: %[[S0:.*]] = lowbit.uk.load_half
// AVX512-NEXT: lowbit.uk.group_combine %[[Y0]], %[[SUMS]], %[[S0]] : vector<16xf32>
// AVX512: lowbit.uk.spill %{{.*}}, %[[P]][%{{.*}}] : vector<16xf32>, memref<?xi8>
// AVX512-NOT: lowbit.uk.store
// Panel 1: loaded, its scales from 432, stored to y.
// AVX512: scf.for %[[TILE1:.*]] = %[[G]] to %[[GEND]] step %c1 {
// AVX512: %[[B1:.*]] = arith.muli %[[TILE1]], %c2048 : index
// AVX512: arith.addi %[[B1]], %c6912 : index
// AVX512: %[[Y1:.*]] = lowbit.uk.load %[[P]][%{{.*}}] : memref<?xi8> -> vector<16xf32>
// AVX512: scf.for %{{.*}} = %c0 to %c8 step %c1 iter_args(%{{.*}} = %[[Y1]]) -> (vector<16xf32>) {
// AVX512: scf.for %{{.*}} = %c0 to %c2 step %c1 iter_args(%{{.*}} = %cst) -> (vector<16xf32>) {
// AVX512: arith.muli %[[TILE1]], %c8 : index
// AVX512: %[[SO:.*]] = arith.addi %{{.*}}, %c432 : index
// AVX512-NEXT: lowbit.uk.load_half %{{.*}}[%[[SO]]]
// AVX512-NEXT: lowbit.uk.group_combine
// AVX512-NOT: lowbit.uk.spill
// AVX512: lowbit.uk.store %{{.*}}, %{{.*}}[%{{.*}}], %{{.*}} : vector<16xf32>, memref<?xf32>
func.func @w1g128_panels(%x: tensor<?x2176xf32>, %w: tensor<3x4352xi8>, %s: tensor<40x17xf16>) -> tensor<?x40xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 1, encoding = binary, group = 128, scale = per_group>,
         layout = #lowbit.layout<bitplanes, tile_m = 16, tile_k = 32, interleave = 16>,
         config = #lowbit.lut_bitserial<bm = 16, kfactor = 16>}
       : (tensor<?x2176xf32>, tensor<3x4352xi8>, tensor<40x17xf16>) -> tensor<?x40xf32>
  return %y : tensor<?x40xf32>
}
