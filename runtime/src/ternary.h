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

/// quantize()'s s_w of `count` finite weights, in one pass over them: a
/// when every value is in {-a, 0, a} for one a > 0 (the weights are ternary
/// already: q = W / a exactly), else max(mean |W|, 1e-5f), the mean
/// accumulated in double and then rounded to float.
float ternary_scale(const float *W, int64_t count);

/// If every value of W [count] is in {-a, 0, a} for one finite a > 0 (the
/// weights are ternary already), returns a; else 0 (also for all zeros);
/// stops at the first value that is not.
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
