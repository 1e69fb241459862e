//===- group.cpp - per-group scales of the w1..w4 formats -----------------===//

#include "group.h"
#include "layout.h"
#include "q4_0.h"

#include "lowbit/error.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace lowbit::detail {

static std::string where(const Format &format, int64_t m, int64_t g) {
  return format.name() + " row " + std::to_string(m) + " group " +
         std::to_string(g);
}

static std::string hex16(uint16_t h) {
  char text[8];
  std::snprintf(text, sizeof(text), "0x%04x", unsigned(h));
  return text;
}

static bool half_is_finite(uint16_t h) { return (h & 0x7C00) != 0x7C00; }

static uint16_t checked_scale(const Format &format, float s, int64_t m,
                              int64_t g) {
  uint16_t h = float_to_half(s);
  if (!half_is_finite(h)) {
    char text[32];
    std::snprintf(text, sizeof(text), "%g", double(s));
    throw Error(where(format, m, g) + ": scale " + text +
                " overflows fp16 (weights too large for this format)");
  }
  return h;
}

void quantize_group(const Format &format, const float *w, int64_t m, int64_t g,
                    uint8_t *codes, uint16_t *scale, uint16_t *zero) {
  const int64_t G = format.group;
  if (format.bits == 1) {
    // Binary: q = sign(W) as +-1, s = mean |W| (the L1-optimal scale).
    double sum = 0.0;
    for (int64_t i = 0; i < G; ++i) {
      sum += std::fabs(double(w[i]));
      codes[i] = w[i] >= 0.0f;
    }
    *scale = checked_scale(format, float(sum / double(G)), m, g);
    return;
  }
  // Unsigned with zero point. The range always contains 0, so that
  // z = -lo / s is an exact integer in 0..2^b-1 and W = 0 is exact.
  const float qmax = float((1 << format.bits) - 1);
  float lo = 0.0f, hi = 0.0f;
  for (int64_t i = 0; i < G; ++i) {
    lo = std::min(lo, w[i]);
    hi = std::max(hi, w[i]);
  }
  *scale = checked_scale(format, (hi - lo) / qmax, m, g);
  // Quantize with the scale as stored, so that codes match what a kernel
  // dequantizes with.
  const float sf = half_to_float(*scale);
  // z as an integer: -lo / sf is -0 when lo = 0, and z must be +0.
  int z = 0;
  if (sf != 0.0f)
    z = int(std::clamp(std::nearbyintf(-lo / sf), 0.0f, qmax));
  for (int64_t i = 0; i < G; ++i)
    codes[i] = sf == 0.0f
                   ? 0
                   : uint8_t(std::clamp(std::nearbyintf(w[i] / sf) + float(z),
                                        0.0f, qmax));
  *zero = float_to_half(float(z));
}

ScaleZero group_scale_zero(const Format &format, uint16_t scale,
                           uint16_t zero) {
  if (format.bits == 1)
    return {half_to_float(scale), 0};
  return {half_to_float(scale), int32_t(half_to_float(zero))};
}

void row_block_scales(const PackedWeights &W, int64_t m, ScaleZero *blocks) {
  const int64_t blocks_per_row = W.K / kActivationBlock;
  if (W.format.kind == FormatKind::Q4_0) {
    const uint8_t *row = W.codes.data() + m * W.row_bytes();
    for (int64_t b = 0; b < blocks_per_row; ++b)
      blocks[b] = {half_to_float(q4_0_block_scale(row, b)), 8};
    return;
  }
  const int64_t groups = scales_per_row(W.format, W.K);
  const int64_t per_group = W.format.group / kActivationBlock;
  for (int64_t g = 0; g < groups; ++g) {
    uint16_t zero = has_zeros(W.format) ? W.zeros[m * groups + g] : 0;
    ScaleZero sz = group_scale_zero(W.format, W.scales[m * groups + g], zero);
    std::fill(blocks + g * per_group, blocks + (g + 1) * per_group, sz);
  }
}

void check_group_scale(const Format &format, uint16_t scale, uint16_t zero,
                       int64_t m, int64_t g) {
  if (!half_is_finite(scale) || (scale & 0x8000))
    throw Error(where(format, m, g) + ": scale (fp16 " + hex16(scale) +
                ") is not a finite non-negative number");
  if (format.bits == 1)
    return;
  for (int z = 0; z < (1 << format.bits); ++z)
    if (zero == float_to_half(float(z)))
      return;
  throw Error(where(format, m, g) + ": zero point (fp16 " + hex16(zero) +
              ") is not an integer in 0.." +
              std::to_string((1 << format.bits) - 1));
}

} // namespace lowbit::detail
