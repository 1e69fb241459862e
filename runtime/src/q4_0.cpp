//===- q4_0.cpp - GGUF Q4_0 blocks ----------------------------------------===//
//
// Reproduces ggml's quantize_row_q4_0_ref (ggml/src/ggml-quants.c) operation
// by operation, so the bytes are identical:
//   amax, max = the |x|-largest element of the block and its sign (the first
//               one on ties); d = max / -8; id = d ? 1 / d : 0;
//   code_j    = MIN(15, (int8_t)(x_j * id + 8.5f))
// all in float, each operation rounded separately (no FMA contraction). The
// cast truncates a value >= 0, so x * id is rounded half up, not to even.
//
//===----------------------------------------------------------------------===//

#include "q4_0.h"
#include "byte_order.h"
#include "layout.h"

#include "lowbit/error.h"
#include "lowbit/format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace lowbit::detail {

// ggml's `(int8_t)(t)`. C leaves a float-to-int8 conversion outside int8's
// range undefined; ggml's bytes are those of the x86 scalar code, which
// truncates to int32 with cvttss2si (INT32_MIN for NaN, infinities and
// out-of-range values) and keeps the low byte. t is in [0, 17) whenever 1 / d
// is finite; only when |d| < 2^-128 does id become infinite and t NaN or
// +-inf, which this maps to 0 as x86 does (d is then 0 in fp16 anyway).
static int ggml_int8_cast(float t) {
  int32_t truncated = INT32_MIN;
  if (t > -2147483648.0f && t < 2147483648.0f)
    truncated = int32_t(t);
  return int8_t(uint8_t(uint32_t(truncated) & 0xFF));
}

static uint8_t code(float x, float id) {
  float t = x * id;
  return uint8_t(std::min(15, ggml_int8_cast(t + 8.5f)));
}

void quantize_q4_0_row(const float *x, int64_t K, int64_t m, uint8_t *row) {
  for (int64_t b = 0; b < K / kQ4_0Block; ++b, x += kQ4_0Block) {
    float amax = 0.0f, max = 0.0f;
    for (int64_t j = 0; j < kQ4_0Block; ++j) {
      if (amax < std::fabs(x[j])) {
        amax = std::fabs(x[j]);
        max = x[j];
      }
    }
    const float d = max / -8;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    uint16_t dh = float_to_half(d);
    if ((dh & 0x7C00) == 0x7C00) {
      // ggml would store an infinite d; refuse instead of writing blocks
      // that dequantize to infinities.
      char text[32];
      std::snprintf(text, sizeof(text), "%g", double(d));
      throw Error("q4_0 row " + std::to_string(m) + " block " +
                  std::to_string(b) + ": scale d = " + text +
                  " overflows fp16 (weights too large for q4_0)");
    }
    uint8_t *block = row + b * kQ4_0BlockBytes;
    store_le(block, dh);
    for (int64_t j = 0; j < kQ4_0Block / 2; ++j)
      block[2 + j] =
          uint8_t(code(x[j], id) | (code(x[j + kQ4_0Block / 2], id) << 4));
  }
}

void decode_q4_0_row(const uint8_t *row, int64_t K, int8_t *q) {
  for (int64_t b = 0; b < K / kQ4_0Block; ++b, q += kQ4_0Block) {
    const uint8_t *nibbles = row + b * kQ4_0BlockBytes + 2;
    for (int64_t j = 0; j < kQ4_0Block / 2; ++j) {
      q[j] = int8_t(nibbles[j] & 0x0F);
      q[j + kQ4_0Block / 2] = int8_t(nibbles[j] >> 4);
    }
  }
}

uint16_t q4_0_block_scale(const uint8_t *row, int64_t b) {
  return load_le<uint16_t>(row + b * kQ4_0BlockBytes);
}

} // namespace lowbit::detail
