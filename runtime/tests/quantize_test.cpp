//===- quantize_test.cpp - quantize, unpack_row, dequantize ---------------===//
//
// Every format on ragged shapes against the naive quantizer of naive.cpp:
// the canonical bytes, the scales, the unpacked codes and the dequantized
// weights must all match exactly.
//
//===----------------------------------------------------------------------===//

#include "lowbit/format.h"
#include "lowbit/reference.h"

#include "naive.h"
#include "test_util.h"

#include <limits>

namespace lowbit {
namespace {

using test::bits;
using test::error_of;

struct FormatCase {
  const char *format;
  std::vector<int64_t> Ks; // the smallest legal K and odd multiples of it
};

void PrintTo(const FormatCase &c, std::ostream *os) { *os << c.format; }

class QuantizeTest : public ::testing::TestWithParam<FormatCase> {};

TEST_P(QuantizeTest, MatchesNaiveQuantizer) {
  const Format f = Format::parse(GetParam().format);
  uint32_t seed = 1;
  for (int64_t M : {1, 3, 31, 33}) {
    for (int64_t K : GetParam().Ks) {
      SCOPED_TRACE(f.name() + " M=" + std::to_string(M) +
                   " K=" + std::to_string(K));
      std::vector<float> W = test::random_values(M * K, seed++);
      // Rows of one sign and of zeros exercise the zero point's extremes.
      if (M > 2)
        for (int64_t k = 0; k < K; ++k) {
          W[k] = std::fabs(W[k]);
          W[K + k] = -std::fabs(W[K + k]);
          W[2 * K + k] = 0.0f;
        }
      const PackedWeights P = quantize(f, W.data(), M, K);
      const test::NaiveWeights N = test::naive_quantize(f, W, M, K);

      EXPECT_EQ(P.M, M);
      EXPECT_EQ(P.K, K);
      EXPECT_EQ(P.format.name(), f.name());
      EXPECT_EQ(bits(P.tensor_scale), bits(N.tensor_scale));
      ASSERT_EQ(P.codes.size(), static_cast<size_t>(M * P.row_bytes()));
      EXPECT_EQ(P.codes, N.codes);
      EXPECT_EQ(P.scales, N.scales);
      EXPECT_EQ(P.zeros, N.zeros);

      std::vector<int8_t> q(static_cast<size_t>(K));
      for (int64_t m = 0; m < M; ++m) {
        unpack_row(P, m, q.data());
        ASSERT_EQ(q, std::vector<int8_t>(N.q.begin() + m * K,
                                         N.q.begin() + (m + 1) * K))
            << "row " << m;
      }
      std::vector<float> D(static_cast<size_t>(M * K));
      dequantize(P, D.data());
      for (int64_t i = 0; i < M * K; ++i)
        ASSERT_EQ(bits(D[i]), bits(N.dequant[i])) << "element " << i;
      EXPECT_NO_THROW(validate(P));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Formats, QuantizeTest,
    ::testing::Values(
        FormatCase{"i2s", {1, 2, 3, 5, 7, 33, 255}},
        FormatCase{"tl1", {2, 6, 10, 34, 254}},
        // tl2 tails of 0, 2 and 4 weights
        FormatCase{"tl2", {2, 4, 6, 8, 10, 12, 14, 34, 254, 256}},
        FormatCase{"w1g32", {32, 96, 160}}, FormatCase{"w1g128", {128, 384}},
        FormatCase{"w2g32", {32, 96}}, FormatCase{"w2g64", {64, 192}},
        FormatCase{"w3g32", {32, 96, 160}}, FormatCase{"w3g128", {128, 384}},
        FormatCase{"w4g32", {32, 96}}, FormatCase{"w4g64", {64, 192}},
        FormatCase{"q4_0", {32, 96, 160}}),
    [](const auto &info) { return std::string(info.param.format); });

TEST(Quantize, TernaryFormatsAgree) {
  for (int64_t K : {2, 4, 10, 98, 100}) {
    const int64_t M = 5;
    std::vector<float> W = test::random_values(M * K, uint32_t(K));
    const PackedWeights a = quantize(Format::parse("i2s"), W.data(), M, K);
    const PackedWeights b = quantize(Format::parse("tl1"), W.data(), M, K);
    const PackedWeights c = quantize(Format::parse("tl2"), W.data(), M, K);
    EXPECT_EQ(bits(a.tensor_scale), bits(b.tensor_scale));
    EXPECT_EQ(bits(a.tensor_scale), bits(c.tensor_scale));
    std::vector<int8_t> qa(K), qb(K), qc(K);
    for (int64_t m = 0; m < M; ++m) {
      unpack_row(a, m, qa.data());
      unpack_row(b, m, qb.data());
      unpack_row(c, m, qc.data());
      EXPECT_EQ(qa, qb) << "K=" << K << " row " << m;
      EXPECT_EQ(qa, qc) << "K=" << K << " row " << m;
    }
  }
}

TEST(Quantize, TernaryByHand) {
  // mean |W| = (0.5 + 0 + 1 + 2 + 0.25 + 0.75) / 6 = 0.75 = s_w.
  // W / s_w = 0.667, 0, -1.333, 2.667, -0.333, 1 -> q = 1, 0, -1, 1, 0, 1.
  const float W[6] = {0.5f, 0.0f, -1.0f, 2.0f, -0.25f, 0.75f};
  const PackedWeights i2s = quantize(Format::parse("i2s"), W, 1, 6);
  EXPECT_EQ(i2s.tensor_scale, 0.75f);
  // codes q + 1 = 2, 1, 0, 2, 1, 2 at bits 0, 2, 4, ...:
  // byte 0 = 2 | 1 << 2 | 0 << 4 | 2 << 6 = 0x86, byte 1 = 1 | 2 << 2 = 0x09.
  EXPECT_EQ(i2s.codes, (std::vector<uint8_t>{0x86, 0x09}));
  // tl1 pairs (1, 0), (-1, 1), (0, 1) -> 3*2+1 = 7, 3*0+2 = 2, 3*1+2 = 5:
  // byte 0 = 7 | 2 << 4 = 0x27, byte 1 = 5.
  const PackedWeights tl1 = quantize(Format::parse("tl1"), W, 1, 6);
  EXPECT_EQ(tl1.codes, (std::vector<uint8_t>{0x27, 0x05}));
  // tl2: K = 6 splits into 2 triples and no tail. (1, 0, -1): 9*2 + 3*1 + 0
  // - 13 = 8; (1, 0, 1): 18 + 3 + 2 - 13 = 10. Index nibbles 0xA8, sign
  // byte 0, no tail bytes.
  const PackedWeights tl2 = quantize(Format::parse("tl2"), W, 1, 6);
  EXPECT_EQ(tl2.codes, (std::vector<uint8_t>{0xA8, 0x00}));
  // Negate: v = -8 and -10, both signs set.
  const float N[6] = {-0.5f, 0.0f, 1.0f, -2.0f, 0.25f, -0.75f};
  EXPECT_EQ(quantize(Format::parse("tl2"), N, 1, 6).codes,
            (std::vector<uint8_t>{0xA8, 0x03}));
}

TEST(Quantize, TernaryScaleFloor) {
  const float W[4] = {0, 0, 0, 0};
  const PackedWeights P = quantize(Format::parse("i2s"), W, 1, 4);
  EXPECT_EQ(P.tensor_scale, 1e-5f);
  EXPECT_EQ(P.codes, (std::vector<uint8_t>{0x55})); // four codes of 1 (q = 0)
}

TEST(Quantize, TernaryWeightsKeepTheirScale) {
  // Regression: weights that are ternary already ({-a, 0, a}, a third of
  // them 0) used to get s_w = absmean = 2a/3, so q = round(+-1.5) = +-1 and
  // every output shrank to 2/3 (0.665x here). Now s_w = a exactly.
  const int64_t M = 7, K = 96, N = 3;
  const float a = 0.0371f;
  std::vector<float> W(static_cast<size_t>(M * K));
  for (int64_t i = 0; i < M * K; ++i)
    W[i] = a * float(int((i * 5 + i / 7) % 3) - 1);
  const std::vector<float> X = test::random_values(N * K, 77);
  for (const char *name : {"i2s", "tl1", "tl2"}) {
    SCOPED_TRACE(name);
    const PackedWeights P = quantize(Format::parse(name), W.data(), M, K);
    EXPECT_EQ(bits(P.tensor_scale), bits(a));
    std::vector<float> D(W.size());
    dequantize(P, D.data());
    for (size_t i = 0; i < W.size(); ++i)
      ASSERT_EQ(bits(D[i]), bits(W[i])) << i;

    // The reference mpGEMM against the exact product: within the error of
    // the int8 activations (half a step, absmax / 254 per activation).
    std::vector<float> Y(static_cast<size_t>(N * M));
    reference_mpgemm(P, X.data(), N, Y.data());
    double dot = 0.0, norm = 0.0;
    for (int64_t n = 0; n < N; ++n) {
      float absmax = 0.0f;
      for (int64_t k = 0; k < K; ++k)
        absmax = std::max(absmax, std::fabs(X[n * K + k]));
      for (int64_t m = 0; m < M; ++m) {
        double exact = 0.0, bound = 0.0;
        for (int64_t k = 0; k < K; ++k) {
          exact += double(X[n * K + k]) * double(W[m * K + k]);
          bound += std::fabs(double(W[m * K + k])) * double(absmax) / 254.0;
        }
        const double y = Y[n * M + m];
        EXPECT_LE(std::fabs(y - exact), bound * 1.001 + 1e-6)
            << "n " << n << " m " << m;
        dot += y * exact;
        norm += exact * exact;
      }
    }
    EXPECT_NEAR(dot / norm, 1.0, 0.01); // not 0.665
  }
  // Values of two magnitudes are not ternary: absmean as before.
  std::vector<float> V = W;
  V[1] = 2 * V[1] + (V[1] == 0.0f ? a : 0.0f);
  const PackedWeights P = quantize(Format::parse("i2s"), V.data(), M, K);
  double sum = 0.0;
  for (float v : V)
    sum += std::fabs(double(v));
  EXPECT_EQ(P.tensor_scale, float(sum / double(V.size())));
}

TEST(Quantize, UnsignedGroupByHand) {
  // w2g32: lo = min(-1, 0) = -1, hi = 2, s = 3 / 3 = 1, z = 1.
  std::vector<float> W(32, 0.0f);
  W[0] = -1.0f;
  W[1] = 2.0f;
  W[2] = 0.5f; // nearbyint(0.5) = 0 (ties to even), + z = 1
  W[3] = 1.5f; // nearbyint(1.5) = 2, + z = 3
  const PackedWeights P = quantize(Format::parse("w2g32"), W.data(), 1, 32);
  EXPECT_EQ(P.scales, (std::vector<uint16_t>{0x3C00}));
  EXPECT_EQ(P.zeros, (std::vector<uint16_t>{0x3C00}));
  // codes 0, 3, 1, 3, then 1 (W = 0) everywhere: byte 0 = 0 | 3<<2 | 1<<4 |
  // 3<<6 = 0xDC, the others 0x55.
  std::vector<uint8_t> expected(8, 0x55);
  expected[0] = 0xDC;
  EXPECT_EQ(P.codes, expected);
}

TEST(Quantize, RejectsNonFiniteWeights) {
  const Format f = Format::parse("w2g32");
  std::vector<float> W(3 * 64, 0.5f);
  W[64 + 17] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(error_of([&] { quantize(f, W.data(), 3, 64); }),
            "weight [1, 17] is NaN");
  W[64 + 17] = 0.0f;
  W[2 * 64 + 5] = std::numeric_limits<float>::infinity();
  EXPECT_EQ(error_of([&] { quantize(f, W.data(), 3, 64); }),
            "weight [2, 5] is +inf");
  W[3] = -std::numeric_limits<float>::infinity();
  EXPECT_EQ(error_of([&] { quantize(f, W.data(), 3, 64); }),
            "weight [0, 3] is -inf");
}

TEST(Quantize, RejectsIllegalShapes) {
  std::vector<float> W(200, 1.0f);
  EXPECT_EQ(
      error_of([&] { quantize(Format::parse("w2g64"), W.data(), 2, 100); }),
      "w2g64 needs K % 64 == 0, got K = 100");
  EXPECT_EQ(error_of([&] { quantize(Format::parse("tl1"), W.data(), 1, 7); }),
            "tl1 needs K even, got K = 7");
  EXPECT_EQ(error_of([&] { quantize(Format::parse("i2s"), W.data(), 0, 7); }),
            "M must be >= 1, got M = 0");
}

TEST(Quantize, RejectsScalesBeyondFp16) {
  std::vector<float> W(64, 1e5f);
  W[40] = -1e5f;
  // w2: s = 2e5 / 3 > 65504 in group 1 only.
  EXPECT_EQ(
      error_of([&] { quantize(Format::parse("w2g32"), W.data(), 1, 64); }),
      "w2g32 row 0 group 1: scale 66666.7 overflows fp16 (weights too "
      "large for this format)");
  // w1: mean |W| = 1e5.
  EXPECT_NE(error_of([&] {
              quantize(Format::parse("w1g32"), W.data(), 2, 32);
            }).find("w1g32 row 0 group 0: scale 100000 overflows fp16"),
            std::string::npos);
  // q4_0: d = 1e5 / -8 = -12500 fits; 1e6 / -8 does not.
  EXPECT_NO_THROW(quantize(Format::parse("q4_0"), W.data(), 1, 64));
  W[33] = 1e6f;
  EXPECT_EQ(error_of([&] { quantize(Format::parse("q4_0"), W.data(), 1, 64); }),
            "q4_0 row 0 block 1: scale d = -125000 overflows fp16 (weights "
            "too large for q4_0)");
}

TEST(Quantize, UnpackRowChecksRow) {
  std::vector<float> W(8, 1.0f);
  const PackedWeights P = quantize(Format::parse("i2s"), W.data(), 2, 4);
  int8_t q[4];
  EXPECT_EQ(error_of([&] { unpack_row(P, 2, q); }),
            "row 2 is out of range for 2 rows");
  EXPECT_EQ(error_of([&] { unpack_row(P, -1, q); }),
            "row -1 is out of range for 2 rows");
}

} // namespace
} // namespace lowbit
