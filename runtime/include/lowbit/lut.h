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

namespace lowbit {

/// Whether `format` has a lut-elementwise layout: tl1 and tl2.
bool has_lut_layout(const Format &format);

/// K split of lut_abi.h: K2 weights in TL2 blocks, the rest in TL1 vectors.
struct LutSplit {
  int64_t k2 = 0;         // TL2 part (a multiple of 96; 0 for tl1)
  int64_t k1 = 0;         // TL1 part, K - k2
  int64_t tl1Vectors = 0; // ceil(k1 / 16)
  int64_t tile_bytes() const;
};
LutSplit lut_split(const Format &format, int64_t K);

/// Repacks validated canonical tl1/tl2 weights into the layout of
/// lut_abi.h (Mp = ceil(M/16)*16, Kp = ceil(K/32)*32, bits 2, no scales,
/// w_scale = s_w). Throws Error naming any other format.
UpconvertWeights pack_lut(const PackedWeights &canonical);

} // namespace lowbit

#endif // LOWBIT_LUT_H
