// RUN: lowbit-opt %s --lowbit-select-config=target=x86-avx2 --lowbit-convert-to-x86 | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefixes=CHECK,AVX2 --implicit-check-not=dpbusd
// RUN: lowbit-opt %s --lowbit-select-config=target=x86-avxvnni --lowbit-convert-to-x86 | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefixes=CHECK,AVXVNNI --implicit-check-not=maddubs

// The ymm TargetInfos: a 64-byte vnni4 vector is two registers of 8 rows.
// AVX2 has no dot-product instruction: u8 x s8 pairs into int16
// (vpmaddubsw, which saturates: codes stay below 128, hence plane 3 of
// 2-bit codes shifted down one bit, x 32), then pairs into int32 (vpmaddwd
// with ones). AVX-VNNI has vpdpbusd on ymm.

// CHECK-LABEL: extern "C" void ops(
// CHECK: __m256i [[W:v[0-9]+]] = _mm256_loadu_si256(
// CHECK: __m256i [[X:v[0-9]+]] = _mm256_broadcastd_epi32(
// CHECK: __m256i [[SH:v[0-9]+]] = _mm256_srli_epi16([[W]], 1);
// CHECK: __m256i [[M:v[0-9]+]] = _mm256_set1_epi8(96);
// CHECK: __m256i [[C:v[0-9]+]] = _mm256_and_si256([[SH]], [[M]]);
// AVX2: __m256i [[P:v[0-9]+]] = _mm256_maddubs_epi16([[C]], [[X]]);
// AVX2: __m256i [[ONES:v[0-9]+]] = _mm256_set1_epi16(1);
// AVX2: __m256i [[Q:v[0-9]+]] = _mm256_madd_epi16([[P]], [[ONES]]);
// AVX2: __m256i [[D:v[0-9]+]] = _mm256_add_epi32({{v[0-9]+}}, [[Q]]);
// AVXVNNI: __m256i [[D:v[0-9]+]] = _mm256_dpbusd_avx_epi32({{v[0-9]+}}, [[C]], [[X]]);
// CHECK: _mm256_srai_epi32([[D]], 5);
// CHECK: const __m128i* [[HP:v[0-9]+]] = (const __m128i*)
// CHECK: __m256 [[S:v[0-9]+]] = _mm256_cvtph_ps(
// g + (D - z S) * inv, then y + g * s
// CHECK: _mm256_cvtepi32_ps(
// CHECK: _mm256_fnmadd_ps(
// CHECK: __m256 [[G:v[0-9]+]] = _mm256_fmadd_ps(
// CHECK: _mm256_fmadd_ps([[G]], [[S]],
// Lanes below count: set1(count) > (0, ..., 7).
// CHECK: __m256i [[IOTA:v[0-9]+]] = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
// CHECK: __m256i [[MASK:v[0-9]+]] = _mm256_cmpgt_epi32({{v[0-9]+}}, [[IOTA]]);
// CHECK: _mm256_maskstore_ps({{v[0-9]+}}, [[MASK]], {{v[0-9]+}});
func.func @ops(%codes: memref<?xui8> {lowbit.readonly}, %scales: memref<?xui16> {lowbit.readonly},
               %xq: memref<?xi8> {lowbit.readonly}, %y: memref<?xf32>, %off: index, %count: index,
               %sum: i32, %inv: f32) {
  %zero = arith.constant dense<0> : vector<8xi32>
  %w = lowbit.uk.load %codes[%off] : memref<?xui8> -> vector<32xi8>
  %x = lowbit.uk.broadcast4 %xq[%off] : memref<?xi8> -> vector<32xi8>
  %c = lowbit.uk.unpack %w {bits = 2, plane = 3, scale = 5} : vector<32xi8>
  %d = lowbit.uk.dot4 %zero, %c, %x : vector<32xi8> -> vector<8xi32>
  %e = lowbit.uk.shr_exact %d {shift = 5} : vector<8xi32>
  %s = lowbit.uk.load_half %scales[%off] : memref<?xui16> -> vector<8xf32>
  %g1 = lowbit.uk.block_combine %s, %e, %inv zero(%s, %sum : vector<8xf32>) : vector<8xi32> -> vector<8xf32>
  %y1 = lowbit.uk.group_combine %s, %g1, %s : vector<8xf32>
  lowbit.uk.store %y1, %y[%off], %count : vector<8xf32>, memref<?xf32>
  return
}
