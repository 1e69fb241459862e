// RUN: lowbit-opt %s --lowbit-lut-bitserial-pipeline="target=x86-avx512vnni" | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefixes=AVX512
// RUN: lowbit-opt %s --lowbit-lut-bitserial-pipeline="target=aarch64-neon" | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefixes=NEON,DOT --implicit-check-not=_mm
// RUN: lowbit-opt %s --lowbit-lut-bitserial-pipeline="target=aarch64-neon-nodot" | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefixes=NEON,NODOT --implicit-check-not=_mm --implicit-check-not=vdotq

// The C++ of lowbit.uk.lut_dot8 (int8 tables, table_bits = 8): the plane's
// multiplier bytes broadcast from the table buffer (4 bytes), then per
// nibble ONE lookup of the 64 bytes of 4 int8 tables and one dot product
// with the multipliers as the unsigned operand and the entries as the
// signed one (no bias, no lut_combine): AVX512 vpermb (index nibble | 16 x
// (byte mod 4) by ternary logic) + vpdpbusd; NEON tbl of the 4 tables
// (vqtbl4q_u8, index by bsl or sri) + sdot, or without dotprod smull pairs
// and sadalp. The table builder is scalar C++ (float scale 3 / a, rounded
// half away from zero). AVX2 and AVX-VNNI read the lane order instead:
// lut-bitserial-int8-lanes.mlir.

// AVX512-LABEL: extern "C" void w3g32_int8(
// AVX512: int8_t [[T:v[0-9]+]][288];
// AVX512: float [[R:v[0-9]+]] = {{.*}} / {{.*}};
// AVX512: float {{v[0-9]+}} = {{.*}} * [[R]];
// AVX512: [[M0:v[0-9]+]] = _mm512_broadcastd_epi32(
// AVX512: [[M1:v[0-9]+]] = _mm512_broadcastd_epi32(
// AVX512: [[M2:v[0-9]+]] = _mm512_broadcastd_epi32(
// AVX512: [[W:v[0-9]+]] = _mm512_loadu_si512(
// AVX512: [[IDX:v[0-9]+]] = _mm512_ternarylogic_epi32([[W]], {{.*}}, 234);
// AVX512: [[TAB:v[0-9]+]] = _mm512_loadu_si512(
// AVX512: [[E:v[0-9]+]] = _mm512_permutexvar_epi8([[IDX]], [[TAB]]);
// AVX512: [[S:v[0-9]+]] = _mm512_dpbusd_epi32({{.*}}, [[M0]], [[E]]);
// AVX512: [[HI:v[0-9]+]] = _mm512_srli_epi16([[W]], 4);
// AVX512: _mm512_ternarylogic_epi32([[HI]],
// AVX512: _mm512_permutexvar_epi8(
// AVX512: _mm512_dpbusd_epi32([[S]], [[M0]],
// AVX512: _mm512_dpbusd_epi32({{.*}}, [[M1]],
// AVX512: _mm512_dpbusd_epi32({{.*}}, [[M1]],
// AVX512: _mm512_dpbusd_epi32({{.*}}, [[M2]],
// AVX512: _mm512_dpbusd_epi32({{.*}}, [[M2]],
// AVX512-NOT: _mm512_slli_epi32
// AVX512: _mm512_fmadd_ps(


// NEON-LABEL: extern "C" void w3g32_int8(
// NEON: [[MW:v[0-9]+]] = vld1q_dup_s32(
// NEON: [[M0:v[0-9]+]] = vreinterpretq_u8_s32([[MW]]);
// NEON: [[W:v[0-9]+]] = vld1q_u8(
// NEON: vdupq_n_u32(807407616)
// NEON: [[IDX:v[0-9]+]] = vbslq_u8({{.*}}, [[W]], {{.*}});
// NEON: [[TAB:v[0-9]+]] = vld1q_u8_x4(
// NEON: [[E:v[0-9]+]] = vqtbl4q_u8([[TAB]], [[IDX]]);
// NEON: [[MS:v[0-9]+]] = vreinterpretq_s8_u8([[M0]]);
// NEON: [[ES:v[0-9]+]] = vreinterpretq_s8_u8([[E]]);
// DOT: vdotq_s32({{.*}}, [[MS]], [[ES]]);
// NODOT: vmull_s8(
// NODOT: vmull_high_s8([[MS]], [[ES]]);
// NODOT: vpadalq_s16(
// NEON: [[HIDX:v[0-9]+]] = vsriq_n_u8({{.*}}, [[W]], 4);
// NEON: vqtbl4q_u8({{.*}}, [[HIDX]]);
// NEON-NOT: vshlq_n_s32({{.*}}, 8)
// NEON: vfmaq_f32(
func.func @w3g32_int8(%x: tensor<?x64xf32>, %w: tensor<1x384xi8>, %s: tensor<16x2x2xf16>) -> tensor<?x16xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 3, encoding = unsigned, group = 32, scale = per_group>,
         layout = #lowbit.layout<bitplanes, tile_m = 16, tile_k = 32, interleave = 16>,
         config = #lowbit.lut_bitserial<bm = 16, kfactor = 8, table_bits = 8>}
       : (tensor<?x64xf32>, tensor<1x384xi8>, tensor<16x2x2xf16>) -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}
