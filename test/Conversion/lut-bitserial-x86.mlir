// RUN: lowbit-opt %S/Inputs/bitserial-formats.mlir --lowbit-lut-bitserial-pipeline="target=x86-avx512vnni" | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefixes=CHECK,AVX512
// RUN: lowbit-opt %S/Inputs/bitserial-formats.mlir --lowbit-lut-bitserial-pipeline="target=x86-avx2" | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefixes=CHECK,AVX2 --implicit-check-not=_mm512
// RUN: lowbit-opt %S/Inputs/bitserial-formats.mlir --lowbit-lut-bitserial-pipeline="target=x86-avx512vnni n-hint=16" | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefixes=CHECK,AVX512
// RUN: not lowbit-opt %S/Inputs/bitserial-formats.mlir --lowbit-lut-bitserial-pipeline="target=generic" 2>&1 | FileCheck %s --check-prefix=GENERIC

// The C++ of the lut-bitserial kernels: the kernel_abi.h signature, the
// table buffer on the stack, the plane weight 2 as multiplier bytes, the
// table builder of lut_tables width 4 (the ±1 sign vectors of bits 0..3 of
// the 16 entries, biased by 32768 and split into low and high bytes:
// pmaddubsw of 3 activation dwords per 2 groups, AVX512 vpermt2b, AVX2
// pshufb/vpermd/unpack), and per ISA the lut_dot lookups of
// every bit plane (vpermb of the 64-byte tables then vpdpbusd on AVX512,
// AVX2 in lane order as below), lut_combine and the linear
// transform (srai by 1 after adding (2^P - 1) S).

// CHECK-LABEL: extern "C" void i2s(const uint8_t* v1, const uint16_t* v2, const uint16_t* v3, const int8_t* v4, const float* v5, const int32_t* v6, float* v7, int64_t v8, int64_t v9, int64_t v10, float v11) {
// CHECK: int8_t {{v[0-9]+}}[{{1024|2048}}];
// AVX512: _mm512_set1_epi8(2)
// Lanes and bytes from the highest down: the bias 32768 - 128 (s0 + s1 +
// s2 + s3) of entry e in int16 lanes 2e, 2e + 1 (e = 15: 32256, e = 14:
// 32512, e = 0: 33280 = -32256); per entry the digit bytes of the dwords
// at 0 (s0, s1 | 0, 0), 2 (s2, s3 | s0, s1) and 4 (0, 0 | s2, s3) of a
// pair (first group | second), e = 15: all 1, e = 14: s0 = -1; the last
// dword of the 32 bytes at 28.
// AVX512: _mm512_set_epi16(32256, 32256, 32512, 32512, {{.*}}, -32512, -32512, -32256, -32256)
// AVX512: _mm512_set_epi8(0, 0, 1, 1, 0, 0, 1, -1, {{.*}}, 0, 0, -1, -1)
// AVX512: _mm512_set_epi8(1, 1, 1, 1, 1, -1, 1, 1, {{.*}}, -1, -1, -1, -1)
// AVX512: _mm512_set_epi8(1, 1, 0, 0, 1, 1, 0, 0, {{.*}}, -1, -1, 0, 0)
// AVX512: _mm512_maddubs_epi16(
// AVX512: size_t [[L7:v[0-9]+]] = 28;
// AVX512-NEXT: int8_t* [[P7:v[0-9]+]] = &{{v[0-9]+}}[[[L7]]];
// AVX512-NEXT: _mm_loadu_si32([[P7]])
// AVX512-NOT: _mm_loadu_si32(
// AVX512: _mm512_permutex2var_epi8(
// AVX512: _mm512_storeu_si512(
// AVX512: _mm512_permutexvar_epi8(
// AVX512: _mm512_dpbusd_epi32(
// AVX512: _mm512_slli_epi32({{.*}}, 8)
// AVX512: _mm512_srai_epi32({{.*}}, 1)
// AVX512: _mm512_mask_storeu_ps(
// AVX2: _mm256_set1_epi8(1)
// AVX2-NEXT: _mm256_set1_epi8(2)
// AVX2-NEXT: [[PAIRS:v[0-9]+]] = _mm256_unpacklo_epi8(
// On AVX2 the same for entries 0..7 (e = 7: s3 = -1; e = 8: 33024 =
// -32512), then 8..15, in two ymm; 6 pmaddubsw per pair of groups.
// AVX2: _mm256_set_epi16(32512, 32512, {{.*}}, -32256, -32256)
// AVX2: _mm256_set_epi8(0, 0, 1, 1, 0, 0, 1, -1, {{.*}}, 0, 0, -1, -1)
// AVX2: _mm256_set_epi8(1, 1, -1, 1, {{.*}}, -1, -1, -1, -1)
// AVX2: _mm256_set_epi8(-1, 1, 0, 0, {{.*}}, -1, -1, 0, 0)
// AVX2: _mm256_set_epi16(32256, 32256, 32512, 32512, {{.*}}, -32512, -32512)
// AVX2-COUNT-6: _mm256_maddubs_epi16(
// AVX2: _mm256_permutevar8x32_epi32(
// AVX2: _mm256_unpacklo_epi64(
// AVX2: _mm_storeu_si128(
// The weights are in bitserial_abi.h's lane order (two planes): each
// register is looked up as loaded, one pshufb per nibble and table byte,
// pmaddubsw with the bytes 1, 2 (plane 0 + 2 plane 1 of a row, no
// transpose, no zip), the int16 sums widened per block (pmaddwd of low,
// high with 1, 256), the lanes folded at the end.
// AVX2-NOT: _mm256_set_epi32(7, 3, 5, 1, 6, 2, 4, 0)
// AVX2: [[W:v[0-9]+]] = _mm256_loadu_si256(
// AVX2: _mm256_and_si256([[W]],
// AVX2: _mm256_shuffle_epi8(
// AVX2-NEXT: _mm256_maddubs_epi16({{v[0-9]+}}, [[PAIRS]])
// AVX2: _mm256_srli_epi16([[W]], 4)
// AVX2: _mm256_shuffle_epi8(
// AVX2-NEXT: _mm256_maddubs_epi16({{v[0-9]+}}, [[PAIRS]])
// AVX2-NOT: _mm256_unpacklo_epi8(
// AVX2: _mm256_unpacklo_epi16(
// AVX2: _mm256_madd_epi16(
// AVX2: _mm256_permute2x128_si256(
// AVX2: _mm256_srai_epi32({{.*}}, 1)
// AVX2: _mm256_maskstore_ps(

// w1gG: one plane (multiplier 1), the combined sum A_0 is 2 D - S itself;
// no shift.
// CHECK-LABEL: extern "C" void w1g128(
// AVX512: _mm512_dpbusd_epi32(
// AVX2: _mm256_maddubs_epi16(
// CHECK-NOT: srai_epi32
// CHECK-LABEL: extern "C" void w3g32(
// AVX512: _mm512_set1_epi8(4)
// AVX512: _mm512_srai_epi32({{.*}}, 1)
// AVX2: _mm256_set1_epi8(4)
// AVX2: _mm256_srai_epi32({{.*}}, 1)

// Two K panels: the f32 outputs spilled to the stack buffer of partial sums
// and loaded back.
// CHECK-LABEL: extern "C" void w2g64_panels(
// AVX512: _mm512_storeu_ps({{v[0-9]+}}, {{v[0-9]+}});
// AVX512: __m512 {{v[0-9]+}} = _mm512_loadu_ps({{v[0-9]+}});
// AVX2: _mm256_storeu_ps({{v[0-9]+}}, {{v[0-9]+}});
// AVX2: __m256 {{v[0-9]+}} = _mm256_loadu_ps({{v[0-9]+}});

// GENERIC: error: 'lowbit.mpgemm' op target generic has no byte table lookup (vpermb/pshufb/tbl) on 4-byte registers; lowbit-lower-lut-bitserial needs one
