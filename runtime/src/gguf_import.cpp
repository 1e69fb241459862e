//===- gguf_import.cpp - ggml tensor types and their import -----------------===//
//
// Block layouts, written from the definitions of llama.cpp's ggml
// (ggml/src/ggml-common.h, ggml/src/ggml-quants.c) and of bitnet.cpp
// (microsoft/BitNet: src/ggml-bitnet-mad.cpp and its ggml fork); this is an
// independent implementation, not their code:
//
//   q4_0 ... iq4_nl  ggml's block types: format.h's GgmlBlockType table and
//          ggml_blocks.cpp (the bytes are lowbit's codes as they are).
//   tq1_0  256 values, 54 bytes: qs[48], qh[4], fp16 d. Each byte holds base-3
//          digits (trits t in 0..2, x = d * (t - 1)) as the fixed-point
//          fraction ceil(n * 256 / 243) of the 5-trit number n (first trit
//          most significant); trit i of byte b is ((uint8)(b * 3^i) * 3) >> 8.
//          qs[0..32) hold values m + 32 i (m < 32, i < 5), qs[32..48) values
//          160 + m + 16 i (m < 16), qh[0..4) values 240 + j + 4 i (i < 4; the
//          fifth trit is 0).
//   tq2_0  256 values, 66 bytes: qs[64], fp16 d. Value 128 h + 32 i + m (h < 2,
//          i < 4, m < 32) is bits 2i..2i+1 of qs[32 h + m]; x = d * (c - 1),
//          and code 3 (x = 2d) is never written by ggml.
//   i2_s   bitnet.cpp's I2_S (ggml type 36 of its fork): the whole tensor's
//          values in blocks of 128 flat elements, 32 bytes each: element j of
//          a block is bits 6 - 2 (j / 32) of byte j % 32 (the x86 layout,
//          QK_I2_S = 128), code 0, 1, 2 = -1, 0, +1 (3 reads as 0); after the
//          n / 4 code bytes one little-endian f32 scale, then 28 zero bytes
//          (the fork's ggml_nbytes is n / 4 + 32). x = scale * value.
//
//===----------------------------------------------------------------------===//

#include "lowbit/gguf.h"
#include "lowbit/error.h"
#include "lowbit/lut.h"

#include "byte_order.h"
#include "ggml_blocks.h"
#include "layout.h"
#include "ternary.h"
#include "upconvert_rows.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <limits>
#include <set>
#include <string>
#include <vector>

namespace lowbit {

using namespace detail;

namespace {

struct TypeInfo {
  GgufType type;
  const char *name;
  int64_t block;       // values per block along a row
  uint64_t block_size; // bytes per block
};

// The types outside format.h's block table (floats and ternary blocks).
constexpr TypeInfo kOtherTypes[] = {
    {GgufType::F32, "f32", 1, 4},        {GgufType::F16, "f16", 1, 2},
    {GgufType::BF16, "bf16", 1, 2},      {GgufType::TQ1_0, "tq1_0", 256, 54},
    {GgufType::TQ2_0, "tq2_0", 256, 66}, {GgufType::I2_S, "i2_s", 128, 32},
};

bool find_info(uint32_t id, TypeInfo &out) {
  for (const TypeInfo &t : kOtherTypes)
    if (uint32_t(t.type) == id) {
      out = t;
      return true;
    }
  if (const GgmlBlockType *b = ggml_block_type_by_id(id)) {
    out = {GgufType(id), b->name, b->block, uint64_t(b->block_bytes)};
    return true;
  }
  return false;
}

// Every type lowbit reads: the other types, then the block table.
std::vector<TypeInfo> all_types() {
  std::vector<TypeInfo> all(std::begin(kOtherTypes), std::end(kOtherTypes));
  int count = 0;
  const GgmlBlockType *blocks = ggml_block_types(&count);
  for (int i = 0; i < count; ++i)
    all.push_back({GgufType(blocks[i].ggml_type), blocks[i].name,
                   blocks[i].block, uint64_t(blocks[i].block_bytes)});
  return all;
}

constexpr int64_t kTqBlock = 256;
constexpr int64_t kI2sBlock = 128;
constexpr uint64_t kI2sTrailer = 32; // f32 scale + 28 zero bytes

TypeInfo info(GgufType type) {
  TypeInfo t;
  if (!find_info(uint32_t(type), t))
    throw Error("unknown GGUF tensor type " + std::to_string(uint32_t(type)));
  return t;
}

std::string format_float(double x) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", x);
  return text;
}

uint16_t fp16_of(float d, const char *type, int64_t row, int64_t block) {
  const uint16_t h = float_to_half(d);
  if ((h & 0x7C00) == 0x7C00)
    throw Error(std::string(type) + " row " + std::to_string(row) + " block " +
                std::to_string(block) + ": scale d = " + format_float(d) +
                " overflows fp16 (weights too large for " + type + ")");
  return h;
}

// --- tq1_0 ---------------------------------------------------------------

// The byte holding the base-3 number of the `n` trits t[0], t[stride], ...
// (first most significant), shifted to 5 trits, as the fixed-point fraction
// ceil(x * 256 / 243).
uint8_t tq1_pack(const uint8_t *t, int stride, int n) {
  unsigned x = 0;
  for (int i = 0; i < 5; ++i)
    x = x * 3 + (i < n ? unsigned(t[i * stride]) : 0u);
  return uint8_t((x * 256 + 242) / 243);
}

int tq1_trit(uint8_t byte, int i) {
  static const uint8_t pow3[5] = {1, 3, 9, 27, 81};
  const uint8_t shifted = uint8_t(byte * pow3[i]);
  return (unsigned(shifted) * 3) >> 8;
}

// Trits (0..2) of one block, in value order.
void tq1_decode(const uint8_t *b, uint8_t *t) {
  for (int i = 0; i < 5; ++i)
    for (int m = 0; m < 32; ++m)
      t[32 * i + m] = uint8_t(tq1_trit(b[m], i));
  for (int i = 0; i < 5; ++i)
    for (int m = 0; m < 16; ++m)
      t[160 + 16 * i + m] = uint8_t(tq1_trit(b[32 + m], i));
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      t[240 + 4 * i + j] = uint8_t(tq1_trit(b[48 + j], i));
}

// The trits of a tq1_0 byte b spread one per byte: trit i in byte i (5
// bytes), for tq1_to_i2s.
const uint64_t *tq1_spread() {
  static const auto table = [] {
    std::array<uint64_t, 256> t{};
    for (int b = 0; b < 256; ++b)
      for (int i = 0; i < 5; ++i)
        t[size_t(b)] |= uint64_t(tq1_trit(uint8_t(b), i)) << (8 * i);
    return t;
  }();
  return table.data();
}

// A tq1_0 block's 256 values as i2s codes out[0, 64) (value v in bits
// 2 (v % 4) of out[v / 4]; the trit is the code). Four bytes of qs that
// hold values x + f (f < 4) per trit i give, with their spread trits
// shifted into field f and ORed, the i2s bytes of those values for every i
// at once: one table load per byte, no trit decoded on its own. Returns
// whether a code is not 1 (the block is not all zeros); a trit is never 3.
bool tq1_to_i2s(const uint8_t *b, uint8_t *out) {
  const uint64_t *spread = tq1_spread();
  auto quad = [&](const uint8_t *q) {
    return spread[q[0]] | spread[q[1]] << 2 | spread[q[2]] << 4 |
           spread[q[3]] << 6;
  };
  constexpr uint64_t kZeros = 0x5555555555ull; // five bytes of code 1
  uint64_t other = 0;
  for (int g = 0; g < 8; ++g) { // qs[4g + f]: values 32 i + 4g + f
    const uint64_t u = quad(b + 4 * g);
    other |= u ^ kZeros;
    for (int i = 0; i < 5; ++i)
      out[8 * i + g] = uint8_t(u >> (8 * i));
  }
  for (int g = 0; g < 4; ++g) { // qs[32 + 4g + f]: 160 + 16 i + 4g + f
    const uint64_t u = quad(b + 32 + 4 * g);
    other |= u ^ kZeros;
    for (int i = 0; i < 5; ++i)
      out[40 + 4 * i + g] = uint8_t(u >> (8 * i));
  }
  const uint64_t u = quad(b + 48); // qh[f]: 240 + 4 i + f, four trits
  other |= (u ^ kZeros) & 0xFFFFFFFFull;
  for (int i = 0; i < 4; ++i)
    out[60 + i] = uint8_t(u >> (8 * i));
  return other != 0;
}

// --- tq2_0 ---------------------------------------------------------------

void tq2_decode(const uint8_t *b, uint8_t *c) {
  for (int h = 0; h < 2; ++h)
    for (int i = 0; i < 4; ++i)
      for (int m = 0; m < 32; ++m)
        c[128 * h + 32 * i + m] = uint8_t((b[32 * h + m] >> (2 * i)) & 3);
}

// The 128 values of a 32-byte group of 2-bit fields, value 32 i + m (i < 4,
// m < 32) in bits shift(i) of byte m (tq2_0: 2i; i2_s: 6 - 2i), as i2s
// codes: value v in bits 2 (v % 4) of out[v / 4], out[0, 32). The codes are
// the same (0, 1, 2 = -1, 0, +1), only their places move: per 8-byte word
// and i, each byte's field is masked down, then two SWAR merges (byte pairs
// into 4 bits, those pairs into a byte) put 4 values in one byte; no value
// is decoded on its own. Returns the OR of the words' code-3 bits (both
// bits of a field set) and sets `nonzero` when a code is not 1.
uint64_t group_to_i2s(const uint8_t *in, bool descending, uint8_t *out,
                      bool &nonzero) {
  constexpr uint64_t kLow = 0x5555555555555555ull;
  uint64_t w[4], threes = 0, other = 0;
  for (int k = 0; k < 4; ++k) {
    w[k] = load_le<uint64_t>(in + 8 * k);
    threes |= w[k] & (w[k] >> 1) & kLow;
    other |= w[k] ^ kLow;
  }
  nonzero |= other != 0;
  for (int i = 0; i < 4; ++i) {
    const int shift = descending ? 6 - 2 * i : 2 * i;
    for (int k = 0; k < 4; ++k) {
      uint64_t y = (w[k] >> shift) & 0x0303030303030303ull;
      y = (y | y >> 6) & 0x000F000F000F000Full;
      y = (y | y >> 12) & 0x000000FF000000FFull;
      store_le(out + 8 * i + 2 * k, uint16_t(y | y >> 24));
    }
  }
  return threes;
}

// --- i2_s ----------------------------------------------------------------

// Byte and shift of flat element e of an i2_s tensor.
inline uint64_t i2s_byte(uint64_t e) { return e / kI2sBlock * 32 + e % 32; }
inline int i2s_shift(uint64_t e) { return 6 - 2 * int(e % kI2sBlock / 32); }

// ggml's ternary-block encoders: d = max |x| of the block, trit = lroundf(x
// / d) + 1 (rounding half away from zero, as lroundf does).
void quantize_tq_block(GgufType type, const float *x, int64_t row,
                       int64_t blk, uint8_t *out) {
  float amax = 0.0f;
  for (int j = 0; j < kTqBlock; ++j)
    amax = std::max(amax, std::fabs(x[j]));
  const float d = amax;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  uint8_t t[kTqBlock];
  for (int j = 0; j < kTqBlock; ++j)
    t[j] = uint8_t(std::lround(x[j] * id) + 1);
  encode_tq_block(type, t, fp16_of(d, gguf_type_name(type), row, blk), out);
}

void check_finite(const float *x, int64_t count, int64_t K) {
  for (int64_t i = 0; i < count; ++i)
    if (!std::isfinite(x[i]))
      throw Error("value [" + std::to_string(i / K) + ", " +
                  std::to_string(i % K) + "] is not finite");
}

void check_row(const GgufTensor &t, int64_t row) {
  if (row < 0 || row >= t.rows())
    throw Error(t.name + ": row " + std::to_string(row) +
                " is out of range for " + std::to_string(t.rows()) + " rows");
  uint64_t expected = 0;
  try {
    expected = gguf_tensor_bytes(t.type, t.rows(), t.K());
  } catch (const Error &e) {
    throw Error(t.name + ": " + e.what());
  }
  if (!t.data || t.bytes != expected)
    throw Error(t.name + ": the tensor's data does not match its type and "
                         "shape");
}

[[noreturn]] void fail(const GgufTensor &t, const std::string &problem) {
  throw Error(t.name + ": " + problem);
}

// Reads the ternary codes c = q + 1 (0, 1, 2) of a tq1_0 / tq2_0 / i2_s
// tensor row by row, each value decoded once, and finds its one scale
// (runtime/README.md, "GGUF import"): a row at a time, so that importing a
// large tensor needs no copy of all its values.
class TernaryReader {
public:
  explicit TernaryReader(const GgufTensor &t)
      : t_(t), K_(t.K()), type_(gguf_type_name(t.type)) {}

  // Row m as i2s codes (code_row_bytes(i2s, K) = K / 4 bytes) straight
  // from the row's bytes: tq2_0 and i2_s hold i2s's codes in other places
  // (group_to_i2s), tq1_0 its trits five to a byte (tq1_to_i2s); a code 3
  // is row()'s Error.
  void i2s_row(int64_t m, uint8_t *out) {
    uint64_t threes = 0;
    if (t_.type == GgufType::TQ1_0) {
      const uint64_t block_bytes = info(t_.type).block_size;
      const int64_t blocks = K_ / kTqBlock;
      for (int64_t b = 0; b < blocks; ++b) {
        const uint8_t *blk = t_.data + uint64_t(m * blocks + b) * block_bytes;
        if (tq1_to_i2s(blk, out + 64 * b)) // a zero block carries no scale
          note_scale(load_le<uint16_t>(blk + 52));
      }
    } else if (t_.type == GgufType::I2_S) {
      const uint8_t *in = t_.data + uint64_t(m * K_) / 4;
      bool nonzero = false;
      for (int64_t g = 0; g < K_ / kI2sBlock; ++g)
        threes |= group_to_i2s(in + 32 * g, true, out + 32 * g, nonzero);
      any_ |= nonzero;
    } else {
      const uint64_t block_bytes = info(t_.type).block_size;
      const int64_t blocks = K_ / kTqBlock;
      for (int64_t b = 0; b < blocks; ++b) {
        const uint8_t *blk = t_.data + uint64_t(m * blocks + b) * block_bytes;
        bool nonzero = false;
        threes |= group_to_i2s(blk, false, out + 64 * b, nonzero);
        threes |= group_to_i2s(blk + 32, false, out + 64 * b + 32, nonzero);
        if (nonzero) // a block of zeros carries no scale
          note_scale(load_le<uint16_t>(blk + 64));
      }
    }
    if (threes) {
      std::vector<uint8_t> c(static_cast<size_t>(K_));
      row(m, c.data()); // throws, naming the first code 3
    }
  }

  // Row m of a tq2_0 tensor straight into the tiles of i2s weights U
  // (kernel_abi.h's UPCONVERT LAYOUT), checked as it moves; whether a code
  // is 3. Value 128 h + 32 i + m' of a block is bits 2i of qs[32 h + m'];
  // row m's 4 bytes of vector v hold values 16 v + 4 j + r in byte r, bits
  // 2 j. For v = 8 h + 2 i + s of a block (s < 2) that is field i of
  // qs[32 h + 16 s + 4 j + r]: the four 4-byte words W_j at qs + 32 h +
  // 16 s + 4 j, each masked to field i, shifted into field j and ORed (two
  // 8-byte loads, the words' halves merged), one 4-byte store per vector.
  // With U null, only the checks (weights that are a view of the rows:
  // kernel_abi.h's GGML ROWS LAYOUT).
  bool tq2_tiles(int64_t m, UpconvertWeights *U) {
    constexpr uint64_t kLow = 0x5555555555555555ull;
    constexpr uint64_t kField = 0x0303030303030303ull;
    const uint64_t block_bytes = info(t_.type).block_size;
    const int64_t blocks = K_ / kTqBlock, vectors = U ? U->Kp / 16 : 0;
    const int64_t t = m / kUpconvertTileRows, i = m % kUpconvertTileRows;
    uint8_t *out = U ? U->codes.data() + t * vectors * 64 + i * 4 : nullptr;
    const uint8_t *blk = t_.data + uint64_t(m * blocks) * block_bytes;
    uint64_t threes = 0;
    for (int64_t b = 0; b < blocks; ++b, blk += block_bytes,
                 out += U ? 16 * 64 : 0) {
      uint64_t other = 0;
      for (int q = 0; q < 4; ++q) { // the 32 bytes of half h = q / 2
        const uint64_t x = load_le<uint64_t>(blk + 16 * q);
        const uint64_t y = load_le<uint64_t>(blk + 16 * q + 8);
        threes |= (x & (x >> 1)) | (y & (y >> 1));
        other |= (x ^ kLow) | (y ^ kLow);
        if (!U)
          continue;
        uint8_t *vec = out + 64 * (8 * (q / 2) + q % 2);
        for (int f = 0; f < 4; ++f) { // field i = f: vector 8h + 2f + s
          const uint64_t w = ((x >> (2 * f)) & kField) |
                             ((y >> (2 * f)) & kField) << 4;
          store_le(vec + 128 * f, uint32_t(w) | uint32_t(w >> 32) << 2);
        }
      }
      if (other) // a block of zeros carries no scale
        note_scale(load_le<uint16_t>(blk + 64));
    }
    return (threes & kLow) != 0;
  }

  // Row m of a tq1_0 tensor that kernels read in place (kernel_abi.h's
  // GGML ROWS LAYOUT): only its blocks' scales, as row() finds them. A
  // block with the d seen already needs nothing more (a digit is never 3);
  // another d counts only for a block that is not all zeros (ggml writes
  // d = 0 there), which its digits then tell.
  void tq1_scales(int64_t m) {
    const uint64_t block_bytes = info(t_.type).block_size;
    const int64_t blocks = K_ / kTqBlock;
    const uint8_t *blk = t_.data + uint64_t(m * blocks) * block_bytes;
    uint8_t codes[kTqBlock / 4];
    for (int64_t b = 0; b < blocks; ++b, blk += block_bytes) {
      const uint16_t d = load_le<uint16_t>(blk + 52);
      if (!(any_ && d == first_) && tq1_to_i2s(blk, codes))
        note_scale(d);
    }
  }

  // What the rows read so far showed (gguf_pack_rows).
  GgufRowsCheck check() const {
    GgufRowsCheck c;
    c.any = any_;
    c.first = first_;
    c.mixed = !others_.empty();
    return c;
  }

  // c[0..K) of row m; remembers the scales of non-zero blocks.
  void row(int64_t m, uint8_t *c) {
    if (t_.type == GgufType::I2_S) {
      // A row starts at a block of 128 (K is a multiple of 128): element
      // 32 i + l of a block is bits 6 - 2 i of its byte l.
      const uint8_t *blk = t_.data + uint64_t(m * K_) / 4;
      for (int64_t b = 0; b < K_ / kI2sBlock; ++b, blk += 32)
        for (int i = 0; i < 4; ++i)
          for (int l = 0; l < 32; ++l)
            c[b * kI2sBlock + 32 * i + l] = uint8_t((blk[l] >> (6 - 2 * i)) & 3);
      any_ |= check_codes(m, c, K_);
      return;
    }
    const uint64_t block_bytes = info(t_.type).block_size;
    const int64_t blocks = K_ / kTqBlock;
    for (int64_t b = 0; b < blocks; ++b) {
      const uint8_t *blk = t_.data + uint64_t(m * blocks + b) * block_bytes;
      uint8_t *cb = c + b * kTqBlock;
      uint16_t d;
      if (t_.type == GgufType::TQ1_0) {
        tq1_decode(blk, cb);
        d = load_le<uint16_t>(blk + 52);
      } else {
        tq2_decode(blk, cb);
        d = load_le<uint16_t>(blk + 64);
      }
      // A block of zeros carries no scale (ggml writes d = 0 there).
      if (check_codes(m, cb, kTqBlock, b * kTqBlock))
        note_scale(d);
    }
  }

  // The tensor's one scale after every row was read; 0 when all values are
  // 0. Throws Error when the blocks disagree or the scale is not a finite
  // positive number.
  float scale() const {
    float s = 0.0f;
    if (t_.type == GgufType::I2_S) {
      if (!any_)
        return 0.0f;
      s = load_f32_le(t_.data + t_.rows() * K_ / 4);
    } else {
      if (!others_.empty())
        fail(t_, std::string(type_) + " blocks carry " +
                     std::to_string(1 + others_.size()) +
                     " different scales; lowbit's ternary formats have one "
                     "scale per tensor");
      if (!any_)
        return 0.0f;
      s = half_to_float(first_);
    }
    if (!std::isfinite(s) || !(s > 0.0f))
      fail(t_, std::string(type_) + " scale " + format_float(s) +
                   " is not a finite positive number");
    return s;
  }

private:
  // The first block scale seen, and the others that differ from it (a set
  // only when the blocks disagree, which is an error).
  void note_scale(uint16_t d) {
    if (!any_) {
      first_ = d;
      any_ = true;
    } else if (d != first_) {
      others_.insert(d);
    }
  }

  // Whether any of c[0, n) (read from row m from k0 on) is not the zero
  // code 1; an Error naming the first code 3. Loops without exits, which
  // the compiler vectorizes; the position is searched only on error.
  bool check_codes(int64_t m, const uint8_t *c, int64_t n, int64_t k0 = 0) {
    uint8_t largest = 0;
    bool nonzero = false;
    for (int64_t k = 0; k < n; ++k) {
      largest = std::max(largest, c[k]);
      nonzero |= c[k] != 1;
    }
    for (int64_t k = 0; largest > 2 && k < n; ++k)
      if (c[k] > 2)
        fail(t_, std::string(type_) + " code " + std::to_string(c[k]) +
                     " at row " + std::to_string(m) + ", k = " +
                     std::to_string(k0 + k) + " is outside the ternary range");
    return nonzero;
  }

  const GgufTensor &t_;
  const int64_t K_;
  const char *type_;
  bool any_ = false; // a non-zero value (i2_s) or block scale (tq*) seen
  uint16_t first_ = 0;
  std::set<uint16_t> others_;
};

bool is_float_type(GgufType type) {
  return type == GgufType::F32 || type == GgufType::F16 ||
         type == GgufType::BF16;
}

bool is_ternary_type(GgufType type) {
  return type == GgufType::TQ1_0 || type == GgufType::TQ2_0 ||
         type == GgufType::I2_S;
}

std::vector<float> decode_all(const GgufTensor &t) {
  const int64_t M = t.rows(), K = t.K();
  std::vector<float> W(size_t(M * K));
  for (int64_t m = 0; m < M; ++m)
    gguf_decode_row(t, m, W.data() + m * K);
  return W;
}

// Runs f, prefixing the message of an Error with the tensor's name.
template <typename F> auto named(const GgufTensor &t, F f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error &e) {
    throw Error(t.name + ": " + e.what());
  }
}

// import_tensor's checks of the tensor's byte count and shape.
void check_size_and_shape(const GgufTensor &t, const Format &format) {
  if (!t.data || t.ne.empty())
    fail(t, "the tensor has no data");
  const int64_t M = t.rows(), K = t.K();
  const uint64_t expected = named(t, [&] {
    return gguf_tensor_bytes(t.type, M, K);
  });
  if (t.bytes != expected)
    fail(t, std::string(gguf_type_name(t.type)) + " [" + std::to_string(M) +
                " x " + std::to_string(K) + "] needs " +
                std::to_string(expected) + " bytes, got " +
                std::to_string(t.bytes));
  named(t, [&] { format.check_shape(M, K); });
}

} // namespace

bool gguf_packs_directly(GgufType type, const Format &format) {
  if (is_ternary_type(type))
    return format.kind == FormatKind::I2S || has_lut_layout(format);
  const GgmlBlockType *block = ggml_block_type_by_id(uint32_t(type));
  return block && block->kind == format.kind && has_upconvert_layout(format);
}

GgufRowsCheck gguf_pack_rows(const GgufTensor &t, UpconvertWeights &U,
                             int64_t m_begin, int64_t m_end) {
  const Format &format = U.format;
  if (!gguf_packs_directly(t.type, format))
    fail(t, std::string(gguf_type_name(t.type)) + " does not pack into " +
                format.name() + " directly");
  check_size_and_shape(t, format);
  const int64_t M = t.rows(), K = t.K();
  // The ggml rows layout: U is the tensor's own rows (shape_ggml_rows over
  // t.data), checked in place.
  const bool rows = U.tile_rows == 1;
  if (rows && ((t.type != GgufType::TQ2_0 && t.type != GgufType::TQ1_0) ||
               U.codes.data() != t.data ||
               uint64_t(U.ggml_block_bytes) != info(t.type).block_size))
    fail(t, "gguf_pack_rows: weights in the ggml rows layout must be a view "
            "of this tq1_0 or tq2_0 tensor, in its blocks");
  if (U.M != M || U.K != K || m_begin < 0 || m_begin > m_end || m_end > M ||
      (!rows && m_begin % kUpconvertTileRows != 0))
    fail(t, "gguf_pack_rows: rows [" + std::to_string(m_begin) + ", " +
                std::to_string(m_end) + ") of weights of " +
                std::to_string(U.M) + " x " + std::to_string(U.K));
  GgufRowsCheck check;
  if (!is_ternary_type(t.type)) {
    const GgmlBlockType &type = *ggml_block_type_by_id(uint32_t(t.type));
    const int64_t row_bytes = code_row_bytes(format, K);
    const uint8_t *rows = t.data + m_begin * row_bytes;
    try {
      for (int64_t m = m_begin; m < m_end; ++m) // validate()'s checks
        check_block_row(type, rows + (m - m_begin) * row_bytes, K, m);
    } catch (const Error &) {
      check.bad = true; // gguf_finish_rows names the problem
      return check;
    }
    pack_block_rows(U, rows, m_begin, m_end);
    return check;
  }
  TernaryReader reader(t);
  if (rows && t.type == GgufType::TQ1_0) {
    for (int64_t m = m_begin; m < m_end; ++m)
      reader.tq1_scales(m);
    return reader.check();
  }
  if (has_lut_layout(format)) {
    // Each row's codes moved into an i2s row as for i2s (checked as they
    // move), then into the tiles a table load per triple, a few word
    // operations per 8 pairs.
    LutRowPacker packer(U);
    std::vector<uint8_t> row(size_t(K / 4 + 8), 0);
    try {
      for (int64_t m = m_begin; m < m_end; ++m) {
        reader.i2s_row(m, row.data()); // throws on a code 3
        packer.put_row(m, row.data());
      }
    } catch (const Error &) {
      check.bad = true;
    }
    if (m_end == M)
      packer.put_padding_rows();
  } else if (t.type == GgufType::TQ2_0) {
    for (int64_t m = m_begin; m < m_end; ++m)
      check.bad |= reader.tq2_tiles(m, rows ? nullptr : &U);
  } else {
    std::vector<uint8_t> row(size_t(U.Kp / 4), 0); // zero past K
    try {
      for (int64_t m = m_begin; m < m_end; ++m) {
        reader.i2s_row(m, row.data()); // throws on a code 3
        put_i2s_row(U, m, row.data());
      }
    } catch (const Error &) {
      check.bad = true;
    }
  }
  const bool bad = check.bad;
  check = reader.check();
  check.bad = bad;
  return check;
}

void gguf_finish_rows(const GgufTensor &t, UpconvertWeights &U,
                      const std::vector<GgufRowsCheck> &checks) {
  GgufRowsCheck all;
  for (const GgufRowsCheck &c : checks) {
    all.bad |= c.bad;
    all.mixed |= c.mixed || (all.any && c.any && c.first != all.first);
    if (!all.any && c.any)
      all.first = c.first;
    all.any |= c.any;
  }
  float scale = 0.0f;
  if (!all.bad && !all.mixed && all.any && is_ternary_type(t.type))
    scale = t.type == GgufType::I2_S
                ? load_f32_le(t.data + t.rows() * t.K() / 4)
                : half_to_float(all.first);
  const bool scale_ok =
      !all.any || !is_ternary_type(t.type) ||
      (std::isfinite(scale) && scale > 0.0f);
  if (all.bad || all.mixed || !scale_ok) {
    // import_tensor's Error, which names the first problem as it does.
    import_tensor(t, U.format);
    fail(t, "the direct import found a problem that import_tensor did not");
  }
  if (is_ternary_type(t.type))
    // An all-zero tensor carries no scale: it gets quantize()'s floor.
    U.w_scale = scale > 0.0f ? scale : 1e-5f;
}

const char *gguf_type_name(GgufType type) { return info(type).name; }

const char *ggml_type_name_of(uint32_t id) {
  // ggml.h's enum ggml_type (ids 4, 5 and 31..33, 36..38 were removed from
  // ggml; 36 is bitnet.cpp's i2_s, which lowbit reads).
  static const char *const kNames[] = {
      "f32",     "f16",    "q4_0",    "q4_1",   "",       "",
      "q5_0",    "q5_1",   "q8_0",    "q8_1",   "q2_k",   "q3_k",
      "q4_k",    "q5_k",   "q6_k",    "q8_k",   "iq2_xxs", "iq2_xs",
      "iq3_xxs", "iq1_s",  "iq4_nl",  "iq3_s",  "iq2_s",  "iq4_xs",
      "i8",      "i16",    "i32",     "i64",    "f64",    "iq1_m",
      "bf16",    "",       "",        "",       "tq1_0",  "tq2_0",
      "i2_s",    "",       "",        "mxfp4",  "nvfp4",  "q1_0",
      "q2_0"};
  return id < std::size(kNames) ? kNames[id] : "";
}

GgufType parse_gguf_type(std::string_view name) {
  std::string lower(name);
  for (char &c : lower)
    c = char(std::tolower(static_cast<unsigned char>(c)));
  const std::vector<TypeInfo> all = all_types();
  std::string names;
  for (const TypeInfo &t : all) {
    if (lower == t.name)
      return t.type;
    names += std::string(names.empty() ? "" : ", ") + t.name;
  }
  throw Error("unknown GGUF tensor type '" + std::string(name) +
              "' (expected " + names + ")");
}

bool is_known_gguf_type(uint32_t id) {
  TypeInfo unused;
  return find_info(id, unused);
}

std::string gguf_known_types() {
  std::string list;
  for (const TypeInfo &t : all_types())
    list += std::string(list.empty() ? "" : ", ") + t.name + " " +
            std::to_string(uint32_t(t.type));
  return list;
}

int64_t gguf_block_size(GgufType type) { return info(type).block; }

void encode_tq_block(GgufType type, const uint8_t *t, uint16_t d,
                     uint8_t *out) {
  if (type == GgufType::TQ1_0) {
    // qs[m]: the trits m + 32 i; qs[32 + m]: 160 + m + 16 i; qh[j]: 240 + j
    // + 4 i (four of them).
    for (int m = 0; m < 32; ++m)
      out[m] = tq1_pack(t + m, 32, 5);
    for (int m = 0; m < 16; ++m)
      out[32 + m] = tq1_pack(t + 160 + m, 16, 5);
    for (int j = 0; j < 4; ++j)
      out[48 + j] = tq1_pack(t + 240 + j, 4, 4);
    store_le(out + 52, d);
    return;
  }
  if (type != GgufType::TQ2_0)
    throw Error(std::string("encode_tq_block: ") + gguf_type_name(type) +
                " is not a ternary block type");
  // Value 128 h + 32 i + m in bits 2 i of qs[32 h + m].
  for (int h = 0; h < 2; ++h)
    for (int m = 0; m < 32; ++m) {
      const uint8_t *v = t + 128 * h + m;
      out[32 * h + m] = uint8_t(v[0] | v[32] << 2 | v[64] << 4 | v[96] << 6);
    }
  store_le(out + 64, d);
}

uint64_t gguf_tensor_bytes(GgufType type, int64_t rows, int64_t K) {
  const TypeInfo t = info(type);
  if (rows < 1 || K < 1)
    throw Error(std::string(t.name) + " needs rows >= 1 and K >= 1, got " +
                std::to_string(rows) + " x " + std::to_string(K));
  if (K % t.block != 0)
    throw Error(std::string(t.name) + " needs K % " + std::to_string(t.block) +
                " == 0, got K = " + std::to_string(K));
  if (rows > std::numeric_limits<int64_t>::max() / K)
    throw Error(std::string(t.name) + ": " + std::to_string(rows) + " x " +
                std::to_string(K) + " values overflow");
  const uint64_t blocks = uint64_t(rows * K / t.block);
  const uint64_t trailer = type == GgufType::I2_S ? kI2sTrailer : 0;
  if (blocks > (std::numeric_limits<uint64_t>::max() - trailer) / t.block_size)
    throw Error(std::string(t.name) + ": " + std::to_string(rows) + " x " +
                std::to_string(K) + " values overflow the byte count");
  return blocks * t.block_size + trailer;
}

std::vector<uint8_t> gguf_encode(GgufType type, const float *values,
                                 int64_t rows, int64_t K) {
  const uint64_t bytes = gguf_tensor_bytes(type, rows, K);
  const int64_t count = rows * K;
  std::vector<uint8_t> out(size_t(bytes), 0);
  uint8_t *p = out.data();
  switch (type) {
  case GgufType::F32:
    for (int64_t i = 0; i < count; ++i)
      store_f32_le(p + 4 * i, values[i]);
    return out;
  case GgufType::F16:
    for (int64_t i = 0; i < count; ++i)
      store_le(p + 2 * i, float_to_half(values[i]));
    return out;
  case GgufType::BF16:
    for (int64_t i = 0; i < count; ++i)
      store_le(p + 2 * i, float_to_bf16(values[i]));
    return out;
  default:
    break;
  }
  check_finite(values, count, K);
  const int64_t block = info(type).block;
  const uint64_t block_size = info(type).block_size;
  const int64_t row_bytes = K / block * int64_t(block_size);
  const GgmlBlockType *block_type = ggml_block_type_by_id(uint32_t(type));
  for (int64_t m = 0; m < rows && type != GgufType::I2_S; ++m) {
    const float *x = values + m * K;
    uint8_t *row = p + m * row_bytes;
    if (block_type) {
      // The runtime's one quantizer of each block type (= quantize()).
      quantize_block_row(*block_type, x, K, m, row);
      continue;
    }
    for (int64_t b = 0; b < K / block; ++b)
      quantize_tq_block(type, x + b * block, m, b, row + b * int64_t(block_size));
  }
  if (type == GgufType::I2_S) {
    // bitnet.cpp's quantize_i2_s: scale = max |x| (in double), stored as
    // f32; a value with |x| < 1e-6 is 0, any other its sign. It takes the
    // values to be ternary already and does not round.
    double scale = 0.0;
    for (int64_t i = 0; i < count; ++i)
      scale = std::max(scale, std::fabs(double(values[i])));
    for (int64_t e = 0; e < count; ++e) {
      const double x = double(values[e]);
      const unsigned c = std::fabs(x) < 1e-6 ? 1 : x * scale > 0 ? 2 : 0;
      p[i2s_byte(uint64_t(e))] |= uint8_t(c << i2s_shift(uint64_t(e)));
    }
    store_f32_le(p + count / 4, float(scale));
  }
  return out;
}

void gguf_decode_row(const GgufTensor &t, int64_t row, float *out) {
  check_row(t, row);
  const int64_t K = t.K();
  if (t.type == GgufType::I2_S) {
    static const float value[4] = {-1.0f, 0.0f, 1.0f, 0.0f};
    const float scale = load_f32_le(t.data + t.rows() * K / 4);
    for (int64_t k = 0; k < K; ++k) {
      const uint64_t e = uint64_t(row * K + k);
      out[k] = scale * value[(t.data[i2s_byte(e)] >> i2s_shift(e)) & 3];
    }
    return;
  }
  const TypeInfo ti = info(t.type);
  const uint8_t *p = t.data + uint64_t(row) * (uint64_t(K / ti.block) * ti.block_size);
  switch (t.type) {
  case GgufType::F32:
    for (int64_t k = 0; k < K; ++k)
      out[k] = load_f32_le(p + 4 * k);
    return;
  case GgufType::F16:
    for (int64_t k = 0; k < K; ++k)
      out[k] = half_to_float(load_le<uint16_t>(p + 2 * k));
    return;
  case GgufType::BF16:
    for (int64_t k = 0; k < K; ++k)
      out[k] = bf16_to_float(load_le<uint16_t>(p + 2 * k));
    return;
  default:
    break;
  }
  if (const GgmlBlockType *b = ggml_block_type_by_id(uint32_t(t.type))) {
    dequantize_block_row(*b, p, K, out);
    return;
  }
  for (int64_t b = 0; b < K / ti.block; ++b, p += ti.block_size) {
    float *y = out + b * ti.block;
    uint8_t c[kTqBlock];
    float d;
    if (t.type == GgufType::TQ1_0) {
      tq1_decode(p, c);
      d = half_to_float(load_le<uint16_t>(p + 52));
    } else {
      tq2_decode(p, c);
      d = half_to_float(load_le<uint16_t>(p + 64));
    }
    for (int j = 0; j < kTqBlock; ++j)
      y[j] = float(c[j] - 1) * d;
  }
}

float exact_ternary_scale(const float *W, int64_t count) {
  return detail::exact_ternary_scale(W, count);
}

std::string gguf_default_format(const GgufTensor &t) {
  if (t.ne.size() < 2)
    return ""; // vectors (norms, biases) stay in float
  std::string name;
  if (is_ternary_type(t.type))
    name = "i2s";
  else if (const GgmlBlockType *b = ggml_block_type_by_id(uint32_t(t.type)))
    name = b->name;
  else if (is_float_type(t.type)) {
    // Row by row, stopping at the first value that is not ternary (at once
    // for an embedding), without decoding the whole matrix.
    const int64_t K = t.K();
    std::vector<float> row(static_cast<size_t>(K));
    float a = 0.0f;
    bool ternary = true;
    for (int64_t m = 0; m < t.rows() && ternary; ++m) {
      gguf_decode_row(t, m, row.data());
      for (int64_t k = 0; k < K && ternary; ++k) {
        const float x = std::fabs(row[k]);
        if (x == 0.0f)
          continue;
        if (a == 0.0f && x <= std::numeric_limits<float>::max())
          a = x;
        ternary = x == a;
      }
    }
    if (ternary && a > 0.0f)
      name = "i2s";
  }
  if (name.empty() || !Format::parse(name).shape_error(t.rows(), t.K()).empty())
    return "";
  return name;
}

PackedWeights import_tensor(const GgufTensor &t, const Format &format) {
  check_size_and_shape(t, format);
  const int64_t M = t.rows(), K = t.K();

  if (is_ternary_type(t.type) && format.is_ternary()) {
    TernaryReader reader(t);
    PackedWeights P;
    P.format = format;
    P.M = M;
    P.K = K;
    const int64_t row_bytes = P.row_bytes();
    P.codes.resize(size_t(M * row_bytes));
    // Into i2s the codes move (each byte's place computed, not each
    // value's); tl1 and tl2 decode each value.
    const bool moves = format.kind == FormatKind::I2S;
    std::vector<uint8_t> c(static_cast<size_t>(moves ? 0 : K));
    std::vector<int8_t> q(c.size());
    for (int64_t m = 0; m < M; ++m) {
      uint8_t *row = P.codes.data() + m * row_bytes;
      if (moves) {
        reader.i2s_row(m, row);
        continue;
      }
      reader.row(m, c.data());
      for (int64_t k = 0; k < K; ++k)
        q[size_t(k)] = int8_t(c[size_t(k)] - 1);
      encode_ternary_row(format, q.data(), K, row);
    }
    // An all-zero tensor carries no scale: it gets quantize()'s floor.
    const float scale = reader.scale();
    P.tensor_scale = scale > 0.0f ? scale : 1e-5f;
    // Valid as built (every code was checked, the encoders zero the
    // padding): only the sizes are checked, not the codes again.
    named(t, [&] { check_layout(P); });
    return P;
  }
  const GgmlBlockType *block_type = ggml_block_type_by_id(uint32_t(t.type));
  if (block_type && block_type->kind == format.kind) {
    // ggml's blocks are lowbit's codes: a copy, lossless.
    PackedWeights P;
    P.format = format;
    P.M = M;
    P.K = K;
    P.codes.assign(t.data, t.data + t.bytes);
    named(t, [&] { validate(P); });
    return P;
  }
  std::vector<float> W = decode_all(t);
  PackedWeights P =
      named(t, [&] { return quantize(format, W.data(), M, K); });
  if (is_float_type(t.type))
    return P;
  // A quantized tensor into another format: only where re-quantizing
  // reproduces every value exactly (e.g. q8_0 blocks whose values are
  // {-a, 0, a} into a ternary format). Never a silent loss.
  std::vector<float> R(W.size());
  dequantize(P, R.data());
  int64_t changed = 0;
  for (size_t i = 0; i < W.size(); ++i)
    changed += !(R[i] == W[i]);
  if (changed)
    fail(t, std::string(gguf_type_name(t.type)) + " does not convert to " +
                format.name() + " without loss (" + std::to_string(changed) +
                " of " + std::to_string(W.size()) +
                " values would change); lowbit does not re-quantize silently");
  return P;
}

std::string gguf_import_error(const GgufTensor &tensor, const Format &format) {
  try {
    import_tensor(tensor, format);
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

PackedWeights import_weights(GgufType type, const uint8_t *data, size_t bytes,
                             int64_t M, int64_t K, const Format &format,
                             const std::string &what) {
  if (!is_known_gguf_type(uint32_t(type)))
    throw Error(what + ": unknown GGUF tensor type " +
                std::to_string(uint32_t(type)));
  GgufTensor t;
  t.name = what;
  t.type = type;
  t.ne = {K, M};
  t.data = data;
  t.bytes = bytes;
  if (!data)
    throw Error(what + ": no data");
  return import_tensor(t, format);
}

} // namespace lowbit
