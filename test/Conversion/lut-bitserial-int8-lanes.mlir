// RUN: lowbit-opt %s --lowbit-lut-bitserial-pipeline="target=x86-avx2" | mlir-translate --mlir-to-cpp | FileCheck %s --implicit-check-not=_mm512 --implicit-check-not=_mm256_or_si256 --implicit-check-not=_mm256_broadcastsi128_si256
// RUN: lowbit-opt %s --lowbit-lut-bitserial-pipeline="target=x86-avxvnni" | mlir-translate --mlir-to-cpp | FileCheck %s --implicit-check-not=_mm512 --implicit-check-not=_mm256_or_si256 --implicit-check-not=dpbusd

// int8 tables (table_bits = 8) on the targets with lut_abi.h's lane order:
// pack-layout writes bitserial_abi.h's lane order, so every register is
// looked up as loaded, ONE pshufb per nibble (no per-slot masks and ors as
// the row-order lut_dot8), and pmaddubsw takes the plane pair weights 1, 2
// as its unsigned operand and the int8 entries as the signed one. The int16
// sums of an act_group's blocks (act_group = 64: 2 blocks, one loop
// iteration of kfactor = 16) are widened once, punpck{l,h}wd then pmaddwd
// with the words (a, 0) broadcast from the table buffer: the sums times
// the act_group's multiplier a.

// CHECK-LABEL: extern "C" void i2s_int8(
// CHECK: _mm256_set1_epi8(1)
// CHECK-NEXT: _mm256_set1_epi8(2)
// CHECK-NEXT: [[PAIRS:v[0-9]+]] = _mm256_unpacklo_epi8(
// CHECK: [[W:v[0-9]+]] = _mm256_loadu_si256(
// CHECK: [[LO:v[0-9]+]] = _mm256_and_si256([[W]],
// CHECK: [[T:v[0-9]+]] = _mm256_loadu_si256(
// CHECK-NEXT: [[E:v[0-9]+]] = _mm256_shuffle_epi8([[T]], [[LO]]);
// CHECK-NEXT: _mm256_maddubs_epi16([[PAIRS]], [[E]]);
// CHECK: _mm256_srli_epi16([[W]], 4);
// CHECK: _mm256_shuffle_epi8(
// CHECK-NEXT: _mm256_maddubs_epi16([[PAIRS]],
// Blocks 0 and 1: 2 x 4 registers x 2 nibbles, one pshufb each.
// CHECK-COUNT-14: _mm256_shuffle_epi8(
// CHECK-NOT: _mm256_shuffle_epi8(
// CHECK: [[A:v[0-9]+]] = _mm256_broadcastd_epi32(
// CHECK-NEXT: [[L:v[0-9]+]] = _mm256_unpacklo_epi16([[S:v[0-9]+]], [[S]]);
// CHECK-NEXT: _mm256_madd_epi16([[L]], [[A]]);
// CHECK: [[H:v[0-9]+]] = _mm256_unpackhi_epi16([[S]], [[S]]);
// CHECK-NEXT: _mm256_madd_epi16([[H]], [[A]]);
func.func @i2s_int8(%x: tensor<?x200xf32>, %w: tensor<33x50xi8>, %s: tensor<1xf32>) -> tensor<?x33xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<i2s>,
         config = #lowbit.lut_bitserial<bm = 16, kfactor = 16, act_group = 64, table_bits = 8>}
       : (tensor<?x200xf32>, tensor<33x50xi8>, tensor<1xf32>) -> tensor<?x33xf32>
  return %y : tensor<?x33xf32>
}

// One plane: the two nibbles' entries of a row zipped (punpck{l,h}bw) and
// multiplied by 1 (pmaddubsw, the weights unsigned). A group format's block
// (act_group = 32: every block its own a) is folded into rows in int16
// (vperm2i128, add_epi16), then each half of the rows sign-extended and
// multiplied by a (vpmovsxwd, vpmulld) before the float scaling.
// CHECK-LABEL: extern "C" void w1g128_int8(
// CHECK: [[ONES:v[0-9]+]] = _mm256_set1_epi8(1);
// CHECK: [[W:v[0-9]+]] = _mm256_loadu_si256(
// CHECK: _mm256_shuffle_epi8(
// CHECK: _mm256_shuffle_epi8(
// CHECK: [[Z:v[0-9]+]] = _mm256_unpacklo_epi8(
// CHECK-NEXT: _mm256_maddubs_epi16([[ONES]], [[Z]]);
// CHECK: [[A:v[0-9]+]] = _mm256_broadcastd_epi32(
// CHECK-NEXT: [[P0:v[0-9]+]] = _mm256_permute2x128_si256([[H0:v[0-9]+]], [[H1:v[0-9]+]], 32);
// CHECK-NEXT: [[P1:v[0-9]+]] = _mm256_permute2x128_si256([[H0]], [[H1]], 49);
// CHECK-NEXT: [[ROWS:v[0-9]+]] = _mm256_add_epi16([[P0]], [[P1]]);
// CHECK-NEXT: [[LO:v[0-9]+]] = _mm256_castsi256_si128([[ROWS]]);
// CHECK-NEXT: [[X0:v[0-9]+]] = _mm256_cvtepi16_epi32([[LO]]);
// CHECK-NEXT: _mm256_mullo_epi32([[X0]], [[A]]);
// CHECK-NEXT: [[HI:v[0-9]+]] = _mm256_extracti128_si256([[ROWS]], 1);
// CHECK-NEXT: [[X1:v[0-9]+]] = _mm256_cvtepi16_epi32([[HI]]);
// CHECK-NEXT: _mm256_mullo_epi32([[X1]], [[A]]);
// CHECK-NOT: _mm256_madd_epi16(
// CHECK: _mm256_cvtepi32_ps(
func.func @w1g128_int8(%x: tensor<?x256xf32>, %w: tensor<16x32xi8>, %s: tensor<16x2xf16>) -> tensor<?x16xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 1, encoding = binary, group = 128, scale = per_group>,
         layout = #lowbit.layout<canonical>,
         config = #lowbit.lut_bitserial<bm = 16, kfactor = 16, table_bits = 8>}
       : (tensor<?x256xf32>, tensor<16x32xi8>, tensor<16x2xf16>) -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}
