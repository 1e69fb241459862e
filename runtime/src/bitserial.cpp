//===- bitserial.cpp - the lut-bitserial layout of bitserial_abi.h --------===//

#include "lowbit/bitserial.h"
#include "lowbit/error.h"

#include "layout.h"

#include <vector>

namespace lowbit {

using namespace detail;

bool has_bitserial_layout(const Format &format) {
  return format.kind == FormatKind::I2S || format.kind == FormatKind::Group;
}

UpconvertWeights pack_bitserial(const PackedWeights &canonical) {
  const Format &f = canonical.format;
  if (!has_bitserial_layout(f))
    throw Error("format '" + f.name() +
                "' has no lut-bitserial layout (supported: i2s, w1gG, w2gG, "
                "w3gG, w4gG)");
  validate(canonical);

  UpconvertWeights U;
  U.format = f;
  U.M = canonical.M;
  U.K = canonical.K;
  U.Mp =
      (U.M + kUpconvertTileRows - 1) / kUpconvertTileRows * kUpconvertTileRows;
  U.Kp = (U.K + LOWBIT_BITSERIAL_BLOCK - 1) / LOWBIT_BITSERIAL_BLOCK *
         LOWBIT_BITSERIAL_BLOCK;
  U.bits = f.bits; // planes: i2s has 2-bit codes 0..2
  U.group = f.is_ternary() ? 0 : f.group;
  U.w_scale = canonical.tensor_scale;

  const int planes = U.bits;
  const int64_t blocks = U.Kp / LOWBIT_BITSERIAL_BLOCK;
  const int64_t tile_bytes = blocks * planes * LOWBIT_BITSERIAL_VECTOR_BYTES;
  U.codes = AlignedArray<uint8_t>(size_t(U.num_tiles() * tile_bytes));

  const Encoding encoding = f.encoding();
  std::vector<int8_t> q(size_t(U.K));
  for (int64_t m = 0; m < U.M; ++m) {
    unpack_row(canonical, m, q.data());
    const int64_t r = m % kUpconvertTileRows;
    uint8_t *tile = U.codes.data() + m / kUpconvertTileRows * tile_bytes;
    for (int64_t k = 0; k < U.K; ++k) {
      const int code = kernel_code(encoding, q[size_t(k)]);
      // k = 32 j + 16 h + 4 s + i: block j, nibble h, slot s, bit i
      // (group 4 h + s of the block).
      const int64_t j = k / 32, h = k % 32 / 16, s = k % 16 / 4, i = k % 4;
      for (int p = 0; p < planes; ++p)
        tile[(j * planes + p) * LOWBIT_BITSERIAL_VECTOR_BYTES + 4 * r + s] |=
            uint8_t(((code >> p) & 1) << (4 * h + i));
    }
  }
  pack_tile_scales(canonical, U);
  return U;
}

} // namespace lowbit
