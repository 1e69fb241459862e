// RUN: lowbit-opt %S/Inputs/tl-formats.mlir --lowbit-lut-elementwise-pipeline="target=x86-avx512vnni" | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefixes=CHECK,AVX512
// RUN: lowbit-opt %S/Inputs/tl-formats.mlir --lowbit-lut-elementwise-pipeline="target=x86-avx2" | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefixes=CHECK,AVX2 --implicit-check-not=_mm512
// RUN: lowbit-opt %S/Inputs/tl-formats.mlir --lowbit-lut-elementwise-pipeline="target=x86-avx512vnni n-hint=16" | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefixes=CHECK,AVX512
// RUN: not lowbit-opt %S/Inputs/tl-formats.mlir --lowbit-lut-elementwise-pipeline="target=generic" 2>&1 | FileCheck %s --check-prefix=GENERIC

// The C++ of the lut-elementwise kernels: the kernel_abi.h signature, the
// table buffer on the stack, the table builder with the high-byte bias (2
// groups per zmm or 2 ymm, entry e of the first in int16 lane 2e and of
// the second in 2e + 1: pmaddubsw of broadcast activation dwords + 128
// with digit bytes onto 32768 - 128 * (sum of the digits); on AVX512
// vpermt2b splitting 4 groups into 64-byte low and high tables, on AVX2
// pshufb, vpermd and unpacklo/hi_epi64 into a group's low | high bytes),
// and per ISA the lookups (vpermb of 64-byte tables indexed
// by nibble | 16 * (byte mod 4) on AVX512, pshufb of a table per lane on
// AVX2), the tl2 sign words as +1/-1 bytes and the dot products into int32.

// CHECK-LABEL: extern "C" void tl1(const uint8_t* v1, const uint16_t* v2, const uint16_t* v3, const int8_t* v4, const float* v5, const int32_t* v6, float* v7, int64_t v8, int64_t v9, int64_t v10, float v11) {
// CHECK: int8_t [[T:v[0-9]+]][{{[0-9]+}}];
// TL1 on AVX2, lanes and bytes listed from the highest down: the bias and
// the digit bytes (as below for AVX512) of entries 0..7, then of 8..15;
// per 128-bit lane the low bytes of the first group's 4 entries (bytes 0,
// 4, 8, 12), of the second's (2, 6, 10, 14), then the high bytes; the
// dwords 0 4 1 5 2 6 3 7.
// AVX2: _mm256_set_epi16(32640, 32640, -32768, -32768, 32640, 32640, -32768, -32768, -32640, -32640, -32768, -32768, -32640, -32640, -32512, -32512)
// AVX2: _mm256_set_epi8(0, 1, 0, 1, -1, 1, -1, 1, 1, 0, 1, 0, 0, 0, 0, 0, -1, 0, -1, 0, 1, -1, 1, -1, 0, -1, 0, -1, -1, -1, -1, -1)
// AVX2: _mm256_set_epi16(-32768, -32768, -32768, -32768, -32768, -32768, -32768, -32768, -32768, -32768, -32768, -32768, -32768, -32768, 32512, 32512)
// AVX2: _mm256_set_epi8(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1)
// AVX2: _mm256_set_epi8(15, 11, 7, 3, 13, 9, 5, 1, 14, 10, 6, 2, 12, 8, 4, 0, 15, 11, 7, 3, 13, 9, 5, 1, 14, 10, 6, 2, 12, 8, 4, 0)
// AVX2: _mm256_set_epi32(7, 3, 6, 2, 5, 1, 4, 0)
// AVX2: _mm_loadu_si32(
// AVX2: _mm256_broadcastd_epi32(
// AVX2: _mm256_xor_si256(
// AVX2: _mm256_maddubs_epi16(
// AVX2: _mm256_maddubs_epi16(
// AVX2: _mm256_shuffle_epi8(
// AVX2: _mm256_permutevar8x32_epi32(
// AVX2: _mm256_shuffle_epi8(
// AVX2: _mm256_permutevar8x32_epi32(
// AVX2: _mm256_unpacklo_epi64(
// AVX2: _mm_storeu_si128(
// AVX2: _mm256_extracti128_si256({{.*}}, 1)
// AVX2: _mm_storeu_si128(
// AVX2: _mm256_unpackhi_epi64(
// AVX2: size_t [[A3:v[0-9]+]] = 12;
// AVX2-NEXT: int8_t* [[Q3:v[0-9]+]] = &{{v[0-9]+}}[[[A3]]];
// AVX2-NEXT: _mm_loadu_si32([[Q3]])
// AVX2-NOT: _mm_loadu_si32(
// AVX2: _mm256_unpackhi_epi64(
// TL1, lanes and bytes listed from the highest down: the bias 32768 - 128
// (d0 + d1) of entry e in lanes 2e, 2e + 1 (as int16: 33024 is -32512);
// the digit bytes d0, d1 of the first group's pair, then of the second's
// (e = 1: d0 = -1, d1 = 0; e = 8: 1, 1); one dword per 2 groups (16 bytes).
// AVX512: _mm512_set_epi16(-32768, -32768, -32768, -32768, -32768, -32768, -32768, -32768, -32768, -32768, -32768, -32768, -32768, -32768, 32512, 32512, 32640, 32640, -32768, -32768, 32640, 32640, -32768, -32768, -32640, -32640, -32768, -32768, -32640, -32640, -32512, -32512)
// AVX512: _mm512_set_epi8(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, {{.*}}, 0, -1, 0, -1, -1, -1, -1, -1)
// AVX512: _mm512_set1_epi8(-128)
// AVX512: _mm_loadu_si32(
// AVX512: _mm512_broadcastd_epi32(
// AVX512: _mm512_xor_si512(
// AVX512: _mm512_maddubs_epi16(
// AVX512: _mm512_add_epi16(
// AVX512: size_t [[L3:v[0-9]+]] = 12;
// AVX512-NEXT: int8_t* [[P3:v[0-9]+]] = &{{v[0-9]+}}[[[L3]]];
// AVX512-NEXT: _mm_loadu_si32([[P3]])
// AVX512-NOT: _mm_loadu_si32(
// The low bytes of 4 groups: table j, entry e is byte 4e + 2 (j mod 2) of
// the pair of groups j / 2.
// AVX512: _mm512_set_epi8(126, 122, 118, {{.*}}, 66, 124, {{.*}}, 64, 62, {{.*}}, 2, 60, {{.*}}, 8, 4, 0)
// AVX512: _mm512_permutex2var_epi8(
// AVX512: _mm512_storeu_si512(
// AVX512: _mm512_set_epi8(127, 123, 119, {{.*}}, 5, 1)
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
// AVX2 (lut_abi.h's lane order): per register the nibbles, the 32 table
// bytes of its two slots (one per lane) and pshufb; the two nibbles'
// lookups zipped by bytes, pmaddubsw with the signs into int16 pair sums,
// added; the low and high sums interleaved (punpck*wd) and pmaddwd with
// words 1, 256 into int32; at the end the two quarters' lanes folded
// (vperm2i128).
// AVX2: _mm256_loadu_si256(
// AVX2: _mm256_and_si256(
// AVX2: _mm256_loadu_si256(
// AVX2: _mm256_shuffle_epi8(
// AVX2: _mm256_unpacklo_epi8(
// AVX2: _mm256_maddubs_epi16(
// AVX2: _mm256_add_epi16(
// AVX2: _mm256_unpackhi_epi8(
// AVX2: _mm256_unpacklo_epi16(
// AVX2: _mm256_set1_epi32(16777217)
// AVX2: _mm256_madd_epi16(
// AVX2: _mm256_add_epi32(
// AVX2: _mm256_unpackhi_epi16(
// AVX2: _mm256_permute2x128_si256({{.*}}, 32)
// AVX2: _mm256_permute2x128_si256({{.*}}, 49)
// AVX2: _mm256_add_epi32(
// AVX2: _mm256_maskstore_ps(
// CHECK-NOT: _load_mask64
// CHECK-NOT: cmpeq_epi8

// Entry e of a TL2 table is d0 x0 + d1 x1 + d2 x2 for e = 9 d0 + 3 d1 + d2:
// the digit vectors of e = 0..13 (14 and 15 are 0).
// CHECK-LABEL: extern "C" void tl2(
// AVX512 (e = 13: 1, 1, 1; e = 12: 1, 1, 0): the bias (32768 - 384 =
// 32384, 32512); per pair the digit bytes d0, d1 (first group), 0, d0
// (second) for the dword at 0, then d2, 0 (first), d1, d2 (second) for the
// dword at 2; the last dword of the 24 bytes is at 20.
// AVX512: _mm512_set_epi16(-32768, -32768, -32768, -32768, 32384, 32384, 32512, 32512,
// AVX512: _mm512_set_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 1, 1, 0, 1, 1,
// AVX512: _mm512_set_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 1, 0, 1, 0, 0,
// AVX512: size_t [[L7:v[0-9]+]] = 20;
// AVX512-NEXT: int8_t* [[P7:v[0-9]+]] = &{{v[0-9]+}}[[[L7]]];
// AVX512-NEXT: _mm_loadu_si32([[P7]])
// AVX512-NOT: _mm_loadu_si32(
// AVX512: _mm512_permutex2var_epi8(
// AVX2 (entries 8..15 second):
// AVX2: _mm256_set_epi16(
// AVX2: _mm256_set_epi8(
// AVX2: _mm256_set_epi8(
// AVX2: _mm256_set_epi16(-32768, -32768, -32768, -32768, 32384, 32384, 32512, 32512,
// AVX2: _mm256_set_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 1, 1, 0, 1, 1,
// AVX2: _mm256_set_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 1, 0, 1, 0, 0,
// AVX2: size_t [[A7:v[0-9]+]] = 20;
// AVX2-NEXT: int8_t* [[Q7:v[0-9]+]] = &{{v[0-9]+}}[[[A7]]];
// AVX2-NEXT: _mm_loadu_si32([[Q7]])
// AVX2-NOT: _mm_loadu_si32(
// AVX2: _mm256_unpackhi_epi64(
// AVX512: _load_mask64(
// AVX512: _mm512_mask_blend_epi8(
// AVX512: _mm512_permutexvar_epi8(
// AVX2 signs by dword: byte i of the broadcast word tests bit i / 4.
// AVX2: _mm256_broadcastd_epi32(
// AVX2: _mm256_setr_epi8(1, 1, 1, 1, 2, 2, 2, 2, 4, 4, 4, 4, 8, 8, 8, 8, 16, 16, 16, 16, 32, 32, 32, 32, 64, 64, 64, 64, -128, -128, -128, -128)
// AVX2-NEXT: _mm256_and_si256(
// AVX2-NEXT: _mm256_cmpeq_epi8(
// AVX2: _mm256_or_si256(
// AVX2: _mm256_shuffle_epi8(

// GENERIC: error: 'lowbit.mpgemm' op target generic has no byte table lookup (vpermb/pshufb/tbl) on 4-byte registers; lowbit-lower-lut-elementwise needs one
