//===- upconvert.cpp - the upconvert ("vnni4") layout of kernel_abi.h -----===//

#include "lowbit/upconvert.h"
#include "lowbit/activation.h"
#include "lowbit/error.h"

#include "layout.h"
#include "q4_0.h"

#include <algorithm>
#include <vector>

namespace lowbit {

using namespace detail;

static int64_t round_up(int64_t x, int64_t to) {
  return (x + to - 1) / to * to;
}

bool has_upconvert_layout(const Format &format) {
  switch (format.kind) {
  case FormatKind::I2S:
  case FormatKind::Q4_0:
    return true;
  case FormatKind::Group:
    return format.bits != 3;
  case FormatKind::TL1:
  case FormatKind::TL2:
    return false;
  }
  return false;
}

uint8_t detail::kernel_code(Encoding encoding, int8_t q) {
  switch (encoding) {
  case Encoding::Ternary:
    return uint8_t(q + 1); // -1, 0, 1 -> 0, 1, 2
  case Encoding::Binary:
    return q > 0 ? 1 : 0; // -1, +1 -> 0, 1
  case Encoding::Unsigned:
  case Encoding::GgufQ4_0:
    return uint8_t(q);
  }
  return 0;
}

UpconvertWeights pack_upconvert(const PackedWeights &canonical) {
  const Format &f = canonical.format;
  if (!has_upconvert_layout(f))
    throw Error("format '" + f.name() +
                "' has no upconvert layout (supported: i2s, w1gG, w2gG, "
                "w4gG, q4_0)");
  validate(canonical);

  UpconvertWeights U;
  U.format = f;
  U.M = canonical.M;
  U.K = canonical.K;
  U.Mp = round_up(U.M, kUpconvertTileRows);
  U.Kp = round_up(U.K, kUpconvertKAlign);
  U.bits = f.bits;
  U.group = f.is_ternary() ? 0 : f.group;
  U.w_scale = canonical.tensor_scale;

  const int b = U.bits;
  const int64_t kv = 32 / b;         // k values per 64-byte vector
  const int64_t vectors = U.Kp / kv; // vectors per tile
  U.codes = AlignedArray<uint8_t>(size_t(U.Mp * U.Kp * b / 8));

  const Encoding encoding = f.encoding();
  std::vector<int8_t> q(size_t(U.K));
  for (int64_t m = 0; m < U.M; ++m) {
    unpack_row(canonical, m, q.data());
    const int64_t t = m / kUpconvertTileRows, i = m % kUpconvertTileRows;
    uint8_t *tile = U.codes.data() + t * vectors * 64;
    for (int64_t k = 0; k < U.K; ++k) {
      const int64_t v = k / kv, j = (k % kv) / 4, r = k % 4;
      tile[v * 64 + i * 4 + r] |=
          uint8_t(kernel_code(encoding, q[size_t(k)]) << (b * j));
    }
  }

  pack_tile_scales(canonical, U);
  return U;
}

void detail::pack_tile_scales(const PackedWeights &canonical,
                              UpconvertWeights &U) {
  const Format &f = canonical.format;
  if (U.group == 0)
    return;
  const int64_t groups = U.Kp / U.group; // K == Kp: G is a multiple of 32
  const size_t count = size_t(U.num_tiles() * groups * kUpconvertTileRows);
  U.scales = AlignedArray<uint16_t>(count);
  if (has_zeros(f))
    U.zeros = AlignedArray<uint16_t>(count);
  const int64_t row_bytes = canonical.row_bytes();
  for (int64_t m = 0; m < U.M; ++m) {
    const int64_t t = m / kUpconvertTileRows, i = m % kUpconvertTileRows;
    for (int64_t g = 0; g < groups; ++g) {
      const size_t at = size_t((t * groups + g) * kUpconvertTileRows + i);
      if (f.kind == FormatKind::Q4_0) {
        U.scales[at] =
            q4_0_block_scale(canonical.codes.data() + m * row_bytes, g);
        continue;
      }
      U.scales[at] = canonical.scales[size_t(m * groups + g)];
      if (!U.zeros.empty())
        U.zeros[at] = canonical.zeros[size_t(m * groups + g)];
    }
  }
}

void shape_activations(const Format &format, int64_t N, int64_t K,
                       PreparedActivations &P) {
  format.check_shape(1, K);
  if (N < 1 || N > kMaxWeights / K)
    throw Error("activations [" + std::to_string(N) + ", " +
                std::to_string(K) + "]: N must be in 1.." +
                std::to_string(kMaxWeights / K));
  P.N = N;
  P.K = K;
  P.Kp = round_up(K, kUpconvertKAlign);
  // Ternary: one scale per row; the others: K == Kp, one per 32.
  P.block = format.is_ternary() ? P.Kp : kActivationBlock;
  const size_t blocks = size_t(N * (P.Kp / P.block));
  if (P.xq.size() < size_t(N * P.Kp))
    P.xq = AlignedArray<int8_t>(size_t(N * P.Kp));
  if (P.x_scales.size() < blocks) {
    P.x_scales = AlignedArray<float>(blocks);
    P.x_sums = AlignedArray<int32_t>(blocks);
  }
}

void quantize_activation_rows(const float *X, PreparedActivations &P,
                              int64_t n_begin, int64_t n_end) {
  const int64_t blocks = P.Kp / P.block;
  // The quantizer's block: the row for ternary formats (P.block is Kp).
  const int64_t qblock = blocks == 1 ? P.K : P.block;
  for (int64_t n = n_begin; n < n_end; ++n) {
    int8_t *row = P.xq.data() + n * P.Kp;
    for (int64_t b = 0; b < blocks; ++b) {
      P.x_scales[size_t(n * blocks + b)] = quantize_activation_block(
          X + n * P.K + b * qblock, qblock, row + b * qblock, n, b * qblock);
    }
    std::fill(row + P.K, row + P.Kp, int8_t(0));
    for (int64_t b = 0; b < blocks; ++b) {
      int32_t sum = 0;
      for (int64_t k = b * P.block; k < (b + 1) * P.block; ++k)
        sum += row[k];
      P.x_sums[size_t(n * blocks + b)] = sum;
    }
  }
}

PreparedActivations prepare_activations(const Format &format, const float *X,
                                        int64_t N, int64_t K) {
  PreparedActivations P;
  shape_activations(format, N, K, P);
  quantize_activation_rows(X, P, 0, N);
  return P;
}

} // namespace lowbit
