//===- half.cpp - IEEE binary16 and bfloat16 conversion -------------------===//
//
// Portable integer implementation (no F16C), correctly rounded to nearest
// even for normals, subnormals and overflow. A NaN becomes the quiet NaN
// 0x7E00 with the input's sign, as ggml's portable converter does; a half NaN
// widens with its payload kept. bfloat16 is the top half of a float:
// rounding adds 0x7FFF plus the kept half's lowest bit (ties to even), which
// also carries into the exponent and overflows to infinity correctly.
//
//===----------------------------------------------------------------------===//

#include "lowbit/format.h"

#include <cstring>

namespace lowbit {

static uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

static float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

// Shifts `mantissa` right by `shift` (1..31) rounding to nearest even.
static uint32_t shift_round_even(uint32_t mantissa, int shift) {
  uint32_t kept = mantissa >> shift;
  uint32_t rest = mantissa & ((1u << shift) - 1);
  uint32_t half = 1u << (shift - 1);
  if (rest > half || (rest == half && (kept & 1)))
    ++kept;
  return kept;
}

uint16_t float_to_half(float f) {
  uint32_t u = bits_of(f);
  uint16_t sign = uint16_t((u >> 16) & 0x8000);
  int exponent = int((u >> 23) & 0xFF);
  uint32_t mantissa = u & 0x7FFFFF;

  if (exponent == 0xFF)
    return sign | (mantissa ? 0x7E00 : 0x7C00);
  // Unbiased exponent e: the value is 1.m * 2^e for normal floats.
  int e = exponent - 127;
  if (e > 15)
    return sign | 0x7C00;
  if (e >= -14) {
    // Normal half. A carry out of the rounded mantissa correctly bumps the
    // exponent, and from 2^15 * (2 - 2^-11) up produces infinity (0x7C00).
    uint32_t rounded = shift_round_even(mantissa, 13);
    return uint16_t(sign | ((uint32_t(e + 15) << 10) + rounded));
  }
  // Subnormal half (or zero): the value in units of 2^-24 is
  // (1.m) * 2^(e + 24); float subnormals and anything below 2^-25 round to
  // zero or to the smallest subnormal.
  if (e < -25)
    return sign;
  uint32_t significand = mantissa | 0x800000; // 24 bits: 1.m * 2^23
  // value / 2^-24 = significand * 2^(e + 24 - 23) = significand >> (-1 - e)
  return uint16_t(sign | shift_round_even(significand, -1 - e));
}

float half_to_float(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exponent = (h >> 10) & 0x1F;
  uint32_t mantissa = h & 0x3FF;
  if (exponent == 0x1F)
    return float_of(sign | 0x7F800000 | (mantissa << 13));
  if (exponent != 0)
    return float_of(sign | ((exponent + 112) << 23) | (mantissa << 13));
  // Subnormal or zero: mantissa * 2^-24, exact in float.
  float magnitude = float(mantissa) * float_of(0x33800000); // 2^-24
  return sign ? -magnitude : magnitude;
}

uint16_t float_to_bf16(float f) {
  uint32_t u = bits_of(f);
  if ((u & 0x7FFFFFFF) > 0x7F800000)
    return uint16_t((u >> 16) | 0x0040);
  return uint16_t((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
}

float bf16_to_float(uint16_t h) { return float_of(uint32_t(h) << 16); }

} // namespace lowbit
