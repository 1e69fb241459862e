//===- activation.cpp - int8 activation quantization ----------------------===//

#include "lowbit/activation.h"
#include "lowbit/error.h"

#include "layout.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

namespace lowbit {

using namespace detail;

int64_t activation_block(const Format &format, int64_t K) {
  return format.is_ternary() ? K : kActivationBlock;
}

static void check_shape(int64_t N, int64_t K, int64_t block) {
  std::string problem;
  if (N < 1 || K < 1)
    problem = "N and K must be >= 1";
  else if (N > kMaxWeights / K)
    problem = "N x K is too large (at most 2^40 values)";
  else if (block < 1 || K % block != 0)
    problem = "K must be a multiple of the block " + std::to_string(block);
  if (!problem.empty())
    throw Error("activations [" + std::to_string(N) + ", " + std::to_string(K) +
                "]: " + problem);
}

float quantize_activation_block(const float *x, int64_t len, int8_t *q,
                                int64_t row, int64_t col) {
  // The largest |x| as the bits of a non-negative float: for those the
  // integer order is the float order, and NaN and infinities are the
  // patterns from 0x7f800000 up, so one integer max reduction, which the
  // compiler vectorizes, finds both (a float max with a finite flag was
  // compiled to one element per iteration: a K = 6912 row took 7-9 us of
  // a decode step). The exact position only on error.
  uint32_t amax_bits = 0;
  for (int64_t k = 0; k < len; ++k) {
    uint32_t b;
    std::memcpy(&b, x + k, sizeof b);
    b &= 0x7fffffffu;
    amax_bits = b > amax_bits ? b : amax_bits;
  }
  float amax;
  std::memcpy(&amax, &amax_bits, sizeof amax);
  if (amax_bits >= 0x7f800000u)
    for (int64_t k = 0; k < len; ++k)
      if (!std::isfinite(x[k]))
        throw Error("activation [" + std::to_string(row) + ", " +
                    std::to_string(col + k) + "] is " +
                    (std::isnan(x[k]) ? "NaN" : x[k] > 0 ? "+inf" : "-inf"));
  const float s = 127.0f / std::max(amax, 1e-5f);
  // nearbyintf without a libm call: |x * s| <= 127 * (1 + 2^-23) < 2^22, and
  // adding then subtracting 1.5 * 2^23 rounds such a float to an integer
  // half to even in the default rounding mode, as nearbyintf does (the
  // sign of a zero result may differ, which int8 cannot show).
  constexpr float kRound = 0x1.8p23f;
  for (int64_t k = 0; k < len; ++k) {
    const float r = (x[k] * s + kRound) - kRound;
    q[k] = int8_t(std::clamp(r, -128.0f, 127.0f));
  }
  return s;
}

QuantizedActivations quantize_activations(const float *X, int64_t N, int64_t K,
                                          int64_t block) {
  check_shape(N, K, block);
  QuantizedActivations A;
  A.N = N;
  A.K = K;
  A.block = block;
  A.q.resize(size_t(N * K));
  A.scales.resize(size_t(N * (K / block)));
  for (int64_t i = 0; i < N * K; i += block)
    A.scales[i / block] = quantize_activation_block(X + i, block, &A.q[i],
                                                    i / K, i % K);
  return A;
}

} // namespace lowbit
