//===- packed_file_test.cpp - .lbw packed weight files --------------------===//

#include "lowbit/packed_file.h"

#include "test_util.h"

#include <fstream>
#include <iterator>

namespace lowbit {
namespace {

using test::bits;
using test::error_of;

std::vector<uint8_t> read_bytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
}

void write_bytes(const std::string &path, const std::vector<uint8_t> &bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char *>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

uint64_t u64_at(const std::vector<uint8_t> &b, size_t offset) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i)
    v |= uint64_t{b[offset + i]} << (8 * i);
  return v;
}

TEST(PackedFile, RoundTripsEveryFormat) {
  test::TempDir dir;
  for (const char *name :
       {"i2s", "tl1", "tl2", "w1g64", "w2g32", "w3g128", "w4g32", "q4_0",
        "q8_0", "q5_1", "q3_k", "q6_k", "iq4_nl"}) {
    const Format f = Format::parse(name);
    const GgmlBlockType *block = ggml_block_type(f.kind);
    const int64_t M = 3, K = block ? 2 * block->block : f.group ? 2 * f.group
                                                                : 10;
    const std::vector<float> W = test::random_values(M * K, 3);
    const PackedWeights P = quantize(f, W.data(), M, K);
    const std::string path = dir.file(std::string(name) + ".lbw");
    save_packed(path, P);
    const PackedWeights L = load_packed(path);
    EXPECT_EQ(L.format.name(), name);
    EXPECT_EQ(L.M, M);
    EXPECT_EQ(L.K, K);
    EXPECT_EQ(bits(L.tensor_scale), bits(P.tensor_scale));
    EXPECT_EQ(L.codes, P.codes);
    EXPECT_EQ(L.scales, P.scales);
    EXPECT_EQ(L.zeros, P.zeros);
  }
}

TEST(PackedFile, HeaderLayout) {
  test::TempDir dir;
  const std::vector<float> W = test::random_values(2 * 64, 5);
  const PackedWeights P = quantize(Format::parse("w2g32"), W.data(), 2, 64);
  save_packed(dir.file("w.lbw"), P);
  const std::vector<uint8_t> b = read_bytes(dir.file("w.lbw"));
  ASSERT_EQ(b.size(), 80u + 2 * 16 + 2 * 4 + 2 * 4);
  EXPECT_EQ(std::string(b.begin(), b.begin() + 8), std::string("LOWBITW\0", 8));
  EXPECT_EQ(b[8], 1);   // version
  EXPECT_EQ(b[12], 80); // header size
  EXPECT_EQ(std::string(b.begin() + 16, b.begin() + 32),
            std::string("w2g32\0\0\0\0\0\0\0\0\0\0\0", 16));
  EXPECT_EQ(u64_at(b, 32), 2u);  // M
  EXPECT_EQ(u64_at(b, 40), 64u); // K
  EXPECT_EQ(u64_at(b, 56), 32u); // code bytes
  EXPECT_EQ(u64_at(b, 64), 4u);  // scales
  EXPECT_EQ(u64_at(b, 72), 4u);  // zeros
  EXPECT_EQ(std::vector<uint8_t>(b.begin() + 80, b.begin() + 112), P.codes);
  EXPECT_EQ(b[112] | (b[113] << 8), P.scales[0]);
  EXPECT_EQ(b[120] | (b[121] << 8), P.zeros[0]);
}

class CorruptFile : public ::testing::Test {
protected:
  void SetUp() override {
    const std::vector<float> W = test::random_values(2 * 6, 9);
    save_packed(path, quantize(Format::parse("i2s"), W.data(), 2, 6));
    good = read_bytes(path);
  }
  // The message of loading `bytes`, without the "path: " prefix (checked).
  std::string load_error(const std::vector<uint8_t> &bytes) {
    write_bytes(path, bytes);
    std::string message = error_of([&] { load_packed(path); });
    EXPECT_EQ(message.rfind(path + ": ", 0), 0u) << message;
    return message.substr(std::min(message.size(), path.size() + 2));
  }
  test::TempDir dir;
  std::string path = dir.file("w.lbw");
  std::vector<uint8_t> good;
};

TEST_F(CorruptFile, Magic) {
  std::vector<uint8_t> b = good;
  b[0] = 'X';
  EXPECT_EQ(load_error(b), "not a lowbit packed weight file (bad magic)");
  EXPECT_EQ(load_error({}), "not a lowbit packed weight file (bad magic)");
}

TEST_F(CorruptFile, Truncated) {
  std::vector<uint8_t> b = good;
  b.pop_back();
  EXPECT_EQ(load_error(b), "truncated data: expected 84 bytes, got 83");
  b.resize(40);
  EXPECT_EQ(load_error(b), "truncated header: 40 bytes, expected 80");
  b = good;
  b.push_back(0);
  EXPECT_EQ(load_error(b), "trailing data: expected 84 bytes, got 85");
}

TEST_F(CorruptFile, HeaderFields) {
  std::vector<uint8_t> b = good;
  b[8] = 2;
  EXPECT_EQ(load_error(b), "unsupported version 2 (expected 1)");
  b = good;
  b[12] = 96;
  EXPECT_EQ(load_error(b), "header size 96, expected 80");
  b = good;
  b[16] = 'x';
  EXPECT_EQ(load_error(b).rfind("unknown format 'x2s'", 0), 0u);
  b = good;
  std::fill(b.begin() + 16, b.begin() + 32, 'a');
  EXPECT_EQ(load_error(b), "format name is not NUL-terminated");
  b = good;
  b[31] = 'a';
  EXPECT_EQ(load_error(b), "format name field has bytes after its NUL");
  b = good;
  b[52] = 1;
  EXPECT_EQ(load_error(b), "reserved header field is not 0");
  b = good;
  b[81] |= 0x80; // bits 12..15 of a row of 6 codes are padding
  EXPECT_EQ(load_error(b),
            "i2s row 0: non-zero padding bits after the code stream");
  b = good;
  b[39] = 0x80; // M = 2^63 + 2
  EXPECT_EQ(load_error(b), "M = 9223372036854775810 is too large");
  b = good;
  b[32] = 0; // M = 0
  EXPECT_EQ(load_error(b), "M must be >= 1, got M = 0");
}

TEST_F(CorruptFile, Counts) {
  std::vector<uint8_t> b = good;
  b[56] = 5; // codes count
  EXPECT_EQ(load_error(b),
            "codes count 5 does not match the format (expected 4)");
  b = good;
  b[64] = 1; // an i2s file has no scales
  EXPECT_EQ(load_error(b),
            "scales count 1 does not match the format (expected 0)");
  b = good;
  b[79] = 0xFF; // a zeros count that would overflow a size computation
  EXPECT_EQ(load_error(b).rfind("zeros count", 0), 0u);
}

TEST_F(CorruptFile, Contents) {
  std::vector<uint8_t> b = good;
  b[80] |= 0x03; // the first code of row 0 becomes 3
  EXPECT_EQ(load_error(b), "i2s row 0: code 3 at k = 0 is out of range 0..2");
  b = good;
  b[48] = 0;
  b[49] = 0;
  b[50] = 0xC0;
  b[51] = 0x7F; // tensor scale NaN
  EXPECT_EQ(load_error(b).rfind("i2s: tensor scale", 0), 0u);
}

} // namespace
} // namespace lowbit
