//===- bitserial.cpp - the lut-bitserial layout of bitserial_abi.h --------===//

#include "lowbit/bitserial.h"
#include "lowbit/activation.h"
#include "lowbit/error.h"

#include "layout.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <vector>

namespace lowbit {

using namespace detail;

bool has_bitserial_layout(const Format &format) {
  return format.kind == FormatKind::I2S || format.kind == FormatKind::Group;
}

UpconvertWeights pack_bitserial(const PackedWeights &canonical,
                                BitplaneOrder order) {
  const Format &f = canonical.format;
  if (!has_bitserial_layout(f))
    throw Error("format '" + f.name() +
                "' has no lut-bitserial layout (supported: i2s, w1gG, w2gG, "
                "w3gG, w4gG)");
  const bool lanes = order == BitplaneOrder::Lanes;
  validate(canonical);

  UpconvertWeights U;
  U.format = f;
  U.M = canonical.M;
  U.K = canonical.K;
  U.Mp = lowbit_padded_m(U.M);
  U.Kp = lowbit_padded_k(U.K);
  U.bits = f.bits; // planes: i2s has 2-bit codes 0..2
  U.group = f.is_ternary() ? 0 : f.group;
  U.w_scale = canonical.tensor_scale;
  U.bit_planes = true;

  const int planes = U.bits;
  const int64_t tiles = U.num_tiles();
  const int64_t blocks = U.Kp / LOWBIT_BITSERIAL_BLOCK;
  const int64_t block_bytes = planes * LOWBIT_BITSERIAL_VECTOR_BYTES;
  // Panels of whole scale groups of q blocks.
  const int64_t per_scale = U.group > 0 ? U.group / LOWBIT_BITSERIAL_BLOCK : 1;
  const int64_t panel_blocks = lowbit_bitserial_panel_blocks(blocks, per_scale);
  U.codes = AlignedArray<uint8_t>(size_t(tiles * blocks * block_bytes));

  const Encoding encoding = f.encoding();
  std::vector<int8_t> q(size_t(U.K));
  for (int64_t m = 0; m < U.M; ++m) {
    unpack_row(canonical, m, q.data());
    const int64_t t = m / kUpconvertTileRows, r = m % kUpconvertTileRows;
    for (int64_t k = 0; k < U.K; ++k) {
      const int code = kernel_code(encoding, q[size_t(k)]);
      // k = 32 j + 16 h + 4 s + i: block j, nibble h, slot s, bit i
      // (group 4 h + s of the block); block j is in panel c.
      const int64_t j = k / 32, h = k % 32 / 16, s = k % 16 / 4, i = k % 4;
      const int64_t c = j / panel_blocks;
      const int64_t piece =
          std::min(panel_blocks, blocks - c * panel_blocks) * block_bytes;
      uint8_t *block = U.codes.data() + c * tiles * panel_blocks * block_bytes +
                       t * piece + (j - c * panel_blocks) * block_bytes;
      for (int p = 0; p < planes; ++p) {
        // bitserial_abi.h, LANE ORDER: two planes, row 8 half + k and slot
        // 2 hs + l at 64 half + 32 hs + 16 l + 2 k + p; else byte 16 s + r
        // of the plane vector.
        const int64_t at =
            !lanes ? p * LOWBIT_BITSERIAL_VECTOR_BYTES + 4 * r + s
            : planes == 2
                ? 64 * (r / 8) + 32 * (s / 2) + 16 * (s % 2) + 2 * (r % 8) + p
                : p * LOWBIT_BITSERIAL_VECTOR_BYTES + 16 * s + r;
        block[at] |= uint8_t(((code >> p) & 1) << (4 * h + i));
      }
    }
  }
  pack_tile_scales(canonical, U);
  // kernel_abi.h's [Mp/16][Kp/G][16] into the panels of bitserial_abi.h.
  const int64_t groups = U.group > 0 ? U.Kp / U.group : 0;
  const int64_t panel_groups = panel_blocks / per_scale;
  if (groups > panel_groups)
    for (AlignedArray<uint16_t> *values : {&U.scales, &U.zeros}) {
      if (values->empty())
        continue;
      AlignedArray<uint16_t> paneled(values->size());
      for (int64_t t = 0; t < tiles; ++t)
        for (int64_t g = 0; g < groups; ++g) {
          const int64_t c = g / panel_groups;
          const int64_t in_panel =
              std::min(panel_groups, groups - c * panel_groups);
          const int64_t to = c * tiles * panel_groups * kUpconvertTileRows +
                             (t * in_panel + g - c * panel_groups) *
                                 kUpconvertTileRows;
          std::copy_n(values->data() + (t * groups + g) * kUpconvertTileRows,
                      kUpconvertTileRows, paneled.data() + to);
        }
      *values = std::move(paneled);
    }
  return U;
}

std::vector<double> bitserial_int8_table_bound(const PackedWeights &W,
                                               const float *X, int64_t N,
                                               int64_t act_group) {
  const Format &f = W.format;
  if (!has_bitserial_layout(f))
    throw Error("format '" + f.name() + "' has no lut-bitserial layout");
  if (act_group <= 0 || act_group % LOWBIT_BITSERIAL_BLOCK != 0)
    throw Error("act_group must be a positive multiple of 32, got " +
                std::to_string(act_group));
  const int64_t K = W.K, M = W.M;
  const int64_t block = activation_block(f, K);
  QuantizedActivations xq = quantize_activations(X, N, K, block);
  // (2^P - 1) / 4 per table step, twice that for w1gG (codes 0/1 stand
  // for -1/+1: Y is 2 D - S).
  const int planes = f.bits;
  const int d = 127 / (4 << (planes - 1)); // the table scale's denominator
  const double perStep = double((1 << planes) - 1) / 4 *
                         (f.encoding() == Encoding::Binary ? 2 : 1);
  const int64_t groups = (K + 3) / 4; // the groups of 4 of K
  std::vector<double> bound(size_t(N * M));
  std::vector<double> step(static_cast<size_t>(groups)); // ts / x_scale
  for (int64_t n = 0; n < N; ++n) {
    const int8_t *x = xq.q.data() + n * K;
    for (int64_t first = 0; first < groups; first += act_group / 4) {
      const int64_t last = std::min(groups, first + act_group / 4);
      int largest = 0;
      for (int64_t g = first; g < last; ++g) {
        int sum = 0;
        for (int64_t k = 4 * g; k < std::min(K, 4 * g + 4); ++k)
          sum += std::abs(int(x[k]));
        largest = std::max(largest, sum);
      }
      // ts = a / d, a = max(1, ceil(d * largest / 127)).
      const int a = std::max(1, (d * largest + 126) / 127);
      for (int64_t g = first; g < last; ++g)
        step[size_t(g)] =
            double(a) / d /
            xq.scales[size_t(n * (K / block) +
                             std::min(4 * g / block, K / block - 1))];
    }
    for (int64_t m = 0; m < M; ++m) {
      double sum = 0;
      for (int64_t g = 0; g < groups; ++g) {
        float scale = f.is_ternary()
                          ? W.tensor_scale
                          : half_to_float(W.scales[size_t(
                                m * (K / f.group) +
                                std::min(4 * g / f.group, K / f.group - 1))]);
        sum += step[size_t(g)] * std::fabs(scale);
      }
      bound[size_t(n * M + m)] = perStep * sum;
    }
  }
  return bound;
}

} // namespace lowbit
