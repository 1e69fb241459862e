//===- ggml_blocks_test.cpp - ggml's block formats, checked by hand -------===//
//
// The expected bytes below were derived by hand from ggml's definitions
// (ggml-common.h's block structs, ggml-quants.c's quantize_row_<type>_ref
// and quantize_iq4_nl), the float steps evaluated one by one in float32
// with a calculator. The decoder in this file is a second, independent
// transcription of ggml's dequantize_row_<type> loops (fp16 through the
// compiler's _Float16); byte identity with ggml itself is test/interop's.
//
//===----------------------------------------------------------------------===//

#include "lowbit/format.h"
#include "lowbit/reference.h"

#include "naive.h"
#include "test_util.h"

#include <cmath>
#include <string>

namespace lowbit {
namespace {

using test::bits;
using test::error_of;
using test::ref_float;

const char *const kBlockFormats[] = {"q4_0", "q4_1", "q5_0",  "q5_1",
                                     "q8_0", "q2_k", "q3_k",  "q4_k",
                                     "q5_k", "q6_k", "iq4_nl"};

std::vector<uint8_t> quantize_row(const char *format,
                                  const std::vector<float> &x) {
  return quantize(Format::parse(format), x.data(), 1, int64_t(x.size())).codes;
}

std::vector<uint8_t> hex_bytes(const std::string &hex) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(uint8_t(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return out;
}

std::string repeat(const std::string &hex, int n) {
  std::string out;
  for (int i = 0; i < n; ++i)
    out += hex;
  return out;
}

float half_at(const uint8_t *p) {
  return ref_float(uint16_t(p[0] | p[1] << 8));
}

// One row decoded as ggml's dequantize_row_<type> writes it, with the c, s,
// o of the formula (s * c, plus o where the type has a min).
struct Decoded {
  std::vector<int> c;
  std::vector<float> s, o, y;
};

Decoded decode(const std::string &type, const uint8_t *row, int64_t K) {
  Decoded r;
  auto put = [&](int c, float s, float o, bool min) {
    r.c.push_back(c);
    r.s.push_back(s);
    r.o.push_back(o);
    r.y.push_back(min ? s * float(c) + o : s * float(c));
  };
  static const int iq4nl[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                1,    13,   25,  38,  53,  69,  89,  113};
  if (type == "q4_0" || type == "q4_1" || type == "q5_0" || type == "q5_1" ||
      type == "q8_0" || type == "iq4_nl") {
    const int bytes = type == "q4_0" || type == "iq4_nl" ? 18
                      : type == "q4_1"                   ? 20
                      : type == "q5_0"                   ? 22
                      : type == "q5_1"                   ? 24
                                                         : 34;
    for (int64_t b = 0; b < K / 32; ++b, row += bytes) {
      const float d = half_at(row);
      const bool min = type == "q4_1" || type == "q5_1";
      const float m = min ? half_at(row + 2) : 0.0f;
      const uint8_t *qh = row + (type == "q5_0" ? 2 : 4);
      const uint32_t h = uint32_t(qh[0]) | uint32_t(qh[1]) << 8 |
                         uint32_t(qh[2]) << 16 | uint32_t(qh[3]) << 24;
      const uint8_t *qs = row + bytes - 16;
      for (int j = 0; j < 32; ++j) {
        if (type == "q8_0") {
          put(int8_t(row[2 + j]), d, 0.0f, false);
          continue;
        }
        int q = j < 16 ? qs[j] & 15 : qs[j - 16] >> 4;
        if (type == "q5_0" || type == "q5_1")
          q |= int((h >> j) & 1) << 4;
        if (type == "iq4_nl")
          put(iq4nl[q], d, 0.0f, false);
        else if (min)
          put(q, d, m, true);
        else
          put(q - (type == "q4_0" ? 8 : 16), d, 0.0f, false);
      }
    }
    return r;
  }
  const int bytes = type == "q2_k"   ? 84
                    : type == "q3_k" ? 110
                    : type == "q4_k" ? 144
                    : type == "q5_k" ? 176
                                     : 210;
  for (int64_t b = 0; b < K / 256; ++b, row += bytes) {
    for (int v = 0; v < 256; ++v) {
      const int half = v / 128, shift = 2 * (v % 128 / 32), l = v % 32;
      if (type == "q2_k") {
        const uint8_t sc = row[v / 16];
        const float dl = half_at(row + 80) * float(sc & 15);
        const float ml = half_at(row + 82) * float(sc >> 4);
        put((row[16 + 32 * half + l] >> shift) & 3, dl, -ml, true);
      } else if (type == "q3_k") {
        const int j = v / 16;
        const uint8_t *sc = row + 96;
        const int low = j < 8 ? sc[j] & 15 : sc[j - 8] >> 4;
        const int high = (sc[8 + j % 4] >> (2 * (j / 4))) & 3;
        const float dl = half_at(row + 108) * float((low | high << 4) - 32);
        const int hbit = (row[l] >> (v / 32)) & 1;
        put(((row[32 + 32 * half + l] >> shift) & 3) - (hbit ? 0 : 4), dl, 0.0f,
            false);
      } else if (type == "q4_k" || type == "q5_k") {
        const int j = v / 32;
        const uint8_t *sc = row + 4;
        const int scale =
            j < 4 ? sc[j] & 63 : (sc[j + 4] & 15) | (sc[j - 4] >> 6) << 4;
        const int mn =
            j < 4 ? sc[j + 4] & 63 : (sc[j + 4] >> 4) | (sc[j] >> 6) << 4;
        const float d1 = half_at(row) * float(scale);
        const float m1 = half_at(row + 2) * float(mn);
        const uint8_t *qs = row + (type == "q4_k" ? 16 : 48);
        const uint8_t byte = qs[32 * (v / 64) + l];
        int q = v % 64 < 32 ? byte & 15 : byte >> 4;
        if (type == "q5_k")
          q += (row[16 + l] >> j) & 1 ? 16 : 0;
        put(q, d1, -m1, true);
      } else { // q6_k
        const int i = v % 128 / 32;
        const uint8_t low = row[64 * half + l + 32 * (i & 1)];
        const int q = ((i < 2 ? low & 15 : low >> 4) |
                       ((row[128 + 32 * half + l] >> (2 * i)) & 3) << 4) -
                      32;
        put(q, half_at(row + 208) * float(int8_t(row[192 + v / 16])), 0.0f,
            false);
      }
    }
  }
  return r;
}

TEST(GgmlBlocks, ZeroBlocks) {
  // q4_0 and q5_0: d = max / -8 (-16) = -0.0 (fp16 0x8000), id = 0, every
  // code (int8)(0 + 8.5) = 8 (16: nibble 0 and the fifth bit set in qh).
  // iq4_nl: d = 0, codes best_index(0) = 8 (0 is nearer to 1 than to -10).
  // The others write zeros: q4_1/q5_1 d = m = 0, codes (int8)(0.5) = 0;
  // q8_0 d = 0; q2_k/q4_k/q5_k make_qkx2_quants gives scale 0 and min -0,
  // sub-scales 0, d = dmin = 0, no requantization; q3_k make_q3_quants
  // gives 0 and L = 0, scales 0 (memset), d = 0; q6_k memsets the block.
  const struct {
    const char *format;
    int64_t K;
    std::string hex;
  } cases[] = {
      {"q4_0", 32, "0080" + repeat("88", 16)},
      {"q5_0", 32, "0080ffffffff" + repeat("00", 16)},
      {"iq4_nl", 32, "0000" + repeat("88", 16)},
      {"q4_1", 32, repeat("00", 20)},
      {"q5_1", 32, repeat("00", 24)},
      {"q8_0", 32, repeat("00", 34)},
      {"q2_k", 256, repeat("00", 84)},
      {"q3_k", 256, repeat("00", 110)},
      {"q4_k", 256, repeat("00", 144)},
      {"q5_k", 256, repeat("00", 176)},
      {"q6_k", 256, repeat("00", 210)},
  };
  for (const auto &c : cases) {
    SCOPED_TRACE(c.format);
    const std::vector<float> x(size_t(c.K), 0.0f);
    EXPECT_EQ(quantize_row(c.format, x), hex_bytes(c.hex));
    const PackedWeights P = quantize(Format::parse(c.format), x.data(), 1, c.K);
    std::vector<float> y(size_t(c.K));
    dequantize(P, y.data());
    for (float v : y)
      EXPECT_EQ(v, 0.0f);
  }
}

// x[5] = 2, every other weight 0 (32 weights, or 256 for the K-quants).
std::vector<float> one_large(int64_t K) {
  std::vector<float> x(size_t(K), 0.0f);
  x[5] = 2.0f;
  return x;
}

TEST(GgmlBlocks, OneLargeValue) {
  const struct {
    const char *format;
    int64_t K;
    std::string hex;
    float y5, y0; // dequantized x[5] and x[0]
  } cases[] = {
      // d = 2 / -8 = -0.25 (0xb400), id = -4: x5 -> (int8)(0.5) = 0, zeros
      // -> 8; y5 = (0 - 8) * -0.25, y0 = 0 * -0.25 = -0.
      {"q4_0", 32, "00b4" + repeat("88", 5) + "80" + repeat("88", 10), 2.0f,
       -0.0f},
      // d = 2 / -16 = -0.125 (0xb000), id = -8: x5 -> 0, zeros -> 16 (qh
      // bit set, bit 5 clear).
      {"q5_0", 32, "00b0dfffffff" + repeat("00", 16), 2.0f, -0.0f},
      // d = 2/15 = 0.13333334 (fp16 0x3044 = 0.13330078), m = 0, id =
      // 7.4999995: x5 -> (int8)(15.499999) = 15; y5 = 15 * 0.13330078.
      {"q4_1", 32, "44300000" + repeat("00", 5) + "0f" + repeat("00", 10),
       1.9995117f, 0.0f},
      // d = 2/31 (0x2c21 = 0.06451416), x5 -> (uint8)(31.5) = 31: nibble 15,
      // qh bit 5.
      {"q5_1", 32,
       "212c000020000000" + repeat("00", 5) + "0f" + repeat("00", 10),
       1.999939f, 0.0f},
      // d = 2 / 127 (0x2408 = 0.01574707), id = 63.5: x5 -> 127.
      {"q8_0", 32, "0824" + repeat("00", 5) + "7f" + repeat("00", 26),
       1.9998779f, 0.0f},
      // Weights x^2 (only x5 counts): d0 = 2/127, id*x5 = 127 -> index 15
      // (113): d = 904 / 51076 = 0.017699115, best = 16; every trial id =
      // (itry - 127) / 2 gives index 0 (-127) and sumqx^2 = best * sumq2 =
      // 1032256, not larger. fp16(d) = 0x2488 = 0.017700195; with id = 56.5
      // x5 -> 113 (15), zeros -> 1 (8).
      {"iq4_nl", 32, "8824" + repeat("88", 5) + "8f" + repeat("88", 10),
       2.000122f, 0.017700195f},
      // Sub-block 0: make_qx_quants(nmax 32) gives l5 = -32 and scale
      // -256 / 4096 = -0.0625 (no trial is better: l = -31 ties); the
      // others are all zero (scale 0, L = 0). iscale = -128 / -0.0625 =
      // 2048, d = 1/2048 (0x1000), scales[0] = -128; requantized with
      // d * -128 = -0.0625: x5 -> -32 + 32 = 0, zeros -> 32 (qh bits 0..1 =
      // 2). Sub-blocks 1..15 keep L = 0 (scale 0).
      {"q6_k", 256,
       repeat("00", 128) + repeat("02", 5) + "00" + repeat("02", 10) +
           repeat("00", 48) + "80" + repeat("00", 15) + "0010",
       2.0f, -0.0f},
      // Sub-block 0: make_q3_quants(nmax 4) gives l5 = -4, zeros 0, scale
      // -32 / 64 = -0.5 (no sweep changes a code); iscale = -32 / -0.5 = 64,
      // d = 1/64 (0x2400), sub-scale 0 -> stored 0, the others 0 -> stored
      // 32 (low 4 bits 0, high 2 bits 2: scales[8] = 0xa8, [9..11] = 0xaa).
      // Requantized with d * -32 = -0.5: x5 -> -4 + 4 = 0, zeros -> 4 (the
      // hmask bit set); sub-blocks 1..15 keep L = 0 (scale 0).
      {"q3_k", 256,
       repeat("01", 5) + "00" + repeat("01", 10) + repeat("00", 16) +
           repeat("00", 64) + repeat("00", 8) + "a8aaaaaa" + "0024",
       2.0f, -0.0f},
  };
  for (const auto &c : cases) {
    SCOPED_TRACE(c.format);
    const std::vector<float> x = one_large(c.K);
    EXPECT_EQ(quantize_row(c.format, x), hex_bytes(c.hex));
    const PackedWeights P = quantize(Format::parse(c.format), x.data(), 1, c.K);
    std::vector<float> y(size_t(c.K));
    dequantize(P, y.data());
    EXPECT_EQ(bits(y[5]), bits(c.y5)) << y[5];
    EXPECT_EQ(bits(y[0]), bits(c.y0)) << y[0];
  }
}

// All 256 weights 1: in every sub-block make_qkx2_quants clamps the min to
// 0, takes scale 1 / nmax with every code nmax, and no trial has D > 0 (the
// weights are equal, so D = 0 exactly); the_min = -0.
TEST(GgmlBlocks, ConstantSuperBlock) {
  const struct {
    const char *format;
    std::string hex;
    float y;
  } cases[] = {
      // scale 1/3: iscale 15 / (1/3) = 45 -> sub-scales 15, d =
      // fp16(0.022222223) = 0x25b0 (0.022216797), dmin 0; requantized with
      // 15 d = 0.33325195: 1 / that = 3.0007 -> 3; y = 3 * 0.33325195.
      {"q2_k", repeat("0f", 16) + repeat("ff", 64) + "b0250000", 0.99975586f},
      // scale 1/15: 63 / scale * scale = 63 -> sub-scales 63, mins 0: bytes
      // 0..3 = 63 | 3 << 6, 4..7 = 0, 8..11 = 63 & 15; d = fp16(1/15/63) =
      // 0x1456 (0.0010585785), dmin 0; 63 d = 0.066690445 -> 1 / it =
      // 14.99 -> 15.
      {"q4_k",
       "5614"
       "0000" +
           repeat("ff", 4) + repeat("00", 4) + repeat("0f", 4) +
           repeat("ff", 128),
       1.0003567f},
      // scale 1/31: sub-scales 63, d = fp16(1/31/63) = 0x1032
      // (0.0005121231); 63 d = 0.032263756 -> 30.99 -> 31: nibbles 15 and
      // every qh bit.
      {"q5_k",
       "3210"
       "0000" +
           repeat("ff", 4) + repeat("00", 4) + repeat("0f", 4) +
           repeat("ff", 32) + repeat("ff", 128),
       1.0001764f},
  };
  for (const auto &c : cases) {
    SCOPED_TRACE(c.format);
    const std::vector<float> x(256, 1.0f);
    EXPECT_EQ(quantize_row(c.format, x), hex_bytes(c.hex));
    const PackedWeights P = quantize(Format::parse(c.format), x.data(), 1, 256);
    std::vector<float> y(256);
    dequantize(P, y.data());
    for (float v : y)
      ASSERT_EQ(bits(v), bits(c.y)) << v;
  }
}

// Random weights: dequantize(quantize(x)) within each format's error, the
// runtime's dequantize bit-identical to this file's decoder, and
// row_block_params the decoder's c, s, o.
TEST(GgmlBlocks, RoundTripAndDecode) {
  const struct {
    const char *format;
    double max_error; // ||x - dequantized|| / ||x|| for Normal(0, 1) x
  } cases[] = {
      {"q8_0", 0.01},  {"q6_k", 0.02}, {"q5_0", 0.05}, {"q5_1", 0.05},
      {"q5_k", 0.05},  {"q4_0", 0.1},  {"q4_1", 0.1},  {"q4_k", 0.1},
      {"iq4_nl", 0.1}, {"q3_k", 0.2},  {"q2_k", 0.4},
  };
  const int64_t M = 3, K = 512;
  uint32_t seed = 7;
  for (const auto &c : cases) {
    SCOPED_TRACE(c.format);
    const Format f = Format::parse(c.format);
    const std::vector<float> x = test::random_values(M * K, seed++);
    const PackedWeights P = quantize(f, x.data(), M, K);
    EXPECT_NO_THROW(validate(P));
    std::vector<float> y(size_t(M * K));
    dequantize(P, y.data());
    double err = 0.0, norm = 0.0;
    for (int64_t i = 0; i < M * K; ++i) {
      err += (double(x[i]) - y[i]) * (double(x[i]) - y[i]);
      norm += double(x[i]) * x[i];
    }
    EXPECT_LE(std::sqrt(err / norm), c.max_error);
    // Not lossless: the test would not notice a format that stores floats.
    EXPECT_GT(std::sqrt(err / norm), c.max_error / 100);

    const GgmlBlockType &type = *ggml_block_type(f.kind);
    const int64_t scales = K / type.scale_block;
    std::vector<int8_t> cc(static_cast<size_t>(K)), q(cc.size());
    std::vector<float> s(static_cast<size_t>(scales)), o(s.size());
    for (int64_t m = 0; m < M; ++m) {
      const Decoded d = decode(c.format, P.codes.data() + m * P.row_bytes(), K);
      row_block_params(P, m, cc.data(), s.data(), o.data());
      unpack_row(P, m, q.data());
      for (int64_t k = 0; k < K; ++k) {
        ASSERT_EQ(bits(y[size_t(m * K + k)]), bits(d.y[size_t(k)])) << k;
        ASSERT_EQ(cc[size_t(k)], d.c[size_t(k)]) << k;
        ASSERT_EQ(bits(s[size_t(k / type.scale_block)]), bits(d.s[size_t(k)]));
        ASSERT_EQ(bits(o[size_t(k / type.scale_block)]),
                  bits(type.has_min ? d.o[size_t(k)] : 0.0f));
        // unpack_row's stored code maps to c as the table says.
        const int expected_c = type.codebook ? type.codebook[q[size_t(k)]]
                                             : q[size_t(k)] - type.code_offset;
        ASSERT_EQ(cc[size_t(k)], expected_c);
      }
    }
  }
}

// ggml's validate_row_data rejects non-finite fp16 d (and m / dmin); so does
// validate (every code bit pattern is a valid block otherwise).
TEST(GgmlBlocks, ValidateRejectsNonFiniteScales) {
  const struct {
    const char *format;
    int64_t K;
    int offset;
    const char *error;
  } cases[] = {
      {"q8_0", 64, 34, "q8_0 row 0 block 1: scale d is not finite"},
      {"q4_1", 32, 2, "q4_1 row 0 block 0: min m is not finite"},
      {"q5_1", 32, 0, "q5_1 row 0 block 0: scale d is not finite"},
      {"q2_k", 256, 82, "q2_k row 0 block 0: scale dmin is not finite"},
      {"q3_k", 512, 110 + 108, "q3_k row 0 block 1: scale d is not finite"},
      {"q4_k", 256, 2, "q4_k row 0 block 0: scale dmin is not finite"},
      {"q5_k", 256, 0, "q5_k row 0 block 0: scale d is not finite"},
      {"q6_k", 256, 208, "q6_k row 0 block 0: scale d is not finite"},
      {"iq4_nl", 32, 0, "iq4_nl row 0 block 0: scale d is not finite"},
  };
  for (const auto &c : cases) {
    SCOPED_TRACE(c.format);
    const std::vector<float> x = test::random_values(c.K, 3);
    PackedWeights P = quantize(Format::parse(c.format), x.data(), 1, c.K);
    P.codes[size_t(c.offset)] = 0x00;
    P.codes[size_t(c.offset + 1)] = 0x7c; // +inf
    EXPECT_EQ(error_of([&] { validate(P); }), c.error);
    P.codes[size_t(c.offset + 1)] = 0xfe; // NaN
    EXPECT_EQ(error_of([&] { validate(P); }), c.error);
  }
}

TEST(GgmlBlocks, QuantizeRejectsFp16Overflow) {
  std::vector<float> x(256, 0.0f);
  x[3] = 1e7f; // d = 1e7 / 127 overflows fp16
  EXPECT_EQ(error_of([&] { quantize(Format::parse("q8_0"), x.data(), 1, 32); }),
            "q8_0 row 0 block 0: scale d = 78740.2 overflows fp16 (weights "
            "too large for q8_0)");
  x[3] = -7e4f; // d = 7e4 / 15 fits in fp16, the min does not
  EXPECT_EQ(error_of([&] { quantize(Format::parse("q4_1"), x.data(), 1, 32); }),
            "q4_1 row 0 block 0: min m = -70000 overflows fp16 (weights too "
            "large for q4_1)");
  x[3] = 1e9f;
  EXPECT_NE(error_of([&] {
              quantize(Format::parse("q4_k"), x.data(), 1, 256);
            }).find("q4_k row 0 block 0: scale d = "),
            std::string::npos);
}

TEST(GgmlBlocks, RowBlockParamsRejectsOtherFormats) {
  const std::vector<float> x = test::random_values(64, 1);
  const PackedWeights P = quantize(Format::parse("w2g32"), x.data(), 1, 64);
  std::vector<int8_t> c(64);
  float s[2], o[2];
  EXPECT_EQ(error_of([&] { row_block_params(P, 0, c.data(), s, o); }),
            "row_block_params: w2g32 is not a ggml block format");
  const PackedWeights Q = quantize(Format::parse("q8_0"), x.data(), 1, 64);
  EXPECT_EQ(error_of([&] { row_block_params(Q, 1, c.data(), s, o); }),
            "row 1 is out of range for 1 rows");
}

// The reference against this file's decoder and the formula of
// reference.h (int64 sums), bit for bit, and against the fp64 product of the
// dequantized weights with the fp32 X: normalized error <= 1e-2 (the error
// of the int8 activations), on ragged M and several K.
TEST(GgmlBlocks, ReferenceMatchesFormulaAndFp64) {
  uint32_t seed = 500;
  for (const char *name : kBlockFormats) {
    const Format f = Format::parse(name);
    const int64_t block = ggml_block_type(f.kind)->block;
    double total_err = 0.0, total_norm = 0.0;
    for (int64_t M : {1, 7, 33}) {
      for (int64_t K : {block, 3 * block}) {
        const int64_t N = M == 7 ? 5 : 2;
        SCOPED_TRACE(std::string(name) + " M=" + std::to_string(M) +
                     " K=" + std::to_string(K) + " N=" + std::to_string(N));
        const std::vector<float> W = test::random_values(M * K, seed++);
        const std::vector<float> X = test::random_values(N * K, seed++, 2.0f);
        const PackedWeights P = quantize(f, W.data(), M, K);
        std::vector<float> Y(size_t(N * M));
        reference_mpgemm(P, X.data(), N, Y.data());

        const test::NaiveActivations A = test::naive_activations(X, N, K, 32);
        const int sb = ggml_block_type(f.kind)->scale_block;
        const bool has_min = ggml_block_type(f.kind)->has_min;
        double err = 0.0, norm = 0.0;
        for (int64_t m = 0; m < M; ++m) {
          const Decoded d = decode(name, P.codes.data() + m * P.row_bytes(), K);
          for (int64_t n = 0; n < N; ++n) {
            const int8_t *x = A.q.data() + n * K;
            float y = 0.0f;
            for (int64_t b = 0; b < K / 32; ++b) {
              float t = 0.0f;
              for (int64_t j = b * 32; j < (b + 1) * 32; j += sb) {
                int64_t acc = 0, xsum = 0;
                for (int64_t k = j; k < j + sb; ++k) {
                  acc += int64_t(x[k]) * d.c[size_t(k)];
                  xsum += x[k];
                }
                const float term = has_min ? d.s[size_t(j)] * float(acc) +
                                                 d.o[size_t(j)] * float(xsum)
                                           : d.s[size_t(j)] * float(acc);
                t = j == b * 32 ? term : t + term;
              }
              y += t / A.s[size_t(n * (K / 32) + b)];
            }
            ASSERT_EQ(bits(Y[size_t(n * M + m)]), bits(y))
                << "Y[" << n << ", " << m << "] = " << Y[size_t(n * M + m)]
                << ", expected " << y;
            double exact = 0.0;
            for (int64_t k = 0; k < K; ++k)
              exact += double(X[size_t(n * K + k)]) * double(d.y[size_t(k)]);
            const double diff = double(Y[size_t(n * M + m)]) - exact;
            err += diff * diff;
            norm += exact * exact;
          }
        }
        if (M * N >= 31)
          EXPECT_LE(std::sqrt(err / norm), 1e-2);
        total_err += err;
        total_norm += norm;
      }
    }
    EXPECT_LE(std::sqrt(total_err / total_norm), 1e-2) << name;
  }
}

} // namespace
} // namespace lowbit
