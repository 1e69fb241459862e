//===- lut.h - weights for element-wise LUT kernels (tl1/tl2) ---*- C++ -*-===//
//
// The runtime half of lut_abi.h: repacking canonical tl1/tl2 weights into
// the tiled layout of the lut-elementwise kernels. The result reuses
// UpconvertWeights (the same fields, run_kernel and benchmark path); only
// `codes` holds the lut_abi.h layout instead of kernel_abi.h's.
//
//===----------------------------------------------------------------------===//
#ifndef LOWBIT_LUT_H
#define LOWBIT_LUT_H

#include "lowbit/lut_abi.h"
#include "lowbit/upconvert.h"

#include <vector>

namespace lowbit {

/// Whether `format` has a lut-elementwise layout: tl1 and tl2.
bool has_lut_layout(const Format &format);

/// K split of lut_abi.h: K2 weights in TL2 blocks, the rest in TL1 vectors;
/// the TL2 blocks in K panels.
struct LutSplit {
  int64_t k2 = 0;          // TL2 part (a multiple of 96; 0 for tl1)
  int64_t k1 = 0;          // TL1 part, K - k2
  int64_t tl1Vectors = 0;  // ceil(k1 / 16)
  int64_t panels = 1;      // P
  int64_t panelBlocks = 0; // PB, TL2 blocks per panel (the last may be fewer)
  int64_t tile_bytes() const;
  /// TL2 blocks of panel c (B_c).
  int64_t panel_blocks(int64_t c) const;
  /// Bytes of a tile's piece of panel c (piece_c).
  int64_t piece_bytes(int64_t c) const;
  /// Where tile t's piece of panel c starts, for `tiles` tiles.
  int64_t piece_offset(int64_t c, int64_t t, int64_t tiles) const;
};
LutSplit lut_split(const Format &format, int64_t K);

/// The byte order of lut_abi.h's 64-byte vectors: Rows (byte 4r + j holds
/// row r, slot j: vpermb, tbl) or Lanes (byte 16j + r: pshufb, one table
/// per 16-byte lane). A kernel's layout descriptor names it (kernel_abi.h,
/// lane_order; pack_for_kernel).
enum class LutOrder { Rows, Lanes };
/// Repacks validated canonical tl1/tl2 weights into the layout of
/// lut_abi.h in `order` (Mp = ceil(M/16)*16, Kp = ceil(K/32)*32, bits 2, no
/// scales, w_scale = s_w). Throws Error naming any other format.
UpconvertWeights pack_lut(const PackedWeights &canonical,
                          LutOrder order = LutOrder::Rows);

/// Bytes of lut_abi.h's layout of M x K `format` (tl1, tl2): num_tiles *
/// tile bytes, rounded up to 64. Throws Error for another format or an
/// illegal shape.
int64_t lut_bytes(const Format &format, int64_t M, int64_t K);

/// Weights of M x K of `format` (tl1, tl2) in lut_abi.h's layout, `order`,
/// with codes sized as pack_lut fills them (w_scale 0): allocated (zero
/// filled), or, when `dest` is given, a view of lut_bytes(format, M, K)
/// bytes there (64-byte aligned, zero filled, outliving U). Throws Error
/// for another format or an illegal shape.
UpconvertWeights shape_lut(const Format &format, int64_t M, int64_t K,
                           LutOrder order, uint8_t *dest = nullptr);

/// Writes rows of weights U (shape_lut's, still zero filled where a row has
/// not been written) from their canonical i2s rows: the bytes pack_lut
/// writes for those rows, in U.lane_order. A tile's rows share its sign
/// bytes, so ranges that run on different threads start and end at a tile
/// (a multiple of 16, or M).
class LutRowPacker {
public:
  explicit LutRowPacker(UpconvertWeights &U);
  /// Row m (< U.M) from its i2s row: the code q + 1 (0..2; never 3) of
  /// weight k in bits 2 (k % 4) of byte k / 4, ceil(U.K / 4) bytes, then
  /// 8 more readable bytes (their values are not used).
  void put_row(int64_t m, const uint8_t *row);
  /// The padding rows [U.M, U.Mp): zero weights.
  void put_padding_rows();

private:
  UpconvertWeights &U_;
  LutSplit split_;
  bool lanes_;
  int64_t groups_; // G: TL2 triples and TL1 pairs of a row, padding included
  std::vector<int64_t> panel_begin_; // T * (piece_0 + ... + piece_{c-1})
  uint8_t *tl1_of(int64_t t) const;
  template <bool Lanes> void put_row_in(int64_t m, const uint8_t *row);
};

} // namespace lowbit

#endif // LOWBIT_LUT_H
