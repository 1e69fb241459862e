// RUN: lowbit-opt %S/../Conversion/Inputs/tl-formats.mlir --lowbit-select-config="target=x86-avx512vnni threads=2" --lowbit-pack-layout | FileCheck %s --check-prefix=GEMV512
// RUN: lowbit-opt %S/../Conversion/Inputs/tl-formats.mlir --lowbit-select-config="target=x86-avx512vnni threads=2 n-hint=128" | FileCheck %s --check-prefix=GEMM512
// RUN: lowbit-opt %S/../Conversion/Inputs/tl-formats.mlir --lowbit-select-config="target=x86-avx2 threads=2 n-hint=128" | FileCheck %s --check-prefixes=GEMM2,AVX2
// RUN: lowbit-opt %S/../Conversion/Inputs/tl-formats.mlir --lowbit-select-config="target=aarch64-neon threads=2 n-hint=128" | FileCheck %s --check-prefixes=GEMM2,NEON

// select-config picks lut_elementwise for tl1/tl2 layouts (one 16-row tile
// per GEMV stream; GEMM shares each weight register between 2 activation
// rows and 2 tiles where 2 KiB of registers allow (32 zmm), AVX2 and
// NEON (512 bytes: 16 ymm, 32 q registers) keep 1 x 1; one TL2
// block or 4 TL1 vectors per loop iteration, one TL1 vector where the
// tables take registers: NEON); pack-layout turns the
// row-major layout into the interleaved one of lut_abi.h and the weights
// into ceil(M/16) tiles of 64 + 320 * (K / 96) + 64 * ceil((K % 96) / 16)
// bytes (tl1: 64 + 64 * ceil(K / 16)). M = 33, K = 200.

// GEMV512-LABEL: func.func @tl1(
// GEMV512-SAME: %{{.*}}: tensor<3x896xi8>
// GEMV512: config = #lowbit.lut_elementwise<bm = 16, bk = 64, sub_m = 16>, layout = #lowbit.layout<tl1, tile_m = 16, tile_k = 16, interleave = 16>
// GEMV512-LABEL: func.func @tl2(
// GEMV512-SAME: %{{.*}}: tensor<3x768xi8>
// GEMV512: config = #lowbit.lut_elementwise<bm = 16, bk = 96, sub_m = 16>, layout = #lowbit.layout<tl2, tile_m = 16, tile_k = 96, interleave = 16>

// GEMM512-LABEL: func.func @tl1(
// GEMM512: config = #lowbit.lut_elementwise<bm = 32, bk = 64, sub_m = 16, bn = 2>, layout = #lowbit.layout<tl1>
// GEMM512-LABEL: func.func @tl2(
// GEMM512: config = #lowbit.lut_elementwise<bm = 32, bk = 96, sub_m = 16, bn = 2>, layout = #lowbit.layout<tl2>

// AVX2-LABEL: func.func @tl1(
// AVX2: config = #lowbit.lut_elementwise<bm = 16, bk = 64, sub_m = 16>
// NEON-LABEL: func.func @tl1(
// NEON: config = #lowbit.lut_elementwise<bm = 16, bk = 16, sub_m = 16>
// GEMM2-LABEL: func.func @tl2(
// GEMM2: config = #lowbit.lut_elementwise<bm = 16, bk = 96, sub_m = 16>
