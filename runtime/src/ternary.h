//===- ternary.h - i2s, tl1 and tl2 encodings -------------------*- C++ -*-===//
//
// The three ternary formats store the same values q in {-1, 0, 1} and the same
// per-tensor scale; only the bit layout of a row differs (runtime/README.md).
//
//===----------------------------------------------------------------------===//
#ifndef LOWBIT_SRC_TERNARY_H
#define LOWBIT_SRC_TERNARY_H

#include "lowbit/format.h"

#include <cstdint>

namespace lowbit::detail {

/// s_w = max(mean |W|, 1e-5f) over `count` weights; the mean is accumulated
/// in double and then rounded to float.
float ternary_scale(const float *W, int64_t count);

/// If every value of W [count] is in {-a, 0, a} for one finite a > 0 (the
/// weights are ternary already), returns a; else 0 (also for all zeros).
/// quantize() then takes s_w = a instead of the absmean.
float exact_ternary_scale(const float *W, int64_t count);

/// q = clamp(nearbyintf(w / s), -1, 1), the division in float.
int8_t ternary_value(float w, float s);

/// Encodes the K values q of one row into code_row_bytes(format, K) bytes.
void encode_ternary_row(const Format &format, const int8_t *q, int64_t K,
                        uint8_t *row);

/// Decodes one row; throws Error naming row m on a code outside the format's
/// range or non-zero padding bits.
void decode_ternary_row(const Format &format, const uint8_t *row, int64_t K,
                        int64_t m, int8_t *q);

} // namespace lowbit::detail

#endif // LOWBIT_SRC_TERNARY_H
