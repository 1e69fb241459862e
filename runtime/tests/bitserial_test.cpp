//===- bitserial_test.cpp - the lut-bitserial layout of bitserial_abi.h ---===//
//
// The layout is decoded back bit by bit with an independent reading of
// bitserial_abi.h and compared with unpack_row; the kernel math of
// bitserial_abi.h (±1 tables of 4 activations as biased bytes, sums
// weighted 2^p per plane, D = (sum 2^p A_p + (2^P - 1) S) / 2) is replayed
// in scalar code and must give the integer dot product of the codes exactly.

#include "lowbit/activation.h"
#include "lowbit/bitserial.h"
#include "lowbit/error.h"

#include "test_util.h"

#include <algorithm>
#include <cmath>

namespace lowbit {
namespace {

// The unsigned code of bitserial_abi.h of an unpack_row value.
int code_of(const Format &f, int8_t q) {
  if (f.is_ternary())
    return q + 1;
  if (f.bits == 1)
    return q > 0 ? 1 : 0;
  return q;
}

// The lane order (bitserial_abi.h, LANE ORDER) holds the bytes of the row
// order permuted within each block: with two planes byte 64 half + 32 hs +
// 16 l + 2 k + p of a block is byte 64 p + 4 r + s of the row order, r = 8
// half + k, s = 2 hs + l; else byte 16 s + r of a plane vector is its byte
// 4 r + s.
TEST(BitserialLayout, LaneOrderPermutesEachBlock) {
  uint32_t seed = 11;
  for (const char *name : {"i2s", "w2g64", "w1g64", "w3g64", "w4g32"})
    for (int64_t M : {5, 40})
      for (int64_t K : {64, 4224}) {
        SCOPED_TRACE(std::string(name) + " M=" + std::to_string(M) +
                     " K=" + std::to_string(K));
        const std::vector<float> W = test::random_values(M * K, seed++);
        const PackedWeights P = quantize(Format::parse(name), W.data(), M, K);
        const UpconvertWeights rows = pack_bitserial(P);
        const UpconvertWeights lanes = pack_bitserial(P, BitplaneOrder::Lanes);
        ASSERT_EQ(lanes.codes.size(), rows.codes.size());
        EXPECT_TRUE(std::equal(lanes.scales.begin(), lanes.scales.end(),
                               rows.scales.begin(), rows.scales.end()));
        EXPECT_TRUE(std::equal(lanes.zeros.begin(), lanes.zeros.end(),
                               rows.zeros.begin(), rows.zeros.end()));
        const bool pairs = rows.bits == 2;
        for (size_t at = 0; at < lanes.codes.size(); ++at) {
          size_t from = at / 64 * 64 + at % 16 * 4 + at % 64 / 16;
          if (pairs) {
            const size_t block = at / 128 * 128, b = at % 128;
            const size_t half = b / 64, hs = b % 64 / 32, l = b % 32 / 16,
                         k = b % 16 / 2, p = b % 2;
            from = block + 64 * p + 4 * (8 * half + k) + 2 * hs + l;
          }
          ASSERT_EQ(lanes.codes[at], rows.codes[from]) << "byte " << at;
        }
      }
}

TEST(BitserialLayout, DecodesToUnpackRowAndExactMath) {
  uint32_t seed = 5;
  for (const char *name : {"i2s", "w1g64", "w2g32", "w3g64", "w4g128"})
    for (int64_t M : {1, 17, 40})
      for (int64_t K : {32, 64, 128, 256, 384, 2176, 4224, 8448}) {
        const Format f = Format::parse(name);
        if (K % std::max(f.group, 1) != 0)
          continue;
        SCOPED_TRACE(f.name() + " M=" + std::to_string(M) +
                     " K=" + std::to_string(K));
        const std::vector<float> W = test::random_values(M * K, seed++);
        const PackedWeights P = quantize(f, W.data(), M, K);
        const UpconvertWeights U = pack_bitserial(P);
        const int planes = f.bits;
        ASSERT_EQ(U.bits, planes);
        ASSERT_EQ(U.Mp, (M + 15) / 16 * 16);
        ASSERT_EQ(U.Kp, (K + 31) / 32 * 32);
        const int64_t blocks = U.Kp / 32;
        ASSERT_EQ(int64_t(U.codes.size()), U.Mp / 16 * blocks * planes * 64);

        // K panels of whole scale groups of q blocks, one panel up to 64
        // blocks: 2176 = 68 blocks in two panels of 34 (w4g128, q = 4: 36
        // and 32), 4224 = 132 in three of 44, 8448 = 264 in five of 53
        // (q = 2: 54, the last 48; q = 4: 56, the last 40).
        const int64_t per_scale = f.group > 0 ? f.group / 32 : 1;
        int64_t per = blocks;
        if (blocks == 68)
          per = per_scale == 4 ? 36 : 34;
        else if (blocks == 132)
          per = 44;
        else if (blocks == 264)
          per = per_scale == 4 ? 56 : per_scale == 2 ? 54 : 53;
        else
          ASSERT_LE(blocks, 64);
        ASSERT_EQ(per % per_scale, 0);
        const int64_t tiles = U.Mp / 16;
        // Decode: codes[m][k] from the bits of the plane vectors.
        std::vector<int> code(size_t(U.Mp * U.Kp), 0);
        for (int64_t m = 0; m < U.Mp; ++m)
          for (int64_t j = 0; j < blocks; ++j)
            for (int p = 0; p < planes; ++p) {
              const int64_t panel = j / per;
              const int64_t in_panel = std::min(per, blocks - panel * per);
              const uint8_t *v = U.codes.data() +
                                 panel * tiles * per * planes * 64 +
                                 m / 16 * in_panel * planes * 64 +
                                 ((j - panel * per) * planes + p) * 64;
              for (int slot = 0; slot < 4; ++slot)
                for (int bit = 0; bit < 8; ++bit) {
                  // Low nibble: group slot, high nibble: group 4 + slot.
                  const int64_t k =
                      32 * j + 4 * (slot + 4 * (bit / 4)) + bit % 4;
                  code[size_t(m * U.Kp + k)] |=
                      ((v[4 * (m % 16) + slot] >> bit) & 1) << p;
                }
            }
        std::vector<int8_t> q(static_cast<size_t>(K));
        for (int64_t m = 0; m < U.Mp; ++m) {
          if (m < M)
            unpack_row(P, m, q.data());
          for (int64_t k = 0; k < U.Kp; ++k) {
            const int want = m < M && k < K ? code_of(f, q[size_t(k)]) : 0;
            ASSERT_EQ(code[size_t(m * U.Kp + k)], want)
                << "m=" << m << " k=" << k;
          }
        }
        // Scales and zero points in the panels of the codes: per panel, per
        // tile, its groups of the panel (kernel_abi.h's order with one).
        if (U.group > 0) {
          const int64_t groups = U.Kp / U.group,
                        per_groups = per / per_scale;
          ASSERT_EQ(int64_t(U.scales.size()), U.Mp / 16 * groups * 16);
          for (int64_t m = 0; m < M; ++m)
            for (int64_t g = 0; g < groups; ++g) {
              const int64_t panel = g / per_groups;
              const int64_t in_panel =
                  std::min(per_groups, groups - panel * per_groups);
              const size_t at = size_t(panel * tiles * per_groups * 16 +
                                       (m / 16 * in_panel + g % per_groups) *
                                           16 +
                                       m % 16);
              ASSERT_EQ(U.scales[at], P.scales[size_t(m * groups + g)]);
              if (!P.zeros.empty())
                ASSERT_EQ(U.zeros[at], P.zeros[size_t(m * groups + g)]);
            }
        }

        // The math: int16 tables of ±1 signs stored as the low byte and the
        // high byte + 128, both bytes times the plane weight 2^p summed in
        // int32 (lut_dot), the bias 32768 (2^P - 1) per group removed, the
        // linear transform back to D = sum c x. Every |entry| <= 512.
        const std::vector<float> X = test::random_values(K, seed++);
        QuantizedActivations A = quantize_activations(X.data(), 1, K, K);
        A.q[0] = -128; // the extreme activation the tables must hold
        std::vector<int8_t> x(size_t(U.Kp), 0);
        std::copy(A.q.begin(), A.q.end(), x.begin());
        int32_t S = 0;
        for (int8_t v : x)
          S += v;
        for (int64_t m = 0; m < M; ++m) {
          int64_t low = 0, high = 0;
          for (int p = 0; p < planes; ++p)
            for (int64_t g = 0; g < U.Kp / 4; ++g) {
              int index = 0;
              for (int i = 0; i < 4; ++i)
                index |= ((code[size_t(m * U.Kp + 4 * g + i)] >> p) & 1) << i;
              int entry = 0;
              for (int i = 0; i < 4; ++i)
                entry += ((index >> i) & 1 ? 1 : -1) * x[size_t(4 * g + i)];
              ASSERT_LE(std::abs(entry), 512);
              const uint16_t biased = uint16_t(entry + 32768);
              low += (biased & 0xFF) << p;
              high += (biased >> 8) << p;
            }
          const int64_t weight = (1 << planes) - 1;
          int64_t sum = low + 256 * high - 32768 * weight * (U.Kp / 4);
          sum += weight * int64_t(S);
          ASSERT_EQ(sum % 2, 0);
          int64_t want = 0;
          for (int64_t k = 0; k < U.Kp; ++k)
            want += int64_t(code[size_t(m * U.Kp + k)]) * x[size_t(k)];
          ASSERT_EQ(sum / 2, want) << "m=" << m;
        }
      }
}

// bitserial_int8_table_bound on cases worked out by hand from the formula
// of bitserial_abi.h: (2^P - 1) / 4 * lambda * sum_g ts_g |s_{m,g}| / sx_g,
// ts = a / d, a = max(1, ceil(d * max_g sum |xq_i| / 127)), d = 127 / (4 *
// 2^(P-1)): 31 for one plane, 15 for two.
TEST(BitserialInt8Bound, HandComputedCases) {
  // i2s, K = 4: xq = 127, -127, 64, 0 (one row scale sx = 127), sum 318,
  // a = ceil(15 * 318 / 127) = 38: 3/4 * 38/15 / 127 * s_w = 1.9 s_w / 127.
  {
    Format f = Format::parse("i2s");
    const float w[4] = {1, -1, 0, 1};
    PackedWeights W = quantize(f, w, 1, 4);
    const float x[4] = {1, -1, 0.5f, 0};
    std::vector<double> bound = bitserial_int8_table_bound(W, x, 1, 32);
    ASSERT_EQ(bound.size(), 1u);
    EXPECT_NEAR(bound[0], 1.9 * W.tensor_scale / 127, 1e-12);
  }
  // w1g32, K = 64: block 0 is x0 = 1, the rest 0 (sx0 = 127, group 0 sums
  // 127: a = 31, ts = 1); block 1 all 2 (sx1 = 63.5, every group 508: a =
  // 124, ts = 4). lambda = 2, (2^1 - 1) / 4: 1/2 per step.
  //   act_group 32: 1/2 * (8 * 1 * s0 / 127 + 8 * 4 * s1 / 63.5)
  //   act_group 64 (a = 124 for both): 1/2 * (8 * 4 * s0 / 127 + 8 * 4 * s1 / 63.5)
  {
    Format f = Format::parse("w1g32");
    std::vector<float> w(64);
    for (int k = 0; k < 64; ++k)
      w[size_t(k)] = (k % 3 == 0 ? -1.0f : 1.0f) * (k < 32 ? 0.5f : 2.0f);
    PackedWeights W = quantize(f, w.data(), 1, 64);
    std::vector<float> x(64, 2.0f);
    for (int k = 0; k < 32; ++k)
      x[size_t(k)] = k == 0 ? 1.0f : 0.0f;
    double s0 = std::fabs(half_to_float(W.scales[0]));
    double s1 = std::fabs(half_to_float(W.scales[1]));
    EXPECT_NEAR(bitserial_int8_table_bound(W, x.data(), 1, 32)[0],
                0.5 * (8 * s0 / 127 + 32 * s1 / 63.5), 1e-9);
    EXPECT_NEAR(bitserial_int8_table_bound(W, x.data(), 1, 64)[0],
                0.5 * (32 * s0 / 127 + 32 * s1 / 63.5), 1e-9);
    EXPECT_THROW(bitserial_int8_table_bound(W, x.data(), 1, 48), Error);
  }
}

TEST(BitserialLayout, RejectsOtherFormats) {
  const std::vector<float> W = test::random_values(64, 3);
  for (const char *name : {"tl1", "tl2", "q4_0"}) {
    const PackedWeights P = quantize(Format::parse(name), W.data(), 2, 32);
    EXPECT_THROW(pack_bitserial(P), Error) << name;
  }
}

} // namespace
} // namespace lowbit
