//===- half_test.cpp - fp16 conversion ------------------------------------===//

#include "lowbit/format.h"

#include "naive.h"
#include "test_util.h"

#include <cmath>
#include <limits>

namespace lowbit {
namespace {

using test::bits;

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

TEST(Half, KnownBitPatterns) {
  EXPECT_EQ(float_to_half(0.0f), 0x0000);
  EXPECT_EQ(float_to_half(-0.0f), 0x8000);
  EXPECT_EQ(float_to_half(1.0f), 0x3C00);
  EXPECT_EQ(float_to_half(-2.0f), 0xC000);
  EXPECT_EQ(float_to_half(0.5f), 0x3800);
  EXPECT_EQ(float_to_half(65504.0f), 0x7BFF);              // largest finite
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -14)), 0x0400); // smallest normal
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -24)), 0x0001); // smallest subnormal
  EXPECT_EQ(float_to_half(std::ldexp(1023.0f, -24)), 0x03FF);
  EXPECT_EQ(float_to_half(0.1f), 0x2E66);
}

TEST(Half, RoundsToNearestEven) {
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to the even 0x3C00.
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11)), 0x3C00);
  // 1 + 3 * 2^-11 is halfway between 0x3C01 and 0x3C02: to even 0x3C02.
  EXPECT_EQ(float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);
  // Just above the tie rounds up.
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)),
            0x3C01);
  // 2^-25 is halfway between 0 and the smallest subnormal: to 0.
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -25)), 0x0000);
  // 3 * 2^-25 is halfway between subnormals 1 and 2: to 2.
  EXPECT_EQ(float_to_half(3 * std::ldexp(1.0f, -25)), 0x0002);
  // Anything above 2^-25 rounds up to the smallest subnormal.
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -25) * 1.0001f), 0x0001);
  // Rounding carries from the largest subnormal into the smallest normal.
  EXPECT_EQ(float_to_half(std::ldexp(1023.5f, -24)), 0x0400);
  // 65520 is halfway between 65504 and 2^16 (which does not exist): inf.
  EXPECT_EQ(float_to_half(65519.99f), 0x7BFF);
  EXPECT_EQ(float_to_half(65520.0f), 0x7C00);
}

TEST(Half, InfinitiesAndNaN) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(float_to_half(inf), 0x7C00);
  EXPECT_EQ(float_to_half(-inf), 0xFC00);
  EXPECT_EQ(float_to_half(1e10f), 0x7C00);
  EXPECT_EQ(float_to_half(-1e10f), 0xFC00);
  EXPECT_EQ(float_to_half(std::numeric_limits<float>::quiet_NaN()), 0x7E00);
  EXPECT_EQ(float_to_half(-std::numeric_limits<float>::quiet_NaN()), 0xFE00);
  // A NaN whose payload lies only in the low mantissa bits stays a NaN.
  EXPECT_EQ(float_to_half(from_bits(0x7F800001)), 0x7E00);
  EXPECT_EQ(float_to_half(std::numeric_limits<float>::denorm_min()), 0x0000);

  EXPECT_EQ(half_to_float(0x7C00), inf);
  EXPECT_EQ(half_to_float(0xFC00), -inf);
  EXPECT_TRUE(std::isnan(half_to_float(0x7E00)));
  EXPECT_TRUE(std::isnan(half_to_float(0x7C01)));
}

TEST(Half, ToFloatKnownValues) {
  EXPECT_EQ(bits(half_to_float(0x3C00)), bits(1.0f));
  EXPECT_EQ(bits(half_to_float(0x7BFF)), bits(65504.0f));
  EXPECT_EQ(bits(half_to_float(0x0001)), bits(std::ldexp(1.0f, -24)));
  EXPECT_EQ(bits(half_to_float(0x03FF)), bits(std::ldexp(1023.0f, -24)));
  EXPECT_EQ(bits(half_to_float(0x8000)), bits(-0.0f));
  EXPECT_EQ(bits(half_to_float(0x8001)), bits(-std::ldexp(1.0f, -24)));
  EXPECT_EQ(bits(half_to_float(0xC000)), bits(-2.0f));
}

// Every half widens exactly as the compiler's _Float16 does.
TEST(Half, AllHalvesMatchCompiler) {
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    const float ours = half_to_float(static_cast<uint16_t>(h));
    const float theirs = test::ref_float(static_cast<uint16_t>(h));
    if (std::isnan(theirs))
      ASSERT_TRUE(std::isnan(ours)) << h;
    else
      ASSERT_EQ(bits(ours), bits(theirs)) << "half 0x" << std::hex << h;
  }
}

// A dense sweep of float bit patterns (every 4093rd, plus every pattern
// around each half boundary) rounds as the compiler's _Float16 does.
TEST(Half, FloatSweepMatchesCompiler) {
  auto check = [](uint32_t u) {
    const float f = from_bits(u);
    const uint16_t ours = float_to_half(f);
    if (std::isnan(f))
      ASSERT_TRUE((ours & 0x7C00) == 0x7C00 && (ours & 0x3FF)) << u;
    else
      ASSERT_EQ(ours, test::ref_half(f)) << "float bits 0x" << std::hex << u;
  };
  for (uint64_t u = 0; u <= 0xFFFFFFFFu; u += 4093)
    check(static_cast<uint32_t>(u));
  for (uint32_t h = 0; h < 0x7C00; ++h) {
    // The midpoint between half h and h + 1, and its float neighbours.
    const float lo = test::ref_float(static_cast<uint16_t>(h));
    const float hi = h + 1 < 0x7C00
                         ? test::ref_float(static_cast<uint16_t>(h + 1))
                         : 65536.0f;
    const uint32_t mid = bits((lo + hi) / 2);
    for (uint32_t d = 0; d < 3; ++d) {
      check(mid - 1 + d);
      check((mid - 1 + d) | 0x80000000u);
    }
  }
}

TEST(BFloat16, KnownBitPatterns) {
  EXPECT_EQ(float_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(float_to_bf16(-2.0f), 0xC000);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to the even 0x3F80;
  // 1 + 3 * 2^-8 ties to the even 0x3F82; just above a tie rounds up.
  EXPECT_EQ(float_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3F80);
  EXPECT_EQ(float_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3F82);
  EXPECT_EQ(float_to_bf16(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)),
            0x3F81);
  // The largest float rounds up to infinity; NaN stays NaN.
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::max()), 0x7F80);
  EXPECT_EQ(float_to_bf16(-std::numeric_limits<float>::max()), 0xFF80);
  EXPECT_EQ(float_to_bf16(from_bits(0x7F800001)) & 0x7FC0, 0x7FC0);
  EXPECT_EQ(bits(bf16_to_float(0x3F80)), bits(1.0f));
  EXPECT_EQ(bits(bf16_to_float(0x8001)), 0x80010000u);
}

// The bfloat16 nearest to f by distance in double (ties to the even
// pattern): the two candidates are f's bits truncated and the next
// pattern away from zero (past the largest finite value: infinity, which
// RNE picks from the midpoint 2^128 - 2^119 up).
uint16_t nearestBf16(float f) {
  const uint32_t u = bits(f);
  const uint16_t lo = uint16_t(u >> 16), hi = uint16_t(lo + 1);
  const double x = std::fabs(double(f));
  const double a = std::fabs(double(bf16_to_float(lo)));
  const double b = (hi & 0x7FFF) == 0x7F80 ? std::ldexp(1.0, 128)
                                           : std::fabs(double(bf16_to_float(hi)));
  if (x - a < b - x || (x - a == b - x && (lo & 1) == 0))
    return lo;
  return hi;
}

// A sweep of float bit patterns (every 4093rd, plus each midpoint between
// neighbouring bfloat16 values and its neighbours) rounds to the nearest
// bfloat16 found by distance, and every bfloat16 widens back to itself.
TEST(BFloat16, FloatSweepMatchesNearest) {
  auto check = [](uint32_t u) {
    const float f = from_bits(u);
    if (!std::isfinite(f))
      return;
    ASSERT_EQ(float_to_bf16(f), nearestBf16(f))
        << "float bits 0x" << std::hex << u;
  };
  for (uint64_t u = 0; u <= 0xFFFFFFFFu; u += 4093)
    check(static_cast<uint32_t>(u));
  for (uint32_t h = 0; h < 0x7F80; ++h) {
    const uint32_t mid = (h << 16) | 0x8000;
    for (uint32_t d = 0; d < 3; ++d) {
      check(mid - 1 + d);
      check((mid - 1 + d) | 0x80000000u);
    }
    ASSERT_EQ(float_to_bf16(bf16_to_float(uint16_t(h))), h);
  }
}

} // namespace
} // namespace lowbit
