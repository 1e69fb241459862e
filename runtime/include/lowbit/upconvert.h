//===- upconvert.h - weights and activations for generated kernels -*- C++ -*-//
//
// The runtime half of the kernel ABI (lowbit/kernel_abi.h, which specifies
// the "vnni4" packed layout, the activation arrays and the math byte by
// byte): repacking canonical weights into the upconvert layout, and preparing
// int8 activations with their per-block scales and sums.
//
//===----------------------------------------------------------------------===//
#ifndef LOWBIT_UPCONVERT_H
#define LOWBIT_UPCONVERT_H

#include "lowbit/aligned.h"
#include "lowbit/format.h"
#include "lowbit/kernel_abi.h"

#include <cstdint>
#include <string>

namespace lowbit {

/// Rows per tile and K per padding unit of the upconvert layout (kernel_abi.h).
inline constexpr int64_t kUpconvertTileRows = LOWBIT_TILE_ROWS;
inline constexpr int64_t kUpconvertKAlign = LOWBIT_K_BLOCK;

/// Weights in the upconvert layout of kernel_abi.h.
struct UpconvertWeights {
  Format format;
  /// The GGML ROWS LAYOUT (tile_rows 1): the bytes of the ggml block its
  /// rows hold, LOWBIT_GGML_ROWS_TQ2_0_BYTES or LOWBIT_GGML_ROWS_TQ1_0_BYTES.
  int ggml_block_bytes = 0;
  int64_t M = 0, K = 0;
  int64_t Mp = 0, Kp = 0; // M rounded up to 16, K rounded up to 32
  int bits = 0;           // 1..6 (3, 5, 6: two planes) or 8
  int64_t group = 0;      // G of the scales (32 for q4_0), 0 without scales
  float w_scale = 0.0f;   // ternary s_w; 0 for the other formats
  bool bit_planes = false; // bitserial_abi.h's layout (pack_bitserial)
  int64_t tile_rows = kUpconvertTileRows; // 1: the GGML ROWS LAYOUT
                                          // (codes = TQ2_0 rows, Mp = M)
  uint8_t lane_order = LOWBIT_LANE_ROWS;  // lut_abi.h's vector byte order
                                          // (tl1, tl2: pack_lut, shape_lut)
  AlignedArray<uint8_t> codes;   // Mp * Kp * bits / 8 bytes
  AlignedArray<uint16_t> scales; // fp16 [Mp/16][Kp/G][16], or empty
  AlignedArray<uint16_t> zeros;  // fp16 [Mp/16][Kp/G][16]: w2/w4 zero
                                 // points, q4_1/q5_1 minimums; or empty

  int64_t num_tiles() const { return Mp / tile_rows; }
  /// Bytes a kernel streams per call: codes + scales + zeros.
  int64_t packed_bytes() const {
    return int64_t(codes.bytes() + scales.bytes() + zeros.bytes());
  }
  /// The pointers to pass to a kernel (nullptr for an absent array).
  const uint16_t *scales_or_null() const { return scales.data(); }
  const uint16_t *zeros_or_null() const { return zeros.data(); }
};

/// Whether `format` has an upconvert layout: i2s, w1gG, w2gG, w4gG, q4_0,
/// and ggml's block formats.
bool has_upconvert_layout(const Format &format);

/// Repacks validated canonical weights into the upconvert layout. Throws
/// Error naming the format for any other format (tl1, tl2, w3gG), and
/// validate()'s Error for inconsistent weights.
UpconvertWeights pack_upconvert(const PackedWeights &canonical);

/// Bytes of the arrays of `format`'s upconvert layout for M x K (codes,
/// scales, zeros, each rounded up to 64), or of lut_abi.h's layout for tl1
/// and tl2 (lut_bytes): what shape_upconvert places in a destination.
/// Throws Error when M, K are illegal for the format.
int64_t upconvert_bytes(const Format &format, int64_t M, int64_t K);

/// Upconvert weights of M x K of `format` with their arrays sized as
/// pack_upconvert fills them (U.w_scale 0): allocated (zero filled), or,
/// when `dest` is given, views of upconvert_bytes(format, M, K) bytes there
/// (64-byte aligned, zero filled, outliving U and its copies' sources).
/// For tl1 and tl2, lut_abi.h's layout in `lane_order` instead
/// (shape_lut); the other formats take only LOWBIT_LANE_ROWS. Throws Error
/// for a format without either layout or an illegal shape.
UpconvertWeights shape_upconvert(const Format &format, int64_t M, int64_t K,
                                 uint8_t *dest = nullptr,
                                 uint8_t lane_order = LOWBIT_LANE_ROWS);

/// "" when weights of `format` with this K have kernel_abi.h's GGML ROWS
/// LAYOUT (i2s, K a multiple of 256), else why not.
std::string ggml_rows_error(const Format &format, int64_t K);

/// Weights of M x K of `format` in the GGML ROWS LAYOUT, in ggml blocks of
/// `block_bytes` (TQ2_0's 66 or TQ1_0's 54), with s_w `w_scale`: allocated
/// (zero filled), or, when `rows` is given, a view of the M * K / 256 *
/// block_bytes bytes there (rows whose non-zero blocks' d all equal w_scale
/// in fp16 and whose codes are never 3: a GGUF tensor's mapping, validated
/// by the caller, which keeps it alive). Throws Error (ggml_rows_error) for
/// another format, K or block.
UpconvertWeights shape_ggml_rows(const Format &format, int64_t M, int64_t K,
                                 float w_scale, uint8_t *rows = nullptr,
                                 int block_bytes = LOWBIT_GGML_ROWS_TQ2_0_BYTES);

/// Canonical i2s weights in the GGML ROWS LAYOUT: each block encoded as
/// ggml's TQ2_0 or TQ1_0 (`block_bytes`; encode_tq_block) with d the fp16
/// of the tensor scale.
UpconvertWeights
pack_ggml_rows(const PackedWeights &canonical,
               int block_bytes = LOWBIT_GGML_ROWS_TQ2_0_BYTES);

/// Activations as generated kernels read them (kernel_abi.h, ACTIVATIONS).
struct PreparedActivations {
  int64_t N = 0, K = 0, Kp = 0;
  int64_t block = 0;            // Kp for ternary formats, 32 otherwise
  int64_t sum_block = 0;        // block, or 16 for q2_k, q3_k, q6_k
  AlignedArray<int8_t> xq;      // [N][Kp], zero padded
  AlignedArray<float> x_scales; // [N][Kp/block], the multiplier s
  AlignedArray<int32_t> x_sums; // [N][Kp/sum_block], sum of xq over one
};

/// Formats whose prepared activations are the same arrays share a class:
/// 0 ternary formats (one scale per row), 1 the others (a scale and a sum
/// per 32-block), 2 the K-quants with sub-blocks of 16 (q2_k, q3_k, q6_k:
/// sums per 16). X quantized for one weight serves every weight of its
/// class, and only those (a Q4_K_M layer mixes classes 1 and 2).
int activation_class(const Format &format);

/// Sizes P for N rows of K values of `format` (kernel_abi.h's arrays),
/// reusing its buffers when they are large enough. Throws Error when K is
/// illegal for the format or N x K too large.
void shape_activations(const Format &format, int64_t N, int64_t K,
                       PreparedActivations &P);

/// Quantizes rows [n_begin, n_end) of X [P.N][P.K] into P (shaped by
/// shape_activations) exactly as prepare_activations does; disjoint row
/// ranges may run on different threads.
void quantize_activation_rows(const float *X, PreparedActivations &P,
                              int64_t n_begin, int64_t n_end);

/// Quantizes X [N][K] as activation.h does for `format` (the same
/// quantize_activations) and lays it out for the kernels. Throws Error when K
/// is illegal for the format or X has a NaN or infinity.
PreparedActivations prepare_activations(const Format &format, const float *X,
                                        int64_t N, int64_t K);

} // namespace lowbit

struct lowbit_weights_t; // lowbit.h

namespace lowbit {

/// Whether the kernels registered for (format, M, K) (lowbit.h,
/// lowbit_register_kernels), which lowbit_pack would attach, read the
/// layout shape_upconvert makes: the upconvert (vnni4) one, or for tl1 and
/// tl2 lut_abi.h's, whose lane order (the kernels' layout descriptor's)
/// goes to `lane_order` when given (c_api.cpp).
bool upconvert_kernels_registered(const Format &format, int64_t M, int64_t K,
                                  uint8_t *lane_order = nullptr);

/// Whether the kernels registered for (format, M, K) read kernel_abi.h's
/// GGML ROWS LAYOUT in ggml blocks of `block_bytes` (TQ2_0 or TQ1_0 rows,
/// which a GGUF tensor of that type is already: a view of
/// its mapping serves them) (c_api.cpp).
bool ggml_rows_kernels_registered(const Format &format, int64_t M, int64_t K,
                                  int block_bytes);

/// The C API's weights (lowbit.h) over U, packed already (the upconvert
/// layout, lut_abi.h's in U.lane_order for tl1 and tl2, or the ggml rows
/// layout when U.tile_rows is 1), with the
/// registered kernels of its (format, M, K), as lowbit_pack_gguf and then
/// lowbit_weights_compact leave them (no canonical copy); Error when no
/// registered kernel reads U's layout (c_api.cpp).
lowbit_weights_t *upconvert_weights_handle(UpconvertWeights U);

} // namespace lowbit

#endif // LOWBIT_UPCONVERT_H
