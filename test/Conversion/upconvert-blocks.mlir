// RUN: lowbit-opt %S/Inputs/blocks.mlir --lowbit-upconvert-pipeline="target=x86-avx2" | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefix=AVX2 --implicit-check-not=dpbusd
// RUN: lowbit-opt %S/Inputs/blocks.mlir --lowbit-upconvert-pipeline="target=x86-avx512vnni" | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefix=AVX512 --implicit-check-not=sign_epi8
// RUN: lowbit-opt %S/Inputs/blocks.mlir --lowbit-upconvert-pipeline="target=aarch64-neon" | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefix=NEON --implicit-check-not=_mm
// RUN: lowbit-opt %S/Inputs/blocks.mlir --lowbit-upconvert-pipeline="target=generic" | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefix=GENERIC --implicit-check-not=_mm

// The target forms of what llama.cpp's block formats add to the up-convert
// kernels: dot4 {centred} (q8_0's 8-bit codes where the dot product takes
// codes below 128), load_scales (q4_k's 6-bit sub-scales) and codebook
// (iq4_nl's table lookup).

// For q8_0 with AVX2 the codes are flipped to signed (xor 0x80), then their
// magnitude times the activations with their sign (ggml's AVX2 int8 dot).
// AVX2-LABEL: extern "C" void q8_0(
// AVX2: [[C:v[0-9]+]] = _mm256_xor_si256(
// AVX2-NEXT: [[A:v[0-9]+]] = _mm256_sign_epi8([[C]], [[C]]);
// AVX2-NEXT: [[X:v[0-9]+]] = _mm256_sign_epi8({{v[0-9]+}}, [[C]]);
// AVX2-NEXT: _mm256_maddubs_epi16([[A]], [[X]]);
// On AVX-512 VNNI the unsigned codes go to vpdpbusd as they are.
// AVX512-LABEL: extern "C" void q8_0(
// AVX512: _mm512_dpbusd_epi32(
// With NEON, sdot of the flipped codes.
// NEON-LABEL: extern "C" void q8_0(
// NEON: [[F:v[0-9]+]] = veorq_u8(
// NEON: [[S:v[0-9]+]] = vreinterpretq_s8_u8([[F]]);
// NEON: vdotq_s32({{v[0-9]+}}, [[S]],
// GENERIC-LABEL: extern "C" void q8_0(

// q4_k's 6-bit sub-scales (kernel_abi.h, K-QUANT SCALES: a bit string per
// sub-block, row i at bits 6i): per lane the two bytes that hold its value
// moved to its top 16 bits (pshufb of the 16 bytes in every lane / tbl of
// the 32-bit word), shifted left so that the value's top bit is bit 31,
// then right by 26 (logical: unsigned), converted to float; on generic the
// two bytes from bit 6 * row, shifted down by its remainder, masked.
// AVX2-LABEL: extern "C" void q4_k(
// AVX2: [[B:v[0-9]+]] = _mm_loadu_si128(
// AVX2-NEXT: [[W:v[0-9]+]] = _mm256_broadcastsi128_si256([[B]]);
// AVX2-NEXT: [[P:v[0-9]+]] = _mm256_set_epi8(6, 5, -1, -1, 5, 4, -1, -1, 4, 3, -1, -1, 4, 3, -1, -1, 3, 2, -1, -1, 2, 1, -1, -1, 1, 0, -1, -1, 1, 0, -1, -1);
// AVX2-NEXT: [[N:v[0-9]+]] = _mm256_set_epi32(8, 6, 4, 10, 8, 6, 4, 10);
// AVX2-NEXT: [[G:v[0-9]+]] = _mm256_shuffle_epi8([[W]], [[P]]);
// AVX2-NEXT: [[T:v[0-9]+]] = _mm256_sllv_epi32([[G]], [[N]]);
// AVX2-NEXT: [[I:v[0-9]+]] = _mm256_srli_epi32([[T]], 26);
// AVX2-NEXT: _mm256_cvtepi32_ps([[I]]);
// AVX512-LABEL: extern "C" void q4_k(
// AVX512: [[B:v[0-9]+]] = _mm_loadu_si128(
// AVX512-NEXT: [[W:v[0-9]+]] = _mm512_broadcast_i32x4([[B]]);
// AVX512: [[G:v[0-9]+]] = _mm512_shuffle_epi8([[W]],
// AVX512-NEXT: [[T:v[0-9]+]] = _mm512_sllv_epi32([[G]],
// AVX512-NEXT: [[I:v[0-9]+]] = _mm512_srli_epi32([[T]], 26);
// AVX512-NEXT: _mm512_cvtepi32_ps([[I]]);
// NEON-LABEL: extern "C" void q4_k(
// NEON: [[W:v[0-9]+]] = vld1q_dup_u32(
// NEON-NEXT: [[B:v[0-9]+]] = vreinterpretq_u8_u32([[W]]);
// NEON: [[G:v[0-9]+]] = vqtbl1q_u8([[B]],
// NEON: [[T:v[0-9]+]] = vshlq_u32(
// NEON-NEXT: [[I:v[0-9]+]] = vshrq_n_u32([[T]], 26);
// NEON-NEXT: [[S:v[0-9]+]] = vreinterpretq_s32_u32([[I]]);
// NEON-NEXT: vcvtq_f32_s32([[S]]);
// GENERIC-LABEL: extern "C" void q4_k(
// GENERIC: [[R:v[0-9]+]] = {{v[0-9]+}} % {{v[0-9]+}};
// GENERIC-NEXT: [[P:v[0-9]+]] = (const uint8_t*) {{v[0-9]+}};
// GENERIC: uint32_t [[SH:v[0-9]+]] = (uint32_t) [[R]];
// GENERIC-NEXT: uint32_t [[V:v[0-9]+]] = {{v[0-9]+}} >> [[SH]];
// GENERIC-NEXT: uint32_t [[M:v[0-9]+]] = 63;
// GENERIC-NEXT: {{v[0-9]+}} = [[V]] & [[M]];

// iq4_nl's codes, unpacked nibbles, looked up in the 16 bytes codebook[q] +
// 128: one byte shuffle of the table in every 16-byte lane (x86), tbl of the
// table made of two 64-bit halves (NEON), a byte of one of two uint64_t
// words per code (generic).
// AVX2-LABEL: extern "C" void iq4_nl(
// AVX2: [[T:v[0-9]+]] = _mm256_set_epi8(-15, -39, -59, -75, -90, -103, -115, -127, 118, 106, 93, 79, 63, 45, 24, 1, -15, -39, -59, -75, -90, -103, -115, -127, 118, 106, 93, 79, 63, 45, 24, 1);
// AVX2-NEXT: [[U:v[0-9]+]] = _mm256_shuffle_epi8([[T]], {{v[0-9]+}});
// AVX2: _mm256_xor_si256([[U]],
// AVX512-LABEL: extern "C" void iq4_nl(
// AVX512: [[T:v[0-9]+]] = _mm512_set_epi8(-15, -39,
// AVX512-NEXT: [[U:v[0-9]+]] = _mm512_shuffle_epi8([[T]], {{v[0-9]+}});
// AVX512-NEXT: _mm512_dpbusd_epi32({{v[0-9]+}}, [[U]],
// NEON-LABEL: extern "C" void iq4_nl(
// NEON: [[L:v[0-9]+]] = vcreate_u8(8532735038950545409);
// NEON-NEXT: [[H:v[0-9]+]] = vcreate_u8(-1019566456647873151);
// NEON-NEXT: [[T:v[0-9]+]] = vcombine_u8([[L]], [[H]]);
// NEON-NEXT: [[U:v[0-9]+]] = vqtbl1q_u8([[T]], {{v[0-9]+}});
// NEON: veorq_u8([[U]],
// GENERIC-LABEL: extern "C" void iq4_nl(
// GENERIC: (uint64_t) {{v[0-9]+}};
// GENERIC: bool [[HI:v[0-9]+]] = {{v[0-9]+}} >= {{v[0-9]+}};
// GENERIC: uint64_t {{v[0-9]+}} = [[HI]] ? {{v[0-9]+}} : {{v[0-9]+}};
