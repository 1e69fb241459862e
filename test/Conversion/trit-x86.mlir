// RUN: lowbit-opt %s --lowbit-select-config=target=x86-avx512vnni --lowbit-convert-to-x86 | mlir-translate --mlir-to-cpp | FileCheck %s

// lowbit.uk.trit and lowbit.uk.triple (the base-3 digits of kernel_abi.h's
// TQ1_0 rows, and their fractions) and a load of fewer bytes than a
// register, on AVX512-VNNI.

// CHECK-LABEL: extern "C" void trits(
// The first 52 bytes, the rest zero: a mask of 52 ones.
// CHECK: uint64_t [[ONES:v[0-9]+]] = 4503599627370495;
// CHECK: __mmask64 [[MASK:v[0-9]+]] = (__mmask64) [[ONES]];
// CHECK: __m512i [[W:v[0-9]+]] = _mm512_maskz_loadu_epi8([[MASK]],
// Digit 0: the low byte moved up (x 3^0 << 8), the high byte in place.
// CHECK: __m512i [[L0:v[0-9]+]] = _mm512_slli_epi16([[W]], 8);
// CHECK: __m512i [[THREE:v[0-9]+]] = _mm512_set1_epi16(3);
// CHECK: __m512i [[D0L:v[0-9]+]] = _mm512_mulhi_epu16([[L0]], [[THREE]]);
// CHECK: __m512i [[HM:v[0-9]+]] = _mm512_set1_epi16(-256);
// CHECK: __m512i [[H0:v[0-9]+]] = _mm512_and_si512([[W]], [[HM]]);
// CHECK: __m512i [[T768:v[0-9]+]] = _mm512_set1_epi16(768);
// CHECK: __m512i [[D0H:v[0-9]+]] = _mm512_mulhi_epu16([[H0]], [[T768]]);
// CHECK: __m512i [[D0HM:v[0-9]+]] = _mm512_and_si512([[D0H]], [[HM]]);
// CHECK: __m512i {{v[0-9]+}} = _mm512_or_si512([[D0L]], [[D0HM]]);
// Digit 3: both bytes times 27 mod 256 (the low one as 27 << 8).
// CHECK: __m512i [[P3:v[0-9]+]] = _mm512_set1_epi16(6912);
// CHECK: _mm512_mullo_epi16([[W]], [[P3]]);
// CHECK: __m512i [[P27:v[0-9]+]] = _mm512_set1_epi16(27);
// CHECK: _mm512_mullo_epi16({{v[0-9]+}}, [[P27]]);
// CHECK: _mm512_or_si512(
// 3v mod 256: two byte adds.
// CHECK: __m512i [[TWICE:v[0-9]+]] = _mm512_add_epi8([[W]], [[W]]);
// CHECK: _mm512_add_epi8([[TWICE]], [[W]]);
func.func @trits(%codes: memref<?xui8> {lowbit.readonly}, %xq: memref<?xi8> {lowbit.readonly},
                 %y: memref<?xf32>, %off: index, %sum: i32, %inv: f32) {
  %zero = arith.constant dense<0> : vector<16xi32>
  %w = lowbit.uk.load %codes[%off] {bytes = 52} : memref<?xui8> -> vector<64xi8>
  %x = lowbit.uk.broadcast4 %xq[%off] : memref<?xi8> -> vector<64xi8>
  %d0 = lowbit.uk.trit %w {digit = 0} : vector<64xi8>
  %a0 = lowbit.uk.dot4 %zero, %d0, %x : vector<64xi8> -> vector<16xi32>
  %d3 = lowbit.uk.trit %w {digit = 3} : vector<64xi8>
  %a3 = lowbit.uk.dot4 %a0, %d3, %x : vector<64xi8> -> vector<16xi32>
  %f1 = lowbit.uk.triple %w : vector<64xi8>
  %a4 = lowbit.uk.dot4 %a3, %f1, %x : vector<64xi8> -> vector<16xi32>
  %t = lowbit.uk.ternary_scale %a4, %sum, %inv, %inv : vector<16xi32> -> vector<16xf32>
  lowbit.uk.store %t, %y[%off] : vector<16xf32>, memref<?xf32>
  return
}
