//===- activation_test.cpp - int8 activation quantization -----------------===//

#include "lowbit/activation.h"
#include "lowbit/reference.h"

#include "naive.h"
#include "test_util.h"

#include <limits>

namespace lowbit {
namespace {

using test::bits;
using test::error_of;

TEST(Activation, BlockPerFormat) {
  EXPECT_EQ(activation_block(Format::parse("i2s"), 1000), 1000);
  EXPECT_EQ(activation_block(Format::parse("tl2"), 6), 6);
  EXPECT_EQ(activation_block(Format::parse("w2g128"), 256), 32);
  EXPECT_EQ(activation_block(Format::parse("q4_0"), 64), 32);
}

TEST(Activation, MatchesNaive) {
  for (int64_t block : {32, 96, 160}) {
    const int64_t N = 3, K = 480;
    std::vector<float> X = test::random_values(N * K, uint32_t(block), 3.0f);
    const QuantizedActivations A = quantize_activations(X.data(), N, K, block);
    const test::NaiveActivations R = test::naive_activations(X, N, K, block);
    EXPECT_EQ(A.N, N);
    EXPECT_EQ(A.K, K);
    EXPECT_EQ(A.block, block);
    EXPECT_EQ(A.q, R.q);
    ASSERT_EQ(A.scales.size(), R.s.size());
    for (size_t i = 0; i < R.s.size(); ++i)
      EXPECT_EQ(bits(A.scales[i]), bits(R.s[i]));
  }
}

TEST(Activation, ZeroRows) {
  std::vector<float> X(2 * 64, 0.0f);
  X[64] = -0.0f;
  const QuantizedActivations A = quantize_activations(X.data(), 2, 64, 32);
  for (float s : A.scales)
    EXPECT_EQ(s, 127.0f / 1e-5f);
  for (int8_t q : A.q)
    EXPECT_EQ(q, 0);
}

TEST(Activation, TiesRoundToEven) {
  // max |x| = 127 makes s = 1 exactly, so q = nearbyint(x).
  const float X[8] = {127.0f, 2.5f, 3.5f, -2.5f, 0.5f, 1.5f, -0.5f, -127.0f};
  const QuantizedActivations A = quantize_activations(X, 1, 8, 8);
  EXPECT_EQ(A.scales[0], 1.0f);
  EXPECT_EQ(A.q, (std::vector<int8_t>{127, 2, 4, -2, 0, 2, 0, -127}));
}

TEST(Activation, RejectsNonFinite) {
  const float inf = std::numeric_limits<float>::infinity();
  for (auto [value, name] :
       {std::pair{std::numeric_limits<float>::quiet_NaN(), "NaN"},
        std::pair{inf, "+inf"}, std::pair{-inf, "-inf"}}) {
    std::vector<float> X(3 * 64, 1.0f);
    X[2 * 64 + 33] = value;
    EXPECT_EQ(error_of([&] { quantize_activations(X.data(), 3, 64, 32); }),
              std::string("activation [2, 33] is ") + name);
    EXPECT_EQ(error_of([&] { quantize_activations(X.data(), 3, 64, 64); }),
              std::string("activation [2, 33] is ") + name);
  }
}

TEST(Activation, RejectsBadShapes) {
  std::vector<float> X(64, 1.0f);
  EXPECT_EQ(error_of([&] { quantize_activations(X.data(), 0, 64, 32); }),
            "activations [0, 64]: N and K must be >= 1");
  EXPECT_EQ(error_of([&] { quantize_activations(X.data(), 1, 48, 32); }),
            "activations [1, 48]: K must be a multiple of the block 32");
  EXPECT_EQ(error_of([&] { quantize_activations(X.data(), 1, 64, 0); }),
            "activations [1, 64]: K must be a multiple of the block 0");
}

// One scale over a 4M-long row (the ternary path) stays exact.
TEST(Activation, HugeTernaryRow) {
  const int64_t K = int64_t(1) << 22;
  std::vector<float> X(static_cast<size_t>(K));
  for (int64_t k = 0; k < K; ++k)
    X[k] = static_cast<float>(k % 255) - 127.0f; // -127..127, max 127
  X[K - 1] = -254.0f;                            // the new max: s = 0.5
  const QuantizedActivations A = quantize_activations(X.data(), 1, K, K);
  ASSERT_EQ(A.scales.size(), 1u);
  EXPECT_EQ(A.scales[0], 0.5f);
  EXPECT_EQ(A.q[0], -64);  // -127 * 0.5 = -63.5 -> -64 (even)
  EXPECT_EQ(A.q[1], -63);  // -126 * 0.5
  EXPECT_EQ(A.q[254], 64); // 127 * 0.5 = 63.5 -> 64 (even)
  EXPECT_EQ(A.q[K - 1], -127);
}

TEST(Activation, ReductionLimitIsAFormatRule) {
  const Format i2s = Format::parse("i2s");
  EXPECT_EQ(i2s.shape_error(1, max_reduction_length()), "");
  EXPECT_NE(i2s.shape_error(1, max_reduction_length() + 1), "");
}

} // namespace
} // namespace lowbit
