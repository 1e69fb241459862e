//===- q4_0_test.cpp - q4_0 bytes derived by hand from ggml's layout ------===//
//
// ggml's quantize_row_q4_0_ref per block of 32: amax/max = the first element
// of largest |x| and its sign, d = max / -8, id = 1 / d (0 if d == 0),
// code = MIN(15, (int8_t)(x * id + 8.5f)), block = fp16 d (little-endian),
// then qs[j] = code[j] | code[j + 16] << 4. Truncating x * id + 8.5 >= 0
// rounds x * id halves up, which the ties below tell apart from nearbyint.
//
//===----------------------------------------------------------------------===//

#include "lowbit/format.h"
#include "lowbit/packed_file.h"

#include "test_util.h"

#include <iterator>

namespace lowbit {
namespace {

// Row 0 = blocks A, B; row 1 = blocks C, D.
std::vector<float> hand_weights() {
  std::vector<float> W(128, 0.0f);
  // Block A: max |x| = 4 first at j = 5 (x = -4; the +4 at j = 7 ties and
  // does not replace it), so d = -4 / -8 = 0.5 (fp16 0x3800), id = 2 and
  // code = trunc(2x + 8.5), capped at 15.
  const float a[32] = {
      0.0f,   // 8.5 -> 8
      1.0f,   // 10.5 -> 10
      -1.0f,  // 6.5 -> 6
      0.25f,  // 9.0 -> 9 (x id = 0.5 rounds half up, not to even 8)
      0.2f,   // 8.8999996 -> 8
      -4.0f,  // 0.5 -> 0
      3.75f,  // 16.0 -> 16 -> MIN 15
      4.0f,   // 16.5 -> 16 -> MIN 15
      -3.75f, // 1.0 -> 1
      0.5f,   // 9.5 -> 9
      -0.5f,  // 7.5 -> 7
      2.0f,   // 12.5 -> 12
      -2.0f,  // 4.5 -> 4
      1.5f,   // 11.5 -> 11
      -1.5f,  // 5.5 -> 5
      0.7f,   // 9.8999996 -> 9
      -0.7f,  // 7.1000000 -> 7
      3.0f,   // 14.5 -> 14
      -3.0f,  // 2.5 -> 2
      0.1f,   // 8.7 -> 8
      -0.25f, // 8.0 -> 8
      2.5f,   // 13.5 -> 13
      -2.5f,  // 3.5 -> 3
      3.5f,   // 15.5 -> 15
      -3.5f,  // 1.5 -> 1
      1.25f,  // 11.0 -> 11
      -1.25f, // 6.0 -> 6
      0.0f,   // 8.5 -> 8
      2.75f,  // 14.0 -> 14
      -2.75f, // 3.0 -> 3
      0.75f,  // 10.0 -> 10
      -0.75f, // 7.0 -> 7 (x id = -1.5 rounds half up, not to even 6)
  };
  std::copy(a, a + 32, W.begin());
  // Block B: all zeros. max = +0, so d = 0 / -8 = -0 (fp16 0x8000), id = 0
  // and every code is trunc(8.5) = 8.
  // Block C: max |x| = 8 first at j = 0 (x = +8), d = -1 (fp16 0xBC00),
  // id = -1, code = trunc(8.5 - x).
  float *c = &W[64];
  c[0] = 8.0f;   // 0.5 -> 0
  c[1] = -8.0f;  // 16.5 -> 16 -> 15 (ties the max, does not replace it)
  c[2] = 0.5f;   // 8.0 -> 8
  c[3] = -0.5f;  // 9.0 -> 9
  c[16] = 3.0f;  // 5.5 -> 5
  c[17] = -3.0f; // 11.5 -> 11
  c[31] = 7.9f;  // 0.5999999 -> 0
  // Block D: max = -0.1 at j = 0, d = 0.0125000002 -> fp16 0x2266 (mantissa
  // 0.6 * 1024 = 614.4 -> 614), id = 1 / d rounds to exactly 80.
  float *d = &W[96];
  d[0] = -0.1f; // -8 + 8.5 = 0.5 -> 0
  d[20] = 0.1f; // 8 + 8.5 = 16.5 -> 16 -> 15
  return W;
}

const std::vector<uint8_t> kHandBytes = {
    // Block A: d = 0x3800, then code[j] | code[j + 16] << 4.
    0x00, 0x38,                                     //
    0x78, 0xEA, 0x26, 0x89, 0x88, 0xD0, 0x3F, 0xFF, // j = 0..7
    0x11, 0xB9, 0x67, 0x8C, 0xE4, 0x3B, 0xA5, 0x79, // j = 8..15
    // Block B: d = -0 = 0x8000, codes 8 | 8 << 4.
    0x00, 0x80,                                     //
    0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, //
    0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, //
    // Block C: d = 0xBC00; (c0, c16) = (0, 5), (c1, c17) = (15, 11),
    // (8, 8), (9, 8), ..., (c15, c31) = (8, 0).
    0x00, 0xBC,                                     //
    0x50, 0xBF, 0x88, 0x89, 0x88, 0x88, 0x88, 0x88, //
    0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x08, //
    // Block D: d = 0x2266; (c0, c16) = (0, 8), (c4, c20) = (8, 15).
    0x66, 0x22,                                     //
    0x80, 0x88, 0x88, 0x88, 0xF8, 0x88, 0x88, 0x88, //
    0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, //
};

TEST(Q4_0, BytesDerivedByHand) {
  const std::vector<float> W = hand_weights();
  const PackedWeights P = quantize(Format::parse("q4_0"), W.data(), 2, 64);
  EXPECT_EQ(P.row_bytes(), 36);
  EXPECT_EQ(P.codes, kHandBytes);
  EXPECT_TRUE(P.scales.empty());
  EXPECT_TRUE(P.zeros.empty());
  EXPECT_EQ(P.tensor_scale, 0.0f);
}

TEST(Q4_0, UnpackAndDequantize) {
  const std::vector<float> W = hand_weights();
  const PackedWeights P = quantize(Format::parse("q4_0"), W.data(), 2, 64);
  int8_t q[64];
  unpack_row(P, 0, q);
  const int8_t block_a[32] = {8,  10, 6,  9,  8, 0, 15, 15, 1,  9, 7,
                              12, 4,  11, 5,  9, 7, 14, 2,  8,  8, 13,
                              3,  15, 1,  11, 6, 8, 14, 3,  10, 7};
  for (int j = 0; j < 32; ++j) {
    EXPECT_EQ(q[j], block_a[j]) << j;
    EXPECT_EQ(q[32 + j], 8) << j;
  }
  std::vector<float> D(128);
  dequantize(P, D.data());
  EXPECT_EQ(D[5], -4.0f);  // 0.5 * (0 - 8)
  EXPECT_EQ(D[6], 3.5f);   // 0.5 * (15 - 8): capped
  EXPECT_EQ(D[4], 0.0f);   // 0.5 * (8 - 8): truncated 0.2 to 0
  EXPECT_EQ(D[40], 0.0f);  // block B: -0 * 0
  EXPECT_EQ(D[64], 8.0f);  // -1 * (0 - 8)
  EXPECT_EQ(D[65], -7.0f); // -1 * (15 - 8)
}

TEST(Q4_0, CodesAreTheGgufBlocks) {
  const std::vector<float> W = hand_weights();
  const PackedWeights P = quantize(Format::parse("q4_0"), W.data(), 2, 64);
  EXPECT_EQ(P.codes, kHandBytes);
}

// Tiny maxima: when 1 / d overflows to infinity, x * id is NaN or +-inf and
// ggml's x86 code stores code 0 (cvttss2si gives INT32_MIN, low byte 0).
TEST(Q4_0, InfiniteInverseScale) {
  std::vector<float> W(32, 0.0f);
  W[0] = 1e-38f;  // d = -1.25e-39, 1 / d = -inf
  W[1] = -5e-39f; // x * id = +inf
  const PackedWeights P = quantize(Format::parse("q4_0"), W.data(), 1, 32);
  std::vector<uint8_t> expected(18, 0x00);
  expected[1] = 0x80; // d = -1.25e-39 is -0 in fp16
  EXPECT_EQ(P.codes, expected);
}

} // namespace
} // namespace lowbit
