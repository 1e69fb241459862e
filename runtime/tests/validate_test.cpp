//===- validate_test.cpp - consistency checks of PackedWeights ------------===//

#include "lowbit/format.h"

#include "naive.h"
#include "test_util.h"

#include <limits>

namespace lowbit {
namespace {

using test::error_of;

PackedWeights packed(const char *format, int64_t M, int64_t K) {
  const std::vector<float> W = test::random_values(M * K, 11);
  return quantize(Format::parse(format), W.data(), M, K);
}

TEST(Validate, AcceptsQuantizedWeights) {
  for (const char *f : {"i2s", "tl1", "tl2", "w1g32", "w3g64", "q4_0"})
    EXPECT_NO_THROW(validate(packed(f, 3, 64))) << f;
}

TEST(Validate, ArraySizes) {
  PackedWeights P = packed("w2g32", 2, 64);
  P.codes.push_back(0);
  EXPECT_EQ(error_of([&] { validate(P); }),
            "w2g32 weights [2, 64]: codes has 33 entries, expected 32");
  P = packed("w2g32", 2, 64);
  P.scales.pop_back();
  EXPECT_EQ(error_of([&] { validate(P); }),
            "w2g32 weights [2, 64]: scales has 3 entries, expected 4");
  P = packed("w1g32", 2, 64);
  P.zeros.push_back(0);
  EXPECT_EQ(error_of([&] { validate(P); }),
            "w1g32 weights [2, 64]: zeros has 1 entries, expected 0");
  P = packed("w1g32", 2, 64);
  P.K = 48;
  EXPECT_EQ(error_of([&] { validate(P); }),
            "w1g32 needs K % 32 == 0, got K = 48");
}

TEST(Validate, TernaryCodes) {
  // i2s K = 8: two bytes per row, code k at bits 2k..2k+1.
  PackedWeights P = packed("i2s", 2, 8);
  P.codes[3] = 0xC0 | (P.codes[3] & 0x3F); // row 1, k = 7 -> code 3
  EXPECT_EQ(error_of([&] { validate(P); }),
            "i2s row 1: code 3 at k = 7 is out of range 0..2");

  // tl1 K = 6: 3 indices in 2 bytes; index 9 is not a pair of ternaries.
  P = packed("tl1", 1, 6);
  P.codes[0] = 0x09 | (P.codes[0] & 0xF0);
  EXPECT_EQ(error_of([&] { validate(P); }),
            "tl1 row 0: index 9 at k = 0..1 is out of range 0..8");
  P = packed("tl1", 1, 6);
  P.codes[1] |= 0x10; // padding nibble after the third index
  EXPECT_EQ(error_of([&] { validate(P); }),
            "tl1 row 0: non-zero padding bits after the index stream");

  // tl2 K = 12: 4 triples (2 index bytes, 1 sign byte), no tail.
  P = packed("tl2", 1, 12);
  P.codes[1] = 0xE0 | (P.codes[1] & 0x0F); // triple 3 -> index 14
  EXPECT_EQ(error_of([&] { validate(P); }),
            "tl2 row 0: index 14 at k = 9..11 is out of range 0..13");
  P = packed("tl2", 1, 12);
  P.codes[0] &= 0xF0; // triple 0 -> index 0 ...
  P.codes[2] |= 0x01; // ... with its sign set
  EXPECT_EQ(error_of([&] { validate(P); }),
            "tl2 row 0: sign bit set on the zero triple at k = 0..2");
  P = packed("tl2", 1, 12);
  P.codes[2] |= 0x10; // sign bits 4..7 are padding
  EXPECT_EQ(error_of([&] { validate(P); }),
            "tl2 row 0: non-zero padding bits after the sign stream");
  // K = 10: 2 triples, then a tl1 tail of 4 weights at byte 2.
  P = packed("tl2", 1, 10);
  ASSERT_EQ(P.codes.size(), 3u);
  P.codes[2] = 0xF0 | (P.codes[2] & 0x0F);
  EXPECT_EQ(error_of([&] { validate(P); }),
            "tl2 row 0: index 15 at k = 8..9 is out of range 0..8");
}

TEST(Validate, Scales) {
  const uint16_t nan = 0x7E00, inf = 0x7C00, minus_one = 0xBC00;
  for (uint16_t bad : {nan, inf, minus_one}) {
    PackedWeights P = packed("w1g32", 1, 64);
    P.scales[1] = bad;
    EXPECT_EQ(
        error_of([&] { validate(P); }).rfind("w1g32 row 0 group 1: scale", 0),
        0u);
  }
  PackedWeights P = packed("w2g32", 2, 64);
  P.zeros[3] = test::ref_half(4.0f); // w2: z in 0..3
  EXPECT_EQ(error_of([&] { validate(P); }),
            "w2g32 row 1 group 1: zero point (fp16 0x4400) is not an integer "
            "in 0..3");
  P.zeros[3] = test::ref_half(1.5f);
  EXPECT_NE(error_of([&] { validate(P); }), "");
  P.zeros[3] = 0x8000; // -0 is not how quantize stores z = 0
  EXPECT_NE(error_of([&] { validate(P); }), "");

  P = packed("q4_0", 2, 64);
  P.codes[36 + 18] = 0x00;
  P.codes[36 + 19] = 0x7C; // row 1 block 1: d = inf
  EXPECT_EQ(error_of([&] { validate(P); }),
            "q4_0 row 1 block 1: scale d is not finite");
}

TEST(Validate, TensorScale) {
  PackedWeights P = packed("tl2", 1, 6);
  P.tensor_scale = std::numeric_limits<float>::quiet_NaN();
  EXPECT_NE(error_of([&] { validate(P); }), "");
  P.tensor_scale = -1.0f;
  EXPECT_NE(error_of([&] { validate(P); }), "");
  P.tensor_scale = 0.0f;
  EXPECT_NE(error_of([&] { validate(P); }), "");
  P = packed("w4g32", 1, 32);
  P.tensor_scale = 1.0f;
  EXPECT_EQ(error_of([&] { validate(P); }),
            "w4g32: tensor scale must be 0 (unused), got 1.000000");
}

} // namespace
} // namespace lowbit
