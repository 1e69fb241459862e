// RUN: lowbit-opt %S/Inputs/bitserial-formats.mlir --lowbit-lut-bitserial-pipeline="target=aarch64-neon" | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefixes=CHECK,DOT --implicit-check-not=_mm --implicit-check-not=vdotq_s32
// RUN: lowbit-opt %S/Inputs/bitserial-formats.mlir --lowbit-lut-bitserial-pipeline="target=aarch64-neon-nodot n-hint=16" | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefixes=CHECK,NODOT --implicit-check-not=_mm --implicit-check-not=vdotq --implicit-check-not=vmull_s8

// The shared lut-bitserial lowering on NEON: the ±1 tables of lut_tables
// width 4 from digit vectors (the signs of bits 0..3 of the 16 entries, 8
// per int16x8_t: bit 3 is -1 for entries 0..7 and +1 for 8..15), split into
// low and biased high bytes; the plane weight 2 as splatted multiplier
// bytes (vdupq_n_u8); per plane vector register the index nibble | 16 x
// table (bsl, sri) and tbl of the 64-byte tables (vqtbl4q_u8); every plane
// summed unsigned, the splatted weight being a known non-negative constant
// (udot with ones for plane 0 and with the weight for plane 1; nodot
// uaddlp, times the widened weight, uadalp): no signed dot product at all;
// both nibbles on one accumulator pair (16-byte registers: the tables' 16
// q registers leave room for 8 accumulators, not 16), so one lut_combine
// per register, then the linear transform (shift right by 1) and the
// ternary scale, stored lane by lane below the row count.

// CHECK: #include <arm_neon.h>
// CHECK-LABEL: extern "C" void i2s(
// CHECK: int8_t {{v[0-9]+}}[{{1024|2048}}];
// CHECK: [[TWO:v[0-9]+]] = vdupq_n_u8(2)
// CHECK: const int16_t {{v[0-9]+}}[8] = {-1, 1, -1, 1, -1, 1, -1, 1};
// CHECK: const int16_t {{v[0-9]+}}[8] = {-1, -1, 1, 1, -1, -1, 1, 1};
// CHECK: const int16_t {{v[0-9]+}}[8] = {-1, -1, -1, -1, 1, 1, 1, 1};
// CHECK: const int16_t {{v[0-9]+}}[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
// CHECK: const int16_t {{v[0-9]+}}[8] = {1, 1, 1, 1, 1, 1, 1, 1};
// CHECK: vmulq_n_s16(
// CHECK-COUNT-3: vmlaq_n_s16(
// CHECK: vuzp1q_u8(
// CHECK: vuzp2q_u8(
// CHECK: vst1q_u8(
// CHECK: vbslq_u8(
// CHECK: vld1q_u8_x4(
// CHECK: vqtbl4q_u8(
// DOT: vdotq_u32(
// NODOT: vpaddlq_u8(
// NODOT: vpadalq_u16(
// CHECK: vsriq_n_u8(
// CHECK: vqtbl4q_u8(
// Plane 1: the looked-up bytes times the weight 2, unsigned.
// DOT: vdotq_u32({{.*}}, [[TWO]])
// NODOT: [[LOW:v[0-9]+]] = vget_low_u8([[TWO]])
// NODOT-NEXT: [[WIDE:v[0-9]+]] = vmovl_u8([[LOW]])
// NODOT-NEXT: vmulq_u16({{v[0-9]+}}, [[WIDE]])
// NODOT-NEXT: vpadalq_u16(
// One lut_combine per register half, then (sum + 3 S) / 2.
// CHECK: vshlq_n_s32({{.*}}, 8)
// CHECK-NEXT: vaddq_s32(
// CHECK-NOT: vshlq_n_s32({{.*}}, 8)
// CHECK: vshrq_n_s32({{.*}}, 1)
// CHECK: vdivq_f32(
// CHECK: vst1q_lane_f32(

// w1gG: one plane (multiplier 1, no shift).
// CHECK-LABEL: extern "C" void w1g128(
// CHECK-NOT: vshrq_n_s32
// CHECK: vqtbl4q_u8(
// DOT: vdotq_u32(
// NODOT: vpadalq_u16(
// CHECK: vfmaq_f32(
// CHECK-LABEL: extern "C" void w3g32(
// CHECK: vdupq_n_u8(2)
// CHECK: vdupq_n_u8(4)
// CHECK: vshrq_n_s32({{.*}}, 1)
// CHECK: vfmaq_f32(

// Two K panels: the f32 outputs spilled and loaded back.
// CHECK-LABEL: extern "C" void w2g64_panels(
// CHECK: vst1q_f32({{v[0-9]+}}, {{v[0-9]+}});
// CHECK: float32x4_t {{v[0-9]+}} = vld1q_f32({{v[0-9]+}});
