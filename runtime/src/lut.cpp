//===- lut.cpp - the lut-elementwise layout of lut_abi.h ------------------===//

#include "lowbit/lut.h"
#include "lowbit/error.h"

#include "byte_order.h"

#include <algorithm>
#include <array>
#include <string>
#include <vector>

namespace lowbit {

bool has_lut_layout(const Format &format) {
  return format.kind == FormatKind::TL1 || format.kind == FormatKind::TL2;
}

int64_t LutSplit::tile_bytes() const {
  return lowbit_lut_tile_bytes(k2 + k1, k2);
}

int64_t LutSplit::panel_blocks(int64_t c) const {
  const int64_t blocks = k2 / LOWBIT_LUT_TL2_BLOCK;
  return std::min(panelBlocks, blocks - c * panelBlocks);
}

int64_t LutSplit::piece_bytes(int64_t c) const {
  return panel_blocks(c) * LOWBIT_LUT_BLOCK_BYTES +
         (c == panels - 1
              ? tl1Vectors * LOWBIT_LUT_VECTOR_BYTES + LOWBIT_LUT_HEADER_BYTES
              : 0);
}

int64_t LutSplit::piece_offset(int64_t c, int64_t t, int64_t tiles) const {
  int64_t before = 0;
  for (int64_t i = 0; i < c; ++i)
    before += piece_bytes(i);
  return tiles * before + t * piece_bytes(c);
}

LutSplit lut_split(const Format &format, int64_t K) {
  LutSplit s;
  s.k2 = lowbit_lut_k2(K, format.kind == FormatKind::TL2);
  s.k1 = K - s.k2;
  s.tl1Vectors = lowbit_lut_tl1_vectors(K, s.k2);
  const int64_t blocks = s.k2 / LOWBIT_LUT_TL2_BLOCK;
  s.panels = lowbit_lut_panels(blocks);
  s.panelBlocks = lowbit_lut_panel_blocks(blocks);
  return s;
}

UpconvertWeights pack_lut(const PackedWeights &canonical, LutOrder order) {
  const Format &f = canonical.format;
  if (!has_lut_layout(f))
    throw Error("format '" + f.name() +
                "' has no lut-elementwise layout (supported: tl1, tl2)");
  validate(canonical);

  UpconvertWeights U = shape_lut(f, canonical.M, canonical.K, order, nullptr);
  U.w_scale = canonical.tensor_scale;
  const LutSplit split = lut_split(f, U.K);

  // Every group of a row, padding included, adds its sign (+1 / -1) times
  // 32768 to the kernel's sum (the high-byte bias): the header removes it.
  const int64_t groups = split.k2 / 3 + 8 * split.tl1Vectors;
  auto header = [&](uint8_t *tile, int64_t r, int64_t negatives) {
    const uint32_t c = uint32_t(-32768 * (groups - 2 * negatives));
    for (int byte = 0; byte < 4; ++byte)
      tile[4 * r + byte] = uint8_t(c >> (8 * byte));
  };
  // Byte of (row r, slot j) in a vector, and the sign bit of (row r, slot
  // j, nibble p) in the 16 bytes of a vector's sign words.
  const bool lanes = order == LutOrder::Lanes;
  auto byteOf = [&](int64_t r, int64_t j) {
    return lanes ? 16 * j + r : 4 * r + j;
  };
  auto signBitOf = [&](int64_t r, int64_t j, int64_t p) {
    const int64_t k = r % 8;
    return lanes ? 32 * (2 * (j / 2) + r / 8) + 8 * (2 * (k % 2) + p) +
                       4 * (j % 2) + k / 2
                 : 64 * p + 4 * r + j;
  };
  // Tile t's TL2 block b, TL1 vectors and header (the K panels).
  const int64_t tiles = U.num_tiles(), last = split.panels - 1;
  auto blockOf = [&](int64_t t, int64_t b) {
    const int64_t c = b / split.panelBlocks;
    return U.codes.data() + split.piece_offset(c, t, tiles) +
           (b - c * split.panelBlocks) * 320;
  };
  auto tl1Of = [&](int64_t t) {
    return U.codes.data() + split.piece_offset(last, t, tiles) +
           split.panel_blocks(last) * 320;
  };
  auto headerOf = [&](int64_t t) {
    return tl1Of(t) + split.tl1Vectors * LOWBIT_LUT_VECTOR_BYTES;
  };
  std::vector<int8_t> q(size_t(U.K));
  for (int64_t m = 0; m < U.M; ++m) {
    unpack_row(canonical, m, q.data());
    const int64_t r = m % 16, t = m / 16;
    // TL2 blocks: triple g of the row -> block g / 32, vector v, nibble p,
    // slot j; its sign -> the vector's sign words.
    int64_t negatives = 0;
    for (int64_t g = 0; g < split.k2 / 3; ++g) {
      const int8_t *w = &q[size_t(3 * g)];
      const int v = 9 * w[0] + 3 * w[1] + w[2];
      const int index = v < 0 ? -v : v;
      const int64_t i = g % 32, vec = i / 8, p = i % 8 / 4, j = i % 4;
      uint8_t *block = blockOf(t, g / 32);
      block[64 + vec * 64 + byteOf(r, j)] |= uint8_t(index << (4 * p));
      if (v < 0) {
        const int64_t bit = signBitOf(r, j, p);
        block[16 * vec + bit / 8] |= uint8_t(1 << (bit % 8));
        ++negatives;
      }
    }
    // TL1 vectors: pair j of the TL1 part; pairs past K are index 4.
    uint8_t *tl1 = tl1Of(t);
    for (int64_t jj = 0; jj < split.tl1Vectors * 8; ++jj) {
      const int64_t k = split.k2 + 2 * jj;
      const int index =
          k < U.K ? 3 * (q[size_t(k)] + 1) + q[size_t(k + 1)] + 1 : 4;
      const int64_t vec = jj / 8, p = jj % 8 / 4, j = jj % 4;
      tl1[vec * 64 + byteOf(r, j)] |= uint8_t(index << (4 * p));
    }
    header(headerOf(t), r, negatives);
  }
  // Padding rows: all weights 0 (TL1 index 4 in both nibbles).
  for (int64_t m = U.M; m < U.Mp; ++m) {
    uint8_t *tl1 = tl1Of(m / 16);
    for (int64_t vec = 0; vec < split.tl1Vectors; ++vec)
      for (int64_t j = 0; j < 4; ++j)
        tl1[vec * 64 + byteOf(m % 16, j)] = 0x44;
    header(headerOf(m / 16), m % 16, 0);
  }
  return U;
}

int64_t lut_bytes(const Format &format, int64_t M, int64_t K) {
  if (!has_lut_layout(format))
    throw Error("format '" + format.name() +
                "' has no lut-elementwise layout (supported: tl1, tl2)");
  format.check_shape(M, K);
  const int64_t bytes =
      lowbit_padded_m(M) / LOWBIT_TILE_ROWS * lut_split(format, K).tile_bytes();
  return (bytes + 63) / 64 * 64;
}

UpconvertWeights shape_lut(const Format &format, int64_t M, int64_t K,
                           LutOrder order, uint8_t *dest) {
  lut_bytes(format, M, K); // the format and shape checks
  UpconvertWeights U;
  U.format = format;
  U.M = M;
  U.K = K;
  U.Mp = lowbit_padded_m(M);
  U.Kp = lowbit_padded_k(K);
  U.bits = 2;
  U.lane_order =
      order == LutOrder::Lanes ? LOWBIT_LANE_LANES : LOWBIT_LANE_ROWS;
  const size_t bytes =
      size_t(U.num_tiles() * lut_split(format, K).tile_bytes());
  if (!dest) {
    U.codes = AlignedArray<uint8_t>(bytes);
    return U;
  }
  if (reinterpret_cast<uintptr_t>(dest) % kVectorAlignment != 0)
    throw Error("shape_lut: the destination is not 64-byte aligned");
  U.codes = AlignedArray<uint8_t>::view(dest, bytes);
  return U;
}

namespace {

using detail::load_le;
using detail::store_le;

// The TL2 table of triple position g (0..7) of a vector: for the 6 bits of
// its codes in an i2s row (c0 + 4 c1 + 16 c2, c = q + 1), the index |v|
// (v = 9 q0 + 3 q1 + q2) at bit 8 (g % 4) + 4 (g / 4), the nibble of slot
// g % 4 that holds group g, the sign v < 0 at bit 32 + g, and the sign
// again at bit 56. A vector's 8 triples are 48 consecutive bits of the
// row: the sum of their 8 entries (no field overlaps another but bits
// 56..59, which count) is row r's 4 index bytes (bits 0..31), the 8 sign
// bits in group order (32..39) and their count (56..59). Codes of 3 (which
// the callers have rejected) give 0.
const std::array<std::array<uint64_t, 64>, 8> &tl2_tables() {
  static const auto tables = [] {
    std::array<std::array<uint64_t, 64>, 8> t{};
    for (int x = 0; x < 64; ++x) {
      const int c0 = x & 3, c1 = x >> 2 & 3, c2 = x >> 4;
      if (c0 == 3 || c1 == 3 || c2 == 3)
        continue;
      const int v = 9 * (c0 - 1) + 3 * (c1 - 1) + (c2 - 1);
      for (int g = 0; g < 8; ++g)
        t[size_t(g)][size_t(x)] =
            uint64_t(v < 0 ? -v : v) << (8 * (g % 4) + 4 * (g / 4)) |
            uint64_t(v < 0) << (32 + g) | uint64_t(v < 0) << 56;
    }
    return t;
  }();
  return tables;
}

// The 4 nibbles of x (16 bits) as the low nibbles of 4 bytes.
inline uint32_t nibbles_to_bytes(uint32_t x) {
  x = (x | x << 8) & 0x00FF00FFu;
  return (x | x << 4) & 0x0F0F0F0Fu;
}

// The lane order's sign bits of a row in a vector, for its 8 sign bits s8
// (bit 4p + j: group 4p + j): in the low half the 4 of slots 0, 1 (the
// uint32 of register h = 0), in the high half those of slots 2, 3 (h = 1),
// bit 8p + 4l of each for slot 2h + l, nibble p; the row's place k / 2 + 16
// (k % 2) is a shift (put_row_in).
const std::array<uint64_t, 256> &lanes_sign_table() {
  static const auto table = [] {
    std::array<uint64_t, 256> t{};
    for (uint32_t s8 = 0; s8 < 256; ++s8)
      for (int p = 0; p < 2; ++p)
        for (int j = 0; j < 4; ++j)
          if (s8 >> (4 * p + j) & 1u)
            t[s8] |= uint64_t(1) << (32 * (j / 2) + 8 * p + 4 * (j % 2));
    return t;
  }();
  return table;
}

} // namespace

LutRowPacker::LutRowPacker(UpconvertWeights &U)
    : U_(U), split_(lut_split(U.format, U.K)),
      lanes_(U.lane_order == LOWBIT_LANE_LANES) {
  if (!has_lut_layout(U.format))
    throw Error("LutRowPacker: format '" + U.format.name() +
                "' has no lut-elementwise layout (supported: tl1, tl2)");
  const int64_t tiles = U.num_tiles();
  if (U.Mp != lowbit_padded_m(U.M) ||
      U.codes.size() != size_t(tiles * split_.tile_bytes()))
    throw Error("LutRowPacker: the weights are not shaped for the lut layout "
                "(shape_lut)");
  groups_ = split_.k2 / 3 + 8 * split_.tl1Vectors;
  panel_begin_.resize(size_t(split_.panels));
  int64_t before = 0;
  for (int64_t c = 0; c < split_.panels; ++c) {
    panel_begin_[size_t(c)] = tiles * before;
    before += split_.piece_bytes(c);
  }
}

uint8_t *LutRowPacker::tl1_of(int64_t t) const {
  const int64_t last = split_.panels - 1;
  return U_.codes.data() + panel_begin_[size_t(last)] +
         t * split_.piece_bytes(last) +
         split_.panel_blocks(last) * LOWBIT_LUT_BLOCK_BYTES;
}

void LutRowPacker::put_row(int64_t m, const uint8_t *row) {
  if (lanes_)
    put_row_in<true>(m, row);
  else
    put_row_in<false>(m, row);
}

template <bool Lanes>
void LutRowPacker::put_row_in(int64_t m, const uint8_t *row) {
  const int64_t t = m / LOWBIT_TILE_ROWS, r = m % LOWBIT_TILE_ROWS;
  // Row r's 4 bytes w of a vector (byte j: slot j) in the lane order:
  // Rows bytes 4r..4r+3, Lanes byte 16j + r.
  auto put_vector = [r](uint8_t *vector, uint32_t w) {
    if (!Lanes) {
      store_le(vector + 4 * r, w);
      return;
    }
    for (int j = 0; j < 4; ++j)
      vector[16 * j + r] = uint8_t(w >> (8 * j));
  };
  // Bit 4p + j of s8 is the sign of group 8v + 4p + j of vector v: into the
  // vector's 16 bytes of sign words. Rows: bit 64p + 4r + j, the nibble of
  // byte 8p + r / 2. Lanes: in the uint32 at 4 (2h + r / 8) (slots j = 2h,
  // 2h + 1), bit 16 (k % 2) + 8p + 4l + k / 2 for k = r % 8, l = j % 2.
  const int shift = Lanes ? int(16 * (r % 8 % 2) + r % 8 / 2) : int(4 * (r % 2));
  const auto &lanes_signs = lanes_sign_table();
  auto put_signs = [r, shift, &lanes_signs](uint8_t *words, uint32_t s8) {
    if (!Lanes) {
      words[r / 2] |= uint8_t((s8 & 15u) << shift);
      words[8 + r / 2] |= uint8_t((s8 >> 4) << shift);
      return;
    }
    const uint64_t bits = lanes_signs[s8];
    for (int h = 0; h < 2; ++h) {
      uint8_t *word = words + 4 * (2 * h + r / 8);
      store_le(word, load_le<uint32_t>(word) |
                         uint32_t(bits >> (32 * h)) << shift);
    }
  };

  // TL2 blocks: vector v of block b is the 48 bits of triples 32b + 8v ..
  // 32b + 8v + 7, from byte 24b + 6v of the row; a table load per triple.
  const auto &tables = tl2_tables();
  uint8_t *const codes = U_.codes.data();
  int64_t negatives = 0, b = 0;
  for (int64_t p = 0; p < split_.panels; ++p) {
    uint8_t *block = codes + panel_begin_[size_t(p)] + t * split_.piece_bytes(p);
    for (int64_t e = split_.panel_blocks(p); e > 0;
         --e, ++b, block += LOWBIT_LUT_BLOCK_BYTES)
      for (int v = 0; v < 4; ++v) {
        const uint64_t w = load_le<uint64_t>(row + 24 * b + 6 * v);
        uint64_t e8 = 0;
        for (int g = 0; g < 8; ++g)
          e8 += tables[size_t(g)][(w >> (6 * g)) & 63];
        put_vector(block + 64 + 64 * v, uint32_t(e8));
        put_signs(block + 16 * v, uint32_t(e8 >> 32) & 0xFFu);
        negatives += int64_t(e8 >> 56);
      }
  }
  // TL1 vectors: pair 8v + g of the TL1 part is nibble g (c0 + 4 c1) of
  // the 4 bytes from byte K2 / 4 + 4v; its index 3 c0 + c1 for every
  // nibble at once (at most 8: no carries), pairs past K index 4 (0, 0);
  // slot j is nibbles j and j + 4.
  const uint8_t *tail = row + split_.k2 / 4;
  uint8_t *tl1 = tl1_of(t);
  for (int64_t v = 0; v < split_.tl1Vectors; ++v) {
    const uint32_t w = load_le<uint32_t>(tail + 4 * v);
    const uint32_t c0 = w & 0x33333333u, c1 = w >> 2 & 0x33333333u;
    uint32_t index = (c0 << 1) + c0 + c1;
    const int64_t past = 8 * (v + 1) - split_.k1 / 2; // pairs past K
    if (past > 0) {
      const uint32_t keep = 0xFFFFFFFFu >> (4 * past);
      index = (index & keep) | (0x44444444u & ~keep);
    }
    put_vector(tl1 + 64 * v, nibbles_to_bytes(index & 0xFFFFu) |
                                 nibbles_to_bytes(index >> 16) << 4);
  }
  // The header: -32768 (G - 2 n_r), wrapping (pack_lut's).
  store_le(tl1 + split_.tl1Vectors * LOWBIT_LUT_VECTOR_BYTES + 4 * r,
           uint32_t(-32768 * (groups_ - 2 * negatives)));
}

void LutRowPacker::put_padding_rows() {
  for (int64_t m = U_.M; m < U_.Mp; ++m) {
    const int64_t r = m % LOWBIT_TILE_ROWS;
    uint8_t *tl1 = tl1_of(m / LOWBIT_TILE_ROWS);
    for (int64_t v = 0; v < split_.tl1Vectors; ++v)
      for (int j = 0; j < 4; ++j)
        tl1[64 * v + (lanes_ ? 16 * j + r : 4 * r + j)] = 0x44;
    store_le(tl1 + split_.tl1Vectors * LOWBIT_LUT_VECTOR_BYTES + 4 * r,
             uint32_t(-32768 * groups_));
  }
}

} // namespace lowbit
