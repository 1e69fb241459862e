// RUN: lowbit-opt %s --lowbit-select-config="target=x86-avx512vnni threads=2" --lowbit-pack-layout | FileCheck %s --check-prefix=SELECT
// RUN: lowbit-opt %s --lowbit-select-config="target=x86-avx512vnni threads=2" --lowbit-pack-layout --lowbit-lower-lut-elementwise --cse | FileCheck %s --check-prefix=LOWER
// RUN: lowbit-opt %s --lowbit-lut-elementwise-pipeline="target=x86-avx2" | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefix=CPP
// RUN: lowbit-opt %s --lowbit-lut-elementwise-pipeline="target=x86-avx512vnni n-hint=128" | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefix=CPP
// RUN: lowbit-opt %s --lowbit-lut-elementwise-pipeline="target=aarch64-neon" | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefix=CPP

// The any-shape form of the tl1/tl2 kernels (lowbit_any_kernel_fn of
// kernel_abi.h, the layout of lut_abi.h): select-config's tiles do not
// depend on M or K, pack-layout gives tensor<?x?xi8>, and
// lowbit-lower-lut-elementwise computes lut_abi.h's split from the K
// argument (TL2 blocks K / 96, TL1 vectors, panels max(1, (blocks + 8) /
// 16) of ceil(blocks / panels) blocks) and sweeps a thread's tiles in
// batches of 64, panel after panel, the last panel with the TL1 vectors,
// the header and the stores against the M argument. The stack buffers start
// at a multiple of 64 bytes (no table load straddles a cache line), and a
// full tile stores whole registers, only a partial one masked.

// SELECT-LABEL: func.func @tl2_any(
// SELECT: config = #lowbit.lut_elementwise<bm = 16, bk = 96, sub_m = 16>
// SELECT-SAME: layout = #lowbit.layout<tl2, tile_m = 16, tile_k = 96, interleave = 16>
// SELECT-SAME: (tensor<?x?xf32>, tensor<?x?xi8>, tensor<1xf32>) -> tensor<?x?xf32>

// LOWER-LABEL: func.func @tl2_any(
// LOWER-SAME: %[[Y:[^:]*]]: memref<?xf32>, %{{.*}}: i64, %[[TB:[^:]*]]: i64, %[[TE:[^:]*]]: i64, %{{.*}}: f32, %[[MARG:[^:]*]]: i64, %[[KARG:[^:]*]]: i64) {
// LOWER: %[[M:.*]] = arith.index_cast %[[MARG]] : i64 to index
// LOWER: %[[K:.*]] = arith.index_cast %[[KARG]] : i64 to index
// LOWER: %[[BLOCKS:.*]] = arith.divsi %[[K]], %c96 : index
// LOWER: %[[K2:.*]] = arith.muli %[[BLOCKS]], %c96 : index
// LOWER: %[[REST:.*]] = arith.subi %[[K]], %[[K2]] : index
// LOWER: %[[REST15:.*]] = arith.addi %[[REST]], %c15 : index
// LOWER: %[[TL1:.*]] = arith.divsi %[[REST15]], %c16 : index
// LOWER: %[[B8:.*]] = arith.addi %[[BLOCKS]], %c8 : index
// LOWER: %[[ROUNDED:.*]] = arith.divsi %[[B8]], %c16 : index
// LOWER: %[[NONE:.*]] = arith.cmpi slt, %[[ROUNDED]], %c1 : index
// LOWER: %[[PANELS:.*]] = arith.select %[[NONE]], %c1, %[[ROUNDED]] : index
// LOWER: %[[PANELBLOCKS:.*]] = arith.divsi %{{.*}}, %[[PANELS]] : index
// LOWER: %[[LASTPANEL:.*]] = arith.subi %[[PANELS]], %c1 : index
// The tables of all K: 4 per TL2 block, then the TL1 vectors.
// LOWER: lowbit.uk.stack_buffer {alignment = 64 : i64, bytes = 349696 : i64}
// The int32 sums of a batch's 64 tiles between panels, one register per
// tile (its pairs combined, low + 256 high).
// LOWER: lowbit.uk.stack_buffer {alignment = 64 : i64, bytes = 4096 : i64}
// LOWER: %[[VECS:.*]] = arith.muli %[[BLOCKS]], %c4 : index
// LOWER: scf.for %{{.*}} = %c0 to %[[VECS]] step %c1 {
// LOWER: lowbit.uk.lut_tables {{.*}} {width = 3 : i64}
// LOWER: scf.for %{{.*}} = %c0 to %[[TL1]] step %c1 {
// LOWER: lowbit.uk.lut_tables {{.*}} {width = 2 : i64}
// A thread's tiles in batches of 64, each panel by panel.
// LOWER: scf.for %[[BATCH:.*]] = %{{.*}} to %{{.*}} step %c64 {
// LOWER: scf.for %[[PANEL:.*]] = %c0 to %[[LASTPANEL]] step %c1 {
// LOWER: scf.for %{{.*}} = %[[BATCH]] to %{{.*}} step %c1 {
// LOWER: %[[FIRST:.*]] = arith.cmpi eq, %[[PANEL]], %c0 : index
// LOWER: arith.select %[[FIRST]], %{{.*}}, %{{.*}} : vector<16xi32>
// LOWER: %[[FB:.*]] = arith.muli %[[PANEL]], %[[PANELBLOCKS]] : index
// LOWER: lowbit.uk.lut_dot
// LOWER: lowbit.uk.spill
// The last panel: its blocks, the TL1 vectors, the header, the stores.
// LOWER: scf.for %{{.*}} = %[[BATCH]] to %{{.*}} step %c1 {
// LOWER: lowbit.uk.lut_dot
// LOWER: scf.for %{{.*}} = %c0 to %[[TL1]] step %c1 iter_args(
// LOWER: lowbit.uk.lut_dot
// LOWER: arith.cmpi sge, %{{.*}}, %[[M]] : index
// LOWER: %[[SOME:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : index
// LOWER: %[[LEFT:.*]] = arith.select %{{.*}}, %c0, %[[SOME]] : index
// LOWER: lowbit.uk.lut_combine
// LOWER: %[[FULL:.*]] = arith.cmpi eq, %[[LEFT]], %c16 : index
// LOWER-NEXT: scf.if %[[FULL]] {
// LOWER-NEXT: lowbit.uk.store %{{.*}}, %[[Y]][%{{.*}}] : vector<16xf32>
// LOWER-NEXT: } else {
// LOWER-NEXT: lowbit.uk.store %{{.*}}, %[[Y]][%{{.*}}], %[[LEFT]] : vector<16xf32>
// LOWER: return

// CPP-LABEL: extern "C" void tl2_any(
// CPP-SAME: float v11, int64_t v12, int64_t v13) {
// CPP: int8_t [[BUF:v[0-9]+]][{{[0-9]+}}];
// CPP-NEXT: size_t [[ZERO:v[0-9]+]] = 0;
// CPP-NEXT: int8_t* [[START:v[0-9]+]] = &[[BUF]][[[ZERO]]];
// CPP-NEXT: size_t [[ADDRESS:v[0-9]+]] = (size_t) [[START]];
// CPP-NEXT: size_t [[A63:v[0-9]+]] = 63;
// CPP-NEXT: size_t [[UP:v[0-9]+]] = [[ADDRESS]] + [[A63]];
// CPP-NEXT: size_t [[MASK:v[0-9]+]] = -64;
// CPP-NEXT: size_t [[ROUNDED:v[0-9]+]] = [[UP]] & [[MASK]];
// CPP-NEXT: int8_t* {{v[0-9]+}} = (int8_t*) [[ROUNDED]];
func.func @tl2_any(%x: tensor<?x?xf32>, %w: tensor<?x?xi8>, %s: tensor<1xf32>) -> tensor<?x?xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<tl2>}
       : (tensor<?x?xf32>, tensor<?x?xi8>, tensor<1xf32>) -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}

// TL1 alone: every K in TL1 vectors, one panel.
// LOWER-LABEL: func.func @tl1_any(
// LOWER: %[[K:.*]] = arith.index_cast %arg12 : i64 to index
// LOWER: %[[REST15:.*]] = arith.addi %[[K]], %c15 : index
// LOWER: %[[TL1:.*]] = arith.divsi %[[REST15]], %c16 : index
// LOWER: lowbit.uk.stack_buffer {alignment = 64 : i64, bytes = 524288 : i64}
// LOWER: scf.for %{{.*}} = %c0 to %[[TL1]] step %c1 {
// LOWER: lowbit.uk.lut_tables {{.*}} {width = 2 : i64}
// LOWER: return

// CPP-LABEL: extern "C" void tl1_any(
// CPP-SAME: float v11, int64_t v12, int64_t v13) {
func.func @tl1_any(%x: tensor<?x?xf32>, %w: tensor<?x?xi8>, %s: tensor<1xf32>) -> tensor<?x?xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<tl1>}
       : (tensor<?x?xf32>, tensor<?x?xi8>, tensor<1xf32>) -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}
