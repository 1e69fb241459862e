//===- reference_test.cpp - the scalar reference mpGEMM -------------------===//

#include "lowbit/reference.h"

#include "naive.h"
#include "test_util.h"

#include <cmath>

namespace lowbit {
namespace {

using test::bits;
using test::error_of;

struct Case {
  const char *format;
  std::vector<int64_t> Ks;
};

void PrintTo(const Case &c, std::ostream *os) { *os << c.format; }

class ReferenceTest : public ::testing::TestWithParam<Case> {};

// The runtime's Y equals, bit for bit, the formula evaluated by naive.cpp
// (int64 accumulators, independent quantizers). For the lossy group formats
// the normalized error ||Y - Y64|| / ||Y64|| against the fp64 product of the
// dequantized weights with the fp32 X must stay <= 1e-2: over all shapes of a
// format together, and per shape once Y has at least 31 elements (with one or
// a few outputs the ratio is a plain relative error, unbounded where a dot
// product happens to cancel).
TEST_P(ReferenceTest, MatchesNaiveFormula) {
  const Format f = Format::parse(GetParam().format);
  uint32_t seed = 100;
  double total_err = 0.0, total_norm = 0.0;
  for (int64_t M : {1, 3, 31}) {
    for (int64_t K : GetParam().Ks) {
      for (int64_t N : {1, 3, 16}) {
        SCOPED_TRACE(f.name() + " M=" + std::to_string(M) +
                     " K=" + std::to_string(K) + " N=" + std::to_string(N));
        const std::vector<float> W = test::random_values(M * K, seed++);
        const std::vector<float> X = test::random_values(N * K, seed++, 2.0f);
        const PackedWeights P = quantize(f, W.data(), M, K);
        std::vector<float> Y(static_cast<size_t>(N * M));
        reference_mpgemm(P, X.data(), N, Y.data());

        const test::NaiveWeights NW = test::naive_quantize(f, W, M, K);
        const int64_t block = f.is_ternary() ? K : 32;
        const test::NaiveActivations NA =
            test::naive_activations(X, N, K, block);
        const std::vector<float> expected =
            test::naive_mpgemm(f, NW, NA, M, N, K);
        for (int64_t i = 0; i < N * M; ++i)
          ASSERT_EQ(bits(Y[i]), bits(expected[i]))
              << "Y[" << i / M << ", " << i % M << "] = " << Y[i]
              << ", expected " << expected[i];

        if (f.is_ternary())
          continue;
        double err = 0.0, norm = 0.0;
        for (int64_t n = 0; n < N; ++n)
          for (int64_t m = 0; m < M; ++m) {
            double exact = 0.0;
            for (int64_t k = 0; k < K; ++k)
              exact += double(X[n * K + k]) * double(NW.dequant[m * K + k]);
            const double diff = double(Y[n * M + m]) - exact;
            err += diff * diff;
            norm += exact * exact;
          }
        if (M * N >= 31)
          EXPECT_LE(std::sqrt(err / norm), 1e-2);
        total_err += err;
        total_norm += norm;
      }
    }
  }
  if (!f.is_ternary())
    EXPECT_LE(std::sqrt(total_err / total_norm), 1e-2);
}

INSTANTIATE_TEST_SUITE_P(
    Formats, ReferenceTest,
    ::testing::Values(Case{"i2s", {1, 7, 130}}, Case{"tl1", {2, 34, 130}},
                      Case{"tl2", {2, 4, 34, 130}}, Case{"w1g32", {32, 160}},
                      Case{"w1g128", {384}}, Case{"w2g64", {64, 192}},
                      Case{"w3g32", {96}}, Case{"w4g32", {32, 160}},
                      Case{"w4g128", {384}}, Case{"q4_0", {32, 160}}),
    [](const auto &info) { return std::string(info.param.format); });

// The int32 accumulator at the largest K a ternary format allows.
TEST(Reference, TernaryAtReductionLimit) {
  const int64_t K = max_reduction_length();
  std::vector<float> W(static_cast<size_t>(K), 1.0f);  // s_w = 1, q = 1
  std::vector<float> X(static_cast<size_t>(K), -3.0f); // s_x = 127/3, Xq = -127
  const PackedWeights P = quantize(Format::parse("i2s"), W.data(), 1, K);
  float Y = 0.0f;
  reference_mpgemm(P, X.data(), 1, &Y);
  const float s_x = 127.0f / 3.0f;
  EXPECT_EQ(bits(Y), bits(static_cast<float>(int64_t{-127} * K) / s_x));
}

TEST(Reference, RejectsMismatchedOperands) {
  std::vector<float> W(2 * 64, 0.5f), X(3 * 64, 1.0f);
  const PackedWeights P = quantize(Format::parse("w2g32"), W.data(), 2, 64);
  std::vector<float> Y(6);

  QuantizedActivations A = quantize_activations(X.data(), 3, 64, 32);
  EXPECT_NO_THROW(reference_mpgemm(P, A, Y.data()));

  QuantizedActivations wrong_k = quantize_activations(X.data(), 2, 96, 32);
  EXPECT_EQ(error_of([&] { reference_mpgemm(P, wrong_k, Y.data()); }),
            "reference mpgemm: activations have K = 96, weights K = 64");

  QuantizedActivations wrong_block = quantize_activations(X.data(), 3, 64, 64);
  EXPECT_EQ(error_of([&] { reference_mpgemm(P, wrong_block, Y.data()); }),
            "reference mpgemm: activation block 64, w2g32 needs 32");

  A.scales.pop_back();
  EXPECT_EQ(error_of([&] { reference_mpgemm(P, A, Y.data()); }),
            "reference mpgemm: quantized activations [3, 64] have "
            "inconsistent array sizes");

  PackedWeights broken = P;
  broken.codes.pop_back();
  EXPECT_NE(error_of([&] { reference_mpgemm(broken, X.data(), 3, Y.data()); }),
            "");
}

} // namespace
} // namespace lowbit
