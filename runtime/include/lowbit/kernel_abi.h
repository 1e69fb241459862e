/*===- kernel_abi.h - the contract between generated kernels and runtime -===*\
|*                                                                          *|
|* Plain C so that generated C++, any engine and the compiler can include   *|
|* it: the compiler's lowerings take their layout constants and formulas    *|
|* from here, lut_abi.h and bitserial_abi.h, as the runtime's packers do.   *|
|*                                                                          *|
\*===----------------------------------------------------------------------===*/
/*
 * UPCONVERT LAYOUT ("vnni4", bits b in {1, 2, 4}; ggml block formats also
 * 5 and 8, see lowbit_vnni4_low_bits for codes in two planes)
 *
 * Codes are unsigned: i2s c = q + 1 (0..2), w1gG c = 1 for +1 and 0 for -1,
 * w2gG/w4gG c = q (0..2^b-1), q4_0 c = the 0..15 nibble; ggml's q8_0,
 * q5_0, q3_k, q6_k c = the signed code + 2^(b-1) (q8_0 0..255, q5_0 0..31,
 * q3_k 0..7, q6_k 0..63), q4_1, q5_1, q2_k, q4_k, q5_k c = the stored code,
 * iq4_nl c = the stored codebook index q (0..15).
 * Padding codes are 0.
 *   Mp = ceil(M / 16) * 16        rows, in tiles of 16
 *   Kp = ceil(K / 32) * 32        K, padded with zero codes
 *   kv = 32 / b                   k values per 64-byte vector
 * codes: for tile t in [0, Mp/16), for vector v in [0, Kp/kv): 64 bytes, where
 *   byte i*4 + r (row i in 0..15 of the tile, r in 0..3) holds in its bits
 *   [b*j, b*j + b) the code of W[16t + i][v*kv + 4j + r], for j in [0, 8/b).
 *   So (vector >> b*j) & (2^b - 1) per byte is a VNNI "16 rows x 4 k" int8
 *   block (bytes 0..31 are rows 0..7, bytes 32..63 rows 8..15, so AVX2 uses
 *   two 32-byte halves). Total Mp * Kp * b / 8 bytes.
 * scales: w1/w2/w4 gG, q4_0, q8_0, q5_0, q4_1, q5_1, iq4_nl (G = 32): fp16
 *         [Mp/16][Kp/G][16] (the blocks' d); K-quants: K-QUANT SCALES;
 *         else null.
 * zeros:  w2gG/w4gG: fp16 [Mp/16][Kp/G][16], integer zero points z;
 *         q4_1/q5_1: fp16 [Mp/16][Kp/32][16], the blocks' minimums m;
 *         else null.
 *
 * K-QUANT SCALES (super-blocks of 256; sub-blocks j of 32: q4_k, q5_k, or of
 * 16: q2_k, q3_k, q6_k; their sub-scales of b = 4, 6, 6, 6, 8 bits, the
 * dialect's scale_bits, as ggml stores them)
 *   per tile, per super-block of the row (Kp / 256), in
 *   lowbit_k_quant_super_bytes(sub-blocks, b, minimums) bytes:
 *     per sub-block j, 2b bytes: the 16 rows' sub-scales sc_j as one
 *       little-endian bit string, row i at bits [b*i, b*i + b): two's
 *       complement for q3_k (its 6-bit scale - 32) and q6_k (its int8
 *       scale), unsigned for the types with minimums (q2_k, q4_k, q5_k);
 *     then (minimums) per sub-block j the sub-minimums m_j, likewise
 *       (unsigned);
 *     then 16 fp16 d (rows 0..15), then (minimums) 16 fp16 -dmin;
 *   s_j = d * sc_j, o_j = -dmin * m_j exactly as ggml dequantizes. Bytes
 *   per row and super-block: q2_k 20, q3_k 14, q4_k 16, q5_k 16, q6_k 18,
 *   ggml's own (with the codes: 84, 110, 144, 176, 210). A kernel may read
 *   up to 16 bytes from the first byte of a register's rows, which the
 *   fp16 scales after the sub-scales keep inside the array.
 * Padding rows have code 0, scale 0 and zero 0.
 *
 * ACTIVATIONS (prepared by the runtime)
 *   block = Kp for ternary formats, 32 otherwise; sum_block = block, or 16
 *   for q2_k, q3_k, q6_k (sub-blocks of 16).
 *   xq       int8  [N][Kp]           quantized as in activation.h, zero padded
 *   x_scales float [N][Kp/block]     the multiplier s (x ~= q / s)
 *   x_sums   int32 [N][Kp/sum_block] sum of xq over the sum block
 *
 * MATH (per output row m, column n; D = sum over a block of c * xq, int32)
 *   ternary:  acc = D - S (whole row, S = x_sums[n][0]);
 *             y = (float)acc * w_scale / x_scales[n][0]   -- bit-exact with
 *             the reference.
 *   w1gG:     per 32-block b: acc_b = 2*D_b - S_b;      y += acc_b * s_g / s_b
 *   w2/w4gG:  per 32-block b: acc_b = D_b - z_g * S_b;  y += acc_b * s_g / s_b
 *   q4_0:     per 32-block b: acc_b = D_b - 8 * S_b;    y += acc_b * d_b / s_b
 *   q8_0, q5_0: as q4_0 with 2^(b-1) for 8
 *   iq4_nl:   as q8_0 with the codes kvalues_iq4nl[q] + 128 (the kernel
 *             looks each index up in a 16-byte table)
 *   q4_1, q5_1: per 32-block b: y += (d_b * D_b + m_b * S_b) / s_b
 *   K-quants: per super-block: y += d * sum_j sc_j * (D_j - off * S_j) / s_b
 *                                 - dmin * sum_j m_j * S_j / s_b
 *             over its sub-blocks j (in 32-block b), off = 2^(b-1) for
 *             q3_k, q6_k, 0 with minimums (q2_k, q4_k, q5_k)
 *   (group formats: float combination order is the kernel's; they are checked
 *   within the documented error bound, not bit-exactly.)
 *
 * KERNEL
 *   One generated function per (format, M, K, target, config). It computes
 *   y[n][m] for all n < N and the rows m of tiles [tile_begin, tile_end),
 *   writing only rows m < M; y is [N][M] float, row-major.
 *
 * GGML ROWS LAYOUT (LOWBIT_LAYOUT_GGML_ROWS; ternary i2s weights, K a
 * multiple of 256)
 *
 * The rows of a ternary tensor as ggml stores them, in one of ggml's blocks
 * of 256 weights (ggml-common.h block_tq2_0, block_tq1_0; the same bytes as
 * in a GGUF file, so that a kernel reads the file's mapping in place): row
 * m at m * (K / 256) * B bytes, no padding, any M, where B, the block's
 * bytes, is the layout descriptor's block_bytes. A block holds codes
 * c = q + 1 (0..2) of its weights, then the fp16 d in its last 2 bytes:
 *   B = 66 (TQ2_0): 64 bytes of 2-bit fields: byte 32h + j (h in 0..1, j in
 *     0..31) holds in its bits [2i, 2i+2) the code of weight 128h + 32i + j.
 *     Codes are never 3.
 *   B = 54 (TQ1_0): 52 bytes of base-3 digits, digit i of byte v being
 *     ((v * 3^i) mod 256) * 3 >> 8 (0..2; ggml's dequantize_row_tq1_0):
 *     byte j < 32 digits i < 5: the code of weight 32i + j; byte 32 + j
 *     (j < 16) digits i < 5: weight 160 + 16i + j; byte 48 + j (j < 4)
 *     digits i < 4: weight 240 + 4i + j (digit 4 is not a weight).
 * The kernel ignores d and scales by w_scale: the runtime hands it weights
 * whose blocks all have d = w_scale, or are all zero codes (one scale per
 * tensor, as i2s has). tile_rows is 1 (tile_begin, tile_end count rows),
 * Mp = M; scales and zeros are null. Activations and math are those of
 * ternary weights above (y = (float)(D - S) * w_scale / x_scales[n][0],
 * bit-exact).
 *
 * ANY-SHAPE KERNEL (lowbit_any_kernel_fn)
 *   One generated function per (format, target, config), for every M >= 1
 *   and every K the format allows (a multiple of G for w1/w2/w4gG, of 32 for
 *   q4_0; ternary: K <= LOWBIT_ANY_SHAPE_MAX_TERNARY_K, the largest K for
 *   which the accumulator chains the lowering picks cannot overflow int32).
 *   M and K are its last two arguments; everything else -- the packed
 *   layouts above (codes, scales, zeros), the activations, the math, the
 *   tile range, the rows written -- is exactly that of lowbit_kernel_fn for
 *   the same config, so the weights of a shape-specialized kernel of the
 *   same config and the any-shape kernel are the same bytes (the runtime's
 *   packers take M and K from the weights). Its config is the GEMV or GEMM
 *   heuristic's for the target with the parts that depend on M or K fixed
 *   (e.g. tile_m at most 64 for GEMM); its loops run over run-time bounds
 *   (Kp / 32 blocks, Kp / G groups) and it stores partial tiles against the
 *   run-time M. Generated by the same passes, from lowbit.mpgemm with
 *   dynamic M and K (tensor<?x?xf32>). Up-convert formats, with the
 *   layout and activations of lut_abi.h tl1/tl2 (lut-elementwise), and with
 *   bitserial_abi.h's i2s, w1gG..w4gG (lut-bitserial, int16 tables); the
 *   LUT kernels for K <= LOWBIT_ANY_SHAPE_MAX_LUT_K.
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

/* The any-shape kernel: lowbit_kernel_fn plus the weights' M and K. */
typedef void (*lowbit_any_kernel_fn)(const uint8_t *codes,
                                     const uint16_t *scales,
                                     const uint16_t *zeros, const int8_t *xq,
                                     const float *x_scales,
                                     const int32_t *x_sums, float *y,
                                     int64_t n, int64_t tile_begin,
                                     int64_t tile_end, float w_scale,
                                     int64_t M, int64_t K);

/* Rows per tile (the unit of tile_begin, tile_end) of every layout, and the
 * K block: Kp = ceil(K / 32) * 32 for every layout. */
#define LOWBIT_TILE_ROWS 16
#define LOWBIT_K_BLOCK 32
/* Bytes of one vector of every layout (16 rows x 4 bytes). */
#define LOWBIT_VECTOR_BYTES 64

/* The planes of a b-bit code in the upconvert layout: codes of 1, 2, 4 or 8
 * bits are one plane; 3, 5 and 6 bits are a low plane of 2, 4, 4 bits and a
 * high plane of the rest (1, 1, 2 bits), each laid out as its own codes
 * above: per 32-k block, low-plane vectors then high-plane vectors (b
 * vectors in all, Mp * Kp * b / 8 bytes). tile_k of the layout descriptor:
 * 32 / b for one plane, 32 (the block) for two. */
static inline int lowbit_vnni4_low_bits(int bits) {
  return bits == 3 ? 2 : bits == 5 || bits == 6 ? 4 : bits;
}
static inline int lowbit_vnni4_tile_k(int bits) {
  return lowbit_vnni4_low_bits(bits) == bits ? LOWBIT_K_BLOCK / bits
                                             : LOWBIT_K_BLOCK;
}

/* Bytes per tile and super-block of K-QUANT SCALES: per part (sub-scales,
 * and sub-minimums with minimums) 16 rows of `scale_bits`-bit values per
 * sub-block and 16 fp16 scales. */
static inline int64_t lowbit_k_quant_super_bytes(int sub_blocks,
                                                 int scale_bits,
                                                 int has_min) {
  return (has_min ? 2 : 1) *
         ((int64_t)sub_blocks * LOWBIT_TILE_ROWS * scale_bits / 8 +
          LOWBIT_TILE_ROWS * 2);
}

/* Mp and Kp of the layouts above. */
static inline int64_t lowbit_padded_m(int64_t M) {
  return (M + LOWBIT_TILE_ROWS - 1) / LOWBIT_TILE_ROWS * LOWBIT_TILE_ROWS;
}
static inline int64_t lowbit_padded_k(int64_t K) {
  return (K + LOWBIT_K_BLOCK - 1) / LOWBIT_K_BLOCK * LOWBIT_K_BLOCK;
}

/*
 * LAYOUT DESCRIPTOR
 *   What the compiler's pack-layout chose for a kernel (its #lowbit.layout),
 *   carried by the kernel's entry in a bundle (lowbit_kernel_entry_t.layout,
 *   lowbit.h): the runtime packs weights for the kernel by this alone.
 *   family      which ABI lays the weights out:
 *                 LOWBIT_LAYOUT_VNNI4      this file (up-convert kernels)
 *                 LOWBIT_LAYOUT_LUT        lut_abi.h (tl1/tl2 lut-elementwise)
 *                 LOWBIT_LAYOUT_BITPLANES  bitserial_abi.h (lut-bitserial)
 *                 LOWBIT_LAYOUT_GGML_ROWS  this file, GGML ROWS LAYOUT
 *                                          (up-convert kernels of TQ2_0 rows)
 *   lane_order  byte order of a 64-byte vector: LOWBIT_LANE_ROWS (byte
 *               4r + j holds row r, slot j) or LOWBIT_LANE_LANES (byte
 *               16j + r, lut_abi.h LANE ORDER; LUT family only)
 *   tile_rows   rows per tile: LOWBIT_TILE_ROWS (GGML_ROWS: 1)
 *   tile_k      weights of a row per K step of the layout: VNNI4 32 / b
 *               (per vector, b = bits per code), LUT LOWBIT_LUT_TL2_BLOCK
 *               (tl2) or LOWBIT_LUT_TL1_VECTOR (tl1), BITPLANES
 *               LOWBIT_BITSERIAL_BLOCK, GGML_ROWS LOWBIT_GGML_ROWS_BLOCK
 *   panel_blocks  the most blocks per K panel the panel formula aims at:
 *               LOWBIT_LUT_PANEL_BLOCKS, LOWBIT_BITSERIAL_PANEL_BLOCKS, 0
 *               for VNNI4 (no panels)
 *   block_bytes GGML_ROWS: the bytes of the ggml block its rows hold,
 *               LOWBIT_GGML_ROWS_TQ2_0_BYTES or LOWBIT_GGML_ROWS_TQ1_0_BYTES
 *               (which fixes where the codes are and how one is decoded);
 *               0 for the other families
 * A descriptor the runtime does not pack exactly so, or one for weights of
 * another format (a bitplanes layout for tl2 weights), is an error.
 */
#define LOWBIT_LAYOUT_NONE 0
#define LOWBIT_LAYOUT_VNNI4 1
#define LOWBIT_LAYOUT_LUT 2
#define LOWBIT_LAYOUT_BITPLANES 3
#define LOWBIT_LAYOUT_GGML_ROWS 4
/* Weights of one block of the GGML ROWS LAYOUT, and the bytes of its two
 * blocks: TQ2_0 (64 bytes of 2-bit codes, then the fp16 d) and TQ1_0 (52
 * bytes of base-3 digits, then d). */
#define LOWBIT_GGML_ROWS_BLOCK 256
#define LOWBIT_GGML_ROWS_TQ2_0_BYTES 66
#define LOWBIT_GGML_ROWS_TQ1_0_BYTES 54
#define LOWBIT_LANE_ROWS 0
#define LOWBIT_LANE_LANES 1

typedef struct lowbit_layout_t {
  uint8_t family;
  uint8_t lane_order;
  uint16_t tile_rows;
  uint16_t tile_k;
  uint16_t panel_blocks;
  uint16_t block_bytes;
} lowbit_layout_t;

/* The largest K of a ternary (i2s) any-shape kernel: the lowering sizes
 * its int32 accumulator chains for it (LowerUpconvert.cpp). */
#define LOWBIT_ANY_SHAPE_MAX_TERNARY_K 262144
/* The largest K of a tl1/tl2 (lut_abi.h) or lut-bitserial (bitserial_abi.h)
 * any-shape kernel: its table buffer on the stack is sized for it
 * (LowerLutElementwise.cpp, LowerLutBitserial.cpp). */
#define LOWBIT_ANY_SHAPE_MAX_LUT_K 32768

#ifdef __cplusplus
}
#endif

#endif /* LOWBIT_KERNEL_ABI_H */
