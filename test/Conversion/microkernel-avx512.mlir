// RUN: lowbit-opt %s --lowbit-select-config=target=x86-avx512vnni --lowbit-convert-to-x86 | mlir-translate --mlir-to-cpp | FileCheck %s

// Every lowbit.uk.* op and what the AVX512-VNNI TargetInfo makes of it.

// CHECK: #include <immintrin.h>
// CHECK-LABEL: extern "C" void ops(
// CHECK-SAME: const uint8_t* [[CODES:v[0-9]+]], const uint16_t* [[SCALES:v[0-9]+]], const int8_t* [[XQ:v[0-9]+]], float* [[Y:v[0-9]+]], size_t [[OFF:v[0-9]+]], size_t [[COUNT:v[0-9]+]], int32_t [[SUM:v[0-9]+]], float [[INV:v[0-9]+]]) {
// CHECK: uint8_t* [[C:v[0-9]+]] = (uint8_t*) [[CODES]];
// CHECK: __m512i [[ZERO:v[0-9]+]] = _mm512_setzero_si512();
// CHECK: __m512 [[ZEROF:v[0-9]+]] = _mm512_setzero_ps();
// CHECK: uint8_t* [[P:v[0-9]+]] = &[[C]][[[OFF]]];
// CHECK: __m512i [[W:v[0-9]+]] = _mm512_loadu_si512([[P]]);
// CHECK: __m128i [[X4:v[0-9]+]] = _mm_loadu_si32(
// CHECK: __m512i [[X:v[0-9]+]] = _mm512_broadcastd_epi32([[X4]]);
// CHECK: __m512i [[SH:v[0-9]+]] = _mm512_srli_epi16([[W]], 6);
// CHECK: __m512i [[M3:v[0-9]+]] = _mm512_set1_epi8(3);
// CHECK: __m512i [[PL:v[0-9]+]] = _mm512_and_si512([[SH]], [[M3]]);
// CHECK: __m512i [[D:v[0-9]+]] = _mm512_dpbusd_epi32([[ZERO]], [[PL]], [[X]]);
// A plane masked in place: no shift, codes x 64.
// CHECK: __m512i [[M:v[0-9]+]] = _mm512_set1_epi8(-64);
// CHECK: __m512i [[PS:v[0-9]+]] = _mm512_and_si512([[W]], [[M]]);
// CHECK: __m512i [[DS:v[0-9]+]] = _mm512_dpbusd_epi32([[ZERO]], [[PS]], [[X]]);
// CHECK: __m512i [[E:v[0-9]+]] = _mm512_srai_epi32([[DS]], 6);
// CHECK: __m512i [[SUMD:v[0-9]+]] = _mm512_add_epi32([[D]], [[E]]);
// CHECK: const __m256i* [[HP:v[0-9]+]] = (const __m256i*)
// CHECK: __m256i [[H:v[0-9]+]] = _mm256_loadu_si256([[HP]]);
// CHECK: __m512 [[S:v[0-9]+]] = _mm512_cvtph_ps([[H]]);
// g + (D - z * S) * inv
// CHECK: __m512 [[DF:v[0-9]+]] = _mm512_cvtepi32_ps([[SUMD]]);
// CHECK: float [[SF:v[0-9]+]] = (float) [[SUM]];
// CHECK: __m512 [[SB:v[0-9]+]] = _mm512_set1_ps([[SF]]);
// CHECK: __m512 [[T:v[0-9]+]] = _mm512_fnmadd_ps([[S]], [[SB]], [[DF]]);
// CHECK: __m512 [[IB:v[0-9]+]] = _mm512_set1_ps([[INV]]);
// CHECK: __m512 [[G1:v[0-9]+]] = _mm512_fmadd_ps([[T]], [[IB]], [[ZEROF]]);
// g + D * inv
// CHECK: __m512 [[DF2:v[0-9]+]] = _mm512_cvtepi32_ps([[SUMD]]);
// CHECK: __m512 [[G2:v[0-9]+]] = _mm512_fmadd_ps([[DF2]], {{v[0-9]+}}, [[G1]]);
// y + g * s
// CHECK: __m512 [[Y2:v[0-9]+]] = _mm512_fmadd_ps([[G2]], [[S]], [[ZEROF]]);
// g + D * s, a multiplier per lane (no broadcast)
// CHECK: __m512 [[DF3:v[0-9]+]] = _mm512_cvtepi32_ps([[SUMD]]);
// CHECK-NEXT: __m512 {{v[0-9]+}} = _mm512_fmadd_ps([[DF3]], [[S]], [[G2]]);
// A block accumulator started at a broadcast value; codes doubled by a left
// shift.
// CHECK: __m512i [[NS:v[0-9]+]] = _mm512_set1_epi32([[SUM]]);
// CHECK: __m512i [[L:v[0-9]+]] = _mm512_slli_epi16([[W]], 1);
// CHECK: __m512i [[M2:v[0-9]+]] = _mm512_set1_epi8(2);
// CHECK: __m512i [[C2:v[0-9]+]] = _mm512_and_si512([[L]], [[M2]]);
// CHECK: _mm512_dpbusd_epi32([[NS]], [[C2]], [[X]]);
// ((float)(D - S) * w) / s_x, no FMA: bit-exact with the reference.
// CHECK: __m512i [[SI:v[0-9]+]] = _mm512_set1_epi32([[SUM]]);
// CHECK: __m512i [[ACC:v[0-9]+]] = _mm512_sub_epi32([[SUMD]], [[SI]]);
// CHECK: __m512 [[AF:v[0-9]+]] = _mm512_cvtepi32_ps([[ACC]]);
// CHECK: __m512 [[AW:v[0-9]+]] = _mm512_mul_ps([[AF]],
// CHECK: __m512 [[TS:v[0-9]+]] = _mm512_div_ps([[AW]],
// CHECK: _mm512_storeu_ps({{v[0-9]+}}, [[Y2]]);
// CHECK: uint32_t [[ONE:v[0-9]+]] = 1;
// CHECK: uint32_t [[N:v[0-9]+]] = (uint32_t) [[COUNT]];
// CHECK: uint32_t [[BITS:v[0-9]+]] = [[ONE]] << [[N]];
// CHECK: uint32_t [[LANES:v[0-9]+]] = [[BITS]] - [[ONE]];
// CHECK: __mmask16 [[MASK:v[0-9]+]] = (__mmask16) [[LANES]];
// CHECK: _mm512_mask_storeu_ps({{v[0-9]+}}, [[MASK]], [[TS]]);
// CHECK: const char* [[PC:v[0-9]+]] = (const char*)
// CHECK: _mm_prefetch([[PC]], _MM_HINT_T0);
func.func @ops(%codes: memref<?xui8> {lowbit.readonly}, %scales: memref<?xui16> {lowbit.readonly},
               %xq: memref<?xi8> {lowbit.readonly}, %y: memref<?xf32>, %off: index, %count: index,
               %sum: i32, %inv: f32) {
  %zero = arith.constant dense<0> : vector<16xi32>
  %out0 = arith.constant dense<0.0> : vector<16xf32>
  %w = lowbit.uk.load %codes[%off] : memref<?xui8> -> vector<64xi8>
  %x = lowbit.uk.broadcast4 %xq[%off] : memref<?xi8> -> vector<64xi8>
  %c = lowbit.uk.unpack %w {bits = 2, plane = 3} : vector<64xi8>
  %d = lowbit.uk.dot4 %zero, %c, %x : vector<64xi8> -> vector<16xi32>
  %cs = lowbit.uk.unpack %w {bits = 2, plane = 3, scale = 6} : vector<64xi8>
  %ds = lowbit.uk.dot4 %zero, %cs, %x : vector<64xi8> -> vector<16xi32>
  %e = lowbit.uk.shr_exact %ds {shift = 6} : vector<16xi32>
  %sumd = arith.addi %d, %e : vector<16xi32>
  %s = lowbit.uk.load_half %scales[%off] : memref<?xui16> -> vector<16xf32>
  %g1 = lowbit.uk.block_combine %out0, %sumd, %inv zero(%s, %sum : vector<16xf32>) : vector<16xi32> -> vector<16xf32>
  %g2 = lowbit.uk.block_combine %g1, %sumd, %inv : vector<16xi32> -> vector<16xf32>
  %y2 = lowbit.uk.group_combine %out0, %g2, %s : vector<16xf32>
  %g3 = lowbit.uk.block_combine %g2, %sumd scale(%s : vector<16xf32>) : vector<16xi32> -> vector<16xf32>
  lowbit.uk.store %g3, %y[%off] : vector<16xf32>, memref<?xf32>
  %nsum = vector.broadcast %sum : i32 to vector<16xi32>
  %c1 = lowbit.uk.unpack %w {bits = 1, plane = 0, scale = 1} : vector<64xi8>
  %d1 = lowbit.uk.dot4 %nsum, %c1, %x : vector<64xi8> -> vector<16xi32>
  %t = lowbit.uk.ternary_scale %sumd, %sum, %inv, %inv : vector<16xi32> -> vector<16xf32>
  lowbit.uk.store %y2, %y[%off] : vector<16xf32>, memref<?xf32>
  %t1 = lowbit.uk.ternary_scale %d1, %sum, %inv, %inv : vector<16xi32> -> vector<16xf32>
  lowbit.uk.store %t1, %y[%off] : vector<16xf32>, memref<?xf32>
  lowbit.uk.store %t, %y[%off], %count : vector<16xf32>, memref<?xf32>
  lowbit.uk.prefetch %codes[%off] : memref<?xui8>
  return
}
