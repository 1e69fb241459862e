// RUN: lowbit-opt %S/../Conversion/Inputs/bitserial-formats.mlir --lowbit-select-config="target=x86-avx512vnni strategy=lut-bitserial" --lowbit-pack-layout | FileCheck %s --check-prefix=GEMV
// RUN: lowbit-opt %S/../Conversion/Inputs/bitserial-formats.mlir --lowbit-select-config="target=x86-avx512vnni strategy=lut-bitserial n-hint=16" | FileCheck %s --check-prefix=GEMM512
// RUN: lowbit-opt %S/../Conversion/Inputs/bitserial-formats.mlir --lowbit-select-config="target=x86-avx2 strategy=lut-bitserial n-hint=16" | FileCheck %s --check-prefix=GEMM2
// RUN: lowbit-opt %S/../Conversion/Inputs/bitserial-formats.mlir --lowbit-select-config="target=aarch64-neon strategy=lut-bitserial n-hint=16" | FileCheck %s --check-prefix=NEON
// RUN: not lowbit-opt %S/../Conversion/Inputs/bitserial-formats.mlir --lowbit-select-config="target=x86-avx2 strategy=bogus" 2>&1 | FileCheck %s --check-prefix=BAD

// select-config with strategy=lut-bitserial picks the lut_bitserial
// heuristic (one 16-row tile per GEMV stream, int16 sums widened every 64
// groups = 8 blocks; GEMM shares each weight register between 2 activation
// rows where 32 registers allow, one 32-k block per iteration and one row
// where the tables take registers: NEON); pack-layout turns i2s / canonical weights
// into the bit-plane layout of bitserial_abi.h: ceil(M/16) tiles of
// ceil(K/32) blocks x planes x 64 bytes (i2s M = 33, K = 100: 3 x 4 * 2 *
// 64; w1g128 M = 31, K = 256: 2 x 8 * 1 * 64; w3g32 M = 17, K = 96: 2 x 3 *
// 3 * 64).

// GEMV-LABEL: func.func @i2s(
// GEMV-SAME: %{{.*}}: tensor<3x512xi8>
// GEMV: config = #lowbit.lut_bitserial<bm = 16, kfactor = 16>, layout = #lowbit.layout<bitplanes, tile_m = 16, tile_k = 32, interleave = 16>
// GEMV-LABEL: func.func @w1g128(
// GEMV-SAME: %{{.*}}: tensor<2x512xi8>
// GEMV: config = #lowbit.lut_bitserial<bm = 16, kfactor = 16>, layout = #lowbit.layout<bitplanes, tile_m = 16, tile_k = 32, interleave = 16>
// GEMV-LABEL: func.func @w3g32(
// GEMV-SAME: %{{.*}}: tensor<2x576xi8>
// GEMV: config = #lowbit.lut_bitserial<bm = 16, kfactor = 16>, layout = #lowbit.layout<bitplanes, tile_m = 16, tile_k = 32, interleave = 16>

// GEMM512-LABEL: func.func @i2s(
// GEMM512: config = #lowbit.lut_bitserial<bm = 16, bn = 2, kfactor = 16>, layout = #lowbit.layout<i2s>
// GEMM512-LABEL: func.func @w3g32(
// GEMM512: config = #lowbit.lut_bitserial<bm = 16, bn = 2, kfactor = 16>, layout = #lowbit.layout<canonical>

// GEMM2-LABEL: func.func @i2s(
// GEMM2: config = #lowbit.lut_bitserial<bm = 16, kfactor = 16>

// NEON-LABEL: func.func @i2s(
// NEON: config = #lowbit.lut_bitserial<bm = 16, kfactor = 8>
// NEON-LABEL: func.func @w3g32(
// NEON: config = #lowbit.lut_bitserial<bm = 16, kfactor = 8>

// BAD: error: lowbit-select-config: unknown strategy 'bogus'; expected lut-bitserial or none
