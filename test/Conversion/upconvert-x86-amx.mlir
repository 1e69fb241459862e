// RUN: lowbit-opt %S/Inputs/formats.mlir --lowbit-upconvert-pipeline="target=x86-amx n-hint=16" | mlir-translate --mlir-to-cpp | FileCheck %s
// RUN: lowbit-opt %S/Inputs/formats.mlir --lowbit-upconvert-pipeline="target=x86-amx" | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefix=GEMV
// RUN: lowbit-opt %S/Inputs/blocks.mlir --lowbit-upconvert-pipeline="target=x86-amx n-hint=16" | mlir-translate --mlir-to-cpp | FileCheck %s --check-prefix=KQ

// x86-amx: the kernels carry the tile wrappers of amx_tiles.h; the i2s GEMM
// kernel (N hint 16) configures the tiles, expands the codes, multiplies
// 2 x 2 accumulator tiles (activations 4, 5; codes 6, 7) per 64 k, stores
// them and releases the tiles; its remaining activation rows run
// AVX512-VNNI code; w1gG (codes doubled as they are expanded), w2gG, w4gG
// and q4_0 take one tile product per 32-k block. The GEMV kernels use no
// tile.

// CHECK: #include <immintrin.h>
// CHECK: template <int K> LOWBIT_AMX_FN void lowbit_amx_config()
// CHECK-LABEL: extern "C" void i2s(
// CHECK: lowbit_amx_config<64>();
// CHECK: _mm512_and_si512(
// CHECK: lowbit_amx_zero<3>();
// CHECK: lowbit_amx_load<4>(
// CHECK: lowbit_amx_load<5>(
// CHECK: lowbit_amx_load<6>(
// CHECK: lowbit_amx_load<7>(
// CHECK: lowbit_amx_dot_su<0, 4, 6>();
// CHECK: lowbit_amx_dot_su<1, 4, 7>();
// CHECK: lowbit_amx_dot_su<2, 5, 6>();
// CHECK: lowbit_amx_dot_su<3, 5, 7>();
// CHECK: lowbit_amx_store<3>(
// CHECK: _mm512_div_ps(
// CHECK: _mm512_dpbusd_epi32(
// CHECK: lowbit_amx_release();
// CHECK-LABEL: extern "C" void w1g128(
// CHECK: lowbit_amx_config<32>();
// CHECK: lowbit_amx_dot_su<0, 4, 6>();
// CHECK-LABEL: extern "C" void w2g64(
// CHECK: lowbit_amx_config<32>();
// CHECK-LABEL: extern "C" void w4g32(
// CHECK: lowbit_amx_config<32>();

// q4_0: one tile product per 32-k block, combined in f32 per block.
// CHECK-LABEL: extern "C" void q4_0(
// CHECK: lowbit_amx_config<32>();
// CHECK: lowbit_amx_dot_su<0, 4, 6>();
// CHECK: lowbit_amx_store<0>(
// CHECK: _mm512_cvtph_ps(
// CHECK: _mm512_fmadd_ps(
// CHECK: lowbit_amx_release();

// GEMV-LABEL: extern "C" void i2s(
// GEMV-NOT: lowbit_amx_config<
// GEMV: _mm512_dpbusd_epi32(

// K-quants (q4_k): the GEMM kernel's sub-scales widened per tile group,
// one tile product per 32-k sub-block; iq4_nl: its codes looked up
// (pshufb) as they are expanded, one tile product per 32-k block.
// KQ-LABEL: extern "C" void q4_k(
// KQ: lowbit_amx_config<32>();
// KQ: lowbit_amx_dot_su<0, 4, 6>();
// KQ: lowbit_amx_store<0>(
// KQ: lowbit_amx_release();
// KQ-LABEL: extern "C" void iq4_nl(
// KQ: lowbit_amx_config<32>();
// KQ: _mm512_shuffle_epi8(
// KQ: lowbit_amx_dot_su<0, 4, 6>();
// KQ: lowbit_amx_release();
