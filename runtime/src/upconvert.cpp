//===- upconvert.cpp - the upconvert ("vnni4") layout of kernel_abi.h -----===//

#include "lowbit/upconvert.h"
#include "lowbit/activation.h"
#include "lowbit/error.h"
#include "lowbit/lut.h"

#include "bitstream.h"
#include "byte_order.h"
#include "ggml_blocks.h"
#include "layout.h"
#include "upconvert_rows.h"

#include <algorithm>
#include <cmath>
#include <cstring>
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
  case FormatKind::IQ4_NL:
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
  case Encoding::GgmlBlock: // pack_block_weights' codes, already unsigned
    return uint8_t(q);
  }
  return 0;
}

/// The plane of `Width` bits (1, 2, 4 or 8) that starts at vector `first`
/// of every 32-k block of row i of `tile`, in kernel_abi.h's UPCONVERT
/// LAYOUT, from the row's kernel codes c[0, 32 * blocks), one per byte: the
/// 4 bytes (r = 0..3) of row i in a 64-byte vector are the OR over j of the
/// 4 codes c[kv v + 4j + r], each byte masked to the plane's bits and
/// shifted into field j; one 4-byte load per j (no carry crosses a byte, so
/// the bytes never mix), not one bit field per code. `shift` drops the low
/// plane's bits for the high one.
template <int Width>
static void put_plane(uint8_t *tile, int b, int first, int64_t i,
                      const uint8_t *c, int64_t blocks, int shift) {
  constexpr int per = 8 / Width; // codes per byte
  constexpr uint32_t mask = 0x01010101u * ((1u << Width) - 1);
  for (int64_t block = 0; block < blocks; ++block, c += 32) {
    uint8_t *out = tile + (block * b + first) * 64 + i * 4;
    for (int v = 0; v < Width; ++v) { // 32 / (32 / Width) vectors
      uint32_t word = 0;
      for (int j = 0; j < per; ++j)
        word |= ((load_le<uint32_t>(c + 4 * (per * v + j)) >> shift) & mask)
                << (Width * j);
      store_le(out + 64 * v, word);
    }
  }
}

/// Row i of `tile` from its kernel codes c[0, Kp) (0 past K), one per byte:
/// the low plane of lowbit_vnni4_low_bits(b) bits, then (codes of 3, 5, 6
/// bits) the high plane.
static void put_row(uint8_t *tile, int b, int64_t i, const uint8_t *c,
                    int64_t Kp) {
  const int64_t blocks = Kp / 32;
  detail::for_each_code_plane(b, [&](auto width, int first, int shift) {
    put_plane<decltype(width)::value>(tile, b, first, i, c, blocks, shift);
  });
}

/// i2s without decoding: a canonical row is pack_codes' 2-bit stream (the
/// code q + 1 of k in bits 2 (k % 4) of byte k / 4), which is the kernel
/// code. Row i's 4 bytes of vector v hold codes 16v + 4j + r in byte r,
/// bits 2j: canonical bytes 4v..4v+3 (byte j, field r) with the 4 x 4
/// matrix of 2-bit fields transposed, in two masked swaps (the recursive
/// bit-matrix transpose of Hacker's Delight, 7-3), two vectors' words at
/// once (no bit moves across the 32-bit halves).
static uint64_t transpose_fields(uint64_t w) {
  uint64_t t = (w ^ (w >> 12)) & 0x0000F0F00000F0F0ull; // 2x2 blocks
  w ^= t ^ (t << 12);
  t = (w ^ (w >> 6)) & 0x00CC00CC00CC00CCull; // fields within each block
  return w ^ t ^ (t << 6);
}

/// Whether validate() accepts i2s weights, without decoding them: no code 3
/// (both bits of a field set), zero padding bits after each row's K codes,
/// and a finite positive tensor scale (validate() gives the error otherwise).
static bool i2s_valid(const PackedWeights &W) {
  check_layout(W);
  if (!std::isfinite(W.tensor_scale) || !(W.tensor_scale > 0.0f))
    return false;
  const uint8_t *p = W.codes.data();
  const size_t n = W.codes.size();
  uint64_t threes = 0;
  size_t at = 0;
  for (; at + 8 <= n; at += 8) {
    const uint64_t w = load_le<uint64_t>(p + at);
    threes |= w & (w >> 1) & 0x5555555555555555ull;
  }
  for (; at < n; ++at)
    threes |= p[at] & (p[at] >> 1) & 0x55u;
  if (threes)
    return false;
  const int64_t row_bytes = W.row_bytes(), tail = W.K % 4;
  for (int64_t m = 0; tail && m < W.M; ++m)
    if (p[(m + 1) * row_bytes - 1] >> (2 * tail))
      return false;
  return true;
}

void detail::put_i2s_row(UpconvertWeights &U, int64_t m, const uint8_t *row) {
  const int64_t vectors = U.Kp / 16; // even
  const int64_t t = m / kUpconvertTileRows, i = m % kUpconvertTileRows;
  uint8_t *out = U.codes.data() + t * vectors * 64 + i * 4;
  for (int64_t v = 0; v < vectors; v += 2) {
    const uint64_t w = transpose_fields(load_le<uint64_t>(row + 4 * v));
    store_le(out + v * 64, uint32_t(w));
    store_le(out + (v + 1) * 64, uint32_t(w >> 32));
  }
}

static void pack_i2s(const PackedWeights &canonical, UpconvertWeights &U) {
  const int64_t row_bytes = canonical.row_bytes();
  std::vector<uint8_t> row(size_t(U.Kp / 4), 0); // zero past the row
  for (int64_t m = 0; m < U.M; ++m) {
    std::memcpy(row.data(), canonical.codes.data() + m * row_bytes,
                size_t(row_bytes));
    put_i2s_row(U, m, row.data());
  }
}

/// q4_0 without decoding: a block's 16 bytes after d hold code k (< 16) in
/// the low nibble of byte k and code 16 + k in the high one, and the kernel
/// code is the nibble. Row i's 4 bytes of vector v (codes 8v + 4j + r in
/// byte r, bits 4j) are the nibbles of bytes 8 (v % 2) + 4j + r, the low
/// ones for v < 2: two 4-byte loads, masked and shifted. Rows [m_begin,
/// m_end), row m's blocks at rows + (m - m_begin) * row_bytes.
static void pack_q4_0(const uint8_t *rows, int64_t row_bytes,
                      UpconvertWeights &U, int64_t m_begin, int64_t m_end) {
  const int64_t blocks = U.Kp / 32;
  const int64_t vectors = U.Kp * 4 / 32;
  for (int64_t m = m_begin; m < m_end; ++m) {
    const int64_t t = m / kUpconvertTileRows, i = m % kUpconvertTileRows;
    const uint8_t *qs = rows + (m - m_begin) * row_bytes + 2;
    uint8_t *out = U.codes.data() + t * vectors * 64 + i * 4;
    for (int64_t j = 0; j < blocks; ++j, qs += 18, out += 4 * 64)
      for (int h = 0; h < 2; ++h) {
        const uint32_t a = load_le<uint32_t>(qs + 8 * h),
                       b = load_le<uint32_t>(qs + 8 * h + 4);
        store_le(out + 64 * h, (a & 0x0F0F0F0Fu) | (b & 0x0F0F0F0Fu) << 4);
        store_le(out + 64 * (2 + h),
                 ((a >> 4) & 0x0F0F0F0Fu) | (b & 0xF0F0F0F0u));
      }
  }
}

/// ggml block formats: the unsigned codes u = c + 2^(b-1) (min types: c;
/// iq4_nl: its codebook index) of row_block_params into U.codes (the
/// dialect's code_offset: q8_0 128, q5_0 16; format.h keeps q8_0's codes
/// signed, code_offset 0), its s_j into U.scales and (types with a minimum)
/// its o_j into U.zeros, fp16 [Mp/16][Kp/32][16]. Each s_j and o_j is the
/// block's fp16 field for the formats with one scale per 32 (q8_0, q5_0,
/// q4_1, q5_1, iq4_nl), copied as it is. Rows [m_begin, m_end) as
/// pack_q4_0; U's arrays shaped (shape_upconvert).
static void pack_block_weights(const uint8_t *rows, int64_t row_bytes,
                               UpconvertWeights &U, int64_t m_begin,
                               int64_t m_end);

/// Row m's s_j (and o_j) of a ggml block type with one scale per 32 (q4_0,
/// q8_0, q5_0, q4_1, q5_1, iq4_nl), blocks at `row`: each block's fp16 d
/// (and m), finite (validated), copied as it is into U.scales (U.zeros),
/// fp16 [Mp/16][Kp/32][16].
static void put_block_scales(const GgmlBlockType &type, const uint8_t *row,
                             UpconvertWeights &U, int64_t m) {
  const int64_t blocks = U.Kp / 32;
  const int64_t t = m / kUpconvertTileRows, i = m % kUpconvertTileRows;
  for (int64_t j = 0; j < blocks; ++j) {
    const size_t at = size_t((t * blocks + j) * kUpconvertTileRows + i);
    const uint8_t *block = row + j * type.block_bytes;
    U.scales[at] = load_le<uint16_t>(block + type.d_offset);
    if (type.has_min)
      U.zeros[at] = load_le<uint16_t>(block + type.min_offset);
  }
}

/// Writes the kernel codes of ggml block rows into U's tiles, a row at a
/// time. The stored code less the type's code_offset is c: the kernel code
/// c + offset (offset 2^(b-1), 0 for the types with a minimum) is the
/// stored code plus `shift` (mod 256); a codebook's kernel code is its
/// stored index (the kernel looks it up).
class BlockRowCodes {
public:
  BlockRowCodes(const GgmlBlockType &type, UpconvertWeights &U)
      : type_(type), U_(U), q_(size_t(U.K)), codes_(size_t(U.Kp)) {
    shift_ = uint8_t(detail::kernel_code_offset(type) - type.code_offset);
  }
  /// Row m, whose ggml blocks are at `row`.
  void put(const uint8_t *row, int64_t m) {
    decode_block_row_codes(type_, row, U_.K, q_.data());
    for (int64_t k = 0; k < U_.K; ++k)
      codes_[size_t(k)] = uint8_t(uint8_t(q_[size_t(k)]) + shift_);
    const int64_t vectors = U_.Kp * U_.bits / 32;
    put_row(U_.codes.data() + m / kUpconvertTileRows * vectors * 64, U_.bits,
            m % kUpconvertTileRows, codes_.data(), U_.Kp);
  }

private:
  const GgmlBlockType &type_;
  UpconvertWeights &U_;
  uint8_t shift_;
  std::vector<int8_t> q_;
  std::vector<uint8_t> codes_;
};

/// Row i's 4 vectors (64 bytes apart from `out`, which points at row i's
/// bytes of the first) of a 32-k block whose codes k are the low (`high`
/// false) or high nibbles of q[k], k < 32: vector v's byte r holds codes
/// 8 v + r and 8 v + 4 + r, the nibbles of two 4-byte loads (pack_q4_0's
/// moves for a block whose codes are all low or all high nibbles).
static void put_nibble_block(uint8_t *out, const uint8_t *q, bool high) {
  for (int v = 0; v < 4; ++v) {
    const uint32_t a = load_le<uint32_t>(q + 8 * v),
                   b = load_le<uint32_t>(q + 8 * v + 4);
    store_le(out + 64 * v, high ? ((a >> 4) & 0x0F0F0F0Fu) | (b & 0xF0F0F0F0u)
                                : (a & 0x0F0F0F0Fu) | (b & 0x0F0F0F0Fu) << 4);
  }
}

/// Row i's 2-bit plane vectors (2 each, `out` at the first) of the 4 32-k
/// blocks f < 4 whose codes k are field f (bits 2 f) of q[k], k < 32, block
/// f's at out + f * stride: vector s's byte r holds codes 16 s + 4 j + r in
/// bits 2 j, so four 4-byte words masked to field f and merged (tq2_0's
/// fields), two vectors' words per 8-byte load.
static void put_field_blocks(uint8_t *out, int64_t stride, const uint8_t *q) {
  constexpr uint64_t kField = 0x0303030303030303ull;
  for (int s = 0; s < 2; ++s) {
    const uint64_t x = load_le<uint64_t>(q + 16 * s);
    const uint64_t y = load_le<uint64_t>(q + 16 * s + 8);
    for (int f = 0; f < 4; ++f) {
      const uint64_t w =
          ((x >> (2 * f)) & kField) | ((y >> (2 * f)) & kField) << 4;
      store_le(out + f * stride + 64 * s, uint32_t(w) | uint32_t(w >> 32) << 2);
    }
  }
}

/// Row i's 1-bit plane vector of the 8 32-k blocks f < 8 whose codes k are
/// bit f of q[k], k < 32 (q3_k's hmask, q5_k's qh), block f's at out + f *
/// stride: its byte r holds code 4 j + r in bit j, bit f of byte r of the
/// j-th 4-byte word; two words per 8-byte load, merged and folded.
static void put_bit_blocks(uint8_t *out, int64_t stride, const uint8_t *q) {
  constexpr uint64_t kBit = 0x0101010101010101ull;
  uint64_t x[4];
  for (int p = 0; p < 4; ++p)
    x[p] = load_le<uint64_t>(q + 8 * p);
  for (int f = 0; f < 8; ++f) {
    uint64_t w = 0;
    for (int p = 0; p < 4; ++p)
      w |= ((x[p] >> f) & kBit) << (2 * p); // words 2 p (low) and 2 p + 1
    store_le(out + f * stride, uint32_t(w) | uint32_t(w >> 32) << 1);
  }
}

/// Row i's kernel codes of one K-quant super-block (256 values at `block`)
/// into the 32-k blocks [8 sb, 8 sb + 8) of its tile, row i's bytes at
/// `out` (the tile plus 4 i), plane by plane as kernel_abi.h splits them
/// (lowbit_vnni4_low_bits). Each type's kernel code is its stored code
/// (shift 0: q3_k's low 2 bits plus 4 times its hmask bit is its signed
/// code plus 4). Value 64 g + l (l < 32) of q4_k and q5_k is the low nibble
/// of qs[32 g + l] (qs at byte 16, or 48), 64 g + 32 + l its high nibble;
/// q5_k's fifth bit of value v is bit v / 32 of qh[v % 32] (qh at byte 16),
/// as q3_k's third bit of hmask[v % 32] (hmask at byte 0). Value 128 n +
/// 32 j + l of q2_k (qs at 16) and q3_k (qs at 32) is field j (bits 2 j) of
/// qs[32 n + l]; q6_k's has its low 4 bits in the low (j < 2) or high
/// nibble of ql[64 n + 32 (j % 2) + l] and its high 2 bits in field j of
/// qh[32 n + l] (qh at byte 128).
static void put_k_quant_block(const GgmlBlockType &type, const uint8_t *block,
                              int64_t sb, uint8_t *out) {
  const int bits = type.code_bits;
  const int64_t stride = bits * 64; // one 32-k block's vectors
  uint8_t *first = out + 8 * sb * stride;
  switch (type.kind) {
  case FormatKind::Q2_K:
  case FormatKind::Q3_K: {
    const uint8_t *qs = block + (bits == 2 ? 16 : 32);
    for (int n = 0; n < 2; ++n)
      put_field_blocks(first + 4 * n * stride, stride, qs + 32 * n);
    if (bits == 3)
      put_bit_blocks(first + 2 * 64, stride, block);
    return;
  }
  case FormatKind::Q4_K:
  case FormatKind::Q5_K: {
    const uint8_t *qs = block + (bits == 4 ? 16 : 48);
    for (int g = 0; g < 4; ++g)
      for (int h = 0; h < 2; ++h)
        put_nibble_block(first + (2 * g + h) * stride, qs + 32 * g, h == 1);
    if (bits == 5)
      put_bit_blocks(first + 4 * 64, stride, block + 16);
    return;
  }
  case FormatKind::Q6_K: {
    const uint8_t *ql = block, *qh = block + 128;
    for (int n = 0; n < 2; ++n) {
      for (int j = 0; j < 4; ++j)
        put_nibble_block(first + (4 * n + j) * stride,
                         ql + 64 * n + 32 * (j % 2), j >= 2);
      put_field_blocks(first + 4 * n * stride + 4 * 64, stride, qh + 32 * n);
    }
    return;
  }
  default:
    return;
  }
}

/// K-quants: codes by put_k_quant_block, scales in
/// kernel_abi.h's K-QUANT SCALES: per tile and super-block, per sub-block j
/// (of 32, or 16) the 16 rows' sub-scales sc_j at the type's
/// sub_scale_bits b each (a bit string, row i at bits [b i, b i + b); two's
/// complement for the types without minimums), then as many sub-minimums
/// m_j, then 16 fp16 d (and 16 fp16 -dmin): the integers the blocks store
/// (BlockCodec::sub_scales, which row_block_params' decoders use too), so
/// s_j = d * sc_j and o_j = -dmin * m_j exactly as ggml dequantizes.
/// Rows [m_begin, m_end) as pack_block_weights; the rows of a tile share
/// the sub-scale bytes, so a range that another thread's range continues
/// starts and ends at a tile.
static void pack_k_quant(const uint8_t *rows, int64_t row_bytes,
                         UpconvertWeights &U, int64_t m_begin, int64_t m_end) {
  const GgmlBlockType &type = *ggml_block_type(U.format.kind);
  const BlockCodec &codec = block_codec(type.kind);
  const int bits = type.sub_scale_bits;
  const int64_t per_super = type.block / type.scale_block;
  const int64_t supers = U.Kp / type.block;
  const int64_t sub_bytes = kUpconvertTileRows * bits / 8; // one sub-block
  const int parts = type.has_min ? 2 : 1;
  const int64_t head = parts * per_super * sub_bytes; // then the fp16 rows
  const int64_t super_bytes =
      lowbit_k_quant_super_bytes(int(per_super), bits, type.has_min);
  uint8_t *bytes = reinterpret_cast<uint8_t *>(U.scales.data());
  // Row i's b bits of n (two's complement where negative) in the bit string
  // of the sub-block at `sub`.
  const unsigned mask = (1u << bits) - 1;
  auto put_scale = [&](uint8_t *sub, int64_t i, int n) {
    put_code(sub, i, bits, unsigned(n) & mask);
  };
  const int64_t vectors = U.Kp * U.bits / 32;
  int sc[16], mn[16];
  for (int64_t m = m_begin; m < m_end; ++m) {
    const uint8_t *row = rows + (m - m_begin) * row_bytes;
    const int64_t t = m / kUpconvertTileRows, i = m % kUpconvertTileRows;
    uint8_t *tile_row = U.codes.data() + t * vectors * 64 + i * 4;
    for (int64_t sb = 0; sb < supers; ++sb) {
      const uint8_t *block = row + sb * type.block_bytes;
      put_k_quant_block(type, block, sb, tile_row);
      uint8_t *super = bytes + (t * supers + sb) * super_bytes;
      uint16_t *halves = reinterpret_cast<uint16_t *>(super + head);
      halves[i] = load_le<uint16_t>(block + type.d_offset);
      // -dmin, exactly (the sign bit).
      if (type.has_min)
        halves[16 + i] =
            uint16_t(load_le<uint16_t>(block + type.min_offset) ^ 0x8000);
      codec.sub_scales(block, sc, mn);
      for (int64_t j = 0; j < per_super; ++j) {
        put_scale(super + j * sub_bytes, i, sc[j]);
        if (type.has_min)
          put_scale(super + (per_super + j) * sub_bytes, i, mn[j]);
      }
    }
  }
}

static void pack_block_weights(const uint8_t *rows, int64_t row_bytes,
                               UpconvertWeights &U, int64_t m_begin,
                               int64_t m_end) {
  const GgmlBlockType &type = *ggml_block_type(U.format.kind);
  if (type.sub_scale_bits > 0)
    return pack_k_quant(rows, row_bytes, U, m_begin, m_end);
  BlockRowCodes codes(type, U);
  for (int64_t m = m_begin; m < m_end; ++m) {
    const uint8_t *row = rows + (m - m_begin) * row_bytes;
    codes.put(row, m);
    put_block_scales(type, row, U, m);
  }
}

namespace {
/// The element counts of U's arrays for M x K of `format` (and U.group).
struct UpconvertSizes {
  size_t codes = 0, scales = 0, zeros = 0;
  int64_t group = 0;
};

UpconvertSizes upconvert_sizes(const Format &f, int64_t M, int64_t K) {
  const int64_t Mp = round_up(M, kUpconvertTileRows);
  const int64_t Kp = round_up(K, kUpconvertKAlign);
  const int64_t tiles = Mp / kUpconvertTileRows;
  UpconvertSizes n;
  n.codes = size_t(Mp * Kp * f.bits / 8);
  n.group = f.is_ternary() ? 0 : f.group;
  if (f.encoding() == Encoding::GgmlBlock) {
    const GgmlBlockType &type = *ggml_block_type(f.kind);
    if (type.sub_scale_bits > 0) {
      // kernel_abi.h's K-QUANT SCALES, per tile and super-block.
      n.group = type.block;
      n.scales = size_t(tiles * (Kp / type.block) *
                        lowbit_k_quant_super_bytes(
                            int(type.block / type.scale_block),
                            type.sub_scale_bits, type.has_min) /
                        2);
      return n;
    }
    n.group = 32;
    n.scales = size_t(tiles * (Kp / 32) * kUpconvertTileRows);
    n.zeros = type.has_min ? n.scales : 0;
    return n;
  }
  if (n.group > 0) {
    n.scales = size_t(tiles * (Kp / n.group) * kUpconvertTileRows);
    n.zeros = has_zeros(f) ? n.scales : 0;
  }
  return n;
}

size_t round_up_64(size_t bytes) { return (bytes + 63) / 64 * 64; }
} // namespace

int64_t upconvert_bytes(const Format &format, int64_t M, int64_t K) {
  if (has_lut_layout(format))
    return lut_bytes(format, M, K);
  format.check_shape(M, K);
  const UpconvertSizes n = upconvert_sizes(format, M, K);
  return int64_t(round_up_64(n.codes) + round_up_64(2 * n.scales) +
                 round_up_64(2 * n.zeros));
}

UpconvertWeights shape_upconvert(const Format &f, int64_t M, int64_t K,
                                 uint8_t *dest, uint8_t lane_order) {
  if (has_lut_layout(f) && lane_order <= LOWBIT_LANE_LANES)
    return shape_lut(f, M, K,
                     lane_order == LOWBIT_LANE_LANES ? LutOrder::Lanes
                                                     : LutOrder::Rows,
                     dest);
  if (!has_upconvert_layout(f))
    throw Error("format '" + f.name() +
                "' has no upconvert layout (supported: i2s, w1gG, w2gG, "
                "w4gG and the ggml block formats; tl1 and tl2 have "
                "lut_abi.h's)");
  if (lane_order != LOWBIT_LANE_ROWS)
    throw Error("shape_upconvert: the upconvert layout of '" + f.name() +
                "' has one lane order (rows), not " +
                std::to_string(lane_order));
  f.check_shape(M, K);
  const UpconvertSizes n = upconvert_sizes(f, M, K);
  UpconvertWeights U;
  U.format = f;
  U.M = M;
  U.K = K;
  U.Mp = round_up(M, kUpconvertTileRows);
  U.Kp = round_up(K, kUpconvertKAlign);
  U.bits = f.bits;
  U.group = n.group;
  if (!dest) {
    U.codes = AlignedArray<uint8_t>(n.codes);
    U.scales = AlignedArray<uint16_t>(n.scales);
    U.zeros = AlignedArray<uint16_t>(n.zeros);
    return U;
  }
  if (reinterpret_cast<uintptr_t>(dest) % kVectorAlignment != 0)
    throw Error("shape_upconvert: the destination is not 64-byte aligned");
  U.codes = AlignedArray<uint8_t>::view(dest, n.codes);
  dest += round_up_64(n.codes);
  U.scales =
      AlignedArray<uint16_t>::view(reinterpret_cast<uint16_t *>(dest), n.scales);
  dest += round_up_64(2 * n.scales);
  U.zeros =
      AlignedArray<uint16_t>::view(reinterpret_cast<uint16_t *>(dest), n.zeros);
  return U;
}

void detail::pack_block_rows(UpconvertWeights &U, const uint8_t *rows,
                             int64_t m_begin, int64_t m_end) {
  const int64_t row_bytes = code_row_bytes(U.format, U.K);
  if (U.format.kind != FormatKind::Q4_0)
    return pack_block_weights(rows, row_bytes, U, m_begin, m_end);
  pack_q4_0(rows, row_bytes, U, m_begin, m_end);
  const GgmlBlockType &type = *ggml_block_type(FormatKind::Q4_0);
  for (int64_t m = m_begin; m < m_end; ++m)
    put_block_scales(type, rows + (m - m_begin) * row_bytes, U, m);
}

UpconvertWeights pack_upconvert(const PackedWeights &canonical) {
  const Format &f = canonical.format;
  if (!has_upconvert_layout(f))
    throw Error("format '" + f.name() +
                "' has no upconvert layout (supported: i2s, w1gG, w2gG, "
                "w4gG and the ggml block formats)");
  // i2s is checked without decoding (validate() reports what is wrong).
  if (f.kind != FormatKind::I2S || !i2s_valid(canonical))
    validate(canonical);

  UpconvertWeights U = shape_upconvert(f, canonical.M, canonical.K);
  U.w_scale = canonical.tensor_scale;
  const int b = U.bits;
  const int64_t vectors = U.Kp * b / 32; // vectors per tile

  const Encoding encoding = f.encoding();
  if (encoding == Encoding::GgmlBlock || f.kind == FormatKind::Q4_0) {
    pack_block_rows(U, canonical.codes.data(), 0, U.M);
    return U;
  }
  if (f.kind == FormatKind::I2S) {
    pack_i2s(canonical, U);
    return U;
  }
  std::vector<int8_t> q(size_t(U.K));
  std::vector<uint8_t> codes(size_t(U.Kp), 0); // zero past K
  for (int64_t m = 0; m < U.M; ++m) {
    unpack_row(canonical, m, q.data());
    const int64_t t = m / kUpconvertTileRows, i = m % kUpconvertTileRows;
    for (int64_t k = 0; k < U.K; ++k)
      codes[size_t(k)] = kernel_code(encoding, q[size_t(k)]);
    put_row(U.codes.data() + t * vectors * 64, b, i, codes.data(), U.Kp);
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
  if (U.scales.size() != count) // not shaped by shape_upconvert
    U.scales = AlignedArray<uint16_t>(count);
  if (has_zeros(f) && U.zeros.size() != count)
    U.zeros = AlignedArray<uint16_t>(count);
  for (int64_t m = 0; m < U.M; ++m) {
    const int64_t t = m / kUpconvertTileRows, i = m % kUpconvertTileRows;
    for (int64_t g = 0; g < groups; ++g) {
      const size_t at = size_t((t * groups + g) * kUpconvertTileRows + i);
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
