// RUN: lowbit-opt %s --lowbit-select-config="target=x86-avx512vnni strategy=lut-bitserial" --lowbit-pack-layout | FileCheck %s --check-prefix=SELECT
// RUN: lowbit-opt %s --lowbit-select-config="target=x86-avx512vnni strategy=lut-bitserial" --lowbit-pack-layout --lowbit-lower-lut-bitserial --cse | FileCheck %s --check-prefix=LOWER
// RUN: lowbit-opt %s --lowbit-lut-bitserial-pipeline="target=x86-avx2" | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefix=CPP
// RUN: lowbit-opt %s --lowbit-lut-bitserial-pipeline="target=x86-avx512vnni n-hint=128" | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefix=CPP
// RUN: lowbit-opt %s --lowbit-lut-bitserial-pipeline="target=aarch64-neon" | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefix=CPP

// The any-shape form of the lut-bitserial (T-MAC) kernels
// (lowbit_any_kernel_fn of kernel_abi.h, the bit-plane layout of
// bitserial_abi.h): select-config's lut_bitserial config does not depend on
// M or K, pack-layout gives tensor<?x?xi8>, and lowbit-lower-lut-bitserial
// computes bitserial_abi.h's split from the K argument (blocks Kp / 32,
// panels of ceil(blocks / max(1, ceil(blocks / 64))) blocks rounded up to
// whole scale groups), builds the tables of the run-time blocks into a
// buffer sized for K = 32768, and sweeps a thread's tiles over the full
// panels in an scf.for, then the last panel with the stores against the M
// argument.

// SELECT-LABEL: func.func @w3g64_bs_any(
// SELECT: config = #lowbit.lut_bitserial<bm = 16, kfactor = 16>
// SELECT-SAME: layout = #lowbit.layout<bitplanes, tile_m = 16, tile_k = 32, interleave = 16>
// SELECT-SAME: (tensor<?x?xf32>, tensor<?x?xi8>, tensor<?x?x2xf16>) -> tensor<?x?xf32>

// LOWER-LABEL: func.func @w3g64_bs_any(
// LOWER-SAME: %[[SCALES:[^:]*]]: memref<?xui16> {lowbit.readonly}, %[[ZEROS:[^:]*]]: memref<?xui16> {lowbit.readonly},
// LOWER-SAME: %[[MARG:[^:]*]]: i64, %[[KARG:[^:]*]]: i64) {
// LOWER: %[[M:.*]] = arith.index_cast %[[MARG]] : i64 to index
// LOWER: %[[K:.*]] = arith.index_cast %[[KARG]] : i64 to index
// LOWER: %[[K31:.*]] = arith.addi %[[K]], %c31 : index
// LOWER: %[[BLOCKS:.*]] = arith.divsi %[[K31]], %c32 : index
// LOWER: %[[B63:.*]] = arith.addi %[[BLOCKS]], %c63 : index
// LOWER: %[[GUESS:.*]] = arith.divsi %[[B63]], %c64 : index
// LOWER: %[[NONE:.*]] = arith.cmpi slt, %[[GUESS]], %c1 : index
// LOWER: arith.select %[[NONE]], %c1, %[[GUESS]] : index
// Panels of whole groups of 64 (2 blocks), the last with the rest.
// LOWER: %[[HALF:.*]] = arith.divsi %{{.*}}, %c2 : index
// LOWER: %[[PANELBLOCKS:.*]] = arith.muli %[[HALF]], %c2 : index
// LOWER: %[[PANELS:.*]] = arith.divsi %{{.*}}, %[[PANELBLOCKS]] : index
// LOWER: %[[LASTPANEL:.*]] = arith.subi %[[PANELS]], %c1 : index
// The tables of K = 32768 (1024 blocks x 256 bytes), the partial outputs.
// LOWER: lowbit.uk.stack_buffer {bytes = 262144 : i64}
// LOWER: lowbit.uk.stack_buffer {bytes = 524288 : i64}
// LOWER: scf.for %[[COL:.*]] = %c0 to %{{.*}} step %c1 {
// LOWER: %[[ROWBLOCKS:.*]] = arith.muli %[[COL]], %[[BLOCKS]] : index
// LOWER: arith.muli %[[ROWBLOCKS]], %c32 : index
// LOWER: scf.for %{{.*}} = %c0 to %[[BLOCKS]] step %c1 {
// LOWER: lowbit.uk.lut_tables {{.*}} {width = 4 : i64}
// A thread's tiles in ranges, each over the full panels, then the last.
// LOWER: scf.for %[[FIRST:.*]] = %{{.*}} to %{{.*}} step %c8192 {
// LOWER: scf.for %[[PANEL:.*]] = %c0 to %[[LASTPANEL]] step %c1 {
// LOWER: scf.for %{{.*}} = %[[FIRST]] to %{{.*}} step %c1 {
// LOWER: %[[ISFIRST:.*]] = arith.cmpi eq, %[[PANEL]], %c0 : index
// LOWER: arith.select %[[ISFIRST]], %{{.*}}, %{{.*}} : vector<16xf32>
// LOWER: lowbit.uk.load_half %[[ZEROS]]
// LOWER: lowbit.uk.lut_dot
// LOWER: lowbit.uk.block_combine
// LOWER: lowbit.uk.load_half %[[SCALES]]
// LOWER: lowbit.uk.group_combine
// LOWER: lowbit.uk.spill
// LOWER: scf.for %{{.*}} = %[[FIRST]] to %{{.*}} step %c1 {
// LOWER: arith.cmpi eq, %[[LASTPANEL]], %c0 : index
// LOWER: lowbit.uk.lut_dot
// LOWER: arith.cmpi sge, %{{.*}}, %[[M]] : index
// LOWER: lowbit.uk.store
// LOWER: return

// CPP-LABEL: extern "C" void w3g64_bs_any(
// CPP-SAME: float v11, int64_t v12, int64_t v13) {
func.func @w3g64_bs_any(%x: tensor<?x?xf32>, %w: tensor<?x?xi8>, %s: tensor<?x?x2xf16>) -> tensor<?x?xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 3, encoding = unsigned, group = 64, scale = per_group>,
         layout = #lowbit.layout<canonical>}
       : (tensor<?x?xf32>, tensor<?x?xi8>, tensor<?x?x2xf16>) -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}

// Ternary: the high sums start at minus the table bias of the run-time
// groups (8 per block, 128 x (2^2 - 1) each).
// LOWER-LABEL: func.func @i2s_bs_any(
// LOWER: %[[K:.*]] = arith.index_cast %arg12 : i64 to index
// LOWER: %[[K31:.*]] = arith.addi %[[K]], %c31 : index
// LOWER: %[[BLOCKS:.*]] = arith.divsi %[[K31]], %c32 : index
// LOWER: %[[GROUPS:.*]] = arith.muli %[[BLOCKS]], %c8 : index
// LOWER: %[[BIAS:.*]] = arith.muli %[[GROUPS]], %c-384 : index
// LOWER: %[[LANE:.*]] = arith.index_cast %[[BIAS]] : index to i32
// LOWER: vector.broadcast %[[LANE]] : i32 to vector<16xi32>
// LOWER: lowbit.uk.lut_dot
// LOWER: lowbit.uk.ternary_scale
// LOWER: return

// CPP-LABEL: extern "C" void i2s_bs_any(
// CPP-SAME: float v11, int64_t v12, int64_t v13) {
func.func @i2s_bs_any(%x: tensor<?x?xf32>, %w: tensor<?x?xi8>, %s: tensor<1xf32>) -> tensor<?x?xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<i2s>}
       : (tensor<?x?xf32>, tensor<?x?xi8>, tensor<1xf32>) -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}

// CPP-LABEL: extern "C" void w1g128_bs_any(
// CPP-SAME: float v11, int64_t v12, int64_t v13) {
func.func @w1g128_bs_any(%x: tensor<?x?xf32>, %w: tensor<?x?xi8>, %s: tensor<?x?xf16>) -> tensor<?x?xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 1, encoding = binary, group = 128, scale = per_group>,
         layout = #lowbit.layout<canonical>}
       : (tensor<?x?xf32>, tensor<?x?xi8>, tensor<?x?xf16>) -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}
