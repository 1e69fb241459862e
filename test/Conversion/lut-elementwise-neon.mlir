// RUN: lowbit-opt %S/Inputs/tl-formats.mlir --lowbit-lut-elementwise-pipeline="target=aarch64-neon" | mlir-translate --mlir-to-cpp | FileCheck %s --implicit-check-not=_mm
// RUN: lowbit-opt %S/Inputs/tl-formats.mlir --lowbit-lut-elementwise-pipeline="target=aarch64-neon-nodot n-hint=16" | mlir-translate --mlir-to-cpp | FileCheck %s --implicit-check-not=_mm

// The shared lut-elementwise lowering on NEON: TargetInfo's lut registers
// are pairs of 16-byte registers (two table lanes, 8 int32 rows), each
// lane looked up with tbl (vqtbl1q_u8) as bitnet.cpp's TL1 does on ARM.

// CHECK: #include <arm_neon.h>
// CHECK-LABEL: extern "C" void tl1(
// Tables: d0 x0 + d1 x1 per group from constant digit vectors, split into
// low and high bytes.
// CHECK: const int16_t {{v[0-9]+}}[8] = {-1, -1, -1, 0, 0, 0, 1, 1};
// CHECK: vmulq_n_s16(
// CHECK: vmlaq_n_s16(
// CHECK: vuzp1q_u8(
// CHECK: vuzp2q_u8(
// CHECK: vst1q_u8(
// Lookups: a pair of index registers, nibbles, four tbl per table lane.
// CHECK: uint8x16x2_t [[IDX:v[0-9]+]] = vld1q_u8_x2(
// CHECK: vandq_u8(
// CHECK: vshrq_n_u8({{.*}}, 4);
// CHECK: vqtbl1q_u8(
// CHECK: vqtbl1q_u8(
// CHECK: vqtbl1q_u8(
// CHECK: vqtbl1q_u8(
// CHECK: vzip1q_u8(
// CHECK: vaddq_s16(
// CHECK: vzip2q_u8(
// Widening: both table lanes' int16 rows into int32.
// CHECK: vaddl_s16(
// CHECK: vaddl_high_s16(
// The per-row header, then the exact ternary scaling.
// CHECK: vld1q_s32_x2(
// CHECK: vdivq_f32(
// CHECK: vst1q_lane_f32({{.*}}, 3);

// CHECK-LABEL: extern "C" void tl2(
// TL2 signs: a mask per group bit, xor on the looked-up bytes.
// CHECK: vtstq_u8(
// CHECK: veorq_u8(
