// RUN: lowbit-opt %S/Inputs/tl-formats.mlir --lowbit-lut-elementwise-pipeline="target=x86-avx512vnni" | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefixes=CHECK,AVX512
// RUN: lowbit-opt %S/Inputs/tl-formats.mlir --lowbit-lut-elementwise-pipeline="target=x86-avx2" | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefixes=CHECK,AVX2 --implicit-check-not=_mm512
// RUN: lowbit-opt %S/Inputs/tl-formats.mlir --lowbit-lut-elementwise-pipeline="target=x86-avx512vnni n-hint=16" | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefixes=CHECK,AVX512
// RUN: not lowbit-opt %S/Inputs/tl-formats.mlir --lowbit-lut-elementwise-pipeline="target=generic" 2>&1 | FileCheck %s --check-prefix=GENERIC

// The C++ of the lut-elementwise kernels: the kernel_abi.h signature, the
// table buffer on the stack, the table builder with the high-byte bias
// (one group per ymm on AVX2; on AVX512 vpermw broadcasts times digit
// vectors for 2 groups per zmm, vpermt2b splitting 4 groups into 64-byte
// low and high tables), and per ISA the lookups (vpermb of 64-byte tables indexed by
// nibble | 16 * (byte mod 4) on AVX512, pshufb per table on AVX2), the tl2
// sign words as +1/-1 bytes and the dot products into int32.

// CHECK-LABEL: extern "C" void tl1(const uint8_t* v1, const uint16_t* v2, const uint16_t* v3, const int8_t* v4, const float* v5, const int32_t* v6, float* v7, int64_t v8, int64_t v9, int64_t v10, float v11) {
// CHECK: int8_t [[T:v[0-9]+]][{{[0-9]+}}];
// AVX2: _mm256_setr_epi16(-1, -1, -1, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0)
// AVX2: _mm256_setr_epi16(-1, 0, 1, -1, 0, 1, -1, 0, 1, 0, 0, 0, 0, 0, 0, 0)
// AVX2: _mm256_set1_epi16(-32768)
// AVX2: _mm256_sign_epi16(
// The high byte + 128: entry ^ 0x8000.
// AVX2: _mm256_xor_si256(
// AVX2: _mm256_permute4x64_epi64({{.*}}, 216)
// AVX2: _mm_storeu_si128(
// 16 bytes of activations (8 pairs), set_epi16 lists lanes 31..0.
// AVX512: uint32_t [[M1:v[0-9]+]] = 65535;
// AVX512: __mmask32 [[K1:v[0-9]+]] = (__mmask32) [[M1]];
// AVX512: _mm256_maskz_loadu_epi8([[K1]], 
// AVX512: _mm512_cvtepi8_epi16(
// AVX512: _mm512_set_epi16(0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, -1, -1, -1)
// AVX512: _mm512_set1_epi16(-32768)
// AVX512: _mm512_set_epi16(2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
// AVX512: _mm512_permutexvar_epi16(
// AVX512: _mm512_mullo_epi16(
// AVX512: _mm512_xor_si512(
// AVX512: _mm512_set_epi8(126, 124, 122,
// AVX512: _mm512_permutex2var_epi8(
// AVX512: _mm512_storeu_si512(
// AVX512: _mm512_set1_epi32(807407616)
// AVX512: _mm512_ternarylogic_epi32({{.*}}, 234)
// AVX512: _mm512_permutexvar_epi8(
// AVX512: _mm512_permutexvar_epi8(
// AVX512: _mm512_dpbusd_epi32(
// AVX512: _mm512_srli_epi16({{.*}}, 4)
// AVX512: _mm512_slli_epi32({{.*}}, 8)
// AVX512: _mm512_mask_storeu_ps(
// AVX2: _mm256_and_si256(
// AVX2: _mm256_setr_epi8(0, -128, -128, -128, 0, -128, -128, -128,
// AVX2: _mm256_broadcastsi128_si256(
// AVX2: _mm256_shuffle_epi8(
// AVX2: _mm256_maddubs_epi16(
// AVX2: _mm256_madd_epi16(
// AVX2: _mm256_slli_epi32({{.*}}, 8)
// AVX2: _mm256_maskstore_ps(
// CHECK-NOT: _load_mask64
// CHECK-NOT: cmpeq_epi8

// Entry e of a TL2 table is d0 x0 + d1 x1 + d2 x2 for e = 9 d0 + 3 d1 + d2:
// the digit vectors of e = 0..13 (14 and 15 are 0).
// CHECK-LABEL: extern "C" void tl2(
// AVX512: uint32_t {{v[0-9]+}} = 16777215;
// AVX512: _mm256_maskz_loadu_epi8(
// AVX2: _mm256_setr_epi16(0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0)
// AVX2: _mm256_setr_epi16(0, 0, 1, 1, 1, -1, -1, -1, 0, 0, 0, 1, 1, 1, 0, 0)
// AVX2: _mm256_setr_epi16(0, 1, -1, 0, 1, -1, 0, 1, -1, 0, 1, -1, 0, 1, 0, 0)
// AVX512: _load_mask64(
// AVX512: _mm512_mask_blend_epi8(
// AVX512: _mm512_permutexvar_epi8(
// AVX2: _mm256_cmpeq_epi8(
// AVX2: _mm256_or_si256(
// AVX2: _mm256_shuffle_epi8(

// GENERIC: error: 'lowbit.mpgemm' op target generic has no byte table lookup (vpermb/pshufb/tbl) on 4-byte registers; lowbit-lower-lut-elementwise needs one
