/*===- bitserial_abi.h - the layout of bit-serial LUT (T-MAC) kernels -----===*\
|*                                                                          *|
|* Plain C, like kernel_abi.h, whose kernel signature, activations, scales, *|
|* zero points and tiles of 16 rows the lut-bitserial kernels share.        *|
|*                                                                          *|
\*===----------------------------------------------------------------------===*/
/*
 * LUT-BITSERIAL LAYOUT ("bitplanes", tile_m = 16, tile_k = 32, interleave 16)
 *
 * Codes c are the unsigned codes of kernel_abi.h: i2s c = q + 1 (0..2, two
 * planes), w1gG c = 1 for +1 and 0 for -1 (one plane), wbgG c = q (0..2^b-1,
 * b planes for b = 2, 3, 4). Plane p of a code is its bit p. Padding codes
 * (k >= K, rows m >= M) are 0.
 *   Mp = ceil(M / 16) * 16   rows, in tiles of 16 (the unit of tile_begin)
 *   Kp = ceil(K / 32) * 32   K in blocks of 32 = 8 groups of 4 weights
 *   P  = planes: 2 (i2s), 1 (w1gG), b (wbgG)
 *   T  = Mp / 16             tiles, B = Kp / 32 blocks
 *   q  = G / 32              blocks per scale group (1 for i2s)
 * K panels (so that the tables a kernel sweeps across its tiles, 256 bytes
 * per block and activation row, stay within an L1 data cache), of whole
 * scale groups (lowbit_bitserial_panel_blocks, lowbit_bitserial_panels
 * below):
 *   PB = q * ceil(ceil(B / max(1, ceil(B / 64))) / q)
 *                              blocks per panel (LOWBIT_BITSERIAL_PANEL_BLOCKS
 *                              = 64: 16 KiB of int16 tables, rounded up to
 *                              whole groups)
 *   NP = ceil(B / PB)          panels; panel c has the blocks
 *                              [c * PB, min(B, (c + 1) * PB)), B_c of them
 *   piece_c = B_c * P * 64     bytes of one tile's piece of panel c
 *   Panel c holds the pieces of all T tiles in tile order, and starts at
 *   c * T * PB * P * 64 (every panel before it has PB blocks). With
 *   K <= 2048 there is one panel and the layout is tile after tile.
 * A "vector" is 64 bytes, as lut_abi.h: byte 4*r + s belongs to row r
 * (0..15) of the tile and slot s (0..3), so the 4 bytes of one int32 lane
 * are 4 groups of the same row.
 * codes: for tile t in [0, T), block j in [0, B) of panel c = j / PB, plane
 *   p in [0, P): the vector at byte
 *     c * T * PB * P * 64 + t * piece_c + ((j - c * PB) * P + p) * 64,
 *   whose byte 4*r + s
 *   holds in bit i (i in 0..3) of its low nibble bit p of the code of
 *   W[16t + r][32j + 4s + i], and in bit i of its high nibble bit p of the
 *   code of W[16t + r][32j + 16 + 4s + i].
 *   So the low nibble is the 4-bit table index of group s of the block
 *   (weights 32j + 4s .. + 3), the high nibble that of group 4 + s, and
 *   the P planes of a block lie together (one table serves all of them).
 *   Total Mp * Kp * P / 8 bytes.
 * scales, zeros: fp16 (zeros for wbgG), in the same panels as the codes so
 *   that a run of tiles reads them in order: the 16 row values of tile t
 *   and group g (in panel c, g_c = g - c * PB / q its index there) at
 *   element  c * T * (PB / q) * 16 + t * (B_c / q) * 16 + g_c * 16. With one
 *   panel this is kernel_abi.h's [Mp/16][Kp/G][16].
 *
 * TABLES (built by the kernel from the prepared activations of kernel_abi.h)
 *   For the group of 4 int8 activations x0..x3 = xq[n][4g .. 4g+3], entry e
 *   (0..15) is T[e] = sum_i s_i(e) * x_i with s_i(e) = +1 when bit i of e is
 *   set and -1 otherwise (T-MAC's s0 = -1, s1 = +1), so T[15 - e] = -T[e]
 *   (mirror consolidation). |T[e]| <= 512: the tables are lossless int16,
 *   stored as lut_abi.h's (lowbit.uk.lut_tables width 4): per block 256
 *   bytes, group 4h + s is table s of the 128 bytes at 128h, byte 16s + e
 *   the low byte of T[e] (unsigned) and 64 + 16s + e its high byte + 128.
 *
 * LANE ORDER (lowbit_layout_t lane_order = LOWBIT_LANE_LANES, #lowbit.layout
 * lane_order = lanes: pack-layout records it on the targets whose
 * TargetInfo::hasLutLaneOrder, x86-avx2 and x86-avxvnni, whose kernels read
 * no other; pack_bitserial(W, BitplaneOrder::Lanes)). The same blocks and nibbles,
 * the bytes of a block permuted so that pshufb, whose table is per 16-byte
 * lane, looks a whole register up at once (T-MAC's AVX2 formulation):
 *   two planes (i2s, w2gG): byte 64 half + 32 hs + 16 l + 2 k + p of the
 *   block holds what the row order holds at byte 64 p + 4 r + s, with
 *   r = 8 half + k (rows 0..7 or 8..15) and s = 2 hs + l (slot s in
 *   16-byte lane l of register hs). A 32-byte register (half, hs) is looked
 *   up in the 32 table bytes of slots 2 hs, 2 hs + 1 (lut_abi.h's lane
 *   order of the tables), and vpmaddubsw of the looked-up bytes with the
 *   multipliers 1, 2 (the plane weights) gives per row the int16
 *   T[index_0] + 2 T[index_1] of a table byte: no transpose, no zip.
 *   ternary kernels add those int16 sums over up to 8 blocks before they
 *   widen them (8 x 4 x 3 x 255 < 2^15; int8 tables: the blocks of one
 *   act_group, one lookup per nibble).
 *   one, three or four planes: byte 16 s + r of each plane vector holds
 *   its byte 4 r + s (lut_abi.h's lane order of the tl1/tl2 vectors), looked
 *   up as the tl1/tl2 kernels of these targets do.
 * MATH (per output row m, column n, plane p; S = x_sums of the block/row)
 *   A_p = sum over the K range of T_g[index of plane p] = 2 * D_p - S, where
 *   D_p = sum_k bit_p(c_k) * xq_k, so D = sum_k c_k * xq_k =
 *   (sum_p 2^p A_p + (2^P - 1) * S) / 2, exactly (the sum is even).
 *   The kernel looks a plane's index vector up with lut_dot (vpermb or
 *   pshufb, then vpdpbusd; on AVX2 and AVX-VNNI, in the LANE ORDER, as the
 *   tl1/tl2 kernels do there, with int16 block sums) against bytes 2^p, so its
 *   int32 sums are
 *   sum_p 2^p (A_p + 32768 G) over the G groups: the high sums start at
 *   -128 * (2^P - 1) * G, which cancels the bias.
 *   ternary:  acc = D - S over the whole row; y = (float)acc * w_scale /
 *             x_scales[n][0], bit-exact with the reference (kernel_abi.h).
 *   w1gG:     per 32-block: acc_b = 2 D_b - S_b = A_0;  y += acc_b s_g / s_b
 *   wbgG:     per 32-block: acc_b = D_b - z_g S_b;      y += acc_b s_g / s_b
 *
 * INT8 TABLES (config table_bits = 8; lossy, opt-in; T-MAC's table
 * quantization with one scale per act_group activations, a multiple of 32)
 *   Per activation row and act_group (the last one may be shorter), with
 *   mx = the largest sum_i |x_i| of its groups of 4 and
 *   d = 127 / (4 * 2^(P-1)) (31, 15, 7, 3 for P = 1..4):
 *     a  = max(1, ceil(d * mx / 127))   integer, a * 2^(P-1) < 128
 *     ts = a / d                        the table scale (xq units per step;
 *                                       within 1/d of the ideal mx / 127)
 *     E[e] = round(T[e] / ts)           in float, half away from zero,
 *                                       |E| <= 127, E[15 - e] = -E[e]
 *   Per block 128 bytes (one byte per entry: half the table bytes and half
 *   the lookups of the int16 tables): group 4h + s is table s of the 64
 *   bytes at 64h, byte 16s + e = E[e] (int8). After a row's tables, 16
 *   bytes per act_group: byte 4p + i = a * 2^p (plane p's multiplier).
 *   The kernel looks plane p up with lowbit.uk.lut_dot8 against those bytes
 *   (multipliers unsigned, entries signed: no bias); in the LANE ORDER
 *   (below) it looks the entries up as the int16 tables' bytes, sums them
 *   times 2^p in int16 over the blocks of an act_group and multiplies the
 *   widened sums by a (the act_group's first 4 bytes are then a, 0, 0, 0):
 *   the same integers. Either way its int32 sums are
 *   sum_p 2^p * d * sum_g ts_g E_g = d * sum_p 2^p A'_p, A'_p the A_p of the
 *   quantized tables; the dot is that + d (2^P - 1) S = 2 d D' (w1gG:
 *   d A'_0), scaled in float: x_sums and x_scales are multiplied by 2 d (d)
 *   instead of halving 2 D.
 * ERROR BOUND (int8 tables, against the exact result of the int16 tables,
 * i.e. the reference strategy up to float rounding)
 *   |ts E[e] - T[e]| <= ts / 2 per lookup (float rounding of d T / a adds
 *   < 2^-20 ts), so per output, with the sums over the groups g of 4 of K:
 *     |D' - D|     <= (2^P - 1) / 4 * sum_g ts_g
 *     |y - y_ref|  <= (2^P - 1) / 4 * lambda * sum_g ts_g |s_{m,g}| / sx_g
 *   where s_{m,g} is the weight scale of the group's weights (s_w for i2s),
 *   sx_g the activation multiplier of its block (x ~= xq / sx, activation.h),
 *   and lambda = 2 for w1gG (codes 0/1 stand for -1/+1: y is 2 D - S),
 *   else 1.
 *   As ts <= 4 (mx <= 512), in terms of K alone: |D' - D| <= (2^P - 1) K / 4.
 *   `lowbit verify` checks the data-dependent form element by element
 *   (bitserial_int8_table_bound, bitserial.h). The rounding errors are
 *   independent and centred, so the measured error grows like sqrt(K):
 *   normalized error against the fp64 product on verify's synthetic data
 *   (the reference itself: 0.37-0.45e-2):
 *     int8 tables, act_group 32   0.70-0.86e-2 at K = 4096; i2s up to
 *                                 1.01e-2 (K = 100, M = 257, N = 1)
 *     act_group 64                0.74-0.90e-2; 128: up to 0.94e-2 (i2s)
 *   against the 1e-2 of lossy modes (docs/design.md), which `lowbit verify`
 *   applies on 256 outputs or more: `tune --allow-lossy` searches only the
 *   int8 tables of the group formats with act_group 32 and 64.
 *
 * KERNEL (lowbit_kernel_fn of kernel_abi.h)
 *   codes = this layout; scales and zeros as above; xq, x_scales, x_sums
 *   from prepare_activations; w_scale = s_w (ternary). It computes y[n][m]
 *   for all n < N and the rows of tiles [tile_begin, tile_end), writing only
 *   rows m < M.
 */
#ifndef LOWBIT_BITSERIAL_ABI_H
#define LOWBIT_BITSERIAL_ABI_H

#include "lowbit/kernel_abi.h"

/* Weights per block (8 groups of 4), bytes per plane vector of a block,
 * the most blocks per K panel: 16 KiB of int16 tables per activation row, a
 * third of Zen 5's 48 KiB L1D as lut_abi.h's panels, the rest for the weight
 * stream in flight (measured against 128 blocks: README, "lut-bitserial
 * against up-convert"). */
#define LOWBIT_BITSERIAL_BLOCK LOWBIT_K_BLOCK
#define LOWBIT_BITSERIAL_GROUP 4
#define LOWBIT_BITSERIAL_VECTOR_BYTES LOWBIT_VECTOR_BYTES
#define LOWBIT_BITSERIAL_PANEL_BLOCKS 64

/* PB = q * ceil(ceil(B / max(1, ceil(B / 64))) / q): blocks per panel of B
 * blocks, q blocks per scale group (1 for i2s). */
static inline int64_t lowbit_bitserial_panel_blocks(int64_t blocks,
                                                    int64_t blocks_per_scale) {
  int64_t guess = (blocks + LOWBIT_BITSERIAL_PANEL_BLOCKS - 1) /
                  LOWBIT_BITSERIAL_PANEL_BLOCKS;
  int64_t q = blocks_per_scale;
  if (guess < 1)
    guess = 1;
  return ((blocks + guess - 1) / guess + q - 1) / q * q;
}
/* NP = ceil(B / PB): the panels. */
static inline int64_t lowbit_bitserial_panels(int64_t blocks,
                                              int64_t blocks_per_scale) {
  int64_t pb = lowbit_bitserial_panel_blocks(blocks, blocks_per_scale);
  return (blocks + pb - 1) / pb;
}

#endif /* LOWBIT_BITSERIAL_ABI_H */
