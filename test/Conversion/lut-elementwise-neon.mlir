// RUN: lowbit-opt %S/Inputs/tl-formats.mlir --lowbit-lut-elementwise-pipeline="target=aarch64-neon" | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefixes=CHECK,DOT --implicit-check-not=_mm
// RUN: lowbit-opt %S/Inputs/tl-formats.mlir --lowbit-lut-elementwise-pipeline="target=aarch64-neon-nodot n-hint=16" | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefixes=CHECK,NODOT --implicit-check-not=_mm --implicit-check-not=vdotq

// The shared lut-elementwise lowering on NEON (16-byte registers: a 64-byte
// index vector is 4 registers of 4 rows x 4 groups): tables built from
// digit vectors, split into low and biased high bytes; lookups of the
// 64-byte tables with tbl (vqtbl4q_u8) at nibble | 16 * (byte mod 4); the
// bytes summed into int32 rows (udot with ones, or uaddlp/uadalp without
// dotprod); tl2 signs as +1/-1 bytes multiplied by dot4 after centring the
// bytes (eor 0x80), with 128 x the sum of the signs added back.

// CHECK: #include <arm_neon.h>
// CHECK-LABEL: extern "C" void tl1(
// CHECK: const int16_t {{v[0-9]+}}[8] = {-1, -1, -1, 0, 0, 0, 1, 1};
// CHECK: vmulq_n_s16(
// CHECK: vmlaq_n_s16(
// CHECK: vuzp1q_u8(
// CHECK: [[HIGH:v[0-9]+]] = vuzp2q_u8(
// CHECK: veorq_u8([[HIGH]],
// CHECK: vst1q_u8(
// Low nibble: (w & 0x0F) | (selectors & 0xF0), selectors 0x30201000.
// CHECK: vdupq_n_u32(807407616)
// CHECK: [[IDX:v[0-9]+]] = vbslq_u8(
// CHECK: [[T:v[0-9]+]] = vld1q_u8_x4(
// CHECK: vqtbl4q_u8([[T]], [[IDX]]);
// CHECK: vqtbl4q_u8(
// DOT: vdotq_u32(
// NODOT: vpaddlq_u8(
// NODOT: vpadalq_u16(
// High nibble: (w >> 4) inserted under the selectors.
// CHECK: vsriq_n_u8({{.*}}, 4);
// The per-row header, lut_combine, then the exact ternary scaling.
// CHECK: vld1q_s32(
// CHECK: vshlq_n_s32({{.*}}, 8);
// CHECK: vaddq_s32(
// CHECK: vdivq_f32(
// CHECK: vst1q_lane_f32({{.*}}, 3);
// CHECK-NOT: vtstq_u8

// CHECK-LABEL: extern "C" void tl2(
// CHECK: const int16_t {{v[0-9]+}}[8] = {0, 0, 0, 0, 0, 1, 1, 1};
// The tables take 16 of the 32 q registers: the 4 index vectors of a TL2
// block run in a loop of their own (a fourth loop level inside columns,
// tiles and blocks) rather than unrolled.
// CHECK: for (size_t l{{[0-9]+}} = v{{[0-9]+}}; l{{[0-9]+}} < v{{[0-9]+}};
// Signs: the 16 bits of a register, byte i from byte i / 8, bit i mod 8.
// CHECK: vld1q_dup_u16(
// CHECK: const uint8_t {{v[0-9]+}}[16] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1};
// CHECK: vqtbl1q_u8(
// CHECK: const uint8_t {{v[0-9]+}}[16] = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
// CHECK: vtstq_u8(
// CHECK: vorrq_u8(
// CHECK: vqtbl4q_u8(
// The lane sums of the signs times 128, then centred bytes times signs.
// DOT: [[S:v[0-9]+]] = vdotq_s32(
// NODOT: [[S:v[0-9]+]] = vpadalq_s16(
// CHECK: [[C:v[0-9]+]] = vshlq_n_s32([[S]], 7);
// CHECK: veorq_u8(
// DOT: vdotq_s32([[C]],
// NODOT: vmull_s8(
// NODOT: vmull_high_s8(
// NODOT: vpadalq_s16([[C]],
// CHECK: vaddq_s32(
// Both nibbles of a register share one accumulator pair: one lut_combine
// per register, added to the row correction, then the scaling.
// CHECK: [[SH:v[0-9]+]] = vshlq_n_s32({{v[0-9]+}}, 8);
// CHECK-NEXT: [[SUM:v[0-9]+]] = vaddq_s32({{v[0-9]+}}, [[SH]]);
// CHECK-NEXT: vaddq_s32({{v[0-9]+}}, [[SUM]]);
// CHECK-NEXT: float
