// RUN: lowbit-opt %S/Inputs/formats.mlir --lowbit-upconvert-pipeline="target=aarch64-neon" | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefixes=CHECK,DOT --implicit-check-not=_mm --implicit-check-not=vmull
// RUN: lowbit-opt %S/Inputs/formats.mlir --lowbit-upconvert-pipeline="target=aarch64-neon-nodot" | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefixes=CHECK,NODOT --implicit-check-not=_mm --implicit-check-not=vdotq
// RUN: lowbit-opt %S/Inputs/formats.mlir --lowbit-upconvert-pipeline="target=aarch64-neon n-hint=16" | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefixes=CHECK,DOT --implicit-check-not=_mm

// The shared lowerings with the AArch64 TargetInfos: 16-byte registers, so
// every 64-byte vnni4 vector is read as four loads of 4 rows; the C++ has
// <arm_neon.h> intrinsics only, C linkage and the exact kernel_abi.h types;
// the ABI parameters a format ignores are (void)-cast (-Wextra clean).

// CHECK: #include <arm_neon.h>
// CHECK: #include <stddef.h>
// CHECK: #include <stdint.h>

// CHECK-LABEL: extern "C" void i2s(const uint8_t* v1, const uint16_t* v2, const uint16_t* v3, const int8_t* v4, const float* v5, const int32_t* v6, float* v7, int64_t v8, int64_t v9, int64_t v10, float v11) {
// CHECK: (void)v2;
// CHECK: (void)v3;
// CHECK: vld1q_u8(
// CHECK: vld1q_u8(
// CHECK: vld1q_u8(
// CHECK: vld1q_u8(
// CHECK: vld1q_dup_s32(
// CHECK: vandq_u8(
// DOT: vdotq_s32(
// NODOT: vmull_s8(
// NODOT: vmull_high_s8(
// NODOT: vpaddq_s16(
// NODOT: vpadalq_s16(
// Planes scaled in place (codes below 128), divided back after the K loop.
// CHECK: vshrq_n_s32({{.*}}, 2);
// CHECK: vsubq_s32(
// CHECK: vdivq_f32(
// M = 33 is not a multiple of 16: stores are lane by lane below the count.
// CHECK: vst1q_lane_f32({{.*}}, 3);

// CHECK-LABEL: extern "C" void w1g128(
// CHECK: (void)v3;
// CHECK: (void)v11;
// CHECK: vcvt_f32_f16(
// CHECK: vfmaq_f32(

// CHECK-LABEL: extern "C" void w2g64(
// CHECK: (void)v11;
// CHECK: vfmsq_f32(
// CHECK: vfmaq_f32(

// CHECK-LABEL: extern "C" void w4g32(
// The high nibble: one shift, no mask.
// CHECK: vshrq_n_u8({{.*}}, 4);
// CHECK: vcvt_f32_f16(

// CHECK-LABEL: extern "C" void q4_0(
// DOT: vdotq_s32(
// NODOT: vpadalq_s16(
// CHECK: vfmaq_f32(
