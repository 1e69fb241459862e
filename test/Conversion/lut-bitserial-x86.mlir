// RUN: lowbit-opt %S/Inputs/bitserial-formats.mlir --lowbit-lut-bitserial-pipeline="target=x86-avx512vnni" | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefixes=CHECK,AVX512
// RUN: lowbit-opt %S/Inputs/bitserial-formats.mlir --lowbit-lut-bitserial-pipeline="target=x86-avx2" | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefixes=CHECK,AVX2 --implicit-check-not=_mm512
// RUN: lowbit-opt %S/Inputs/bitserial-formats.mlir --lowbit-lut-bitserial-pipeline="target=x86-avx512vnni n-hint=16" | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefixes=CHECK,AVX512
// RUN: not lowbit-opt %S/Inputs/bitserial-formats.mlir --lowbit-lut-bitserial-pipeline="target=generic" 2>&1 | FileCheck %s --check-prefix=GENERIC

// The C++ of the lut-bitserial kernels: the kernel_abi.h signature, the
// table buffer on the stack, the table builder (AVX2 on either ISA: the ±1
// sign vectors of bits 0..3 of the 16 entries, sign_epi16 of each
// broadcast activation, summed, split into low and high bytes), and per ISA
// the pshufb lookups of every bit plane (low and high bytes, int16
// pack-unpack), the widening, the row fold and the linear transform
// (srai by 1 after adding (2^P - 1) S).

// CHECK-LABEL: extern "C" void i2s(const uint8_t* v1, const uint16_t* v2, const uint16_t* v3, const int8_t* v4, const float* v5, const int32_t* v6, float* v7, int64_t v8, int64_t v9, int64_t v10, float v11) {
// CHECK: int8_t {{v[0-9]+}}[{{1024|2048}}];
// CHECK: _mm256_setr_epi16(-1, 1, -1, 1, -1, 1, -1, 1, -1, 1, -1, 1, -1, 1, -1, 1)
// CHECK: _mm256_setr_epi16(-1, -1, 1, 1, -1, -1, 1, 1, -1, -1, 1, 1, -1, -1, 1, 1)
// CHECK: _mm256_setr_epi16(-1, -1, -1, -1, 1, 1, 1, 1, -1, -1, -1, -1, 1, 1, 1, 1)
// CHECK: _mm256_setr_epi16(-1, -1, -1, -1, -1, -1, -1, -1, 1, 1, 1, 1, 1, 1, 1, 1)
// CHECK-COUNT-4: _mm256_sign_epi16(
// CHECK: _mm256_permute4x64_epi64({{.*}}, 216)
// CHECK: _mm_storeu_si128(
// AVX512: _mm512_shuffle_epi8(
// AVX512: _mm512_unpacklo_epi8(
// AVX512: _mm512_unpackhi_epi8(
// AVX512: _mm512_add_epi16(
// AVX512: _mm512_cvtepi16_epi32(
// AVX512: _mm512_shuffle_i64x2({{.*}}, 68)
// AVX512: _mm512_set1_epi32(
// AVX512: _mm512_srai_epi32({{.*}}, 1)
// AVX512: _mm512_mask_storeu_ps(
// AVX2: _mm256_shuffle_epi8(
// AVX2: _mm256_unpacklo_epi8(
// AVX2: _mm256_unpackhi_epi8(
// AVX2: _mm256_add_epi16(
// AVX2: _mm256_cvtepi16_epi32(
// AVX2: _mm256_srai_epi32({{.*}}, 1)
// AVX2: _mm256_maskstore_ps(
// No sign masks: the ±1 tables hold all 16 entries.
// CHECK-NOT: xor_si

// w1gG: the folded sum A_0 is 2 D - S itself; no shift.
// CHECK-LABEL: extern "C" void w1g128(
// CHECK: _mm256_sign_epi16(
// AVX512: _mm512_shuffle_epi8(
// AVX2: _mm256_shuffle_epi8(
// CHECK-NOT: srai_epi32
// CHECK-LABEL: extern "C" void w3g32(
// AVX512: _mm512_srai_epi32({{.*}}, 1)
// AVX2: _mm256_srai_epi32({{.*}}, 1)

// GENERIC: error: 'lowbit.mpgemm' op target generic has no 16-byte-lane table lookup (pshufb/tbl) on 4-byte registers; lowbit-lower-lut-bitserial needs one
