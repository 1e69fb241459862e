// RUN: lowbit-opt %s --lowbit-select-config=target=x86-avx512vnni --lowbit-lower-upconvert --cse | FileCheck %s --check-prefix=AVX512
// RUN: lowbit-opt %s --lowbit-select-config=target=x86-avx2 --lowbit-lower-upconvert --cse | FileCheck %s --check-prefix=AVX2
// RUN: lowbit-opt %s --lowbit-select-config=target=generic --lowbit-lower-upconvert --cse | FileCheck %s --check-prefix=GENERIC

// The kernel ABI signature replaces the tensor one; M, K and every loop
// bound but the tile range and N are constants; registers are
// vector<R x i8> / vector<R/4 x i32|f32> with R from TargetInfo (64 for
// AVX512, 32 for AVX2, 4 for generic).

// Ternary GEMV, M = 33 (a partial last tile), K = 100 (Kp = 128: 4 blocks,
// 2 K steps of tile_k = 64). Each bit plane is masked in place into its own
// accumulator (4 chains, no shifts), divided back after the loop.
// AVX512-LABEL: func.func @i2s_gemv(
// AVX512-SAME: %[[CODES:.*]]: memref<?xui8> {lowbit.readonly}, %{{.*}}: memref<?xui16> {lowbit.readonly}, %{{.*}}: memref<?xui16> {lowbit.readonly}, %[[XQ:.*]]: memref<?xi8> {lowbit.readonly}, %[[XS:.*]]: memref<?xf32> {lowbit.readonly}, %[[SUMS:.*]]: memref<?xi32> {lowbit.readonly}, %[[Y:.*]]: memref<?xf32>, %[[N:.*]]: i64, %[[TB:.*]]: i64, %[[TE:.*]]: i64, %[[WS:.*]]: f32) {
// AVX512: %[[B:.*]] = arith.index_cast %[[TB]] : i64 to index
// AVX512: %[[E:.*]] = arith.index_cast %[[TE]] : i64 to index
// AVX512: scf.for %[[T:.*]] = %[[B]] to %[[E]] step %c1 {
// AVX512: scf.for %[[COL:.*]] = %c0 to %{{.*}} step %c1 {
// AVX512: %[[ZERO:.*]] = arith.constant dense<0> : vector<16xi32>
// AVX512: %[[ACC:.*]]:4 = scf.for %{{.*}} = %c0 to %c2 step %c1 iter_args(%[[A0:.*]] = %[[ZERO]], %[[A1:.*]] = %[[ZERO]], %[[A2:.*]] = %[[ZERO]], %[[A3:.*]] = %[[ZERO]]) -> (vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>) {
// AVX512: %[[W:.*]] = lowbit.uk.load %[[CODES]][%[[OFF:.*]]] : memref<?xui8> -> vector<64xi8>
// AVX512: %[[AHEAD:.*]] = arith.addi %[[OFF]], %c4096 : index
// AVX512: %[[IN:.*]] = arith.cmpi ult, %[[AHEAD]], %c1472 : index
// AVX512: %[[PF:.*]] = arith.select %[[IN]], %[[AHEAD]], %c1472 : index
// AVX512: lowbit.uk.prefetch %[[CODES]][%[[PF]]] : memref<?xui8>
// AVX512: %[[X0:.*]] = lowbit.uk.broadcast4 %[[XQ]][%{{.*}}] : memref<?xi8> -> vector<64xi8>
// AVX512: %[[C0:.*]] = lowbit.uk.unpack %[[W]] {bits = 2 : i64, plane = 0 : i64} : vector<64xi8>
// AVX512: lowbit.uk.dot4 %[[A0]], %[[C0]], %[[X0]] : vector<64xi8> -> vector<16xi32>
// AVX512: %[[C1:.*]] = lowbit.uk.unpack %[[W]] {bits = 2 : i64, plane = 1 : i64, scale = 2 : i64} : vector<64xi8>
// AVX512: lowbit.uk.dot4 %[[A1]], %[[C1]], %{{.*}} : vector<64xi8> -> vector<16xi32>
// AVX512: lowbit.uk.unpack %[[W]] {bits = 2 : i64, plane = 2 : i64, scale = 4 : i64} : vector<64xi8>
// AVX512: lowbit.uk.dot4 %[[A2]]
// AVX512: lowbit.uk.unpack %[[W]] {bits = 2 : i64, plane = 3 : i64, scale = 6 : i64} : vector<64xi8>
// AVX512: lowbit.uk.dot4 %[[A3]]
// AVX512-COUNT-3: lowbit.uk.load %[[CODES]]
// AVX512: scf.yield
// AVX512: %[[S1:.*]] = lowbit.uk.shr_exact %[[ACC]]#1 {shift = 2 : i64} : vector<16xi32>
// AVX512: %[[D1:.*]] = arith.addi %[[ACC]]#0, %[[S1]] : vector<16xi32>
// AVX512: lowbit.uk.shr_exact %[[ACC]]#2 {shift = 4 : i64}
// AVX512: lowbit.uk.shr_exact %[[ACC]]#3 {shift = 6 : i64}
// AVX512: %[[D:.*]] = arith.addi
// AVX512: %[[SUM:.*]] = memref.load %[[SUMS]][%[[COL]]] : memref<?xi32>
// AVX512: %[[SX:.*]] = memref.load %[[XS]][%[[COL]]] : memref<?xf32>
// AVX512: %[[OUT:.*]] = lowbit.uk.ternary_scale %[[D]], %[[SUM]], %[[WS]], %[[SX]] : vector<16xi32> -> vector<16xf32>
// Rows of the tile below M = 33: clamp(33 - 16 t, 0, 16).
// AVX512: %[[ROW:.*]] = arith.muli %[[T]], %c16 : index
// AVX512: %[[PAST:.*]] = arith.cmpi sge, %[[ROW]], %c33 : index
// AVX512: %[[LEFT:.*]] = arith.subi %c33, %[[ROW]] : index
// AVX512: %[[SOME:.*]] = arith.select %{{.*}}, %[[LEFT]], %c16 : index
// AVX512: %[[COUNT:.*]] = arith.select %[[PAST]], %c0, %[[SOME]] : index
// AVX512: lowbit.uk.store %[[OUT]], %[[Y]][%{{.*}}], %[[COUNT]] : vector<16xf32>, memref<?xf32>
// AVX512: return

// On AVX2 the ternary tile is two 32-byte slices (rows 0-7 and 8-15) in
// the same K loop, with two chains each; maddubs products are summed in
// int16, so plane 3 (codes up to 3 x 64) is shifted down one bit (x 32).
// AVX2-LABEL: func.func @i2s_gemv(
// AVX2: scf.for {{.*}} iter_args({{.*}}) -> (vector<8xi32>, vector<8xi32>, vector<8xi32>, vector<8xi32>, vector<8xi32>, vector<8xi32>, vector<8xi32>, vector<8xi32>)
// AVX2: lowbit.uk.load %{{.*}} : memref<?xui8> -> vector<32xi8>
// AVX2: lowbit.uk.load %{{.*}} : memref<?xui8> -> vector<32xi8>
// AVX2: lowbit.uk.unpack %{{.*}} {bits = 2 : i64, plane = 3 : i64, scale = 5 : i64} : vector<32xi8>
// AVX2: lowbit.uk.shr_exact %{{.*}} {shift = 5 : i64} : vector<8xi32>
// AVX2-COUNT-2: lowbit.uk.store %{{.*}} : vector<8xf32>, memref<?xf32>

// Generic registers hold one row: 8 of the 16 rows of a tile (8 int32
// accumulators) share a K loop, an outer loop walks the two halves.
// GENERIC-LABEL: func.func @i2s_gemv(
// GENERIC: scf.for %{{.*}} = %c0 to %c16 step %c8 {
// GENERIC: lowbit.uk.load %{{.*}} : memref<?xui8> -> vector<4xi8>
// GENERIC: lowbit.uk.dot4 %{{.*}} : vector<4xi8> -> vector<1xi32>
// GENERIC-COUNT-8: lowbit.uk.ternary_scale %{{.*}} : vector<1xi32> -> vector<1xf32>
// GENERIC-LABEL: func.func @w2g64_gemm(
func.func @i2s_gemv(%x: tensor<?x100xf32>, %w: tensor<3x8x64xi8>, %s: tensor<1xf32>) -> tensor<?x33xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<vnni4, tile_m = 16, tile_k = 16>,
         config = #lowbit.upconvert<tile_m = 16, tile_k = 64, tile_n = 1, prefetch = 16>}
       : (tensor<?x100xf32>, tensor<3x8x64xi8>, tensor<1xf32>) -> tensor<?x33xf32>
  return %y : tensor<?x33xf32>
}

// Group format GEMM with 2 tiles x 2 columns: whole tile groups then single
// tiles, blocks of 2 columns then single columns; f32 outputs are carried
// through the K loop. Each 32-k block is added to the float sums of its
// scale group with the group's zero points (loaded once per group), and
// each group folded into the outputs with its scales (tile_k = 64: one
// group per iteration). M = 40 is not a multiple of 16: stores take a row
// count.
// AVX512-LABEL: func.func @w2g64_gemm(
// AVX512: %[[TB:.*]] = arith.index_cast %{{.*}} : i64 to index
// AVX512: %[[TE:.*]] = arith.index_cast %{{.*}} : i64 to index
// AVX512: %[[POS:.*]] = arith.cmpi sgt, %[[TE]], %[[TB]] : index
// AVX512: %[[CNT:.*]] = arith.select %[[POS]], %{{.*}}, %c0 : index
// AVX512: %[[GROUPS:.*]] = arith.divsi %[[CNT]], %c2 : index
// AVX512: %[[GEND:.*]] = arith.addi %[[TB]], %{{.*}} : index
// AVX512: scf.for %{{.*}} = %[[TB]] to %[[GEND]] step %c2 {
// AVX512: scf.for %{{.*}} = %c0 to %{{.*}} step %c2 {
// AVX512: scf.for {{.*}} iter_args(%[[Y0:[a-z0-9_]+]] = %[[ZF:[a-z0-9_]+]], {{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// AVX512: %[[ZP:.*]] = lowbit.uk.load_half %{{.*}}[%[[SOFF:.*]]] : memref<?xui16> -> vector<16xf32>
// AVX512: %[[BS:.*]] = memref.load %{{.*}} : memref<?xi32>
// AVX512: %[[BX:.*]] = memref.load %{{.*}} : memref<?xf32>
// AVX512: %[[INV:.*]] = arith.divf %cst{{.*}}, %[[BX]] : f32
// AVX512-NOT: load_half
// AVX512: %[[G:.*]] = lowbit.uk.block_combine %[[ZF]], %{{.*}}, %[[INV]] zero(%[[ZP]], %[[BS]] : vector<16xf32>) : vector<16xi32> -> vector<16xf32>
// AVX512-NOT: load_half
// AVX512: %[[G2:.*]] = lowbit.uk.block_combine %[[G]], %{{.*}}, %{{.*}} zero(%[[ZP]], %{{.*}} : vector<16xf32>) : vector<16xi32> -> vector<16xf32>
// AVX512: %[[SC:.*]] = lowbit.uk.load_half %{{.*}}[%[[SOFF]]] : memref<?xui16> -> vector<16xf32>
// AVX512: lowbit.uk.group_combine %[[Y0]], %[[G2]], %[[SC]] : vector<16xf32>
// AVX512: scf.yield
// AVX512: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c1{{.*}} {
// AVX512: scf.for %{{.*}} = %[[GEND]] to %[[TE]] step %c1{{.*}} {
// AVX512: return

// With 16 ymm registers, 2 tiles x 2 slices x 2 columns of (int32 + f32)
// accumulators do not fit: an outer loop walks the two slices.
// AVX2-LABEL: func.func @w2g64_gemm(
// AVX2: scf.for %{{.*}} = %c0 to %c2 step %c1{{.*}} {
// AVX2: scf.for {{.*}} iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// AVX2: lowbit.uk.block_combine {{.*}} zero({{.*}} : vector<8xf32>) : vector<8xi32> -> vector<8xf32>
// AVX2: lowbit.uk.group_combine {{.*}} : vector<8xf32>
func.func @w2g64_gemm(%x: tensor<?x128xf32>, %w: tensor<3x8x64xi8>, %s: tensor<40x2x2xf16>) -> tensor<?x40xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = unsigned, group = 64, scale = per_group>,
         layout = #lowbit.layout<vnni4, tile_m = 16, tile_k = 16>,
         config = #lowbit.upconvert<tile_m = 32, tile_k = 64, tile_n = 2>}
       : (tensor<?x128xf32>, tensor<3x8x64xi8>, tensor<40x2x2xf16>) -> tensor<?x40xf32>
  return %y : tensor<?x40xf32>
}

// Binary (q = 2c - 1: doubled codes, the block's accumulator starts at -S)
// and Q4_0 (q = c - 8: starts at -8 S) fold their zero point into the
// integer dot product; M = 64 needs no row count.
// AVX512-LABEL: func.func @w1g128(
// AVX512: %[[S:.*]] = memref.load %{{.*}} : memref<?xi32>
// AVX512: %[[NEG:.*]] = arith.muli %[[S]], %c-1_i32 : i32
// AVX512: %[[START:.*]] = vector.broadcast %[[NEG]] : i32 to vector<16xi32>
// AVX512: lowbit.uk.unpack %{{.*}} {bits = 1 : i64, plane = 0 : i64, scale = 1 : i64} : vector<64xi8>
// AVX512: lowbit.uk.dot4 %[[START]],
// AVX512: lowbit.uk.unpack %{{.*}} {bits = 1 : i64, plane = 7 : i64, scale = 1 : i64} : vector<64xi8>
// AVX512-COUNT-4: lowbit.uk.block_combine %{{.*}} : vector<16xi32> -> vector<16xf32>
// AVX512: lowbit.uk.group_combine %{{.*}} : vector<16xf32>
// AVX512: lowbit.uk.store %{{.*}}, %{{.*}}[%{{.*}}] : vector<16xf32>, memref<?xf32>
func.func @w1g128(%x: tensor<?x256xf32>, %w: tensor<4x8x64xi8>, %s: tensor<64x2xf16>) -> tensor<?x64xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 1, encoding = binary, group = 128, scale = per_group>,
         layout = #lowbit.layout<vnni4, tile_m = 16, tile_k = 32>,
         config = #lowbit.upconvert<tile_m = 16, tile_k = 128, tile_n = 1>}
       : (tensor<?x256xf32>, tensor<4x8x64xi8>, tensor<64x2xf16>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// AVX512-LABEL: func.func @q4_0(
// AVX512: arith.muli %{{.*}}, %c-8_i32 : i32
// AVX512: vector.broadcast
// AVX512: lowbit.uk.unpack %{{.*}} {bits = 4 : i64, plane = 1 : i64} : vector<64xi8>
// AVX512: lowbit.uk.block_combine %{{.*}} : vector<16xi32> -> vector<16xf32>
func.func @q4_0(%x: tensor<?x64xf32>, %w: tensor<3x8x64xi8>) -> tensor<?x40xf32> {
  %y = lowbit.mpgemm %x, %w {
         weight = #lowbit.weight<bits = 4, encoding = gguf_q4_0, group = 32, scale = per_block>,
         layout = #lowbit.layout<vnni4, tile_m = 16, tile_k = 8>,
         config = #lowbit.upconvert<tile_m = 16, tile_k = 64, tile_n = 1>}
       : (tensor<?x64xf32>, tensor<3x8x64xi8>) -> tensor<?x40xf32>
  return %y : tensor<?x40xf32>
}
