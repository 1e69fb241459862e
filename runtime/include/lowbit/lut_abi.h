/*===- lut_abi.h - the layout of element-wise LUT (tl1/tl2) kernels -------===*\
|*                                                                          *|
|* Plain C, like kernel_abi.h, whose kernel signature and activations the   *|
|* lut-elementwise kernels share.                                           *|
|*                                                                          *|
\*===----------------------------------------------------------------------===*/
/*
 * LUT-ELEMENTWISE LAYOUT ("tl1" / "tl2" tiled, bitnet.cpp TL1/TL2)
 *
 * The same ternary values q in {-1, 0, 1} and s_w as i2s. A group is a pair
 * (TL1) or a triple (TL2) of consecutive weights of a row:
 *   TL1 index = 3*(q0+1) + (q1+1)                  0..8 (4 is (0, 0))
 *   TL2 v     = 9*q0 + 3*q1 + q2 (-13..13), index = |v| (0..13), sign = v < 0
 * exactly the codes of the canonical tl1/tl2 formats (runtime/README.md).
 *
 * Block-fitting split (no padding of the TL2 part):
 *   K2 = 96 * floor(K / 96) for tl2, 0 for tl1   TL2 part: weights [0, K2)
 *   K1 = K - K2 (even), K1p = ceil(K1 / 16) * 16  TL1 part: weights [K2, K)
 * The TL1 part's pairs past K are padding with index 4 (value 0).
 *
 *   Mp = ceil(M / 16) * 16   rows, in tiles of 16 (the unit of tile_begin)
 *   Kp = ceil(K / 32) * 32   as kernel_abi.h (the prepared activations)
 *   tile bytes = 64 + 320 * K2 / 96 + 64 * K1p / 16
 * A "vector" is 64 bytes = 4 lanes of 16 bytes; byte 16*l + r of a vector
 * belongs to row r (0..15) of the tile and lane l (0..3). For tile t the
 * codes start at t * tile bytes and hold, in order:
 *   header: int32 [16], little-endian: for row r, the number of TL2 groups
 *           of the row with sign 1 (0 for tl1 and for padding rows).
 *   TL2 blocks b in [0, K2/96), 320 bytes each (triples g = 32b .. 32b+31):
 *     index vectors v in [0, 4): byte 16*l + r has the index of triple
 *       32b + 8v + 2l in its low nibble and of triple 32b + 8v + 2l + 1 in
 *       its high nibble;
 *     sign vector: byte 16*l + r has in bit 2v + p (v in 0..3, p in 0..1)
 *       the sign of triple 32b + 8v + 2l + p.
 *   TL1 vectors j in [0, K1p/16), 64 bytes each (pairs 8j .. 8j+7 of the
 *     TL1 part): byte 16*l + r has the index of pair 8j + 2l in its low
 *     nibble and of pair 8j + 2l + 1 in its high nibble.
 * Padding rows (m >= M) hold zero weights: TL2 index 0, sign 0, TL1 index
 * 4, count 0.
 * So vector v of a TL2 block and TL1 vector j each cover 8 groups; lane l
 * of such a vector holds groups 2l (low nibbles) and 2l + 1 (high nibbles).
 *
 * KERNEL (lowbit_kernel_fn of kernel_abi.h)
 *   codes = this layout; scales and zeros are null; xq, x_scales come from
 *   prepare_activations (ternary block, Kp); x_sums is unused; w_scale = s_w.
 *   Each call builds, per activation row n, one int16 table per group:
 *   TL1 entry i = (i/3 - 1) * x0 + (i%3 - 1) * x1 (i in 0..8), TL2 entry i =
 *   d0 * x0 + d1 * x1 + d2 * x2 with i = 9 d0 + 3 d1 + d2 (balanced ternary,
 *   i in 0..13); other entries 0. Tables are stored as low and high bytes
 *   and gathered with pshufb (lossless int16 "pack-unpack"). A sign selects
 *   the bitwise complement ~e = -e - 1 of the entry; the header's count adds
 *   the missing 1 per negated group. The int16 sums are widened to int32
 *   before they can overflow, so acc = sum_k xq[n][k] * q[m][k] is exact and
 *   y[n][m] = (float)acc * w_scale / x_scales[n][0], bit-exact with the
 *   reference (as kernel_abi.h).
 */
#ifndef LOWBIT_LUT_ABI_H
#define LOWBIT_LUT_ABI_H

#include "lowbit/kernel_abi.h"

/* Weights per TL2 block and per TL1 vector, bytes per vector and header. */
#define LOWBIT_LUT_TL2_BLOCK 96
#define LOWBIT_LUT_TL1_VECTOR 16
#define LOWBIT_LUT_VECTOR_BYTES 64
#define LOWBIT_LUT_HEADER_BYTES 64

#endif /* LOWBIT_LUT_ABI_H */
