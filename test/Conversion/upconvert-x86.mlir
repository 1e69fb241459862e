// RUN: lowbit-opt %S/Inputs/formats.mlir --lowbit-upconvert-pipeline="target=x86-avx512vnni" | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefixes=CHECK,AVX512
// RUN: lowbit-opt %S/Inputs/formats.mlir --lowbit-upconvert-pipeline="target=x86-avxvnni" | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefixes=CHECK,AVXVNNI --implicit-check-not=_mm512
// RUN: lowbit-opt %S/Inputs/formats.mlir --lowbit-upconvert-pipeline="target=x86-avx2" | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefixes=CHECK,AVX2 --implicit-check-not=dpbusd
// RUN: lowbit-opt %S/Inputs/formats.mlir --lowbit-upconvert-pipeline="target=generic" | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefixes=CHECK,GENERIC --implicit-check-not=_mm
// RUN: lowbit-opt %S/Inputs/formats.mlir --lowbit-upconvert-pipeline="target=x86-avx512vnni n-hint=16" | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefixes=CHECK,AVX512

// The C++ of every ISA: headers, C linkage and the exact parameter types of
// lowbit_kernel_fn (kernel_abi.h), and the instructions each ISA uses for
// each microkernel op. The generic C++ has no intrinsic at all.

// AVX512: #include <immintrin.h>
// AVXVNNI: #include <immintrin.h>
// AVX2: #include <immintrin.h>
// GENERIC: #include <math.h>
// CHECK: #include <stddef.h>
// CHECK: #include <stdint.h>

// CHECK-LABEL: extern "C" void i2s(const uint8_t* v1, const uint16_t* v2, const uint16_t* v3, const int8_t* v4, const float* v5, const int32_t* v6, float* v7, int64_t v8, int64_t v9, int64_t v10, float v11) {
// AVX512: _mm512_loadu_si512(
// AVX512: _mm512_broadcastd_epi32(
// AVX512: _mm512_and_si512(
// AVX512: _mm512_dpbusd_epi32(
// AVX512: _mm512_srai_epi32(
// AVX512: _mm512_div_ps(
// AVX512: _mm512_mask_storeu_ps(
// AVXVNNI: _mm256_loadu_si256(
// AVXVNNI: _mm256_broadcastd_epi32(
// AVXVNNI: _mm256_dpbusd_avx_epi32(
// AVXVNNI: _mm256_maskstore_ps(
// AVX2: _mm256_loadu_si256(
// AVX2: _mm256_maddubs_epi16(
// AVX2: _mm256_madd_epi16(
// AVX2: _mm256_add_epi32(
// AVX2: _mm256_maskstore_ps(
// GENERIC: uint32_t
// GENERIC: int32_t {{.*}} = {{.*}} * {{.*}};
// GENERIC: float {{.*}} = {{.*}} / {{.*}};

// CHECK-LABEL: extern "C" void w1g128(
// AVX512: _mm512_cvtph_ps(
// AVX512: _mm512_fmadd_ps(
// AVXVNNI: _mm256_cvtph_ps(
// AVXVNNI: _mm256_fmadd_ps(
// AVX2: _mm256_cvtph_ps(
// AVX2: _mm256_fmadd_ps(
// GENERIC: ldexpf(

// CHECK-LABEL: extern "C" void w2g64(
// AVX512: _mm512_fnmadd_ps(
// AVXVNNI: _mm256_fnmadd_ps(
// AVX2: _mm256_fnmadd_ps(

// CHECK-LABEL: extern "C" void w4g32(
// AVX512: _mm512_srli_epi16({{.*}}, 4)
// AVXVNNI: _mm256_srli_epi16({{.*}}, 4)
// AVX2: _mm256_srli_epi16({{.*}}, 4)
// GENERIC: >> {{.*}};

// CHECK-LABEL: extern "C" void q4_0(
// AVX512: _mm512_dpbusd_epi32(
// AVXVNNI: _mm256_dpbusd_avx_epi32(
// AVX2: _mm256_maddubs_epi16(
