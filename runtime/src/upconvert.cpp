//===- upconvert.cpp - the upconvert ("vnni4") layout of kernel_abi.h -----===//

#include "lowbit/upconvert.h"
#include "lowbit/activation.h"
#include "lowbit/error.h"

#include "layout.h"
#include "q4_0.h"

#include <algorithm>
#include <cmath>
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
  case FormatKind::Q8_0:
  case FormatKind::Q5_0:
  case FormatKind::Q4_1:
  case FormatKind::Q5_1:
  case FormatKind::Q4_K:
  case FormatKind::Q5_K:
  case FormatKind::Q2_K:
  case FormatKind::Q3_K:
  case FormatKind::Q6_K:
    return true;
  case FormatKind::Group:
    return format.bits != 3;
  case FormatKind::TL1:
  case FormatKind::TL2:
  case FormatKind::IQ4_NL:
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
  case Encoding::GgmlBlock: // pack_block_weights' codes, already unsigned
    return uint8_t(q);
  }
  return 0;
}

/// ORs the kernel code `code` of W[16t + i][k] into `tile` (the first byte
/// of tile t), in kernel_abi.h's UPCONVERT LAYOUT: the low plane of
/// lowbit_vnni4_low_bits(b) bits, then (codes of 3, 5, 6 bits) the high
/// plane, each `width` vectors of the 32-k block with 32 / width k each.
static void put_code(uint8_t *tile, int b, int64_t i, int64_t k,
                     uint8_t code) {
  const int low = lowbit_vnni4_low_bits(b);
  const int64_t block = k / 32, kk = k % 32, r = k % 4;
  auto put = [&](int width, int first, unsigned value) {
    const int64_t kv = 32 / width; // k values per 64-byte vector
    const int64_t v = block * b + first + kk / kv, j = (kk % kv) / 4;
    tile[v * 64 + i * 4 + r] |=
        uint8_t((value & ((1u << width) - 1)) << (width * j));
  };
  put(low, 0, code);
  if (low < b)
    put(b - low, low, unsigned(code) >> low);
}

/// ggml block formats: the unsigned codes u = c + 2^(b-1) (min types: c)
/// of row_block_params into U.codes (the dialect's code_offset: q8_0 128,
/// q5_0 16; format.h keeps q8_0's codes signed, code_offset 0), its s_j into U.scales and (types
/// with a minimum) its o_j into U.zeros, fp16 [Mp/16][Kp/32][16]. Each s_j
/// and o_j is the block's fp16 field for the formats with one scale per 32
/// (q8_0, q5_0, q4_1, q5_1), so the fp16 copy is exact; checked.
static void pack_block_weights(const PackedWeights &canonical,
                               UpconvertWeights &U);

/// The fp16 field at byte `at` of a ggml block (little-endian).
static uint16_t block_half(const uint8_t *block, int at) {
  return uint16_t(block[at] | (block[at + 1] << 8));
}

/// K-quants: codes as pack_block_weights (offset types c + 2^(b-1)),
/// scales in kernel_abi.h's K-QUANT SCALES: per tile and super-block 16 fp16
/// d (and 16 fp16 -dmin), then per sub-block j (of 32, or 16) 16 int8
/// sub-scales sc_j (then as many sub-minimums m_j), with s_j = d * sc_j and
/// o_j = -dmin * m_j exactly as row_block_params gives them (checked).
static void pack_k_quant(const PackedWeights &canonical, UpconvertWeights &U) {
  const GgmlBlockType &type = *ggml_block_type(canonical.format.kind);
  const int parts = type.has_min ? 2 : 1;
  const int offset = type.has_min ? 0 : 1 << (type.code_bits - 1);
  const int64_t per_super = type.block / type.scale_block;
  const int64_t supers = U.Kp / type.block;
  const int64_t head = parts * 16 * 2; // d (and -dmin) rows, bytes
  const int64_t super_bytes = head + parts * per_super * 16;
  const int64_t vectors = U.Kp * U.bits / 32, row_bytes = canonical.row_bytes();
  U.group = type.block;
  U.scales = AlignedArray<uint16_t>(
      size_t(U.num_tiles() * supers * super_bytes / 2));
  uint8_t *bytes = reinterpret_cast<uint8_t *>(U.scales.data());
  std::vector<int8_t> c(size_t(U.K));
  std::vector<float> s(static_cast<size_t>(U.Kp / type.scale_block)),
      o(static_cast<size_t>(U.Kp / type.scale_block));
  // The int8 n with scale * n == value exactly (q6_k's scales reach -128).
  auto integer = [&](float value, float scale, int64_t m) {
    const float n = scale == 0.0f ? 0.0f : value / scale;
    if (n != std::nearbyint(n) || n < -128.0f || n > 127.0f ||
        scale * n != value)
      throw Error("pack_upconvert: row " + std::to_string(m) + " of " +
                  canonical.format.name() +
                  " has a block scale that is not its super-block's scale "
                  "times an integer");
    return int8_t(n);
  };
  for (int64_t m = 0; m < U.M; ++m) {
    row_block_params(canonical, m, c.data(), s.data(), o.data());
    const int64_t t = m / kUpconvertTileRows, i = m % kUpconvertTileRows;
    uint8_t *tile = U.codes.data() + t * vectors * 64;
    for (int64_t k = 0; k < U.K; ++k)
      put_code(tile, U.bits, i, k, uint8_t(int(c[size_t(k)]) + offset));
    const uint8_t *row = canonical.codes.data() + m * row_bytes;
    for (int64_t sb = 0; sb < supers; ++sb) {
      const uint8_t *block = row + sb * type.block_bytes;
      const uint16_t d = block_half(block, type.d_offset);
      // -dmin, exactly (the sign bit).
      const uint16_t mn =
          type.has_min ? uint16_t(block_half(block, type.min_offset) ^ 0x8000)
                       : 0;
      uint8_t *super = bytes + (t * supers + sb) * super_bytes;
      uint16_t *halves = reinterpret_cast<uint16_t *>(super);
      halves[i] = d;
      if (type.has_min)
        halves[16 + i] = mn;
      for (int64_t j = 0; j < per_super; ++j) {
        const size_t at = size_t(sb * per_super + j);
        super[head + j * 16 + i] =
            uint8_t(integer(s[at], half_to_float(d), m));
        if (type.has_min)
          super[head + (per_super + j) * 16 + i] =
              uint8_t(integer(o[at], half_to_float(mn), m));
      }
    }
  }
}

static void pack_block_weights(const PackedWeights &canonical,
                               UpconvertWeights &U) {
  const GgmlBlockType &type = *ggml_block_type(canonical.format.kind);
  if (type.sub_scale_bits > 0)
    return pack_k_quant(canonical, U);
  const int offset = type.has_min ? 0 : 1 << (type.code_bits - 1);
  const int64_t blocks = U.Kp / 32, vectors = U.Kp * U.bits / 32;
  const size_t count = size_t(U.num_tiles() * blocks * kUpconvertTileRows);
  U.scales = AlignedArray<uint16_t>(count);
  if (type.has_min)
    U.zeros = AlignedArray<uint16_t>(count);
  std::vector<int8_t> c(size_t(U.K));
  std::vector<float> s(static_cast<size_t>(blocks)),
      o(static_cast<size_t>(blocks));
  auto half = [&](float value, int64_t m) {
    const uint16_t h = float_to_half(value);
    if (half_to_float(h) != value)
      throw Error("pack_upconvert: row " + std::to_string(m) + " of " +
                  canonical.format.name() +
                  " has a block scale that fp16 does not hold exactly");
    return h;
  };
  for (int64_t m = 0; m < U.M; ++m) {
    row_block_params(canonical, m, c.data(), s.data(), o.data());
    const int64_t t = m / kUpconvertTileRows, i = m % kUpconvertTileRows;
    uint8_t *tile = U.codes.data() + t * vectors * 64;
    for (int64_t k = 0; k < U.K; ++k)
      put_code(tile, U.bits, i, k,
               uint8_t(int(c[size_t(k)]) + offset));
    for (int64_t j = 0; j < blocks; ++j) {
      const size_t at = size_t((t * blocks + j) * kUpconvertTileRows + i);
      U.scales[at] = half(s[size_t(j)], m);
      if (type.has_min)
        U.zeros[at] = half(o[size_t(j)], m);
    }
  }
}

UpconvertWeights pack_upconvert(const PackedWeights &canonical) {
  const Format &f = canonical.format;
  if (!has_upconvert_layout(f))
    throw Error("format '" + f.name() +
                "' has no upconvert layout (supported: i2s, w1gG, w2gG, "
                "w4gG, the ggml block formats but iq4_nl)");
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
  const int64_t vectors = U.Kp * b / 32; // vectors per tile
  U.codes = AlignedArray<uint8_t>(size_t(U.Mp * U.Kp * b / 8));

  const Encoding encoding = f.encoding();
  if (encoding == Encoding::GgmlBlock) {
    U.group = 32;
    pack_block_weights(canonical, U);
    return U;
  }
  std::vector<int8_t> q(size_t(U.K));
  for (int64_t m = 0; m < U.M; ++m) {
    unpack_row(canonical, m, q.data());
    const int64_t t = m / kUpconvertTileRows, i = m % kUpconvertTileRows;
    uint8_t *tile = U.codes.data() + t * vectors * 64;
    for (int64_t k = 0; k < U.K; ++k)
      put_code(tile, b, i, k, kernel_code(encoding, q[size_t(k)]));
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

int activation_class(const Format &format) {
  if (format.is_ternary())
    return 0;
  const GgmlBlockType *type = ggml_block_type(format.kind);
  return type && type->scale_block == 16 ? 2 : 1;
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
  // Ternary: one scale per row; the others: K == Kp, one per 32. Sums
  // per block, or per 16 for the K-quants with sub-blocks of 16.
  P.block = format.is_ternary() ? P.Kp : kActivationBlock;
  P.sum_block = activation_class(format) == 2 ? 16 : P.block;
  const size_t blocks = size_t(N * (P.Kp / P.block));
  const size_t sums = size_t(N * (P.Kp / P.sum_block));
  if (P.xq.size() < size_t(N * P.Kp))
    P.xq = AlignedArray<int8_t>(size_t(N * P.Kp));
  if (P.x_scales.size() < blocks)
    P.x_scales = AlignedArray<float>(blocks);
  if (P.x_sums.size() < sums)
    P.x_sums = AlignedArray<int32_t>(sums);
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
    const int64_t sums = P.Kp / P.sum_block;
    for (int64_t b = 0; b < sums; ++b) {
      int32_t sum = 0;
      for (int64_t k = b * P.sum_block; k < (b + 1) * P.sum_block; ++k)
        sum += row[k];
      P.x_sums[size_t(n * sums + b)] = sum;
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
