// encode_block_rows: pack_upconvert, then re-encoding, gives the ggml block
// bytes back exactly, for every block type on ragged shapes.
#include "lowbit/reencode.h"

#include "test_util.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace lowbit {
namespace {

using test::error_of;

// Rows of 19 (one tile and a ragged one) and 3 blocks (odd, so no K is a
// multiple of 64), with a zero row and a row whose one large value skews
// its block's scales.
std::vector<float> values(int64_t M, int64_t K, uint32_t seed) {
  std::vector<float> W = test::random_values(M * K, seed);
  std::fill(W.begin() + 2 * K, W.begin() + 3 * K, 0.0f);
  W[size_t(5 * K + 7)] = 40.0f;
  return W;
}

/// Re-encodes U whole and (more than 5 rows) from row 5 on, and compares
/// with `bytes`.
void expect_bytes_back(const UpconvertWeights &U,
                       const std::vector<uint8_t> &bytes, const char *name) {
  std::vector<uint8_t> out(bytes.size(), 0xAA);
  encode_block_rows(U, 0, U.M, out.data());
  EXPECT_EQ(out, bytes) << name;
  if (U.M <= 5)
    return;
  const size_t row = bytes.size() / size_t(U.M);
  std::vector<uint8_t> tail(bytes.size() - 5 * row, 0x55);
  encode_block_rows(U, 5, U.M, tail.data());
  EXPECT_TRUE(std::equal(tail.begin(), tail.end(), bytes.begin() + 5 * row))
      << name;
}

// The original bytes from lowbit's quantizer, byte-identical to ggml's
// reference quantizer (test/interop/pack-bytes.test checks it against ggml).
TEST(Reencode, QuantizedBlocksBack) {
  int count = 0;
  const GgmlBlockType *types = ggml_block_types(&count);
  for (int t = 0; t < count; ++t) {
    const Format f = Format::parse(types[t].name);
    ASSERT_TRUE(reencodes_blocks(f)) << types[t].name;
    const int64_t M = 19, K = 3 * types[t].block;
    const std::vector<float> W = values(M, K, 11 + uint32_t(t));
    const PackedWeights P = quantize(f, W.data(), M, K);
    expect_bytes_back(pack_upconvert(P), P.codes, types[t].name);
  }
}

// Every bit of every block random (fp16 fields finite, as the packer
// requires): each bit of the permutation is exercised, also the code and
// scale patterns no quantizer writes.
TEST(Reencode, RandomBlocksBack) {
  int count = 0;
  const GgmlBlockType *types = ggml_block_types(&count);
  std::mt19937 rng(3);
  for (int t = 0; t < count; ++t) {
    const GgmlBlockType &type = types[t];
    for (const int64_t M : {int64_t(1), int64_t(37)}) {
      PackedWeights P;
      P.format = Format::parse(type.name);
      P.M = M;
      P.K = 3 * type.block;
      P.codes.resize(size_t(M * P.row_bytes()));
      for (uint8_t &b : P.codes)
        b = uint8_t(rng());
      for (size_t b = 0; b < P.codes.size(); b += size_t(type.block_bytes))
        for (const int at : {type.d_offset, type.min_offset}) {
          if (at < 0)
            continue;
          // Any sign, any finite exponent.
          uint8_t *p = &P.codes[b + size_t(at)];
          if ((p[1] & 0x7C) == 0x7C)
            p[1] = uint8_t(p[1] & ~0x40);
        }
      expect_bytes_back(pack_upconvert(P), P.codes, type.name);
    }
  }
}

TEST(Reencode, RejectsOtherFormatsAndRows) {
  std::vector<float> W(16 * 64, 0.0f);
  for (size_t i = 0; i < W.size(); ++i)
    W[i] = float(int(i % 3) - 1);
  const UpconvertWeights ternary =
      pack_upconvert(quantize(Format::parse("i2s"), W.data(), 16, 64));
  std::vector<uint8_t> out(16 * 64);
  EXPECT_FALSE(reencodes_blocks(Format::parse("i2s")));
  EXPECT_EQ(error_of([&] { encode_block_rows(ternary, 0, 1, out.data()); }),
            "encode_block_rows: i2s is not a ggml block format");
  const UpconvertWeights q8 =
      pack_upconvert(quantize(Format::parse("q8_0"), W.data(), 16, 64));
  EXPECT_EQ(error_of([&] { encode_block_rows(q8, 3, 17, out.data()); }),
            "encode_block_rows: rows [3, 17) are out of range for 16 rows");
}

} // namespace
} // namespace lowbit
