// RUN: lowbit-opt %s --lowbit-select-config=target=aarch64-neon --lowbit-convert-to-neon | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefixes=CHECK,DOT --implicit-check-not=vmull
// RUN: lowbit-opt %s --lowbit-select-config=target=aarch64-neon-nodot --lowbit-convert-to-neon | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefixes=CHECK,NODOT --implicit-check-not=vdotq

// The AArch64 TargetInfos: a 64-byte vnni4 vector is four 16-byte registers
// of 4 rows x 4 k. Codes are read as signed bytes (sdot / smull), exact for
// codes below 128: plane 3 of 2-bit codes is shifted down one bit, x 32.
// Without dotprod: u8 x s8 products in int16 (smull, smull2), pairs summed
// (addp) and pairs of pairs accumulated into int32 (sadalp).

// CHECK: #include <arm_neon.h>
// CHECK-LABEL: extern "C" void ops(
// CHECK: uint8x16_t [[W:v[0-9]+]] = vld1q_u8(
// CHECK: int32x4_t [[X4:v[0-9]+]] = vld1q_dup_s32(
// CHECK: uint8x16_t [[X:v[0-9]+]] = vreinterpretq_u8_s32([[X4]]);
// CHECK: uint8x16_t [[SH:v[0-9]+]] = vshrq_n_u8([[W]], 1);
// CHECK: uint8x16_t [[M:v[0-9]+]] = vdupq_n_u8(96);
// CHECK: uint8x16_t [[C:v[0-9]+]] = vandq_u8([[SH]], [[M]]);
// CHECK: int8x16_t [[CS:v[0-9]+]] = vreinterpretq_s8_u8([[C]]);
// CHECK: int8x16_t [[XS:v[0-9]+]] = vreinterpretq_s8_u8([[X]]);
// DOT: int32x4_t [[D:v[0-9]+]] = vdotq_s32({{v[0-9]+}}, [[CS]], [[XS]]);
// NODOT: int8x8_t [[CL:v[0-9]+]] = vget_low_s8([[CS]]);
// NODOT: int8x8_t [[XL:v[0-9]+]] = vget_low_s8([[XS]]);
// NODOT: int16x8_t [[LO:v[0-9]+]] = vmull_s8([[CL]], [[XL]]);
// NODOT: int16x8_t [[HI:v[0-9]+]] = vmull_high_s8([[CS]], [[XS]]);
// NODOT: int16x8_t [[P:v[0-9]+]] = vpaddq_s16([[LO]], [[HI]]);
// NODOT: int32x4_t [[D:v[0-9]+]] = vpadalq_s16({{v[0-9]+}}, [[P]]);
// CHECK: vshrq_n_s32([[D]], 5);
// The top plane of 2-bit codes needs the shift alone.
// CHECK: uint8x16_t [[TOP:v[0-9]+]] = vshrq_n_u8([[W]], 6);
// CHECK-NOT: vandq_u8([[TOP]]
// CHECK: vreinterpretq_s8_u8([[TOP]]);
// CHECK: const uint16_t* [[HP:v[0-9]+]] = (const uint16_t*)
// CHECK: uint16x4_t [[H:v[0-9]+]] = vld1_u16([[HP]]);
// CHECK: float16x4_t [[HF:v[0-9]+]] = vreinterpret_f16_u16([[H]]);
// CHECK: float32x4_t [[S:v[0-9]+]] = vcvt_f32_f16([[HF]]);
// g + (D - z S) * inv, then y + g * s
// CHECK: vcvtq_f32_s32(
// CHECK: vfmsq_f32(
// CHECK: float32x4_t [[G:v[0-9]+]] = vfmaq_f32(
// CHECK: vfmaq_f32([[S]], [[G]], [[S]]);
// (D - S) * w / x, no fused multiply-add (bit-exact with the reference)
// CHECK: vsubq_s32(
// CHECK: vcvtq_f32_s32(
// CHECK: vmulq_f32(
// CHECK: vdivq_f32(
// No masked store: one lane store per lane below count.
// CHECK: bool [[IN:v[0-9]+]] = {{v[0-9]+}} > {{v[0-9]+}};
// CHECK-NEXT: if ([[IN]]) {
// CHECK: vst1q_lane_f32({{.*}}, 0);
// CHECK: vst1q_lane_f32({{.*}}, 1);
// CHECK: vst1q_lane_f32({{.*}}, 2);
// CHECK: vst1q_lane_f32({{.*}}, 3);
// CHECK: vst1q_f32(
func.func @ops(%codes: memref<?xui8> {lowbit.readonly}, %scales: memref<?xui16> {lowbit.readonly},
               %xq: memref<?xi8> {lowbit.readonly}, %y: memref<?xf32>, %off: index, %count: index,
               %sum: i32, %inv: f32) {
  %zero = arith.constant dense<0> : vector<4xi32>
  %w = lowbit.uk.load %codes[%off] : memref<?xui8> -> vector<16xi8>
  %x = lowbit.uk.broadcast4 %xq[%off] : memref<?xi8> -> vector<16xi8>
  %c = lowbit.uk.unpack %w {bits = 2, plane = 3, scale = 5} : vector<16xi8>
  %d = lowbit.uk.dot4 %zero, %c, %x : vector<16xi8> -> vector<4xi32>
  %e = lowbit.uk.shr_exact %d {shift = 5} : vector<4xi32>
  %t = lowbit.uk.unpack %w {bits = 2, plane = 3} : vector<16xi8>
  %f = lowbit.uk.dot4 %e, %t, %x : vector<16xi8> -> vector<4xi32>
  %s = lowbit.uk.load_half %scales[%off] : memref<?xui16> -> vector<4xf32>
  %g1 = lowbit.uk.block_combine %s, %f, %inv zero(%s, %sum : vector<4xf32>) : vector<4xi32> -> vector<4xf32>
  %y1 = lowbit.uk.group_combine %s, %g1, %s : vector<4xf32>
  %y2 = lowbit.uk.ternary_scale %f, %sum, %inv, %inv : vector<4xi32> -> vector<4xf32>
  lowbit.uk.store %y1, %y[%off], %count : vector<4xf32>, memref<?xf32>
  lowbit.uk.store %y2, %y[%off] : vector<4xf32>, memref<?xf32>
  return
}

