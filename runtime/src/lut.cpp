//===- lut.cpp - the lut-elementwise layout of lut_abi.h ------------------===//

#include "lowbit/lut.h"
#include "lowbit/error.h"

#include <vector>

namespace lowbit {

bool has_lut_layout(const Format &format) {
  return format.kind == FormatKind::TL1 || format.kind == FormatKind::TL2;
}

int64_t LutSplit::tile_bytes() const {
  return LOWBIT_LUT_HEADER_BYTES + k2 / LOWBIT_LUT_TL2_BLOCK * 320 +
         tl1Vectors * LOWBIT_LUT_VECTOR_BYTES;
}

LutSplit lut_split(const Format &format, int64_t K) {
  LutSplit s;
  if (format.kind == FormatKind::TL2)
    s.k2 = K / LOWBIT_LUT_TL2_BLOCK * LOWBIT_LUT_TL2_BLOCK;
  s.k1 = K - s.k2;
  s.tl1Vectors = (s.k1 + LOWBIT_LUT_TL1_VECTOR - 1) / LOWBIT_LUT_TL1_VECTOR;
  return s;
}

UpconvertWeights pack_lut(const PackedWeights &canonical) {
  const Format &f = canonical.format;
  if (!has_lut_layout(f))
    throw Error("format '" + f.name() +
                "' has no lut-elementwise layout (supported: tl1, tl2)");
  validate(canonical);

  UpconvertWeights U;
  U.format = f;
  U.M = canonical.M;
  U.K = canonical.K;
  U.Mp = (U.M + 15) / 16 * 16;
  U.Kp = (U.K + 31) / 32 * 32;
  U.bits = 2;
  U.w_scale = canonical.tensor_scale;
  const LutSplit split = lut_split(f, U.K);
  const int64_t tileBytes = split.tile_bytes();
  U.codes = AlignedArray<uint8_t>(size_t(U.num_tiles() * tileBytes));

  std::vector<int8_t> q(size_t(U.K));
  for (int64_t m = 0; m < U.M; ++m) {
    unpack_row(canonical, m, q.data());
    const int64_t r = m % 16;
    uint8_t *tile = U.codes.data() + m / 16 * tileBytes;
    // TL2 blocks: triple g of the row -> block g / 32, vector, lane, nibble.
    int32_t negatives = 0;
    uint8_t *blocks = tile + LOWBIT_LUT_HEADER_BYTES;
    for (int64_t g = 0; g < split.k2 / 3; ++g) {
      const int8_t *w = &q[size_t(3 * g)];
      const int v = 9 * w[0] + 3 * w[1] + w[2];
      const int index = v < 0 ? -v : v;
      const int64_t b = g / 32, i = g % 32, vec = i / 8, l = (i % 8) / 2,
                    p = i % 2;
      uint8_t *block = blocks + b * 320;
      block[vec * 64 + l * 16 + r] |= uint8_t(index << (4 * p));
      if (v < 0) {
        block[256 + l * 16 + r] |= uint8_t(1 << (2 * vec + p));
        ++negatives;
      }
    }
    // TL1 vectors: pair j of the TL1 part; pairs past K are index 4.
    uint8_t *tl1 = blocks + split.k2 / LOWBIT_LUT_TL2_BLOCK * 320;
    for (int64_t j = 0; j < split.tl1Vectors * 8; ++j) {
      const int64_t k = split.k2 + 2 * j;
      const int index =
          k < U.K ? 3 * (q[size_t(k)] + 1) + q[size_t(k + 1)] + 1 : 4;
      const int64_t vec = j / 8, l = (j % 8) / 2, p = j % 2;
      tl1[vec * 64 + l * 16 + r] |= uint8_t(index << (4 * p));
    }
    for (int byte = 0; byte < 4; ++byte)
      tile[4 * r + byte] = uint8_t(uint32_t(negatives) >> (8 * byte));
  }
  // Padding rows: all weights 0 (TL1 index 4 in both nibbles).
  for (int64_t m = U.M; m < U.Mp; ++m) {
    uint8_t *tl1 = U.codes.data() + m / 16 * tileBytes +
                   LOWBIT_LUT_HEADER_BYTES +
                   split.k2 / LOWBIT_LUT_TL2_BLOCK * 320;
    for (int64_t vec = 0; vec < split.tl1Vectors; ++vec)
      for (int64_t l = 0; l < 4; ++l)
        tl1[vec * 64 + l * 16 + m % 16] = 0x44;
  }
  return U;
}

} // namespace lowbit
