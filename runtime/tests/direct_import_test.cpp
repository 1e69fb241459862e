//===- direct_import_test.cpp - GGUF tensors packed without a copy --------===//
//
// gguf_pack_rows writes a GGUF tensor's rows straight into the upconvert
// layout. What it writes must be, byte for byte, what the two-step path
// writes (import_tensor's canonical weights, then pack_upconvert), for
// every type it accepts, ragged row counts and rows split into ranges; and
// a bad tensor must give import_tensor's own error. Into tl1 and tl2 (the
// lut layout, both lane orders) it must write what pack_lut writes for the
// tensor's values quantized on their own (no GGUF decoder involved).

#include "lowbit/error.h"
#include "lowbit/gguf.h"
#include "lowbit/lut.h"
#include "lowbit/upconvert.h"

#include "test_util.h"

#include <cstring>
#include <random>

namespace lowbit {
namespace {

using test::tensor_of;

// Ternary values of one scale a (every 256-block holds a +-a, so that
// ggml's per-block d is a everywhere), row 1 all zeros.
std::vector<float> ternary_values(int64_t M, int64_t K, uint32_t seed) {
  std::mt19937 rng(seed);
  const float a = 0.375f; // exact in fp16
  std::vector<float> W(size_t(M * K));
  for (size_t i = 0; i < W.size(); ++i)
    W[i] = a * float(int(rng() % 3) - 1);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t k = 0; k < K; k += 256)
      W[size_t(m * K + k)] = m == 1 ? 0.0f : a;
  for (int64_t k = 0; k < K; ++k)
    W[size_t(K + k)] = 0.0f;
  return W;
}

// Packs t into `format` directly in the row ranges split at `cuts` (tile
// multiples), into a zero-filled destination.
struct Direct {
  std::vector<uint8_t> storage;
  UpconvertWeights U;
};
Direct pack_direct(const GgufTensor &t, const Format &format,
                   const std::vector<int64_t> &cuts,
                   uint8_t lane_order = LOWBIT_LANE_ROWS) {
  Direct d;
  const int64_t bytes = upconvert_bytes(format, t.rows(), t.K());
  d.storage.assign(size_t(bytes + 64), 0);
  uint8_t *dest = d.storage.data();
  dest += (64 - reinterpret_cast<uintptr_t>(dest) % 64) % 64;
  d.U = shape_upconvert(format, t.rows(), t.K(), dest, lane_order);
  std::vector<GgufRowsCheck> checks;
  int64_t begin = 0;
  for (int64_t end : cuts) {
    checks.push_back(gguf_pack_rows(t, d.U, begin, end));
    begin = end;
  }
  checks.push_back(gguf_pack_rows(t, d.U, begin, t.rows()));
  gguf_finish_rows(t, d.U, checks);
  return d;
}

void expect_same(const UpconvertWeights &a, const UpconvertWeights &b) {
  ASSERT_EQ(a.format.name(), b.format.name());
  ASSERT_EQ(a.M, b.M);
  ASSERT_EQ(a.K, b.K);
  ASSERT_EQ(a.Mp, b.Mp);
  ASSERT_EQ(a.Kp, b.Kp);
  ASSERT_EQ(a.bits, b.bits);
  ASSERT_EQ(a.group, b.group);
  ASSERT_EQ(a.lane_order, b.lane_order);
  ASSERT_EQ(test::bits(a.w_scale), test::bits(b.w_scale));
  ASSERT_EQ(a.codes.bytes(), b.codes.bytes());
  ASSERT_EQ(a.scales.bytes(), b.scales.bytes());
  ASSERT_EQ(a.zeros.bytes(), b.zeros.bytes());
  EXPECT_EQ(std::memcmp(a.codes.data(), b.codes.data(), a.codes.bytes()), 0);
  if (!a.scales.empty())
    EXPECT_EQ(
        std::memcmp(a.scales.data(), b.scales.data(), a.scales.bytes()), 0);
  if (!a.zeros.empty())
    EXPECT_EQ(std::memcmp(a.zeros.data(), b.zeros.data(), a.zeros.bytes()),
              0);
}

TEST(DirectImport, BytesAsTheTwoStepPath) {
  struct Case {
    const char *type, *format;
    int64_t K;
  };
  const Case cases[] = {
      {"tq2_0", "i2s", 512}, {"tq1_0", "i2s", 256},  {"i2_s", "i2s", 384},
      {"q4_0", "q4_0", 320}, {"q8_0", "q8_0", 96},   {"q5_0", "q5_0", 64},
      {"q4_1", "q4_1", 64},  {"q5_1", "q5_1", 64},   {"iq4_nl", "iq4_nl", 64},
      {"q2_k", "q2_k", 512}, {"q3_k", "q3_k", 256},  {"q4_k", "q4_k", 256},
      {"q5_k", "q5_k", 256}, {"q6_k", "q6_k", 512},
  };
  const int64_t M = 37; // three tiles, the last ragged
  uint32_t seed = 5;
  for (const Case &c : cases) {
    SCOPED_TRACE(std::string(c.type) + " -> " + c.format);
    const GgufType type = parse_gguf_type(c.type);
    const Format format = Format::parse(c.format);
    ASSERT_TRUE(gguf_packs_directly(type, format));
    const std::vector<float> W =
        format.is_ternary() ? ternary_values(M, c.K, seed++)
                            : test::random_values(M * c.K, seed++);
    const std::vector<uint8_t> bytes = gguf_encode(type, W.data(), M, c.K);
    const GgufTensor t = tensor_of(type, bytes, M, c.K);
    const UpconvertWeights want = pack_upconvert(import_tensor(t, format));
    expect_same(pack_direct(t, format, {}).U, want);
    expect_same(pack_direct(t, format, {16, 32}).U, want);
    // An all-zero ternary tensor gets quantize()'s floor, as before.
    if (format.is_ternary()) {
      const std::vector<float> Z(size_t(M * c.K), 0.0f);
      const std::vector<uint8_t> zb = gguf_encode(type, Z.data(), M, c.K);
      const GgufTensor z = tensor_of(type, zb, M, c.K);
      expect_same(pack_direct(z, format, {16}).U,
                  pack_upconvert(import_tensor(z, format)));
    }
  }
}

// The ternary types into tl1 and tl2: K from 128 to 2560 (TL1 part only;
// TL2 blocks with a TL1 tail of 32 or 64; TL2 blocks only; two K panels),
// 37 and 20 rows (ragged tiles), rows in one range and in three (two for
// 20), both lane
// orders; against pack_lut of the same values quantized without GGUF.
TEST(DirectImport, LutBytesAsPackLut) {
  struct Case {
    const char *type;
    int64_t M, K;
  };
  const Case cases[] = {
      {"tq2_0", 37, 256}, {"tq1_0", 37, 512}, {"tq2_0", 37, 768},
      {"tq1_0", 20, 2560}, {"tq2_0", 20, 2560}, {"i2_s", 37, 128},
      {"i2_s", 37, 384},
  };
  uint32_t seed = 40;
  for (const Case &c : cases) {
    const GgufType type = parse_gguf_type(c.type);
    const std::vector<float> W = ternary_values(c.M, c.K, seed++);
    const std::vector<uint8_t> bytes = gguf_encode(type, W.data(), c.M, c.K);
    const GgufTensor t = tensor_of(type, bytes, c.M, c.K);
    const std::vector<float> Z(W.size(), 0.0f);
    const std::vector<uint8_t> zb = gguf_encode(type, Z.data(), c.M, c.K);
    const GgufTensor z = tensor_of(type, zb, c.M, c.K);
    for (const char *name : {"tl1", "tl2"})
      for (LutOrder order : {LutOrder::Rows, LutOrder::Lanes}) {
        SCOPED_TRACE(std::string(c.type) + " -> " + name + " K " +
                     std::to_string(c.K) +
                     (order == LutOrder::Lanes ? " lanes" : " rows"));
        const Format format = Format::parse(name);
        ASSERT_TRUE(gguf_packs_directly(type, format));
        const uint8_t lanes = order == LutOrder::Lanes ? LOWBIT_LANE_LANES
                                                       : LOWBIT_LANE_ROWS;
        const UpconvertWeights want =
            pack_lut(quantize(format, W.data(), c.M, c.K), order);
        expect_same(pack_direct(t, format, {}, lanes).U, want);
        expect_same(pack_direct(t, format,
                                c.M > 32 ? std::vector<int64_t>{16, 32}
                                         : std::vector<int64_t>{16},
                                lanes)
                        .U,
                    want);
        // All zeros: quantize()'s floor as the scale, padding as pack_lut's.
        expect_same(pack_direct(z, format, {16}, lanes).U,
                    pack_lut(quantize(format, Z.data(), c.M, c.K), order));
      }
  }
}

TEST(DirectImport, OnlyTheDirectPairs) {
  EXPECT_TRUE(gguf_packs_directly(GgufType::TQ2_0, Format::parse("i2s")));
  EXPECT_TRUE(gguf_packs_directly(GgufType::TQ1_0, Format::parse("tl2")));
  EXPECT_TRUE(gguf_packs_directly(GgufType::I2_S, Format::parse("tl1")));
  EXPECT_FALSE(gguf_packs_directly(GgufType::Q4_0, Format::parse("tl2")));
  EXPECT_FALSE(gguf_packs_directly(GgufType::Q4_0, Format::parse("q8_0")));
  EXPECT_FALSE(gguf_packs_directly(GgufType::F16, Format::parse("i2s")));
}

// The error of a bad tensor is import_tensor's, word for word.
void expect_import_error(const GgufTensor &t, const Format &format) {
  std::string want;
  try {
    import_tensor(t, format);
  } catch (const Error &e) {
    want = e.what();
  }
  ASSERT_FALSE(want.empty());
  try {
    pack_direct(t, format, {16});
    ADD_FAILURE() << "no error; import_tensor says: " << want;
  } catch (const Error &e) {
    EXPECT_EQ(std::string(e.what()), want);
  }
}

TEST(DirectImport, BadTensorsGiveImportTensorsError) {
  const int64_t M = 20, K = 256;
  const Format i2s = Format::parse("i2s");
  const std::vector<float> W = ternary_values(M, K, 3);
  {
    SCOPED_TRACE("tq2_0 code 3 in the second range");
    std::vector<uint8_t> b = gguf_encode(GgufType::TQ2_0, W.data(), M, K);
    b[size_t(17 * 66 + 5)] |= 0x30; // row 17, byte 5: a field of 3
    expect_import_error(tensor_of(GgufType::TQ2_0, b, M, K), i2s);
    expect_import_error(tensor_of(GgufType::TQ2_0, b, M, K),
                        Format::parse("tl2"));
  }
  {
    SCOPED_TRACE("tq2_0 blocks of two scales, one per range");
    std::vector<uint8_t> b = gguf_encode(GgufType::TQ2_0, W.data(), M, K);
    b[size_t(18 * 66 + 64)] ^= 1; // row 18's d
    expect_import_error(tensor_of(GgufType::TQ2_0, b, M, K), i2s);
    expect_import_error(tensor_of(GgufType::TQ2_0, b, M, K),
                        Format::parse("tl1"));
  }
  {
    SCOPED_TRACE("tq1_0 scale not finite");
    std::vector<uint8_t> b = gguf_encode(GgufType::TQ1_0, W.data(), M, K);
    for (int64_t m = 0; m < M; ++m) { // fp16 infinity in every block
      b[size_t(m * 54 + 52)] = 0x00;
      b[size_t(m * 54 + 53)] = 0x7C;
    }
    expect_import_error(tensor_of(GgufType::TQ1_0, b, M, K), i2s);
  }
  {
    SCOPED_TRACE("i2_s code 3");
    std::vector<uint8_t> b = gguf_encode(GgufType::I2_S, W.data(), M, K);
    b[size_t(18 * K / 4 + 3)] = 0xFF;
    expect_import_error(tensor_of(GgufType::I2_S, b, M, K), i2s);
    expect_import_error(tensor_of(GgufType::I2_S, b, M, K),
                        Format::parse("tl2"));
  }
  {
    SCOPED_TRACE("q4_0 block scale NaN");
    const std::vector<float> R = test::random_values(M * K, 9);
    std::vector<uint8_t> b = gguf_encode(GgufType::Q4_0, R.data(), M, K);
    b[size_t(19 * (K / 32) * 18 + 1)] = 0x7E; // row 19, block 0: d NaN
    expect_import_error(tensor_of(GgufType::Q4_0, b, M, K),
                        Format::parse("q4_0"));
  }
  {
    SCOPED_TRACE("wrong byte count");
    const std::vector<uint8_t> b(100, 0);
    const GgufTensor t = tensor_of(GgufType::TQ2_0, b, M, K);
    UpconvertWeights U = shape_upconvert(i2s, M, K);
    EXPECT_THROW(gguf_pack_rows(t, U, 0, M), Error);
  }
}

} // namespace
} // namespace lowbit
