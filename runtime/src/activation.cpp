//===- activation.cpp - int8 activation quantization ----------------------===//

#include "lowbit/activation.h"
#include "lowbit/error.h"

#include "layout.h"

#include <algorithm>
#include <cmath>
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

QuantizedActivations quantize_activations(const float *X, int64_t N, int64_t K,
                                          int64_t block) {
  check_shape(N, K, block);
  QuantizedActivations A;
  A.N = N;
  A.K = K;
  A.block = block;
  A.q.resize(size_t(N * K));
  A.scales.resize(size_t(N * (K / block)));
  for (int64_t i = 0; i < N * K; i += block) {
    float amax = 0.0f;
    for (int64_t k = i; k < i + block; ++k) {
      if (!std::isfinite(X[k])) {
        const char *what = std::isnan(X[k]) ? "NaN"
                           : X[k] > 0       ? "+inf"
                                            : "-inf";
        throw Error("activation [" + std::to_string(k / K) + ", " +
                    std::to_string(k % K) + "] is " + what);
      }
      amax = std::max(amax, std::fabs(X[k]));
    }
    const float s = 127.0f / std::max(amax, 1e-5f);
    A.scales[i / block] = s;
    for (int64_t k = i; k < i + block; ++k)
      A.q[k] = int8_t(std::clamp(std::nearbyintf(X[k] * s), -128.0f, 127.0f));
  }
  return A;
}

} // namespace lowbit
