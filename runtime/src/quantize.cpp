//===- quantize.cpp - quantize, unpack and dequantize weights -------------===//

#include "bitstream.h"
#include "ggml_blocks.h"
#include "group.h"
#include "layout.h"
#include "ternary.h"

#include "lowbit/error.h"
#include "lowbit/format.h"

#include <cmath>
#include <string>
#include <vector>

namespace lowbit {

using namespace detail;

static void check_finite(const float *W, int64_t M, int64_t K) {
  for (int64_t i = 0; i < M * K; ++i) {
    if (std::isfinite(W[i]))
      continue;
    const char *what = std::isnan(W[i]) ? "NaN" : W[i] > 0 ? "+inf" : "-inf";
    throw Error("weight [" + std::to_string(i / K) + ", " +
                std::to_string(i % K) + "] is " + what);
  }
}

static void quantize_group_row(PackedWeights &P, const float *w, int64_t m,
                               uint8_t *row) {
  const int64_t groups = scales_per_row(P.format, P.K);
  const int64_t G = P.format.group;
  std::vector<uint8_t> codes(P.K);
  uint16_t unused_zero = 0;
  for (int64_t g = 0; g < groups; ++g) {
    uint16_t *zero =
        has_zeros(P.format) ? &P.zeros[m * groups + g] : &unused_zero;
    quantize_group(P.format, w + g * G, m, g, codes.data() + g * G,
                   &P.scales[m * groups + g], zero);
  }
  pack_codes(codes.data(), P.K, P.format.bits, row);
}

PackedWeights quantize(const Format &format, const float *W, int64_t M,
                       int64_t K) {
  format.check_shape(M, K);
  check_finite(W, M, K);
  PackedWeights P;
  P.format = format;
  P.M = M;
  P.K = K;
  const int64_t row_bytes = P.row_bytes();
  P.codes.resize(size_t(M * row_bytes));
  P.scales.resize(size_t(M * scales_per_row(format, K)));
  if (has_zeros(format))
    P.zeros.resize(P.scales.size());

  if (format.is_ternary()) {
    // Weights that are ternary already ({-a, 0, a}) keep their scale a
    // exactly, so that q = W / a and dequantize(quantize(W)) == W; absmean
    // would shrink them by the fraction of non-zeros (runtime/README.md).
    P.tensor_scale = ternary_scale(W, M * K);
    std::vector<int8_t> q(K);
    for (int64_t m = 0; m < M; ++m) {
      for (int64_t k = 0; k < K; ++k)
        q[k] = ternary_value(W[m * K + k], P.tensor_scale);
      encode_ternary_row(format, q.data(), K, P.codes.data() + m * row_bytes);
    }
    return P;
  }
  const GgmlBlockType *block_type = ggml_block_type(format.kind);
  for (int64_t m = 0; m < M; ++m) {
    uint8_t *row = P.codes.data() + m * row_bytes;
    if (block_type)
      quantize_block_row(*block_type, W + m * K, K, m, row);
    else
      quantize_group_row(P, W + m * K, m, row);
  }
  return P;
}

void unpack_row(const PackedWeights &W, int64_t m, int8_t *q) {
  check_layout(W);
  if (m < 0 || m >= W.M)
    throw Error("row " + std::to_string(m) + " is out of range for " +
                std::to_string(W.M) + " rows");
  const uint8_t *row = W.codes.data() + m * W.row_bytes();
  switch (W.format.encoding()) {
  case Encoding::Ternary:
    decode_ternary_row(W.format, row, W.K, m, q);
    return;
  case Encoding::GgufQ4_0:
  case Encoding::GgmlBlock:
    decode_block_row_codes(*ggml_block_type(W.format.kind), row, W.K, q);
    return;
  case Encoding::Binary:
  case Encoding::Unsigned: {
    std::vector<uint8_t> codes(W.K);
    unpack_codes(row, W.K, W.format.bits, codes.data());
    const bool binary = W.format.encoding() == Encoding::Binary;
    for (int64_t k = 0; k < W.K; ++k)
      q[k] = binary ? int8_t(2 * codes[k] - 1) : int8_t(codes[k]);
    return;
  }
  }
}

void dequantize(const PackedWeights &W, float *out) {
  check_layout(W);
  if (const GgmlBlockType *type = ggml_block_type(W.format.kind)) {
    for (int64_t m = 0; m < W.M; ++m)
      dequantize_block_row(*type, W.codes.data() + m * W.row_bytes(), W.K,
                           out + m * W.K);
    return;
  }
  std::vector<int8_t> q(W.K);
  std::vector<ScaleZero> blocks(
      W.format.is_ternary() ? 0 : size_t(W.K / kActivationBlock));
  for (int64_t m = 0; m < W.M; ++m, out += W.K) {
    unpack_row(W, m, q.data());
    if (W.format.is_ternary()) {
      for (int64_t k = 0; k < W.K; ++k)
        out[k] = W.tensor_scale * float(q[k]);
      continue;
    }
    row_block_scales(W, m, blocks.data());
    for (int64_t k = 0; k < W.K; ++k) {
      const ScaleZero &sz = blocks[k / kActivationBlock];
      out[k] = sz.s * float(q[k] - sz.z);
    }
  }
}

} // namespace lowbit
