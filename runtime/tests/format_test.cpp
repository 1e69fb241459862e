//===- format_test.cpp - format names and shape rules ---------------------===//

#include "lowbit/format.h"
#include "lowbit/reference.h"

#include "test_util.h"

#include <iterator>

namespace lowbit {
namespace {

using test::error_of;

TEST(Format, ParsesEveryFamily) {
  struct Case {
    const char *name;
    FormatKind kind;
    int bits, group;
    Encoding encoding;
  } cases[] = {
      {"i2s", FormatKind::I2S, 2, 0, Encoding::Ternary},
      {"tl1", FormatKind::TL1, 2, 0, Encoding::Ternary},
      {"tl2", FormatKind::TL2, 2, 0, Encoding::Ternary},
      {"w1g128", FormatKind::Group, 1, 128, Encoding::Binary},
      {"w2g64", FormatKind::Group, 2, 64, Encoding::Unsigned},
      {"w3g32", FormatKind::Group, 3, 32, Encoding::Unsigned},
      {"w4g4096", FormatKind::Group, 4, 4096, Encoding::Unsigned},
      {"q4_0", FormatKind::Q4_0, 4, 32, Encoding::GgufQ4_0},
      // ggml block types: code bits, weights per scale.
      {"q8_0", FormatKind::Q8_0, 8, 32, Encoding::GgmlBlock},
      {"q4_1", FormatKind::Q4_1, 4, 32, Encoding::GgmlBlock},
      {"q5_0", FormatKind::Q5_0, 5, 32, Encoding::GgmlBlock},
      {"q5_1", FormatKind::Q5_1, 5, 32, Encoding::GgmlBlock},
      {"q2_k", FormatKind::Q2_K, 2, 16, Encoding::GgmlBlock},
      {"q3_k", FormatKind::Q3_K, 3, 16, Encoding::GgmlBlock},
      {"q4_k", FormatKind::Q4_K, 4, 32, Encoding::GgmlBlock},
      {"q5_k", FormatKind::Q5_K, 5, 32, Encoding::GgmlBlock},
      {"q6_k", FormatKind::Q6_K, 6, 16, Encoding::GgmlBlock},
      {"iq4_nl", FormatKind::IQ4_NL, 4, 32, Encoding::GgmlBlock},
  };
  for (const Case &c : cases) {
    Format f = Format::parse(c.name);
    EXPECT_EQ(f.kind, c.kind) << c.name;
    EXPECT_EQ(f.bits, c.bits) << c.name;
    EXPECT_EQ(f.group, c.group) << c.name;
    EXPECT_EQ(f.encoding(), c.encoding) << c.name;
    EXPECT_EQ(f.is_ternary(), c.encoding == Encoding::Ternary) << c.name;
    EXPECT_EQ(f.name(), c.name);
  }
}

TEST(Format, BitsPerWeight) {
  EXPECT_DOUBLE_EQ(Format::parse("i2s").bits_per_weight(), 2.0);
  EXPECT_DOUBLE_EQ(Format::parse("tl1").bits_per_weight(), 2.0);
  EXPECT_DOUBLE_EQ(Format::parse("tl2").bits_per_weight(), 5.0 / 3.0);
  EXPECT_DOUBLE_EQ(Format::parse("w1g128").bits_per_weight(), 1.125);
  EXPECT_DOUBLE_EQ(Format::parse("w2g64").bits_per_weight(), 2.5);
  EXPECT_DOUBLE_EQ(Format::parse("w4g32").bits_per_weight(), 5.0);
  EXPECT_DOUBLE_EQ(Format::parse("q4_0").bits_per_weight(), 4.5);
  // 8 * sizeof(block_<type>) / weights per block, from ggml-common.h.
  EXPECT_DOUBLE_EQ(Format::parse("q8_0").bits_per_weight(), 8.5);
  EXPECT_DOUBLE_EQ(Format::parse("q4_1").bits_per_weight(), 5.0);
  EXPECT_DOUBLE_EQ(Format::parse("q5_0").bits_per_weight(), 5.5);
  EXPECT_DOUBLE_EQ(Format::parse("q5_1").bits_per_weight(), 6.0);
  EXPECT_DOUBLE_EQ(Format::parse("q2_k").bits_per_weight(), 2.625);
  EXPECT_DOUBLE_EQ(Format::parse("q3_k").bits_per_weight(), 3.4375);
  EXPECT_DOUBLE_EQ(Format::parse("q4_k").bits_per_weight(), 4.5);
  EXPECT_DOUBLE_EQ(Format::parse("q5_k").bits_per_weight(), 5.5);
  EXPECT_DOUBLE_EQ(Format::parse("q6_k").bits_per_weight(), 6.5625);
  EXPECT_DOUBLE_EQ(Format::parse("iq4_nl").bits_per_weight(), 4.5);
}

// The table against ggml.h's enum ggml_type and ggml-common.h's block
// structs, written out here by hand.
TEST(Format, GgmlBlockTable) {
  struct Case {
    const char *name;
    uint32_t id;
    int block, bytes, scale_block;
    bool has_min;
  } cases[] = {
      {"q4_0", 2, 32, 18, 32, false},     {"q4_1", 3, 32, 20, 32, true},
      {"q5_0", 6, 32, 22, 32, false},     {"q5_1", 7, 32, 24, 32, true},
      {"q8_0", 8, 32, 34, 32, false},     {"q2_k", 10, 256, 84, 16, true},
      {"q3_k", 11, 256, 110, 16, false},  {"q4_k", 12, 256, 144, 32, true},
      {"q5_k", 13, 256, 176, 32, true},   {"q6_k", 14, 256, 210, 16, false},
      {"iq4_nl", 20, 32, 18, 32, false},
  };
  int count = 0;
  const GgmlBlockType *types = ggml_block_types(&count);
  ASSERT_EQ(count, int(std::size(cases)));
  for (int i = 0; i < count; ++i) {
    const Case &c = cases[i];
    EXPECT_STREQ(types[i].name, c.name);
    EXPECT_EQ(types[i].ggml_type, c.id) << c.name;
    EXPECT_EQ(types[i].block, c.block) << c.name;
    EXPECT_EQ(types[i].block_bytes, c.bytes) << c.name;
    EXPECT_EQ(types[i].scale_block, c.scale_block) << c.name;
    EXPECT_EQ(types[i].has_min, c.has_min) << c.name;
    const GgmlBlockType *by_id = ggml_block_type_by_id(c.id);
    ASSERT_NE(by_id, nullptr) << c.name;
    EXPECT_STREQ(by_id->name, c.name);
    EXPECT_EQ(ggml_block_type(Format::parse(c.name).kind), by_id) << c.name;
  }
  for (uint32_t id : {0u, 1u, 9u, 15u, 16u, 23u, 30u, 34u, 35u})
    EXPECT_EQ(ggml_block_type_by_id(id), nullptr) << id;
  EXPECT_EQ(ggml_block_type(FormatKind::I2S), nullptr);
  EXPECT_EQ(ggml_block_type(FormatKind::Group), nullptr);
}

TEST(Format, RejectsUnknownNames) {
  const char *bad[] = {"w5g64",  "w0g32",
                       "w2g48",  "w2g0",
                       "w2g064", "w2g",
                       "wg32",   "w2g-32",
                       "w2g 64", "I2S",
                       "q4_2",   "",
                       "q4_K",   "Q8_0",
                       "q8_k",   "iq4_xs",
                       "i2s ",   "w2g99999999999999999999",
                       "w12g32", "w2g32x"};
  for (const char *name : bad) {
    std::string message = error_of([&] { Format::parse(name); });
    EXPECT_EQ(message, "unknown format '" + std::string(name) +
                           "' (expected i2s, tl1, tl2, w<b>g<G> with b in "
                           "1..4 and G a multiple of 32, q4_0, q4_1, q5_0, "
                           "q5_1, q8_0, q2_k, q3_k, q4_k, q5_k, q6_k, "
                           "iq4_nl)");
  }
  EXPECT_NE(std::string(format_names_help()).find("q4_0"), std::string::npos);
}

TEST(Format, ShapeRules) {
  const int64_t limit = max_reduction_length();
  EXPECT_EQ(limit, 16777215);
  struct Case {
    const char *format;
    int64_t M, K;
    const char *error;
  } cases[] = {
      {"i2s", 1, 1, ""},
      {"i2s", 3, 7, ""},
      {"i2s", 0, 4, "M must be >= 1, got M = 0"},
      {"i2s", 4, 0, "K must be >= 1, got K = 0"},
      {"i2s", -1, 4, "M must be >= 1, got M = -1"},
      {"tl1", 1, 7, "tl1 needs K even, got K = 7"},
      {"tl2", 1, 2, ""},
      {"tl2", 1, 9, "tl2 needs K even, got K = 9"},
      {"w2g64", 1, 100, "w2g64 needs K % 64 == 0, got K = 100"},
      {"w2g64", 1, 32, "w2g64 needs K % 64 == 0, got K = 32"},
      {"w1g32", 5, 96, ""},
      {"q4_0", 1, 100, "q4_0 needs K % 32 == 0, got K = 100"},
      {"q4_0", 2, 64, ""},
      {"q8_0", 1, 48, "q8_0 needs K % 32 == 0, got K = 48"},
      {"iq4_nl", 3, 96, ""},
      {"q4_k", 1, 128, "q4_k needs K % 256 == 0, got K = 128"},
      {"q6_k", 1, 300, "q6_k needs K % 256 == 0, got K = 300"},
      {"q2_k", 7, 512, ""},
      {"i2s", 1, limit, ""},
      {"i2s", 1, limit + 1,
       "i2s needs K <= 16777215 (int32 accumulation limit), got K = "
       "16777216"},
      {"tl2", 1, limit + 1,
       "tl2 needs K <= 16777215 (int32 accumulation limit), got K = "
       "16777216"},
      {"w4g32", 1, int64_t(1) << 30, ""},
      {"w4g32", int64_t(1) << 20, int64_t(1) << 30,
       "M x K = 1048576 x 1073741824 is too large (at most 2^40 weights)"},
      {"q4_0", int64_t(1) << 62, int64_t(1) << 62,
       "M x K = 4611686018427387904 x 4611686018427387904 is too large (at "
       "most 2^40 weights)"},
  };
  for (const Case &c : cases) {
    Format f = Format::parse(c.format);
    EXPECT_EQ(f.shape_error(c.M, c.K), c.error)
        << c.format << " " << c.M << "x" << c.K;
    if (*c.error)
      EXPECT_EQ(error_of([&] { f.check_shape(c.M, c.K); }), c.error);
    else
      EXPECT_NO_THROW(f.check_shape(c.M, c.K));
  }
}

TEST(Format, RejectsInconsistentFields) {
  Format f;
  f.kind = FormatKind::Group;
  f.bits = 2;
  f.group = 0; // would divide by zero
  EXPECT_NE(f.shape_error(1, 64), "");
  f.group = 64;
  f.bits = 5;
  EXPECT_NE(f.shape_error(1, 64), "");
  f.bits = 2;
  EXPECT_EQ(f.shape_error(1, 64), "");
  Format k = Format::parse("q4_k");
  k.group = 16; // q4_k has a scale per 32
  EXPECT_NE(k.shape_error(1, 256), "");
  k.group = 32;
  k.bits = 5;
  EXPECT_NE(k.shape_error(1, 256), "");
}

} // namespace
} // namespace lowbit
