//===- kernels.cpp - the engine's fp32 loops (compiled once per ISA) ------===//
//
// Built twice on x86-64: as is (namespace generic) and with -mavx2 -mfma
// (namespace avx2, LOWBIT_ENGINE_ISA=avx2). Everything here has internal
// linkage except the table, and nothing inline from a system header is
// called: an inline function compiled with AVX2 in this file must never be
// the copy the linker keeps for the generic one.
//
//===----------------------------------------------------------------------===//
#include "kernels.h"

#ifndef LOWBIT_ENGINE_ISA
#define LOWBIT_ENGINE_ISA generic
#endif
#define LOWBIT_ENGINE_STR2(x) #x
#define LOWBIT_ENGINE_STR(x) LOWBIT_ENGINE_STR2(x)

namespace lowbit::engine::LOWBIT_ENGINE_ISA {
namespace {

/// 32 independent partial sums: four 8-wide vectors under AVX2, enough to
/// hide the FMA latency; the compiler vectorizes the lane loop.
constexpr int kLanes = 32;

float dot(const float *a, const float *b, int64_t n) {
  float acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l)
      acc[l] += a[i + l] * b[i + l];
  for (int width = kLanes / 2; width >= 1; width /= 2)
    for (int l = 0; l < width; ++l)
      acc[l] += acc[l + width];
  float sum = acc[0];
  for (; i < n; ++i)
    sum += a[i] * b[i];
  return sum;
}

void attend(const float *q, const float *K, const float *V, int64_t L,
            int64_t D, float scale, float *scores, float *out) {
  float max = -__builtin_inff();
  for (int64_t j = 0; j < L; ++j) {
    float s = dot(q, K + j * D, D) * scale;
    scores[j] = s;
    max = s > max ? s : max;
  }
  double sum = 0.0;
  for (int64_t j = 0; j < L; ++j) {
    float e = __builtin_expf(scores[j] - max);
    scores[j] = e;
    sum += e;
  }
  const float inv = float(1.0 / sum);
  for (int64_t d = 0; d < D; ++d)
    out[d] = 0.0f;
  for (int64_t j = 0; j < L; ++j) {
    const float p = scores[j] * inv;
    const float *v = V + j * D;
    for (int64_t d = 0; d < D; ++d)
      out[d] += p * v[d];
  }
}

void gemv(const float *W, int64_t K, const float *X, int64_t N, float *Y,
          int64_t ldy, int64_t m0, int64_t m1) {
  for (int64_t m = m0; m < m1; ++m) {
    const float *w = W + m * K;
    for (int64_t n = 0; n < N; ++n)
      Y[n * ldy + m] = dot(w, X + n * K, K);
  }
}

} // namespace

extern const Kernels table;
const Kernels table = {LOWBIT_ENGINE_STR(LOWBIT_ENGINE_ISA), attend, gemv};

} // namespace lowbit::engine::LOWBIT_ENGINE_ISA
