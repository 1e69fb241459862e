//===- reencode.cpp - ggml's block bytes back from the upconvert layout ---===//
//
// One mechanism for every block format: a block type is a description, the
// list of bit runs that place the fields of its values (codes, and the
// K-quants' sub-scales and sub-minimums) in the block, written from the
// block structs of llama.cpp's ggml (ggml/src/ggml-common.h) and their
// dequantize_row_* (ggml/src/ggml-quants.c), as runtime/src/ggml_blocks.cpp
// documents them per type. The re-encoder reads the fields from the packed
// form (kernel_abi.h: UPCONVERT LAYOUT, the fp16 scales, K-QUANT SCALES)
// and lays each run out; the fp16 d (and m / dmin) are copied.
//
//===----------------------------------------------------------------------===//
#include "lowbit/reencode.h"
#include "lowbit/error.h"

#include "byte_order.h"
#include "ggml_blocks.h"
#include "upconvert_rows.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace lowbit {

using namespace detail;

namespace {

/// Which values a run places: the block's codes (stored, 0..2^bits - 1;
/// q8_0 its int8 as a byte), or the K-quants' sub-scales or sub-minimums as
/// the block stores them.
enum class Items : uint8_t { Codes, Scales, Mins };

/// Bits [lo, lo + width) of values [first, first + count) of `items`, value
/// first + n at bit `bit + n * step` of the block (bit 8 a + s is bit s of
/// byte a). A field never straddles more than two bytes.
struct Run {
  Items items;
  int first, count;
  int lo, width;
  int bit, step;
};

/// A block type as runs, and the offset of its stored sub-scales: stored =
/// sc_j + sub_offset (q3_k keeps its 6-bit scales biased by 32).
struct Description {
  std::vector<Run> runs;
  int sub_offset = 0;
};

// Codes of `width` bits split in runs of 32 consecutive values, run r at
// byte `at(r)` bit `shift(r)`, one value per byte (step 8).
template <typename At, typename Shift>
void byte_runs(std::vector<Run> &runs, int values, int lo, int width, At at,
               Shift shift) {
  for (int r = 0; r < values / 32; ++r)
    runs.push_back({Items::Codes, 32 * r, 32, lo, width, 8 * at(r) + shift(r),
                    8});
}

// q4_0, q4_1, iq4_nl (and the low nibbles of q5_0, q5_1): code j < 16 the low
// nibble of qs[j], j + 16 its high nibble.
void nibbles32(std::vector<Run> &runs, int qs) {
  runs.push_back({Items::Codes, 0, 16, 0, 4, 8 * qs, 8});
  runs.push_back({Items::Codes, 16, 16, 0, 4, 8 * qs + 4, 8});
}

// q2_k, q3_k (and ggml's tq2_0): value 128 h + 32 i + l has its 2 bits at
// bits 2i of qs[32 h + l].
void two_bit_runs(std::vector<Run> &runs, int qs, int lo) {
  byte_runs(runs, 256, lo, 2, [&](int r) { return qs + 32 * (r / 4); },
            [](int r) { return 2 * (r % 4); });
}

// One bit of each of 256 values at bit v / 32 of byte v % 32 (q3_k's hmask,
// q5_k's qh).
void high_bit_runs(std::vector<Run> &runs, int at, int lo) {
  byte_runs(runs, 256, lo, 1, [&](int) { return at; },
            [](int r) { return r; });
}

// q4_k and q5_k's 12 bytes of 6-bit sc_j and m_j at `at` (ggml's
// get_scale_min_k4): j < 4 in bytes j and j + 4; j >= 4 the low 4 bits in
// byte j + 4 (sc low nibble, m high), the high 2 bits in bits 6..7 of
// bytes j - 4 (sc) and j (m).
void k4_scale_runs(std::vector<Run> &runs, int at) {
  const int b = 8 * at;
  runs.push_back({Items::Scales, 0, 4, 0, 6, b, 8});
  runs.push_back({Items::Mins, 0, 4, 0, 6, b + 32, 8});
  runs.push_back({Items::Scales, 4, 4, 0, 4, b + 64, 8});
  runs.push_back({Items::Mins, 4, 4, 0, 4, b + 64 + 4, 8});
  runs.push_back({Items::Scales, 4, 4, 4, 2, b + 6, 8});
  runs.push_back({Items::Mins, 4, 4, 4, 2, b + 32 + 6, 8});
}

Description describe(FormatKind kind) {
  Description d;
  std::vector<Run> &runs = d.runs;
  switch (kind) {
  case FormatKind::Q4_0:
  case FormatKind::IQ4_NL: // d, qs[16]
    nibbles32(runs, 2);
    break;
  case FormatKind::Q4_1: // d, m, qs[16]
    nibbles32(runs, 4);
    break;
  case FormatKind::Q5_0: // d, qh[4], qs[16]: bit j of qh is code j's bit 4
    nibbles32(runs, 6);
    runs.push_back({Items::Codes, 0, 32, 4, 1, 16, 1});
    break;
  case FormatKind::Q5_1: // d, m, qh[4], qs[16]
    nibbles32(runs, 8);
    runs.push_back({Items::Codes, 0, 32, 4, 1, 32, 1});
    break;
  case FormatKind::Q8_0: // d, qs[32]
    runs.push_back({Items::Codes, 0, 32, 0, 8, 16, 8});
    break;
  case FormatKind::Q2_K: // scales[16] (sc low nibble, m high), qs[64], d, dmin
    runs.push_back({Items::Scales, 0, 16, 0, 4, 0, 8});
    runs.push_back({Items::Mins, 0, 16, 0, 4, 4, 8});
    two_bit_runs(runs, 16, 0);
    break;
  case FormatKind::Q3_K: // hmask[32], qs[64], scales[12], d
    high_bit_runs(runs, 0, 2);
    two_bit_runs(runs, 32, 0);
    // 6-bit sc_j + 32: low 4 bits in scales[j % 8] at 4 (j / 8), high 2 bits
    // at bits 2 (j / 4) of scales[8 + j % 4].
    runs.push_back({Items::Scales, 0, 8, 0, 4, 8 * 96, 8});
    runs.push_back({Items::Scales, 8, 8, 0, 4, 8 * 96 + 4, 8});
    for (int q = 0; q < 4; ++q)
      runs.push_back({Items::Scales, 4 * q, 4, 4, 2, 8 * 104 + 2 * q, 8});
    d.sub_offset = 32;
    break;
  case FormatKind::Q4_K: // d, dmin, scales[12], qs[128]
    k4_scale_runs(runs, 4);
    // Value 64 i + l (l < 32) the low nibble of qs[32 i + l], 64 i + 32 + l
    // its high nibble.
    byte_runs(runs, 256, 0, 4, [](int r) { return 16 + 32 * (r / 2); },
              [](int r) { return 4 * (r % 2); });
    break;
  case FormatKind::Q5_K: // d, dmin, scales[12], qh[32], qs[128]
    k4_scale_runs(runs, 4);
    high_bit_runs(runs, 16, 4);
    byte_runs(runs, 256, 0, 4, [](int r) { return 48 + 32 * (r / 2); },
              [](int r) { return 4 * (r % 2); });
    break;
  case FormatKind::Q6_K: // ql[128], qh[64], scales[16] int8, d
    // Value 128 h + 32 i + l: its low nibble in ql[64 h + 32 (i & 1) + l]
    // at 4 (i / 2), its bits 4..5 at bits 2i of qh[32 h + l].
    byte_runs(runs, 256, 0, 4,
              [](int r) { return 64 * (r / 4) + 32 * (r % 2); },
              [](int r) { return 4 * ((r % 4) / 2); });
    byte_runs(runs, 256, 4, 2, [](int r) { return 128 + 32 * (r / 4); },
              [](int r) { return 2 * (r % 4); });
    runs.push_back({Items::Scales, 0, 16, 0, 8, 8 * 192, 8});
    break;
  default:
    throw Error("internal: no block description for format kind " +
                std::to_string(int(kind)));
  }
  return d;
}

const Description &description(FormatKind kind) {
  static const std::vector<std::pair<FormatKind, Description>> all = [] {
    std::vector<std::pair<FormatKind, Description>> out;
    int count = 0;
    const GgmlBlockType *types = ggml_block_types(&count);
    for (int i = 0; i < count; ++i)
      out.emplace_back(types[i].kind, describe(types[i].kind));
    return out;
  }();
  for (const auto &[k, d] : all)
    if (k == kind)
      return d;
  throw Error("internal: no block description for format kind " +
              std::to_string(int(kind)));
}

/// Plane of `Width` bits starting at vector `first` of every 32-k block of
/// row i of `tile` (UPCONVERT LAYOUT), OR'd into the row's codes c[0, 32 *
/// blocks) shifted left by `shift`: the inverse of upconvert.cpp's put_plane,
/// 4 codes (bytes r = 0..3 of a row's word) at a time.
template <int Width>
void get_plane(const uint8_t *tile, int b, int first, int64_t i, uint8_t *c,
               int64_t blocks, int shift) {
  constexpr int per = 8 / Width;
  constexpr uint32_t mask = 0x01010101u * ((1u << Width) - 1);
  for (int64_t block = 0; block < blocks; ++block, c += 32) {
    const uint8_t *in = tile + (block * b + first) * 64 + i * 4;
    for (int v = 0; v < Width; ++v) {
      const uint32_t word = load_le<uint32_t>(in + 64 * v);
      for (int j = 0; j < per; ++j) {
        uint8_t *out = c + 4 * (per * v + j);
        store_le(out, load_le<uint32_t>(out) |
                          ((word >> (Width * j)) & mask) << shift);
      }
    }
  }
}

/// The kernel codes of row m of U, one per byte (c[0, Kp)).
void get_row(const UpconvertWeights &U, int64_t m, uint8_t *c) {
  const int b = U.bits;
  const int64_t vectors = U.Kp * b / 32, blocks = U.Kp / 32;
  const uint8_t *tile =
      U.codes.data() + m / kUpconvertTileRows * vectors * 64;
  const int64_t i = m % kUpconvertTileRows;
  std::memset(c, 0, size_t(U.Kp));
  detail::for_each_code_plane(b, [&](auto width, int first, int shift) {
    get_plane<decltype(width)::value>(tile, b, first, i, c, blocks, shift);
  });
}

/// Lays out the runs of one block whose values are codes[0, block),
/// scales[...] and mins[...] (stored forms) into `out` (zeroed). A run of
/// whole bytes goes 8 values at a time (one 64-bit word: the fields of 8
/// bytes never cross a byte).
void put_runs(const std::vector<Run> &runs, const uint8_t *codes,
              const uint8_t *scales, const uint8_t *mins, uint8_t *out) {
  for (const Run &r : runs) {
    const uint8_t *v = (r.items == Items::Codes    ? codes
                        : r.items == Items::Scales ? scales
                                                   : mins) +
                       r.first;
    const unsigned mask = (1u << r.width) - 1;
    const int shift = r.bit % 8;
    if (r.step == 8 && shift + r.width <= 8 && r.count % 8 == 0) {
      uint8_t *o = out + r.bit / 8;
      const uint64_t lanes = 0x0101010101010101ull * mask;
      for (int n = 0; n < r.count; n += 8) {
        uint64_t in, at;
        std::memcpy(&in, v + n, 8);
        std::memcpy(&at, o + n, 8);
        at |= ((in >> r.lo) & lanes) << shift;
        std::memcpy(o + n, &at, 8);
      }
      continue;
    }
    for (int n = 0; n < r.count; ++n) {
      const int bit = r.bit + n * r.step;
      const unsigned field = ((v[n] >> r.lo) & mask) << (bit % 8);
      out[bit / 8] = uint8_t(out[bit / 8] | field);
      if (field >> 8)
        out[bit / 8 + 1] = uint8_t(out[bit / 8 + 1] | field >> 8);
    }
  }
}

} // namespace

bool reencodes_blocks(const Format &format) {
  return ggml_block_type(format.kind) != nullptr;
}

void encode_block_rows(const UpconvertWeights &U, int64_t m0, int64_t m1,
                       uint8_t *out) {
  const GgmlBlockType *type = ggml_block_type(U.format.kind);
  if (!type)
    throw Error("encode_block_rows: " + U.format.name() +
                " is not a ggml block format");
  if (m0 < 0 || m1 > U.M || m0 > m1)
    throw Error("encode_block_rows: rows [" + std::to_string(m0) + ", " +
                std::to_string(m1) + ") are out of range for " +
                std::to_string(U.M) + " rows");
  const Description &desc = description(type->kind);
  // The kernel code is the stored one plus `shift` (mod 256): 2^(b-1) less
  // the type's code_offset, 0 for the types with a minimum or a codebook
  // (upconvert.cpp's BlockRowCodes).
  const uint8_t shift =
      uint8_t(detail::kernel_code_offset(*type) - type->code_offset);
  const int64_t blocks = U.K / type->block;
  const int64_t tiles32 = U.Kp / 32; // fp16 scales per tile row
  // K-QUANT SCALES: per tile and super-block, the sub-scale strings (and the
  // sub-minimums'), then 16 fp16 d (and 16 fp16 -dmin).
  const int bits = type->sub_scale_bits;
  const int per_super = type->block / type->scale_block;
  const int64_t sub_bytes = kUpconvertTileRows * bits / 8;
  const int parts = type->has_min ? 2 : 1;
  const int64_t head = parts * per_super * sub_bytes;
  const int64_t super_bytes =
      bits ? lowbit_k_quant_super_bytes(per_super, bits, type->has_min) : 0;
  const unsigned sub_mask = (1u << bits) - 1;
  const uint8_t *kq = reinterpret_cast<const uint8_t *>(U.scales.data());

  thread_local std::vector<uint8_t> row;
  row.resize(size_t(U.Kp));
  uint8_t *const codes = row.data();
  uint8_t sc[16], mn[16];
  for (int64_t m = m0; m < m1; ++m) {
    get_row(U, m, codes);
    if (shift != 0) // q8_0: its int8 is the kernel code less 128
      for (int64_t k = 0; k < U.K; ++k)
        codes[k] = uint8_t(codes[k] - shift);
    const int64_t t = m / kUpconvertTileRows, i = m % kUpconvertTileRows;
    for (int64_t bl = 0; bl < blocks; ++bl, out += type->block_bytes) {
      std::memset(out, 0, size_t(type->block_bytes));
      uint16_t d, dmin = 0;
      if (bits) {
        const uint8_t *super = kq + (t * blocks + bl) * super_bytes;
        // Row i's b bits of sub-block j's string at `at` (at most 2 bytes).
        auto sub = [&](const uint8_t *at) {
          const int64_t bit = i * bits;
          unsigned v = at[bit / 8];
          if (bit % 8 + bits > 8)
            v |= unsigned(at[bit / 8 + 1]) << 8;
          return uint8_t(((v >> (bit % 8)) + unsigned(desc.sub_offset)) &
                         sub_mask);
        };
        for (int j = 0; j < per_super; ++j) {
          sc[j] = sub(super + j * sub_bytes);
          if (type->has_min)
            mn[j] = sub(super + (per_super + j) * sub_bytes);
        }
        d = load_le<uint16_t>(super + head + 2 * i);
        if (type->has_min) // the packed form holds -dmin
          dmin = uint16_t(load_le<uint16_t>(super + head + 32 + 2 * i) ^
                          0x8000);
      } else {
        const size_t at = size_t((t * tiles32 + bl) * kUpconvertTileRows + i);
        d = U.scales[at];
        if (type->has_min)
          dmin = U.zeros[at];
      }
      put_runs(desc.runs, codes + bl * type->block, sc, mn, out);
      store_le(out + type->d_offset, d);
      if (type->min_offset >= 0)
        store_le(out + type->min_offset, dmin);
    }
  }
}

} // namespace lowbit
