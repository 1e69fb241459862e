//===- group.h - per-group scales of the w1..w4 formats ---------*- C++ -*-===//
//
// The one place for the group-scale math of w<b>g<G>: how a group's fp16
// scale (and zero point) are chosen, how weights map to codes, and how stored
// scales (also q4_0's block scales) turn back into (s, z), W ~= s * (q - z).
//
//===----------------------------------------------------------------------===//
#ifndef LOWBIT_SRC_GROUP_H
#define LOWBIT_SRC_GROUP_H

#include "lowbit/format.h"

#include <cstdint>

namespace lowbit::detail {

/// Quantizes the `format.group` weights w of group g of row m: writes the raw
/// codes (binary: 1 for W >= 0, else 0; unsigned: 0..2^b-1) and the fp16
/// scale and zero point (zero is left alone for binary). Throws Error naming
/// the row and group when the scale overflows fp16.
void quantize_group(const Format &format, const float *w, int64_t m, int64_t g,
                    uint8_t *codes, uint16_t *scale, uint16_t *zero);

/// The dequantization of one group: W ~= s * (q - z) with q as unpack_row
/// returns it (binary: q = -1/+1 and z = 0).
struct ScaleZero {
  float s;
  int32_t z;
};
ScaleZero group_scale_zero(const Format &format, uint16_t scale, uint16_t zero);

/// (s, z) of each 32-weight block of row m of a w1..w4 or q4_0 matrix (a
/// group of G repeats its values G / 32 times), so W ~= s * (q - z) for the
/// codes of unpack_row. `blocks` has K / 32 entries.
void row_block_scales(const PackedWeights &W, int64_t m, ScaleZero *blocks);

/// Throws Error naming row m and group g unless the stored fp16 scale is
/// finite and not negative, and (w2..w4) the zero point is an integer in
/// 0..2^b-1 encoded as quantize_group encodes it.
void check_group_scale(const Format &format, uint16_t scale, uint16_t zero,
                       int64_t m, int64_t g);

} // namespace lowbit::detail

#endif // LOWBIT_SRC_GROUP_H
