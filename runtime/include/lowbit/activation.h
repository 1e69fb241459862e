//===- activation.h - int8 activation quantization -------------*- C++ -*-===//
//
// Activations X [N][K] fp32 are quantized to int8 in blocks along K:
// block = K (one scale per row) for the ternary formats, 32 for the others.
// For every block: s = 127 / max(max_k |x_k|, 1e-5f),
// q_k = clamp(nearbyintf(x_k * s), -128, 127), and x_k ~= q_k / s.
//
//===----------------------------------------------------------------------===//
#ifndef LOWBIT_ACTIVATION_H
#define LOWBIT_ACTIVATION_H

#include "lowbit/format.h"

#include <cstdint>
#include <vector>

namespace lowbit {

struct QuantizedActivations {
  int64_t N = 0, K = 0;
  int64_t block = 0;          // K (per row) or 32
  std::vector<int8_t> q;      // [N][K]
  std::vector<float> scales;  // [N][K / block], the multiplier s above
};

/// Block length the format uses: K for ternary formats, 32 otherwise.
int64_t activation_block(const Format &format, int64_t K);

/// Quantizes one block x[0, len) into q as above and returns its s. Throws
/// Error naming [row, col + k] for the first NaN or infinity.
float quantize_activation_block(const float *x, int64_t len, int8_t *q,
                                int64_t row, int64_t col);

/// Throws Error naming the row and column of the first NaN or infinity.
QuantizedActivations quantize_activations(const float *X, int64_t N,
                                          int64_t K, int64_t block);

} // namespace lowbit

#endif // LOWBIT_ACTIVATION_H
