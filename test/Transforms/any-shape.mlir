// RUN: lowbit-opt %s --lowbit-select-config="target=x86-avx512vnni threads=2" --lowbit-pack-layout | FileCheck %s --check-prefix=SELECT
// RUN: lowbit-opt %s --lowbit-select-config="target=x86-avx512vnni threads=2 n-hint=128" | FileCheck %s --check-prefix=GEMM
// RUN: lowbit-opt %s --lowbit-select-config="target=x86-avx512vnni threads=2" --lowbit-pack-layout --lowbit-lower-upconvert --cse | FileCheck %s --check-prefix=LOWER
// RUN: lowbit-opt %s --lowbit-upconvert-pipeline="target=x86-avx2" | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefix=CPP
// RUN: lowbit-opt %s --lowbit-upconvert-pipeline="target=generic" | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefix=CPP
// RUN: lowbit-opt %s --lowbit-upconvert-pipeline="target=x86-avx512vnni n-hint=128" | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefix=CPP
// RUN: lowbit-opt %s --lowbit-upconvert-pipeline="target=aarch64-neon" | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefix=CPP
// RUN: lowbit-opt %s --lowbit-upconvert-pipeline="target=aarch64-neon-nodot" | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefix=CPP

// The any-shape form of lowbit.mpgemm: M and K dynamic (tensor<?x?xf32>),
// every operand size that depends on them too. select-config takes the
// heuristic's config with the parts that depend on M or K fixed,
// pack-layout the vnni4 layout with packed tensor<?x?x64xi8>, and
// lower-upconvert writes lowbit_any_kernel_fn (kernel_abi.h): M and K are
// its last two parameters and every K-dependent size (blocks, vectors per
// tile, groups per row, the activation row stride) and the partial-tile
// store are index arithmetic on them.

// Ternary: the block loop runs ceil(K / 32) / 2 iterations of tile_k = 64,
// then the remaining block one at a time.
// SELECT-LABEL: func.func @i2s_any(
// SELECT-SAME: tensor<?x?x64xi8>
// SELECT: config = #lowbit.upconvert<tile_m = 16, tile_k = 64, tile_n = 1, prefetch = 16>
// SELECT-SAME: layout = #lowbit.layout<vnni4, tile_m = 16, tile_k = 16>
// SELECT-SAME: (tensor<?x?xf32>, tensor<?x?x64xi8>, tensor<1xf32>) -> tensor<?x?xf32>

// For N > 1, the tiles of a large M (4 x 16 rows, the register block),
// not of a particular one.
// GEMM-LABEL: func.func @i2s_any(
// GEMM: config = #lowbit.upconvert<tile_m = 64, tile_k = 64, tile_n = 4>

// LOWER-LABEL: func.func @i2s_any(
// LOWER-SAME: %[[CODES:[^:]*]]: memref<?xui8> {lowbit.readonly}
// LOWER-SAME: %[[Y:[^:]*]]: memref<?xf32>, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: f32, %[[MARG:[^:]*]]: i64, %[[KARG:[^:]*]]: i64) {
// LOWER: %[[M:.*]] = arith.index_cast %[[MARG]] : i64 to index
// LOWER: %[[K:.*]] = arith.index_cast %[[KARG]] : i64 to index
// LOWER: %[[K31:.*]] = arith.addi %[[K]], %c31 : index
// LOWER: %[[BLOCKS:.*]] = arith.divsi %[[K31]], %c32 : index
// LOWER: %[[KP:.*]] = arith.muli %[[BLOCKS]], %c32 : index
// LOWER: %[[M15:.*]] = arith.addi %[[M]], %c15 : index
// LOWER: %[[TILES:.*]] = arith.divsi %[[M15]], %c16 : index
// LOWER: %[[VPT:.*]] = arith.muli %[[BLOCKS]], %c2 : index
// LOWER: %[[VECS:.*]] = arith.muli %[[TILES]], %[[VPT]] : index
// LOWER: %[[BYTES:.*]] = arith.muli %[[VECS]], %c64 : index
// LOWER: %[[LAST:.*]] = arith.subi %[[BYTES]], %c64 : index
// LOWER: scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step %c1 {
// LOWER: scf.for %[[COL:.*]] = %c0 to %{{.*}} step %c1 {
// LOWER: %[[ITERS:.*]] = arith.divsi %[[BLOCKS]], %c2 : index
// LOWER: %[[MAIN:.*]]:4 = scf.for %{{.*}} = %c0 to %[[ITERS]] step %c1 iter_args(
// LOWER: %[[TOFF:.*]] = arith.muli %[[T]], %[[VPT]] : index
// LOWER: lowbit.uk.load %[[CODES]]
// LOWER: arith.cmpi ult, %{{.*}}, %[[LAST]] : index
// LOWER: %[[XROW:.*]] = arith.muli %[[COL]], %[[KP]] : index
// LOWER: lowbit.uk.dot4
// LOWER: scf.yield
// LOWER: %[[DONE:.*]] = arith.muli %[[ITERS]], %c2 : index
// LOWER: %[[REST:.*]]:4 = scf.for %{{.*}} = %[[DONE]] to %[[BLOCKS]] step %c1 iter_args({{.*}} = %[[MAIN]]#0, {{.*}} = %[[MAIN]]#1, {{.*}} = %[[MAIN]]#2, {{.*}} = %[[MAIN]]#3)
// LOWER: lowbit.uk.dot4
// LOWER: scf.yield
// LOWER: lowbit.uk.shr_exact %[[REST]]#1
// LOWER: lowbit.uk.ternary_scale
// Rows of the tile below the run-time M: clamp(M - 16 t, 0, 16).
// LOWER: %[[ROW:.*]] = arith.muli %[[T]], %c16 : index
// LOWER: %[[PAST:.*]] = arith.cmpi sge, %[[ROW]], %[[M]] : index
// LOWER: %[[LEFT:.*]] = arith.subi %[[M]], %[[ROW]] : index
// LOWER: %[[SOME:.*]] = arith.select %{{.*}}, %[[LEFT]], %c16 : index
// LOWER: %[[COUNT:.*]] = arith.select %[[PAST]], %c0, %[[SOME]] : index
// LOWER: %[[YROW:.*]] = arith.muli %[[COL]], %[[M]] : index
// LOWER: %[[YAT:.*]] = arith.addi %[[YROW]], %[[ROW]] : index
// LOWER: lowbit.uk.store %{{.*}}, %[[Y]][%[[YAT]]], %[[COUNT]] : vector<16xf32>, memref<?xf32>
// LOWER: return

// CPP-LABEL: extern "C" void i2s_any(const uint8_t* v1, const uint16_t* v2, const uint16_t* v3, const int8_t* v4, const float* v5, const int32_t* v6, float* v7, int64_t v8, int64_t v9, int64_t v10, float v11, int64_t v12, int64_t v13) {
func.func @i2s_any(%x: tensor<?x?xf32>, %w: tensor<?x?xi8>, %s: tensor<1xf32>) -> tensor<?x?xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<i2s>}
       : (tensor<?x?xf32>, tensor<?x?xi8>, tensor<1xf32>) -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}

// A group format: scales tensor<?x?x2xf16>; groups of 4 blocks (G = 128)
// are one loop over ceil(K / 32) / 4 iterations, scales and zero points at
// tile * (Kp / 128) + group.
// SELECT-LABEL: func.func @w2g128_any(
// SELECT: config = #lowbit.upconvert<tile_m = 16, tile_k = 64, tile_n = 1, prefetch = 16>
// SELECT-SAME: (tensor<?x?xf32>, tensor<?x?x64xi8>, tensor<?x?x2xf16>) -> tensor<?x?xf32>

// LOWER-LABEL: func.func @w2g128_any(
// LOWER: arith.index_cast %arg11 : i64 to index
// LOWER: %[[K:.*]] = arith.index_cast %arg12 : i64 to index
// LOWER: %[[K31:.*]] = arith.addi %[[K]], %c31 : index
// LOWER: %[[BLOCKS:.*]] = arith.divsi %[[K31]], %c32 : index
// LOWER: %[[KP:.*]] = arith.muli %[[BLOCKS]], %c32 : index
// LOWER: %[[GROUPS:.*]] = arith.divsi %[[KP]], %c128 : index
// LOWER: %[[CHUNKS:.*]] = arith.divsi %[[BLOCKS]], %c4 : index
// LOWER: scf.for %[[G:.*]] = %c0 to %[[CHUNKS]] step %c1 iter_args(
// LOWER: %[[GT:.*]] = arith.muli %{{.*}}, %[[GROUPS]] : index
// LOWER: lowbit.uk.load_half
// LOWER: lowbit.uk.block_combine
// LOWER: lowbit.uk.group_combine
// LOWER: scf.yield
// LOWER-NOT: scf.for
// LOWER: lowbit.uk.store
// LOWER: return

// CPP-LABEL: extern "C" void w2g128_any(const uint8_t* v1, const uint16_t* v2, const uint16_t* v3, const int8_t* v4, const float* v5, const int32_t* v6, float* v7, int64_t v8, int64_t v9, int64_t v10, float v11, int64_t v12, int64_t v13) {
func.func @w2g128_any(%x: tensor<?x?xf32>, %w: tensor<?x?xi8>, %s: tensor<?x?x2xf16>) -> tensor<?x?xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = unsigned, group = 128, scale = per_group>,
         layout = #lowbit.layout<canonical>}
       : (tensor<?x?xf32>, tensor<?x?xi8>, tensor<?x?x2xf16>) -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}

// q4_0: one block per group; groups of tile_k / 32 = 2 blocks per
// iteration, then the remaining group.
// LOWER-LABEL: func.func @q4_0_any(
// LOWER: %[[BLOCKS:.*]] = arith.divsi %{{.*}}, %c32 : index
// LOWER: %[[CHUNKS:.*]] = arith.divsi %[[BLOCKS]], %c2 : index
// LOWER: %[[MAIN:.*]] = scf.for %{{.*}} = %c0 to %[[CHUNKS]] step %c1 iter_args(
// LOWER: scf.yield
// LOWER: %[[DONE:.*]] = arith.muli %[[CHUNKS]], %c2 : index
// LOWER: scf.for %{{.*}} = %[[DONE]] to %[[BLOCKS]] step %c1 iter_args(
// LOWER: return

// CPP-LABEL: extern "C" void q4_0_any(
// CPP-SAME: float v11, int64_t v12, int64_t v13) {
func.func @q4_0_any(%x: tensor<?x?xf32>, %w: tensor<?x?xi8>) -> tensor<?x?xf32> {
  %y = lowbit.mpgemm %x, %w {
         weight = #lowbit.weight<bits = 4, encoding = gguf_q4_0, group = 32, scale = per_block>,
         layout = #lowbit.layout<gguf>}
       : (tensor<?x?xf32>, tensor<?x?xi8>) -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}
