//===- kernels.h - the engine's fp32 loops, one table per ISA ---*- C++ -*-===//
//
// The two loops of the engine that are not products with packed weights and
// still cost real time: attention over the KV cache and the fp32 GEMV of a
// weight kept in float (an f16/f32 output head). kernels.cpp is compiled once
// per ISA level (generic, and AVX2+FMA on x86-64) into its own namespace;
// kernels() picks the best table for the CPU once. Every other element-wise
// step (norms, RoPE, activations) is O(n_embd) per token and stays in plain
// C++ in forward.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef LOWBIT_ENGINE_KERNELS_H
#define LOWBIT_ENGINE_KERNELS_H

#include <cstdint>

namespace lowbit::engine {

/// How a weight kept in float is stored (the GGUF bytes as they are).
enum class FloatType { F32, F16, BF16 };

struct Kernels {
  const char *isa; // "generic", "avx2"
  /// nq (<= 4) query rows against one head's KV cache: query r (at
  /// q + r * q_stride) sees the first L0 + r * step positions (step 1: the
  /// consecutive tokens of a batch; step 0: the query heads of one token
  /// that share a KV head),
  ///   s[j] = scale * (q . K[j]),  p = softmax(s) (fp32, sum in double),
  ///   out_r = sum_j p[j] V[j]          (at out + r * out_stride)
  /// K and V hold rows of D floats; scores is scratch of
  /// nq * (L0 + (nq - 1) * step) floats. With nq = 4 every cached row is
  /// loaded once for the four. Each result depends only on its own query
  /// and keys, not on nq or step.
  void (*attend)(const float *q, int64_t q_stride, int64_t nq, const float *K,
                 const float *V, int64_t L0, int64_t step, int64_t D,
                 float scale, float *scores, float *out, int64_t out_stride);
  /// Y[n * ldy + m] = W[m] . X[n] for m in [m0, m1), n in [0, N): W rows of
  /// K values of `type` (row-major, K * sizeof(type) bytes apart), X rows of
  /// K floats.
  void (*gemv)(const void *W, FloatType type, int64_t K, const float *X,
               int64_t N, float *Y, int64_t ldy, int64_t m0, int64_t m1);
  /// The gated FFN activation in place: g[i] = act(g[i]) * u[i], act =
  /// SiLU x / (1 + e^-x) or, when relu2, max(x, 0)^2.
  void (*glu)(float *g, const float *u, int64_t n, bool relu2);
  /// y = x / sqrt(mean(x^2) + eps) * w over n floats (y may be x), as
  /// ggml_rms_norm then ggml_mul: the squares in float, their sum in
  /// double, the scale 1 / sqrtf(mean + eps).
  void (*rms_norm)(const float *x, const float *w, int64_t n, float eps,
                   float *y);
};

/// The best table for this CPU, or the generic one when the environment
/// sets LOWBIT_ENGINE_ISA=generic (read at every call: Model::load asks once).
const Kernels &kernels();

} // namespace lowbit::engine

#endif // LOWBIT_ENGINE_KERNELS_H
