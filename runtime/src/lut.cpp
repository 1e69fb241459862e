//===- lut.cpp - the lut-elementwise layout of lut_abi.h ------------------===//

#include "lowbit/lut.h"
#include "lowbit/error.h"

#include <algorithm>
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

  UpconvertWeights U;
  U.format = f;
  U.M = canonical.M;
  U.K = canonical.K;
  U.Mp = lowbit_padded_m(U.M);
  U.Kp = lowbit_padded_k(U.K);
  U.bits = 2;
  U.w_scale = canonical.tensor_scale;
  const LutSplit split = lut_split(f, U.K);
  U.codes = AlignedArray<uint8_t>(size_t(U.num_tiles() * split.tile_bytes()));

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

} // namespace lowbit
