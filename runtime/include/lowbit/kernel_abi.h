/*===- kernel_abi.h - the contract between generated kernels and runtime -===*\
|*                                                                          *|
|* Plain C so that generated C++ and any engine can include it.             *|
|*                                                                          *|
\*===----------------------------------------------------------------------===*/
/*
 * UPCONVERT LAYOUT ("vnni4", bits b in {1, 2, 4})
 *
 * Codes are unsigned: i2s c = q + 1 (0..2), w1gG c = 1 for +1 and 0 for -1,
 * w2gG/w4gG c = q (0..2^b-1), q4_0 c = the 0..15 nibble. Padding codes are 0.
 *   Mp = ceil(M / 16) * 16        rows, in tiles of 16
 *   Kp = ceil(K / 32) * 32        K, padded with zero codes
 *   kv = 32 / b                   k values per 64-byte vector
 * codes: for tile t in [0, Mp/16), for vector v in [0, Kp/kv): 64 bytes, where
 *   byte i*4 + r (row i in 0..15 of the tile, r in 0..3) holds in its bits
 *   [b*j, b*j + b) the code of W[16t + i][v*kv + 4j + r], for j in [0, 8/b).
 *   So (vector >> b*j) & (2^b - 1) per byte is a VNNI "16 rows x 4 k" int8
 *   block (bytes 0..31 are rows 0..7, bytes 32..63 rows 8..15, so AVX2 uses
 *   two 32-byte halves). Total Mp * Kp * b / 8 bytes.
 * scales: w1/w2/w4 gG and q4_0 (G = 32): fp16 [Mp/16][Kp/G][16]; else null.
 * zeros:  w2gG/w4gG only: fp16 [Mp/16][Kp/G][16], integer zero points z.
 * Padding rows have code 0, scale 0 and zero 0.
 *
 * ACTIVATIONS (prepared by the runtime)
 *   block = Kp for ternary formats, 32 otherwise.
 *   xq       int8  [N][Kp]       quantized as in activation.h, zero padded
 *   x_scales float [N][Kp/block] the multiplier s (x ~= q / s)
 *   x_sums   int32 [N][Kp/block] sum of xq over the block
 *
 * MATH (per output row m, column n; D = sum over a block of c * xq, int32)
 *   ternary:  acc = D - S (whole row, S = x_sums[n][0]);
 *             y = (float)acc * w_scale / x_scales[n][0]   -- bit-exact with
 *             the reference.
 *   w1gG:     per 32-block b: acc_b = 2*D_b - S_b;      y += acc_b * s_g / s_b
 *   w2/w4gG:  per 32-block b: acc_b = D_b - z_g * S_b;  y += acc_b * s_g / s_b
 *   q4_0:     per 32-block b: acc_b = D_b - 8 * S_b;    y += acc_b * d_b / s_b
 *   (group formats: float combination order is the kernel's; they are checked
 *   within the documented error bound, not bit-exactly.)
 *
 * KERNEL
 *   One generated function per (format, M, K, target, config). It computes
 *   y[n][m] for all n < N and the rows m of tiles [tile_begin, tile_end),
 *   writing only rows m < M; y is [N][M] float, row-major.
 */
#ifndef LOWBIT_KERNEL_ABI_H
#define LOWBIT_KERNEL_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*lowbit_kernel_fn)(const uint8_t *codes, const uint16_t *scales,
                                 const uint16_t *zeros, const int8_t *xq,
                                 const float *x_scales, const int32_t *x_sums,
                                 float *y, int64_t n, int64_t tile_begin,
                                 int64_t tile_end, float w_scale);

#ifdef __cplusplus
}
#endif

#endif /* LOWBIT_KERNEL_ABI_H */
