// The GGML ROWS LAYOUT of kernel_abi.h (i2s weights as ggml's TQ2_0 or
// TQ1_0 rows): the bytes pack_ggml_rows writes, checked against bytes
// worked out by hand from ggml-common.h's block_tq2_0 and block_tq1_0, its
// descriptors, and the views over caller memory.

#include "lowbit/error.h"
#include "lowbit/format.h"
#include "lowbit/run_kernel.h"
#include "lowbit/upconvert.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

using namespace lowbit;

namespace {

/// Ternary weights M x K with value v[m][k] in {-1, 0, 1} times 0.5.
PackedWeights ternary(int64_t M, int64_t K,
                      const std::vector<std::vector<int>> &nonzero) {
  std::vector<float> W(size_t(M * K), 0.0f);
  for (const std::vector<int> &e : nonzero)
    W[size_t(e[0] * K + e[1])] = 0.5f * float(e[2]);
  // One +-0.5 somewhere keeps the scale exactly 0.5 (quantize keeps the
  // scale of weights that are ternary already).
  return quantize(Format::parse("i2s"), W.data(), M, K);
}

} // namespace

TEST(GgmlRows, BytesAsTq2_0) {
  // Row 0: -1 at k = 0, +1 at k = 33 (half 0, bit pair 1, byte 1), +1 at
  // k = 255 (half 1, bit pair 3, byte 63). Row 1, second block: +1 at
  // k = 256 + 128 (half 1, bit pair 0, byte 32).
  PackedWeights W = ternary(2, 512, {{0, 0, -1}, {0, 33, 1}, {0, 255, 1},
                                     {1, 384, 1}});
  ASSERT_EQ(W.tensor_scale, 0.5f);
  UpconvertWeights U = pack_ggml_rows(W);
  EXPECT_EQ(U.tile_rows, 1);
  EXPECT_EQ(U.Mp, 2);
  EXPECT_EQ(U.num_tiles(), 2);
  EXPECT_EQ(U.w_scale, 0.5f);
  ASSERT_EQ(U.codes.size(), size_t(2 * 2 * 66));
  // Code c = q + 1: 0x55 is four zeros (c = 1).
  std::vector<uint8_t> want(2 * 2 * 66, 0x55);
  for (int blk = 0; blk < 4; ++blk) {
    want[size_t(blk * 66 + 64)] = 0x00; // fp16 0.5 = 0x3800, little-endian
    want[size_t(blk * 66 + 65)] = 0x38;
  }
  want[0] = 0x54;             // pair 0 of byte 0: c = 0
  want[1] = 0x59;             // pair 1 of byte 1: c = 2
  want[63] = 0x95;            // pair 3 of byte 63: c = 2
  want[2 * 66 + 66 + 32] = 0x56; // row 1, block 1, pair 0 of byte 32: c = 2
  EXPECT_EQ(std::vector<uint8_t>(U.codes.begin(), U.codes.end()), want);
}

TEST(GgmlRows, BytesAsTq1_0) {
  // Row 0: -1 at k = 0 (byte 0, digit 0), +1 at k = 33 (byte 1, digit 1),
  // +1 at k = 255 (qh byte 3, digit 3: block byte 51). Row 1, second block:
  // +1 at k = 256 + 200 (160 + 16 * 2 + 8: byte 40, digit 2).
  PackedWeights W = ternary(2, 512, {{0, 0, -1}, {0, 33, 1}, {0, 255, 1},
                                     {1, 456, 1}});
  ASSERT_EQ(W.tensor_scale, 0.5f);
  UpconvertWeights U = pack_ggml_rows(W, LOWBIT_GGML_ROWS_TQ1_0_BYTES);
  EXPECT_EQ(U.tile_rows, 1);
  EXPECT_EQ(U.ggml_block_bytes, 54);
  ASSERT_EQ(U.codes.size(), size_t(2 * 2 * 54));
  // A byte holds its digits (first most significant) as ceil(x * 256 /
  // 243) of their base-3 number x: five zeros (c = 1) are x = 121, byte
  // 128; qh's four (the fifth digit 0) x = 120, byte 127.
  std::vector<uint8_t> want(2 * 2 * 54, 128);
  for (int blk = 0; blk < 4; ++blk) {
    for (int j = 48; j < 52; ++j)
      want[size_t(blk * 54 + j)] = 127;
    want[size_t(blk * 54 + 52)] = 0x00; // fp16 0.5
    want[size_t(blk * 54 + 53)] = 0x38;
  }
  want[0] = 43;                   // digits 0 1 1 1 1: x = 40
  want[1] = 156;                  // 1 2 1 1 1: x = 148
  want[51] = 130;                 // 1 1 1 2 0: x = 123
  want[2 * 54 + 54 + 40] = 137;   // 1 1 2 1 1: x = 130
  EXPECT_EQ(std::vector<uint8_t>(U.codes.begin(), U.codes.end()), want);
}

TEST(GgmlRows, Descriptor) {
  Format i2s = Format::parse("i2s");
  lowbit_layout_t rows = ggml_rows_layout();
  EXPECT_EQ(rows.family, LOWBIT_LAYOUT_GGML_ROWS);
  EXPECT_EQ(rows.tile_rows, 1);
  EXPECT_EQ(rows.tile_k, 256);
  EXPECT_EQ(layout_error(rows, i2s), "");
  EXPECT_EQ(rows.block_bytes, 66);
  EXPECT_EQ(layout_name(rows),
            "ggml_rows<rows, tile_rows 1, tile_k 256, panel 0, block 66 "
            "bytes>");
  EXPECT_NE(layout_error(rows, Format::parse("tl2")).find("only i2s"),
            std::string::npos);
  lowbit_layout_t wrong = rows;
  wrong.tile_rows = 16;
  EXPECT_NE(layout_error(wrong, i2s).find("is not the ggml_rows layout"),
            std::string::npos);
  // TQ1_0's blocks; no third kind of block.
  lowbit_layout_t tq1 = ggml_rows_layout(LOWBIT_GGML_ROWS_TQ1_0_BYTES);
  EXPECT_EQ(layout_error(tq1, i2s), "");
  wrong = tq1;
  wrong.block_bytes = 60;
  EXPECT_NE(layout_error(wrong, i2s).find("is not the ggml_rows layout"),
            std::string::npos);
  EXPECT_EQ(pack_for_kernel(ternary(3, 256, {{2, 7, 1}}), tq1).codes.size(),
            size_t(3 * 54));
  // pack_for_kernel writes the layout the descriptor names.
  PackedWeights W = ternary(3, 256, {{2, 7, 1}});
  UpconvertWeights U = pack_for_kernel(W, rows);
  EXPECT_EQ(U.tile_rows, 1);
  EXPECT_EQ(U.codes.size(), size_t(3 * 66));
  // K not a multiple of 256.
  PackedWeights short_k = ternary(3, 100, {{0, 1, 1}});
  EXPECT_THROW(pack_for_kernel(short_k, rows), Error);
  EXPECT_NE(ggml_rows_error(i2s, 100).find("multiple of 256"),
            std::string::npos);
}

TEST(GgmlRows, ViewOfCallerMemory) {
  std::vector<uint8_t> rows(3 * 2 * 66, 0x55);
  UpconvertWeights U =
      shape_ggml_rows(Format::parse("i2s"), 3, 512, 0.25f, rows.data());
  EXPECT_EQ(U.codes.data(), rows.data());
  EXPECT_EQ(U.codes.size(), rows.size());
  EXPECT_EQ(U.w_scale, 0.25f);
  EXPECT_THROW(shape_ggml_rows(Format::parse("q4_0"), 3, 512, 1.0f), Error);
  std::vector<uint8_t> tq1(3 * 2 * 54, 128);
  U = shape_ggml_rows(Format::parse("i2s"), 3, 512, 0.25f, tq1.data(),
                      LOWBIT_GGML_ROWS_TQ1_0_BYTES);
  EXPECT_EQ(U.codes.size(), tq1.size());
  EXPECT_EQ(U.ggml_block_bytes, 54);
  EXPECT_THROW(shape_ggml_rows(Format::parse("i2s"), 3, 512, 1.0f, nullptr,
                               60),
               Error);
}
