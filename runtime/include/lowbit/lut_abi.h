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
 *   T  = Mp / 16             tiles
 *   Kp = ceil(K / 32) * 32   as kernel_abi.h (the prepared activations)
 *   tile bytes = 64 + 320 * K2 / 96 + 64 * K1p / 16
 *   G = K2 / 3 + K1p / 2     groups per row, padding included
 *
 * K panels (so that a kernel whose activation tables of a whole row would
 * not fit an L1 cache still reads the weights as a few long sequential
 * runs; lowbit_lut_panels, lowbit_lut_panel_blocks below): the B = K2 / 96
 * TL2 blocks are split into
 *   P  = max(1, floor(B / 16 + 1/2))
 *                               panels (LOWBIT_LUT_PANEL_BLOCKS = 16): the
 *                               count whose panels come nearest 16 blocks
 *                               (16 KiB of tables; 12 to 23 blocks)
 *   PB = ceil(B / P)            blocks per panel; panel c has the blocks
 *                               [c * PB, min((c + 1) * PB, B)), B_c of them
 * A tile's piece of panel c is, in order: the B_c TL2 blocks of the panel,
 * for c = P - 1 the TL1 vectors and the header:
 *   piece_c = 320 * B_c + (c == P - 1 ? 64 * K1p / 16 + 64 : 0)
 * Panel c holds the pieces of all T tiles in tile order: tile t's piece c
 * starts at byte T * (piece_0 + ... + piece_{c-1}) + t * piece_c. With
 * P = 1 (tl1, and tl2 with K < 24 * 96) tile t simply starts at
 * t * tile bytes.
 *
 * A "vector" is 64 bytes: byte 4r + j belongs to row r (0..15) of the
 * tile and slot j (0..3), so the 4 bytes of one int32 lane are 4 groups of
 * the same row. The pieces of tile t hold, in order:
 *   TL2 blocks b in [0, K2/96), 320 bytes each (triples g = 32b .. 32b+31):
 *     sign words, 64 bytes: the little-endian uint64 at byte 16v + 8p
 *       (v in 0..3, p in 0..1) has in bit 4r + j the sign of triple
 *       32b + 8v + 4p + j (p = 0: the low nibbles of vector v, 1: the
 *       high nibbles);
 *     index vectors v in [0, 4) at byte 64 + 64v: byte 4r + j has the
 *       index of triple 32b + 8v + j in its low nibble and of triple
 *       32b + 8v + 4 + j in its high nibble.
 *   TL1 vectors v in [0, K1p/16), 64 bytes each (pairs 8v .. 8v+7 of the
 *     TL1 part): byte 4r + j has the index of pair 8v + j in its low
 *     nibble and of pair 8v + 4 + j in its high nibble.
 *   header: int32 [16], little-endian: for row r, -32768 * (G - 2 * n_r)
 *           (wrapping) with n_r the number of TL2 groups of the row with
 *           sign 1 (0 for tl1 and for padding rows).
 * A kernel reads every byte of a piece in address order (a block's sign
 * words with its first index vector, the header with the outputs), so the
 * hardware prefetchers see one ascending stream per thread.
 * Padding rows (m >= M) hold zero weights: TL2 index 0, sign 0, TL1 index
 * 4, header -32768 * G.
 * A 32-byte register (AVX2) holds rows 0..7 or 8..15 of a vector; its sign
 * bits are the 32 at byte 16v + 8p (rows 0..7) or 16v + 8p + 4 (8..15).
 *
 * LANE ORDER (lowbit_layout_t lane_order = LOWBIT_LANE_LANES, #lowbit.layout
 * lane_order = lanes: pack-layout records it for the targets whose
 * TargetInfo::hasLutLaneOrder, x86-avx2 and x86-avxvnni; the runtime packs
 * by the descriptor). The same pieces, blocks, header
 * and nibbles, with two things permuted so that pshufb, whose table is
 * per 16-byte lane, needs one lookup per register instead of one per slot:
 *   vectors: byte 16j + r (not 4r + j) has row r, slot j: the 32-byte
 *     register h (bytes 32h..) holds slots 2h, 2h + 1 of all 16 rows, one
 *     slot per lane, and looks both up in the 32 table bytes at 32h;
 *   sign words: the 16 bytes of vector v are 4 little-endian uint32, one
 *     per register h and half of the rows (8 half .. 8 half + 7) at byte
 *     16v + 4 (2h + half); with k = r mod 8, bit 8 (2 (k mod 2) + p) +
 *     4l + k / 2 of it is the sign of row r = 8 half + k, slot 2h + l,
 *     nibble p (l, p in 0..1): the kernel zips the lookups of a register's
 *     two nibbles so that int16 lane k of 128-bit lane l holds row k's
 *     nibbles p = 0, 1 (byte 16l + 2k + p), and broadcasts the word to
 *     every int32 lane (byte i tests bit 8 (i mod 4) + i / 4).
 *
 * KERNEL (lowbit_kernel_fn of kernel_abi.h)
 *   codes = this layout; scales and zeros are null; xq, x_scales come from
 *   prepare_activations (ternary block, Kp); x_sums is unused; w_scale = s_w.
 *   Each call builds, per activation row n and per 8 groups of a vector
 *   (slot j, nibble p: group 4p + j), one table of 16 int16 entries:
 *   TL1 entry i = (i/3 - 1) * x0 + (i%3 - 1) * x1 (i in 0..8), TL2 entry i =
 *   d0 * x0 + d1 * x1 + d2 * x2 with i = 9 d0 + 3 d1 + d2 (balanced ternary,
 *   i in 0..13); other entries 0. The 4 tables of nibble p are 64 low
 *   bytes (unsigned) and 64 high bytes + 128 (unsigned), 16 per slot: one
 *   vpermb each with index nibble + 16 j. Both bytes are multiplied by the
 *   group's sign s (+1, or -1 when the sign bit is set) and summed per
 *   int32 lane (vpdpbusd), so sum(lo) + 256 * sum(hi) = sum_k xq[n][k] *
 *   q[m][k] + 32768 * sum(s) over the G groups; the header removes the
 *   second term, so acc is exact (int32 wrapping) and
 *   y[n][m] = (float)acc * w_scale / x_scales[n][0], bit-exact with the
 *   reference (as kernel_abi.h). AVX2 has no vpermb: in the lane order
 *   above it looks a register up with one pshufb (its two slots' tables,
 *   one per lane), multiplies the zipped bytes of a row's two nibbles by
 *   their signs into int16 pair sums (vpmaddubsw: |2 x 255| per lane, at
 *   most 8 vectors summed before they are widened to int32) and sums the
 *   two lanes' rows at the end; the math is the same.
 */
#ifndef LOWBIT_LUT_ABI_H
#define LOWBIT_LUT_ABI_H

#include "lowbit/kernel_abi.h"

/* Weights per TL2 block and per TL1 vector, bytes per vector and header. */
#define LOWBIT_LUT_TL2_BLOCK 96
#define LOWBIT_LUT_TL1_VECTOR 16
#define LOWBIT_LUT_VECTOR_BYTES LOWBIT_VECTOR_BYTES
#define LOWBIT_LUT_HEADER_BYTES 64
/* The most TL2 blocks per K panel: 16 KiB of tables per activation row, a
 * third of Zen 5's 48 KiB L1D, the rest for the weight stream in flight
 * (measured against 34 blocks: README, "tl2 against i2s"). */
#define LOWBIT_LUT_PANEL_BLOCKS 16
/* Bytes of one TL2 block: 64 of sign words and 4 index vectors. */
#define LOWBIT_LUT_BLOCK_BYTES 320

/* K2, the TL2 part of K (0 for tl1). */
static inline int64_t lowbit_lut_k2(int64_t K, int tl2) {
  return tl2 ? K / LOWBIT_LUT_TL2_BLOCK * LOWBIT_LUT_TL2_BLOCK : 0;
}
/* ceil(K1 / 16): the TL1 vectors of a tile, K1 = K - K2. */
static inline int64_t lowbit_lut_tl1_vectors(int64_t K, int64_t K2) {
  return (K - K2 + LOWBIT_LUT_TL1_VECTOR - 1) / LOWBIT_LUT_TL1_VECTOR;
}
/* tile bytes = 64 + 320 * K2 / 96 + 64 * K1p / 16. */
static inline int64_t lowbit_lut_tile_bytes(int64_t K, int64_t K2) {
  return LOWBIT_LUT_HEADER_BYTES +
         K2 / LOWBIT_LUT_TL2_BLOCK * LOWBIT_LUT_BLOCK_BYTES +
         lowbit_lut_tl1_vectors(K, K2) * LOWBIT_LUT_VECTOR_BYTES;
}
/* P = max(1, floor(B / 16 + 1/2)): the panels of B TL2 blocks. */
static inline int64_t lowbit_lut_panels(int64_t blocks) {
  int64_t p = (blocks + LOWBIT_LUT_PANEL_BLOCKS / 2) / LOWBIT_LUT_PANEL_BLOCKS;
  return p < 1 ? 1 : p;
}
/* PB = ceil(B / P): TL2 blocks per panel (the last one may have fewer). */
static inline int64_t lowbit_lut_panel_blocks(int64_t blocks) {
  int64_t panels = lowbit_lut_panels(blocks);
  return (blocks + panels - 1) / panels;
}

#endif /* LOWBIT_LUT_ABI_H */
