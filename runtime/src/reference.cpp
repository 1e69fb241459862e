//===- reference.cpp - the scalar reference mpGEMM ------------------------===//
//
// Straightforward loops in the exact order of reference.h; every kernel is
// tested against these results, so clarity wins over speed here.
//
//===----------------------------------------------------------------------===//

#include "lowbit/reference.h"
#include "lowbit/error.h"

#include "group.h"
#include "layout.h"

#include <cstdint>
#include <string>
#include <vector>

namespace lowbit {

using namespace detail;

// |Xq| <= 128 and |q| <= 1, so K terms sum to at most 128 * K in magnitude.
int64_t max_reduction_length() { return int64_t(INT32_MAX) / 128; }

static void check_operands(const PackedWeights &W,
                           const QuantizedActivations &A) {
  std::string problem;
  if (A.K != W.K)
    problem = "activations have K = " + std::to_string(A.K) +
              ", weights K = " + std::to_string(W.K);
  else if (A.block != activation_block(W.format, W.K))
    problem = "activation block " + std::to_string(A.block) + ", " +
              W.format.name() + " needs " +
              std::to_string(activation_block(W.format, W.K));
  else if (A.N < 1 || A.N > kMaxWeights / A.K ||
           A.q.size() != size_t(A.N * A.K) ||
           A.scales.size() != size_t(A.N * (A.K / A.block)))
    problem = "quantized activations [" + std::to_string(A.N) + ", " +
              std::to_string(A.K) + "] have inconsistent array sizes";
  if (!problem.empty())
    throw Error("reference mpgemm: " + problem);
}

static void ternary_mpgemm(const PackedWeights &W,
                           const QuantizedActivations &A, float *Y,
                           int64_t m_begin, int64_t m_end) {
  std::vector<int8_t> q(W.K);
  for (int64_t m = m_begin; m < m_end; ++m) {
    unpack_row(W, m, q.data());
    for (int64_t n = 0; n < A.N; ++n) {
      const int8_t *x = A.q.data() + n * A.K;
      // Exact: |acc| <= 128 * K <= INT32_MAX (Format::shape_error).
      int32_t acc = 0;
      for (int64_t k = 0; k < W.K; ++k)
        acc += int32_t(x[k]) * q[k];
      Y[n * W.M + m] = float(acc) * W.tensor_scale / A.scales[n];
    }
  }
}

static void block_mpgemm(const PackedWeights &W, const QuantizedActivations &A,
                         float *Y, int64_t m_begin, int64_t m_end) {
  const int64_t blocks = W.K / kActivationBlock;
  std::vector<int8_t> q(W.K);
  std::vector<ScaleZero> scales(blocks);
  for (int64_t m = m_begin; m < m_end; ++m) {
    unpack_row(W, m, q.data());
    row_block_scales(W, m, scales.data());
    for (int64_t n = 0; n < A.N; ++n) {
      const int8_t *x = A.q.data() + n * A.K;
      float y = 0.0f;
      for (int64_t b = 0; b < blocks; ++b) {
        int32_t acc = 0;
        for (int64_t k = b * kActivationBlock; k < (b + 1) * kActivationBlock;
             ++k)
          acc += int32_t(x[k]) * (q[k] - scales[b].z);
        y += float(acc) * scales[b].s / A.scales[n * blocks + b];
      }
      Y[n * W.M + m] = y;
    }
  }
}

// The ggml block formats (GgmlBlockType): per activation block b of 32 and
// each scale block j inside it (one of 32, or two of 16, in order), exact
// int32 sums acc_j = sum Xq * c and xsum_j = sum Xq, then
//   t_b = sum_j (s_j * (float)acc_j + o_j * (float)xsum_j)
//   (without a min: sum_j s_j * (float)acc_j), y += t_b / s_x[n][b].
static void ggml_block_mpgemm(const PackedWeights &W,
                              const QuantizedActivations &A,
                              const GgmlBlockType &type, float *Y,
                              int64_t m_begin, int64_t m_end) {
  const int64_t blocks = W.K / kActivationBlock;
  const int64_t sb = type.scale_block;
  std::vector<int8_t> c(W.K);
  std::vector<float> s(W.K / sb), o(W.K / sb);
  for (int64_t m = m_begin; m < m_end; ++m) {
    row_block_params(W, m, c.data(), s.data(), o.data());
    for (int64_t n = 0; n < A.N; ++n) {
      const int8_t *x = A.q.data() + n * A.K;
      float y = 0.0f;
      for (int64_t b = 0; b < blocks; ++b) {
        float t = 0.0f;
        for (int64_t j = b * kActivationBlock / sb;
             j < (b + 1) * kActivationBlock / sb; ++j) {
          int32_t acc = 0, xsum = 0;
          for (int64_t k = j * sb; k < (j + 1) * sb; ++k) {
            acc += int32_t(x[k]) * c[k];
            xsum += x[k];
          }
          const float term = type.has_min
                                 ? s[j] * float(acc) + o[j] * float(xsum)
                                 : s[j] * float(acc);
          t = j == b * kActivationBlock / sb ? term : t + term;
        }
        y += t / A.scales[n * blocks + b];
      }
      Y[n * W.M + m] = y;
    }
  }
}

void reference_mpgemm_rows(const PackedWeights &W,
                           const QuantizedActivations &A, float *Y,
                           int64_t m_begin, int64_t m_end) {
  check_operands(W, A);
  if (m_begin < 0 || m_end > W.M || m_begin > m_end)
    throw Error("reference mpgemm: rows [" + std::to_string(m_begin) + ", " +
                std::to_string(m_end) + ") outside M = " +
                std::to_string(W.M));
  if (W.format.is_ternary())
    ternary_mpgemm(W, A, Y, m_begin, m_end);
  else if (const GgmlBlockType *type = ggml_block_type(W.format.kind))
    ggml_block_mpgemm(W, A, *type, Y, m_begin, m_end);
  else
    block_mpgemm(W, A, Y, m_begin, m_end);
}

void reference_mpgemm(const PackedWeights &W, const QuantizedActivations &A,
                      float *Y) {
  validate(W);
  reference_mpgemm_rows(W, A, Y, 0, W.M);
}

void reference_mpgemm(const PackedWeights &W, const float *X, int64_t N,
                      float *Y) {
  check_layout(W); // W.K must be legal before X is read with it
  reference_mpgemm(
      W, quantize_activations(X, N, W.K, activation_block(W.format, W.K)), Y);
}

} // namespace lowbit
