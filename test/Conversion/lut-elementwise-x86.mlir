// RUN: lowbit-opt %S/Inputs/tl-formats.mlir --lowbit-lut-elementwise-pipeline="target=x86-avx512vnni" | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefixes=CHECK,AVX512
// RUN: lowbit-opt %S/Inputs/tl-formats.mlir --lowbit-lut-elementwise-pipeline="target=x86-avx2" | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefixes=CHECK,AVX2 --implicit-check-not=_mm512
// RUN: lowbit-opt %S/Inputs/tl-formats.mlir --lowbit-lut-elementwise-pipeline="target=x86-avx512vnni n-hint=16" | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefixes=CHECK,AVX512
// RUN: not lowbit-opt %S/Inputs/tl-formats.mlir --lowbit-lut-elementwise-pipeline="target=generic" 2>&1 | FileCheck %s --check-prefix=GENERIC

// The C++ of the lut-elementwise kernels: the kernel_abi.h signature, the
// table buffer on the stack, the AVX2 table builder (either ISA), and per
// ISA the pshufb lookups (low and high bytes, int16 pack-unpack), the sign
// masks of tl2, the int16 -> int32 widening and the row fold.

// CHECK-LABEL: extern "C" void tl1(const uint8_t* v1, const uint16_t* v2, const uint16_t* v3, const int8_t* v4, const float* v5, const int32_t* v6, float* v7, int64_t v8, int64_t v9, int64_t v10, float v11) {
// CHECK: int8_t [[T:v[0-9]+]][{{[0-9]+}}];
// CHECK: _mm256_setr_epi16(-1, -1, -1, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0)
// CHECK: _mm256_setr_epi16(-1, 0, 1, -1, 0, 1, -1, 0, 1, 0, 0, 0, 0, 0, 0, 0)
// CHECK: _mm256_sign_epi16(
// CHECK: _mm256_permute4x64_epi64({{.*}}, 216)
// CHECK: _mm_storeu_si128(
// AVX512: _mm512_shuffle_epi8(
// AVX512: _mm512_unpacklo_epi8(
// AVX512: _mm512_unpackhi_epi8(
// AVX512: _mm512_add_epi16(
// AVX512: _mm512_cvtepi16_epi32(
// AVX512: _mm512_shuffle_i64x2({{.*}}, 68)
// AVX512: _mm512_shuffle_i64x2({{.*}}, 238)
// AVX512: _mm512_mask_storeu_ps(
// AVX2: _mm256_shuffle_epi8(
// AVX2: _mm256_unpacklo_epi8(
// AVX2: _mm256_unpackhi_epi8(
// AVX2: _mm256_add_epi16(
// AVX2: _mm256_cvtepi16_epi32(
// AVX2: _mm256_maskstore_ps(
// CHECK-NOT: test_epi8_mask
// CHECK-NOT: cmpeq_epi8

// Entry e of a TL2 table is d0 x0 + d1 x1 + d2 x2 for e = 9 d0 + 3 d1 + d2:
// the digit vectors of e = 0..13 (14 and 15 are 0).
// CHECK-LABEL: extern "C" void tl2(
// CHECK: _mm256_setr_epi16(0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0)
// CHECK: _mm256_setr_epi16(0, 0, 1, 1, 1, -1, -1, -1, 0, 0, 0, 1, 1, 1, 0, 0)
// CHECK: _mm256_setr_epi16(0, 1, -1, 0, 1, -1, 0, 1, -1, 0, 1, -1, 0, 1, 0, 0)
// AVX512: _mm512_test_epi8_mask(
// AVX512: _mm512_movm_epi8(
// AVX512: _mm512_shuffle_epi8(
// AVX512: _mm512_xor_si512(
// AVX2: _mm256_cmpeq_epi8(
// AVX2: _mm256_shuffle_epi8(
// AVX2: _mm256_xor_si256(

// GENERIC: error: 'lowbit.mpgemm' op target generic has no 16-byte-lane table lookup (pshufb/tbl) on 4-byte registers; lowbit-lower-lut-elementwise needs one
