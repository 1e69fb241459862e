// RUN: lowbit-opt %s --lowbit-select-config="target=x86-avx512vnni threads=2" | FileCheck %s --check-prefix=AVX512
// RUN: lowbit-opt %s --lowbit-select-config="target=x86-avx512vnni threads=2 n-hint=128" | FileCheck %s --check-prefix=GEMM512
// RUN: lowbit-opt %s --lowbit-select-config="target=x86-avx2 threads=2 n-hint=128" | FileCheck %s --check-prefix=GEMM2
// RUN: lowbit-opt %s --lowbit-select-config="target=generic" | FileCheck %s --check-prefix=GENERIC
// RUN: lowbit-opt %s --lowbit-select-config="target=x86-avx512vnni threads=2 schedule=%S/Inputs/schedule.json" | FileCheck %s --check-prefix=SCHED
// RUN: lowbit-opt %s --lowbit-select-config="target=x86-avx512vnni threads=2 n-hint=4 schedule=%S/Inputs/schedule.json" | FileCheck %s --check-prefix=SCHEDGEMM
// RUN: lowbit-opt %s --lowbit-select-config="target=x86-avx512vnni threads=2 schedule=%S/Inputs/schedule-v2.json" | FileCheck %s --check-prefix=SCHEDV2
// RUN: lowbit-opt %s "--lowbit-select-config=target=x86-avx512vnni config='#lowbit.upconvert<tile_m = 48, tile_k = 96, tile_n = 3>'" | FileCheck %s --check-prefix=OVERRIDE

// Heuristic configs (no schedule): GEMV is one 16-row tile with weights
// prefetched 4 KiB ahead (64 k of 2-bit codes = 256 bytes per step: 16
// steps; of 4-bit codes 512 bytes: 8 steps); GEMM the largest block of tiles
// x rows whose accumulators fit the registers. A schedule entry wins over
// the heuristic for its key only (version 1, and version 2 as `lowbit
// tune` writes it); the config option wins over both. A
// config already on the op is kept.

// AVX512-LABEL: func.func @i2s_2560(
// AVX512: config = #lowbit.upconvert<tile_m = 16, tile_k = 64, tile_n = 1, prefetch = 16>
// GEMM512-LABEL: func.func @i2s_2560(
// GEMM512: config = #lowbit.upconvert<tile_m = 64, tile_k = 64, tile_n = 4>
// GEMM2-LABEL: func.func @i2s_2560(
// GEMM2: config = #lowbit.upconvert<tile_m = 32, tile_k = 64, tile_n = 2>
// GENERIC-LABEL: func.func @i2s_2560(
// GENERIC: config = #lowbit.upconvert<tile_m = 16, tile_k = 64, tile_n = 1>
// SCHED-LABEL: func.func @i2s_2560(
// SCHED: config = #lowbit.upconvert<tile_m = 32, tile_k = 128, tile_n = 1, prefetch = 4>
// SCHEDV2-LABEL: func.func @i2s_2560(
// SCHEDV2: config = #lowbit.upconvert<tile_m = 16, tile_k = 128, tile_n = 1, unroll = 2>
// SCHEDGEMM-LABEL: func.func @i2s_2560(
// SCHEDGEMM: config = #lowbit.upconvert<tile_m = 32, tile_k = 64, tile_n = 8>
// OVERRIDE-LABEL: func.func @i2s_2560(
// OVERRIDE: config = #lowbit.upconvert<tile_m = 48, tile_k = 96, tile_n = 3>
func.func @i2s_2560(%x: tensor<?x2560xf32>, %w: tensor<2560x640xi8>, %s: tensor<1xf32>) -> tensor<?x2560xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<i2s>}
       : (tensor<?x2560xf32>, tensor<2560x640xi8>, tensor<1xf32>) -> tensor<?x2560xf32>
  return %y : tensor<?x2560xf32>
}

// A static N decides GEMV / GEMM whatever n-hint says. The schedule entry
// for q4_0 6912 x 2560 is for threads = 1, so it does not apply here.
// AVX512-LABEL: func.func @q4_0_static_n(
// AVX512: config = #lowbit.upconvert<tile_m = 64, tile_k = 64, tile_n = 2>
// GEMM2-LABEL: func.func @q4_0_static_n(
// GEMM2: config = #lowbit.upconvert<tile_m = 16, tile_k = 64, tile_n = 2>
// SCHED-LABEL: func.func @q4_0_static_n(
// SCHED: config = #lowbit.upconvert<tile_m = 64, tile_k = 64, tile_n = 2>
func.func @q4_0_static_n(%x: tensor<16x2560xf32>, %w: tensor<6912x1440xi8>) -> tensor<16x6912xf32> {
  %y = lowbit.mpgemm %x, %w {
         weight = #lowbit.weight<bits = 4, encoding = gguf_q4_0, group = 32, scale = per_block>,
         layout = #lowbit.layout<gguf>}
       : (tensor<16x2560xf32>, tensor<6912x1440xi8>) -> tensor<16x6912xf32>
  return %y : tensor<16x6912xf32>
}

// 4-bit GEMV prefetches 8 steps of 512 bytes.
// AVX512-LABEL: func.func @w4_gemv(
// AVX512: config = #lowbit.upconvert<tile_m = 16, tile_k = 64, tile_n = 1, prefetch = 8>
func.func @w4_gemv(%x: tensor<1x256xf32>, %w: tensor<64x128xi8>, %s: tensor<64x8x2xf16>) -> tensor<1x64xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 4, encoding = unsigned, group = 32, scale = per_group>,
         layout = #lowbit.layout<canonical>}
       : (tensor<1x256xf32>, tensor<64x128xi8>, tensor<64x8x2xf16>) -> tensor<1x64xf32>
  return %y : tensor<1x64xf32>
}

// AVX512-LABEL: func.func @keeps_config(
// AVX512: config = #lowbit.reference
// OVERRIDE-LABEL: func.func @keeps_config(
// OVERRIDE: config = #lowbit.reference
func.func @keeps_config(%x: tensor<?x256xf32>, %w: tensor<64x32xi8>, %s: tensor<64x2xf16>) -> tensor<?x64xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 1, encoding = binary, group = 128, scale = per_group>,
         layout = #lowbit.layout<canonical>,
         config = #lowbit.reference}
       : (tensor<?x256xf32>, tensor<64x32xi8>, tensor<64x2xf16>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}
