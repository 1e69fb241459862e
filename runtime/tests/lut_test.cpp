//===- lut_test.cpp - the lut-elementwise layout of lut_abi.h -------------===//
//
// The layout is decoded back group by group with an independent reading of
// lut_abi.h and compared with unpack_row; the kernel math of lut_abi.h (int16
// tables split into low and biased high bytes, each times the sign, plus
// the header's correction) is replayed in scalar code and must give the
// reference's accumulators exactly.

#include "lowbit/activation.h"
#include "lowbit/bitserial.h"
#include "lowbit/lut.h"
#include "lowbit/reference.h"
#include "lowbit/run_kernel.h"

#include <algorithm>

#include "test_util.h"

namespace lowbit {
namespace {

// Values of TL2 index i (balanced ternary) and TL1 index i.
void tl2_digits(int i, int8_t *q) {
  int u = i + 13;
  q[0] = int8_t(u / 9 - 1);
  q[1] = int8_t(u / 3 % 3 - 1);
  q[2] = int8_t(u % 3 - 1);
}

struct Decoded {
  std::vector<int8_t> q;       // [Mp][K]
  std::vector<int32_t> counts; // [Mp]
};

// lut_abi.h's K panels: the start of tile t's piece of panel c, and the
// panel of each TL2 block.
struct Panels {
  int64_t tiles = 0, blocks = 0, tl1Vectors = 0, count = 1, per = 0;
  int64_t blocksOf(int64_t c) const { return std::min(per, blocks - c * per); }
  int64_t piece(int64_t c) const {
    return 320 * blocksOf(c) + (c == count - 1 ? 64 * tl1Vectors + 64 : 0);
  }
  const uint8_t *start(const uint8_t *codes, int64_t c, int64_t t) const {
    int64_t offset = t * piece(c);
    for (int64_t i = 0; i < c; ++i)
      offset += tiles * piece(i);
    return codes + offset;
  }
};

Panels panels_of(const UpconvertWeights &U) {
  Panels p;
  p.tiles = U.Mp / 16;
  p.blocks = U.format.kind == FormatKind::TL2 ? U.K / 96 : 0;
  p.tl1Vectors = (U.K - 96 * p.blocks + 15) / 16;
  p.count = std::max<int64_t>(1, (p.blocks + 8) / 16); // nearest 16 blocks
  p.per = (p.blocks + p.count - 1) / p.count;
  return p;
}

// lut_abi.h's byte orders: the byte of (row r, slot j) in a vector, and
// where the sign of (row r, slot j, nibble h) lies in the vector's 16 bytes
// of sign words (byte, bit).
struct Order {
  LutOrder order;
  int64_t byte(int64_t r, int64_t j) const {
    return order == LutOrder::Rows ? 4 * r + j : 16 * j + r;
  }
  std::pair<int64_t, int> sign(int64_t r, int64_t j, int64_t h) const {
    if (order == LutOrder::Rows) // uint64 at 8h, bit 4r + j
      return {8 * h + (4 * r + j) / 8, int((4 * r + j) % 8)};
    // uint32 w = 2 (j / 2) + r / 8 at 4w; with k = r mod 8, bit
    // 8 (2 (k mod 2) + h) + 4 (j mod 2) + k / 2
    const int64_t k = r % 8, w = 2 * (j / 2) + r / 8;
    const int64_t bit = 8 * (2 * (k % 2) + h) + 4 * (j % 2) + k / 2;
    return {4 * w + bit / 8, int(bit % 8)};
  }
};

Decoded decode(const UpconvertWeights &U, Order order) {
  const LutSplit s = lut_split(U.format, U.K);
  const Panels panels = panels_of(U);
  Decoded d;
  d.q.assign(size_t(U.Mp * U.K), 0);
  d.counts.assign(size_t(U.Mp), 0);
  for (int64_t m = 0; m < U.Mp; ++m) {
    const int64_t r = m % 16;
    int8_t *row = &d.q[size_t(m * U.K)];
    const uint8_t *p = panels.start(U.codes.data(), 0, m / 16);
    for (int64_t b = 0; b < s.k2 / 96; ++b, p += 320) {
      if (b > 0 && b % panels.per == 0)
        p = panels.start(U.codes.data(), b / panels.per, m / 16);
      for (int v = 0; v < 4; ++v)
        for (int h = 0; h < 2; ++h)
          for (int j = 0; j < 4; ++j) {
            const int64_t g = 32 * b + 8 * v + 4 * h + j;
            // The block: 64 bytes of sign words, then the 4 index vectors.
            const int index =
                (p[64 + 64 * v + order.byte(r, j)] >> (4 * h)) & 15;
            const auto [byte, bit] = order.sign(r, j, h);
            const bool sign = (p[16 * v + byte] >> bit) & 1;
            tl2_digits(sign ? -index : index, row + 3 * g);
          }
    }
    for (int64_t v = 0; v < s.tl1Vectors; ++v, p += 64)
      for (int h = 0; h < 2; ++h)
        for (int j = 0; j < 4; ++j) {
          const int64_t k = s.k2 + 16 * v + 8 * h + 2 * j;
          const int index = (p[order.byte(r, j)] >> (4 * h)) & 15;
          if (k >= U.K) {
            EXPECT_EQ(index, 4) << "padding m=" << m;
            continue;
          }
          row[k] = int8_t(index / 3 - 1);
          row[k + 1] = int8_t(index % 3 - 1);
        }
    // The header ends the tile's piece of the last panel.
    uint32_t c = 0;
    for (int b = 0; b < 4; ++b)
      c |= uint32_t(p[4 * r + b]) << (8 * b);
    d.counts[size_t(m)] = int32_t(c);
  }
  return d;
}

TEST(LutLayout, DecodesToUnpackRowAndExactMath) {
  uint32_t seed = 11;
  for (LutOrder order : {LutOrder::Rows, LutOrder::Lanes})
  for (const char *name : {"tl1", "tl2"})
    for (int64_t M : {1, 17, 33})
      // 1536 = 16 blocks (one panel), 2208 = 23 (one), 2304 = 24 (two of
      // 12), 2400 the same with a TL1 part, 2560 = 26 (two of 13), 3360 =
      // 35 (two of 18 and 17), 6912 = 72 (five of 15, the last 12).
      for (int64_t K : {2, 4, 94, 96, 100, 190, 192, 194, 1536, 2208, 2304,
                        2400, 2560, 3360, 6912}) {
        const Format f = Format::parse(name);
        SCOPED_TRACE(f.name() + " M=" + std::to_string(M) +
                     " K=" + std::to_string(K) +
                     (order == LutOrder::Lanes ? " lanes" : " rows"));
        const std::vector<float> W = test::random_values(M * K, seed++);
        const PackedWeights P = quantize(f, W.data(), M, K);
        const UpconvertWeights U = pack_lut(P, order);
        const LutSplit s = lut_split(f, K);
        ASSERT_EQ(U.Mp, (M + 15) / 16 * 16);
        ASSERT_EQ(U.Kp, (K + 31) / 32 * 32);
        ASSERT_EQ(s.k2 % 96, 0);
        ASSERT_EQ(s.k1, K - s.k2);
        ASSERT_LT(s.k1, f.kind == FormatKind::TL2 ? 96 : K + 1);
        ASSERT_EQ(int64_t(U.codes.size()), U.Mp / 16 * s.tile_bytes());
        const Panels panels = panels_of(U);
        ASSERT_EQ(s.panels, panels.count);
        ASSERT_EQ(s.panelBlocks, panels.per);
        // The panel counts the comment above lists, by hand.
        int64_t want = 1;
        if (f.kind == FormatKind::TL2)
          want = K == 6912 ? 5 : K >= 2304 ? 2 : 1;
        ASSERT_EQ(panels.count, want);
        const Decoded d = decode(U, Order{order});
        std::vector<int8_t> q(static_cast<size_t>(K));
        for (int64_t m = 0; m < U.Mp; ++m) {
          if (m < M)
            unpack_row(P, m, q.data());
          int32_t negatives = 0;
          for (int64_t k = 0; k < K; ++k) {
            const int8_t want = m < M ? q[size_t(k)] : 0;
            ASSERT_EQ(d.q[size_t(m * K + k)], want) << "m=" << m << " k=" << k;
          }
          for (int64_t g = 0; m < M && g < s.k2 / 3; ++g)
            negatives += 9 * q[size_t(3 * g)] + 3 * q[size_t(3 * g + 1)] +
                             q[size_t(3 * g + 2)] <
                         0;
          const int64_t groups = s.k2 / 3 + 8 * s.tl1Vectors;
          ASSERT_EQ(d.counts[size_t(m)],
                    int32_t(uint32_t(-32768 * (groups - 2 * negatives))))
              << "m=" << m;
        }

        // The math of lut_abi.h: int16 entry e of every group (padding
        // included) as its low byte and high byte + 128, both times the
        // sign, summed with int32 wrapping (lo + 256 hi), plus the header.
        const std::vector<float> X = test::random_values(K, seed++);
        const QuantizedActivations A = quantize_activations(X.data(), 1, K, K);
        auto add = [](uint32_t &sum, int e, bool negative) {
          const uint32_t lo = uint16_t(e) & 0xFF, hi = uint16_t(e ^ 0x8000) >> 8;
          const uint32_t term = lo + 256 * hi;
          sum += negative ? 0u - term : term;
        };
        for (int64_t m = 0; m < M; ++m) {
          unpack_row(P, m, q.data());
          int32_t want = 0;
          uint32_t got = uint32_t(d.counts[size_t(m)]);
          for (int64_t k = 0; k < K; ++k)
            want += int32_t(A.q[size_t(k)]) * q[size_t(k)];
          for (int64_t g = 0; g < s.k2 / 3; ++g) {
            const int8_t *w = &q[size_t(3 * g)];
            const int v = 9 * w[0] + 3 * w[1] + w[2], index = v < 0 ? -v : v;
            int8_t dq[3];
            tl2_digits(index, dq);
            int e = 0;
            for (int i = 0; i < 3; ++i)
              e += dq[i] * A.q[size_t(3 * g + i)];
            add(got, e, v < 0);
          }
          for (int64_t k = s.k2; k < s.k2 + 16 * s.tl1Vectors; k += 2) {
            const int index =
                k < K ? 3 * (q[size_t(k)] + 1) + q[size_t(k + 1)] + 1 : 4;
            const int e =
                k < K ? (index / 3 - 1) * A.q[size_t(k)] +
                            (index % 3 - 1) * A.q[size_t(k + 1)]
                      : 0;
            add(got, e, false);
          }
          ASSERT_EQ(int32_t(got), want) << "m=" << m;
        }
      }
}

TEST(LutLayout, RejectsOtherFormats) {
  const std::vector<float> W = test::random_values(64, 3);
  const PackedWeights P = quantize(Format::parse("i2s"), W.data(), 1, 64);
  EXPECT_THROW(pack_lut(P), Error);
}

// The panel formulas of lut_abi.h and bitserial_abi.h, which the compiler
// shares: the K panels the any-shape tests count (e2e/any-shape-aarch64).
TEST(LayoutFormulas, Panels) {
  EXPECT_EQ(lowbit_lut_panels(0), 1);
  EXPECT_EQ(lowbit_lut_panels(23), 1);
  EXPECT_EQ(lowbit_lut_panels(24), 2);
  EXPECT_EQ(lowbit_lut_panels(2600 / 96), 2);
  EXPECT_EQ(lowbit_lut_panels(6914 / 96), 5);
  EXPECT_EQ(lowbit_lut_panel_blocks(6914 / 96), 15);
  EXPECT_EQ(lowbit_lut_tile_bytes(200, lowbit_lut_k2(200, 1)),
            64 + 2 * 320 + 1 * 64);
  EXPECT_EQ(lowbit_lut_tile_bytes(200, lowbit_lut_k2(200, 0)), 64 + 13 * 64);
  // i2s at K = 2600 (q = 1), w3g64 at 2112 (q = 2), w1g128 at 4224 (q = 4).
  EXPECT_EQ(lowbit_bitserial_panel_blocks(64, 1), 64);
  EXPECT_EQ(lowbit_bitserial_panels(64, 1), 1);
  EXPECT_EQ(lowbit_bitserial_panel_blocks(82, 1), 41);
  EXPECT_EQ(lowbit_bitserial_panels(82, 1), 2);
  EXPECT_EQ(lowbit_bitserial_panel_blocks(66, 2), 34);
  EXPECT_EQ(lowbit_bitserial_panels(66, 2), 2);
  EXPECT_EQ(lowbit_bitserial_panel_blocks(132, 4), 44);
  EXPECT_EQ(lowbit_bitserial_panels(132, 4), 3);
}

// pack_for_kernel packs by the descriptor alone: each family gives its
// packer's bytes, the LUT lane order included.
TEST(PackForKernel, DispatchesOnTheDescriptor) {
  const std::vector<float> W = test::random_values(20 * 200, 7);
  const PackedWeights tl2 = quantize(Format::parse("tl2"), W.data(), 20, 200);
  const PackedWeights i2s = quantize(Format::parse("i2s"), W.data(), 20, 200);
  auto same = [](const UpconvertWeights &a, const UpconvertWeights &b) {
    return a.codes.size() == b.codes.size() && a.bit_planes == b.bit_planes &&
           std::equal(a.codes.data(), a.codes.data() + a.codes.size(),
                      b.codes.data());
  };
  EXPECT_TRUE(same(pack_for_kernel(tl2, lut_layout(tl2.format)),
                   pack_lut(tl2, LutOrder::Rows)));
  EXPECT_TRUE(same(pack_for_kernel(tl2, lut_layout(tl2.format,
                                                   LOWBIT_LANE_LANES)),
                   pack_lut(tl2, LutOrder::Lanes)));
  EXPECT_FALSE(same(pack_lut(tl2, LutOrder::Rows),
                    pack_lut(tl2, LutOrder::Lanes)));
  EXPECT_TRUE(same(pack_for_kernel(i2s, bitplanes_layout()),
                   pack_bitserial(i2s)));
  EXPECT_TRUE(same(pack_for_kernel(i2s, bitplanes_layout(LOWBIT_LANE_LANES)),
                   pack_bitserial(i2s, BitplaneOrder::Lanes)));
  EXPECT_FALSE(same(pack_bitserial(i2s, BitplaneOrder::Rows),
                    pack_bitserial(i2s, BitplaneOrder::Lanes)));
  EXPECT_TRUE(same(pack_for_kernel(i2s, vnni4_layout(i2s.format)),
                   pack_upconvert(i2s)));
}

// A descriptor that does not fit the weights is one Error naming both.
TEST(PackForKernel, RejectsADescriptorForOtherWeights) {
  const std::vector<float> W = test::random_values(16 * 96, 8);
  const PackedWeights tl2 = quantize(Format::parse("tl2"), W.data(), 16, 96);
  try {
    pack_for_kernel(tl2, bitplanes_layout());
    FAIL() << "no error";
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(), "pack_for_kernel: a bitplanes layout "
                           "(bitserial_abi.h) for tl2 weights: only i2s and "
                           "w1gG..w4gG have one");
  }
  EXPECT_THROW(pack_for_kernel(tl2, vnni4_layout(tl2.format)), Error);
  const PackedWeights w1 = quantize(Format::parse("w1g32"), W.data(), 16, 96);

  lowbit_layout_t rows = vnni4_layout(w1.format);
  rows.tile_rows = 32;
  EXPECT_THROW(pack_for_kernel(w1, rows), Error);
}

} // namespace
} // namespace lowbit
