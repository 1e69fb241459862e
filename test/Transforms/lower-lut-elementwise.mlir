// RUN: lowbit-opt %s --lowbit-lower-lut-elementwise=target=x86-avx512vnni --cse | FileCheck %s --check-prefix=AVX512
// RUN: lowbit-opt %s --lowbit-lower-lut-elementwise=target=x86-avx2 --cse | FileCheck %s --check-prefix=AVX2

// tl2 GEMV, M = 33 (a partial last tile), K = 200: the block-fitting split
// puts 2 TL2 blocks of 96 in the tiles and the 8 remaining weights in one
// TL1 vector (64 + 2 * 320 + 64 = 768 bytes per 16-row tile). bk = 96 widens
// the int16 sums after every block: an scf.for over the 2 blocks carries the
// int32 accumulators (rows 0..7 and 8..15).
// AVX512-LABEL: func.func @tl2_gemv(
// AVX512-SAME: %[[CODES:.*]]: memref<?xui8> {lowbit.readonly}, %{{.*}}: memref<?xui16> {lowbit.readonly}, %{{.*}}: memref<?xui16> {lowbit.readonly}, %[[XQ:.*]]: memref<?xi8> {lowbit.readonly}, %[[XS:.*]]: memref<?xf32> {lowbit.readonly}, %{{.*}}: memref<?xi32> {lowbit.readonly}, %[[Y:.*]]: memref<?xf32>, %[[N:.*]]: i64, %[[TB:.*]]: i64, %[[TE:.*]]: i64, %[[WS:.*]]: f32) {
// 9 table vectors (8 TL2, 1 TL1) of 256 bytes for one activation row.
// AVX512: %[[T:.*]] = lowbit.uk.stack_buffer {bytes = 2304 : i64} : memref<?xi8>
// AVX512: scf.for %[[COL:.*]] = %c0 to %{{.*}} step %c1 {
// AVX512: scf.for %{{.*}} = %c0 to %c8 step %c1 {
// AVX512: lowbit.uk.lut_tables %[[XQ]][%{{.*}}], %[[T]][%{{.*}}] {width = 3 : i64} : memref<?xi8>, memref<?xi8>
// AVX512: scf.for %{{.*}} = %c0 to %c1 step %c1 {
// AVX512: lowbit.uk.lut_tables %[[XQ]][%{{.*}}], %[[T]][%{{.*}}] {width = 2 : i64} : memref<?xi8>, memref<?xi8>
// AVX512: scf.for %[[TILE:.*]] = %{{.*}} to %{{.*}} step %c1 {
// AVX512: %[[BASE:.*]] = arith.muli %[[TILE]], %c768 : index
// AVX512: %[[ACC:.*]]:2 = scf.for %{{.*}} = %c0 to %c2 step %c1 iter_args(%[[A0:.*]] = %{{.*}}, %[[A1:.*]] = %{{.*}}) -> (vector<16xi32>, vector<16xi32>) {
// AVX512: %[[ZERO16:.*]] = arith.constant dense<0> : vector<32xi16>
// AVX512: %[[SIGNS:.*]] = lowbit.uk.load %[[CODES]][%{{.*}}] : memref<?xui8> -> vector<64xi8>
// AVX512: %[[T0:.*]] = lowbit.uk.load %[[T]][%{{.*}}] : memref<?xi8> -> vector<64xi8>
// AVX512: lowbit.uk.prefetch %[[CODES]]
// AVX512: %[[W0:.*]] = lowbit.uk.load %[[CODES]][%{{.*}}] : memref<?xui8> -> vector<64xi8>
// AVX512: %[[M0:.*]] = lowbit.uk.lut_sign_mask %[[SIGNS]] {bit = 0 : i64} : vector<64xi8>
// AVX512: %[[M1:.*]] = lowbit.uk.lut_sign_mask %[[SIGNS]] {bit = 1 : i64} : vector<64xi8>
// AVX512: %[[L0:.*]], %[[H0:.*]] = lowbit.uk.lut_lookup %[[ZERO16]], %[[ZERO16]], %[[W0]], %[[T0]], %{{.*}}, %{{.*}}, %{{.*}} signs(%[[M0]], %[[M1]] : vector<64xi8>, vector<64xi8>) : vector<64xi8>, vector<32xi16>
// AVX512: lowbit.uk.lut_sign_mask %[[SIGNS]] {bit = 7 : i64} : vector<64xi8>
// AVX512: %[[L3:.*]], %[[H3:.*]] = lowbit.uk.lut_lookup
// AVX512: %[[N0:.*]] = lowbit.uk.widen_add %[[A0]], %[[L3]] : vector<32xi16> -> vector<16xi32>
// AVX512: %[[N1:.*]] = lowbit.uk.widen_add %[[A1]], %[[H3]] : vector<32xi16> -> vector<16xi32>
// AVX512: scf.yield %[[N0]], %[[N1]] : vector<16xi32>, vector<16xi32>
// The TL1 remainder: one vector without signs, widened on its own.
// AVX512: %[[TL:.*]], %[[TH:.*]] = lowbit.uk.lut_lookup %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : vector<64xi8>, vector<32xi16>
// AVX512: %[[R0:.*]] = lowbit.uk.widen_add %[[ACC]]#0, %[[TL]]
// AVX512: %[[R1:.*]] = lowbit.uk.widen_add %[[ACC]]#1, %[[TH]]
// AVX512: %[[HEADER:.*]] = lowbit.uk.load %[[CODES]][%[[BASE]]] : memref<?xui8> -> vector<16xi32>
// AVX512: %[[ROWS:.*]] = lowbit.uk.fold_rows %[[R0]], %[[R1]] {part = 0 : i64} : vector<16xi32>
// AVX512: %[[EXACT:.*]] = arith.addi %[[ROWS]], %[[HEADER]] : vector<16xi32>
// AVX512: %[[SX:.*]] = memref.load %[[XS]][%[[COL]]] : memref<?xf32>
// AVX512: %[[OUT:.*]] = lowbit.uk.ternary_scale %[[EXACT]], %c0_i32, %[[WS]], %[[SX]] : vector<16xi32> -> vector<16xf32>
// AVX512: lowbit.uk.store %[[OUT]], %[[Y]][%{{.*}}], %{{.*}} : vector<16xf32>, memref<?xf32>

// On AVX2 one 64-byte vector is two 32-byte halves (lanes 0-1, 2-3) that
// add into the same int16 accumulators; 8 int32 lanes, so two row parts.
// AVX2-LABEL: func.func @tl2_gemv(
// AVX2: lowbit.uk.stack_buffer {bytes = 2304 : i64} : memref<?xi8>
// AVX2: scf.for %{{.*}} = %c0 to %c2 step %c1 iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (vector<8xi32>, vector<8xi32>) {
// AVX2: lowbit.uk.lut_lookup {{.*}} signs({{.*}} : vector<32xi8>, vector<32xi8>) : vector<32xi8>, vector<16xi16>
// AVX2: lowbit.uk.widen_add {{.*}} : vector<16xi16> -> vector<8xi32>
// AVX2: lowbit.uk.fold_rows %{{.*}}, %{{.*}} {part = 0 : i64} : vector<8xi32>
// AVX2: lowbit.uk.store {{.*}} : vector<8xf32>, memref<?xf32>
// AVX2: lowbit.uk.fold_rows %{{.*}}, %{{.*}} {part = 1 : i64} : vector<8xi32>
// AVX2: lowbit.uk.store {{.*}} : vector<8xf32>, memref<?xf32>
func.func @tl2_gemv(%x: tensor<?x200xf32>, %w: tensor<3x768xi8>, %s: tensor<1xf32>) -> tensor<?x33xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<tl2, tile_m = 16, tile_k = 96, interleave = 16>,
         config = #lowbit.lut_elementwise<bm = 16, bk = 96, sub_m = 16>}
       : (tensor<?x200xf32>, tensor<3x768xi8>, tensor<1xf32>) -> tensor<?x33xf32>
  return %y : tensor<?x33xf32>
}

// tl1 GEMM config: 2 tiles x 2 activation rows share each weight register
// (bn = 2, then the odd row alone); K = 34 is 3 TL1 vectors (the last one
// padded with index 4), widened every 2 vectors (bk = 32).
// AVX512-LABEL: func.func @tl1_gemm(
// AVX512: lowbit.uk.stack_buffer {bytes = 1536 : i64} : memref<?xi8>
// AVX512: %[[NB:.*]] = arith.divsi %{{.*}}, %c2 : index
// AVX512: scf.for %{{.*}} = %c0 to %{{.*}} step %c2 {
// AVX512-COUNT-2: lowbit.uk.lut_tables %{{.*}} {width = 2 : i64}
// AVX512: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c2 {
// AVX512: %[[W:.*]] = lowbit.uk.load %{{.*}} : memref<?xui8> -> vector<64xi8>
// AVX512-NEXT: lowbit.uk.lut_lookup %{{.*}}, %{{.*}}, %[[W]], {{.*}} : vector<64xi8>, vector<32xi16>
// AVX512-NEXT: lowbit.uk.lut_lookup %{{.*}}, %{{.*}}, %[[W]], {{.*}} : vector<64xi8>, vector<32xi16>
// AVX512-NOT: signs
// AVX512: lowbit.uk.widen_add
// AVX512-LABEL: return
func.func @tl1_gemm(%x: tensor<?x34xf32>, %w: tensor<2x256xi8>, %s: tensor<1xf32>) -> tensor<?x32xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<tl1, tile_m = 16, tile_k = 16, interleave = 16>,
         config = #lowbit.lut_elementwise<bm = 32, bk = 32, sub_m = 16, bn = 2>}
       : (tensor<?x34xf32>, tensor<2x256xi8>, tensor<1xf32>) -> tensor<?x32xf32>
  return %y : tensor<?x32xf32>
}

// tl2, K = 3840: 40 TL2 blocks, 40 KiB of tables per activation row, more
// than an L1 cache: two K chunks of 20 blocks (20 KiB of tables each). Every
// tile of the range runs chunk 0 and spills its int32 sums to a second
// stack buffer (2 registers per tile), then chunk 1 reloads them.
// AVX512-LABEL: func.func @tl2_chunks(
// AVX512: %[[T:.*]] = lowbit.uk.stack_buffer {bytes = 40960 : i64} : memref<?xi8>
// AVX512: %[[P:.*]] = lowbit.uk.stack_buffer {bytes = 128 : i64} : memref<?xi8>
// AVX512: scf.for %[[T0:.*]] = %{{.*}} to %{{.*}} step %c1 {
// AVX512: scf.for %{{.*}} = %c0 to %c20 step %c1 iter_args
// AVX512: lowbit.uk.store_i32 %{{.*}}, %[[P]][%{{.*}}] : vector<16xi32>, memref<?xi8>
// AVX512: lowbit.uk.store_i32 %{{.*}}, %[[P]][%{{.*}}] : vector<16xi32>, memref<?xi8>
// AVX512: scf.for %[[T1:.*]] = %{{.*}} to %{{.*}} step %c1 {
// AVX512: lowbit.uk.load %[[P]][%{{.*}}] : memref<?xi8> -> vector<16xi32>
// AVX512: lowbit.uk.load %[[P]][%{{.*}}] : memref<?xi8> -> vector<16xi32>
// AVX512: scf.for %{{.*}} = %c0 to %c20 step %c1 iter_args
// AVX512: lowbit.uk.fold_rows
// AVX512: lowbit.uk.store
// AVX512-LABEL: return
func.func @tl2_chunks(%x: tensor<?x3840xf32>, %w: tensor<1x12864xi8>, %s: tensor<1xf32>) -> tensor<?x16xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<tl2, tile_m = 16, tile_k = 96, interleave = 16>,
         config = #lowbit.lut_elementwise<bm = 16, bk = 96, sub_m = 16>}
       : (tensor<?x3840xf32>, tensor<1x12864xi8>, tensor<1xf32>) -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}
