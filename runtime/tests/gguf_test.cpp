//===- gguf_test.cpp - GGUF reader, writer, block codecs and import -------===//
//
// The reader against files written by GgufWriter and against hand-made
// broken ones (every truncation, bad magic/version/types, overlapping,
// misaligned and out-of-file tensors, counts too large for the file); the
// block codecs against blocks built byte by byte here from the layouts in
// gguf_import.cpp's header comment (ggml's and bitnet.cpp's definitions);
// import into the ternary formats (exact q and scale), q4_0 (bytes as they
// are) and the refusals.
//
//===----------------------------------------------------------------------===//

#include "lowbit/gguf.h"

#include "test_util.h"

#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>

namespace lowbit {
namespace {

using test::bits;
using test::error_of;
using test::tensor_of;

std::vector<uint8_t> read_bytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

// Little-endian byte builder for hand-made files.
struct Bytes {
  std::vector<uint8_t> b;
  template <typename T> Bytes &le(T v) {
    for (size_t i = 0; i < sizeof(T); ++i)
      b.push_back(uint8_t(uint64_t(v) >> (8 * i)));
    return *this;
  }
  Bytes &u32(uint32_t v) { return le(v); }
  Bytes &u64(uint64_t v) { return le(v); }
  Bytes &str(const std::string &s) {
    u64(s.size());
    b.insert(b.end(), s.begin(), s.end());
    return *this;
  }
  Bytes &raw(const std::vector<uint8_t> &v) {
    b.insert(b.end(), v.begin(), v.end());
    return *this;
  }
  Bytes &pad_to(size_t alignment) {
    while (b.size() % alignment)
      b.push_back(0);
    return *this;
  }
  Bytes &header(uint64_t n_tensors, uint64_t n_kv, uint32_t version = 3) {
    b.insert(b.end(), {'G', 'G', 'U', 'F'});
    return u32(version).u64(n_tensors).u64(n_kv);
  }
  // A tensor info: name, n_dims, ne..., type, offset.
  Bytes &tensor(const std::string &name, std::vector<uint64_t> ne,
                uint32_t type, uint64_t offset) {
    str(name).u32(uint32_t(ne.size()));
    for (uint64_t n : ne)
      u64(n);
    return u32(type).u64(offset);
  }
};

std::string parse_error(const std::vector<uint8_t> &bytes) {
  return error_of([&] { GgufFile::parse(bytes.data(), bytes.size(), "t.gguf"); });
}

GgufValue value(GgufValue::Type type) {
  GgufValue v;
  v.type = type;
  return v;
}

GgufValue int_value(GgufValue::Type type, int64_t i) {
  GgufValue v = value(type);
  v.i = i;
  if (i >= 0)
    v.u = uint64_t(i);
  return v;
}

GgufValue array_of(GgufValue::Type type, std::vector<GgufValue> elements) {
  GgufValue v = value(GgufValue::ARRAY);
  v.array_type = type;
  v.array = std::move(elements);
  return v;
}

// --- metadata -------------------------------------------------------------

TEST(Gguf, MetadataRoundTripOfEveryValueType) {
  test::TempDir dir;
  GgufWriter w;
  w.add("u8", int_value(GgufValue::UINT8, 200));
  w.add("i8", int_value(GgufValue::INT8, -100));
  w.add("u16", int_value(GgufValue::UINT16, 65535));
  w.add("i16", int_value(GgufValue::INT16, -32768));
  w.add_uint32("u32", 4000000000u);
  w.add_int32("i32", -2000000000);
  w.add_float32("f32", 0.1f);
  w.add_bool("bool", true);
  w.add_string("str", std::string("h\xC3\xA9llo\0x", 8)); // UTF-8, a NUL
  GgufValue u64 = value(GgufValue::UINT64);
  u64.u = 18446744073709551615ull;
  w.add("u64", u64);
  w.add("i64", int_value(GgufValue::INT64, std::numeric_limits<int64_t>::min()));
  GgufValue f64 = value(GgufValue::FLOAT64);
  f64.f = 1.0 / 3.0;
  w.add("f64", f64);
  w.add_string_array("tokens", {"<s>", "", "hello"});
  w.add_float32_array("scores", {-1.5f, 0.0f, 2.25f});
  w.add_int32_array("types", {1, -2, 3});
  w.add("bools", array_of(GgufValue::BOOL, {int_value(GgufValue::BOOL, 0),
                                             int_value(GgufValue::BOOL, 1)}));
  w.add("u8s", array_of(GgufValue::UINT8, {int_value(GgufValue::UINT8, 255)}));
  w.add("i64s", array_of(GgufValue::INT64, {int_value(GgufValue::INT64, -7)}));
  w.add("empty", array_of(GgufValue::UINT16, {}));
  const std::string path = dir.file("m.gguf");
  w.write(path);

  auto f = GgufFile::open(path);
  EXPECT_EQ(f->version(), 3u);
  EXPECT_EQ(f->alignment(), 32u);
  EXPECT_TRUE(f->tensors().empty());
  ASSERT_EQ(f->metadata().size(), 19u);
  EXPECT_EQ(f->metadata()[0].first, "u8"); // in the order added
  EXPECT_EQ(f->metadata()[18].first, "empty");
  EXPECT_EQ(f->get_int("u8"), 200);
  EXPECT_EQ(f->find("u8")->u, 200u);
  EXPECT_EQ(f->get_int("i8"), -100);
  EXPECT_EQ(f->get_int("u16"), 65535);
  EXPECT_EQ(f->get_int("i16"), -32768);
  EXPECT_EQ(f->get_int("u32"), 4000000000);
  EXPECT_EQ(f->get_int("i32"), -2000000000);
  EXPECT_EQ(f->get_float("f32"), double(0.1f));
  EXPECT_EQ(f->find("bool")->type, GgufValue::BOOL);
  EXPECT_EQ(f->find("bool")->i, 1);
  EXPECT_EQ(f->get_string("str"), std::string("h\xC3\xA9llo\0x", 8));
  EXPECT_EQ(f->find("u64")->u, 18446744073709551615ull);
  EXPECT_EQ(error_of([&] { f->get_int("u64"); }),
            path + ": key 'u64' = 18446744073709551615 does not fit an int64");
  EXPECT_EQ(f->get_int("i64"), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(f->get_float("f64"), 1.0 / 3.0);

  const GgufValue *tokens = f->find("tokens");
  ASSERT_NE(tokens, nullptr);
  EXPECT_EQ(tokens->type, GgufValue::ARRAY);
  EXPECT_EQ(tokens->array_type, GgufValue::STRING);
  ASSERT_EQ(tokens->array.size(), 3u);
  EXPECT_EQ(tokens->array[0].s, "<s>");
  EXPECT_EQ(tokens->array[1].s, "");
  EXPECT_EQ(tokens->array[2].s, "hello");
  const GgufValue *scores = f->find("scores");
  ASSERT_EQ(scores->array.size(), 3u);
  EXPECT_EQ(scores->array[0].f, -1.5);
  EXPECT_EQ(scores->array[2].f, 2.25);
  EXPECT_EQ(f->find("types")->array[1].i, -2);
  EXPECT_EQ(f->find("bools")->array[1].i, 1);
  EXPECT_EQ(f->find("u8s")->array[0].i, 255);
  EXPECT_EQ(f->find("i64s")->array[0].i, -7);
  EXPECT_EQ(f->find("empty")->array_type, GgufValue::UINT16);
  EXPECT_TRUE(f->find("empty")->array.empty());

  // Getters: missing keys, other kinds, fallbacks.
  EXPECT_EQ(f->find("nope"), nullptr);
  EXPECT_EQ(f->get_int("nope", 7), 7);
  EXPECT_EQ(f->get_float("nope", 0.5), 0.5);
  EXPECT_EQ(error_of([&] { f->get_int("nope"); }),
            path + ": missing key 'nope'");
  EXPECT_EQ(error_of([&] { f->get_int("str"); }),
            path + ": key 'str' is a string, not an integer");
  EXPECT_EQ(error_of([&] { f->get_string("tokens"); }),
            path + ": key 'tokens' is an array of string, not a string");
  EXPECT_EQ(error_of([&] { f->get_float("i32"); }),
            path + ": key 'i32' is a int32, not a float");
  EXPECT_EQ(error_of([&] { f->tensor("w"); }), path + ": no tensor 'w'");
}

TEST(Gguf, WriterRefusesWhatTheReaderWouldReject) {
  GgufWriter w;
  w.add_uint32("a", 1);
  EXPECT_EQ(error_of([&] { w.add_uint32("a", 2); }), "duplicate GGUF key 'a'");
  EXPECT_EQ(error_of([&] { w.add_bool("", true); }),
            "GGUF metadata keys must not be empty");
  EXPECT_EQ(error_of([&] {
              w.add_tensor("t", GgufType::Q4_0, {33, 1},
                           std::vector<uint8_t>(18));
            }),
            "GGUF tensor 't' [33, 1]: q4_0 needs K % 32 == 0, got K = 33");
  EXPECT_EQ(error_of([&] {
              w.add_tensor("t", GgufType::F32, {4, 2}, std::vector<uint8_t>(8));
            }),
            "GGUF tensor 't' [4, 2] of type f32 needs 32 bytes, got 8");
  test::TempDir dir;
  GgufWriter nested;
  nested.add("x", array_of(GgufValue::ARRAY, {}));
  EXPECT_NE(error_of([&] { nested.write(dir.file("n.gguf")); })
                .find("arrays of array are not supported"),
            std::string::npos);
  GgufWriter align;
  align.add_uint32("general.alignment", 48);
  EXPECT_EQ(error_of([&] { align.write(dir.file("a.gguf")); }),
            dir.file("a.gguf") + ": general.alignment must be a uint32 power "
                                 "of two");
}

// --- tensors ----------------------------------------------------------------

// Ternary values q * a of M x K (a pattern with a third zeros).
std::vector<float> ternary_values(int64_t M, int64_t K, float a,
                                  uint32_t seed = 1) {
  std::vector<float> W(size_t(M * K));
  uint32_t x = seed;
  for (float &w : W) {
    x = x * 1664525u + 1013904223u;
    w = a * float(int(x >> 30) % 3 - 1);
  }
  return W;
}

struct TypeCase {
  GgufType type;
  int64_t K;
};

TEST(Gguf, TensorsOfEveryTypeRoundTrip) {
  test::TempDir dir;
  const std::vector<TypeCase> cases = {
      {GgufType::F32, 5},     {GgufType::F16, 7},    {GgufType::BF16, 3},
      {GgufType::Q4_0, 64},   {GgufType::Q8_0, 32},  {GgufType::TQ1_0, 256},
      {GgufType::TQ2_0, 512}, {GgufType::I2_S, 256},
  };
  GgufWriter w;
  w.add_string("general.architecture", "test");
  std::vector<std::vector<uint8_t>> encoded;
  for (const TypeCase &c : cases) {
    const int64_t M = 3;
    std::vector<float> W = ternary_values(M, c.K, 0.5f, uint32_t(c.K));
    encoded.push_back(gguf_encode(c.type, W.data(), M, c.K));
    EXPECT_EQ(encoded.back().size(), gguf_tensor_bytes(c.type, M, c.K));
    w.add_tensor(std::string("t.") + gguf_type_name(c.type), c.type,
                 {c.K, M}, encoded.back());
  }
  // A 3-D and a 1-D tensor.
  w.add_tensor("cube", GgufType::F32, {2, 3, 4}, std::vector<uint8_t>(96, 1));
  w.add_tensor("vec", GgufType::F16, {9}, std::vector<uint8_t>(18, 2));
  const std::string path = dir.file("t.gguf");
  w.write(path);

  const std::vector<uint8_t> bytes = read_bytes(path);
  auto f = GgufFile::parse(bytes.data(), bytes.size(), "mem");
  ASSERT_EQ(f->tensors().size(), cases.size() + 2);
  uint64_t previous_end = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const GgufTensor &t = f->tensors()[i];
    SCOPED_TRACE(t.name);
    EXPECT_EQ(t.type, cases[i].type);
    EXPECT_EQ(t.ne, (std::vector<int64_t>{cases[i].K, 3}));
    EXPECT_EQ(t.K(), cases[i].K);
    EXPECT_EQ(t.rows(), 3);
    EXPECT_EQ(t.offset % 32, 0u);
    EXPECT_GE(t.offset, previous_end);
    previous_end = t.offset + t.bytes;
    EXPECT_EQ(std::vector<uint8_t>(t.data, t.data + t.bytes), encoded[i]);
    // The data pointer is inside the image, at the aligned data section.
    EXPECT_EQ(uint64_t(t.data - bytes.data()) % 32, 0u);
    EXPECT_EQ(&f->tensor(t.name), &t);
  }
  EXPECT_EQ(f->tensor("cube").rows(), 12);
  EXPECT_EQ(f->tensor("vec").rows(), 1);
  EXPECT_EQ(bytes.size() % 32, 0u); // the last tensor padded too

  // The same through open() (mmap).
  auto g = GgufFile::open(path);
  EXPECT_EQ(g->tensors().size(), cases.size() + 2);
  EXPECT_EQ(std::vector<uint8_t>(g->tensors()[3].data,
                                 g->tensors()[3].data + g->tensors()[3].bytes),
            encoded[3]);
  EXPECT_EQ(g->get_string("general.architecture"), "test");
}

TEST(Gguf, OpenNamesTheFile) {
  EXPECT_NE(error_of([] { GgufFile::open("/nonexistent/x.gguf"); })
                .find("/nonexistent/x.gguf: cannot open: "),
            std::string::npos);
  test::TempDir dir;
  EXPECT_EQ(error_of([&] { GgufFile::open(dir.file("")); }),
            dir.file("") + ": not a regular file");
  const std::string empty = dir.file("empty.gguf");
  std::ofstream(empty).close();
  EXPECT_NE(error_of([&] { GgufFile::open(empty); }).find(empty + ": truncated"),
            std::string::npos);
}

// A small valid file whose last byte is tensor data (no trailing padding),
// so that every proper prefix is broken.
std::vector<uint8_t> small_file() {
  Bytes f;
  f.header(2, 2);
  f.str("general.name").u32(GgufValue::STRING).str("tiny");
  f.str("ids").u32(GgufValue::ARRAY).u32(GgufValue::INT32).u64(2).u32(7).u32(9);
  f.tensor("a", {32, 1}, uint32_t(GgufType::Q4_0), 0);
  f.tensor("b", {8}, uint32_t(GgufType::F32), 32);
  f.pad_to(32);
  std::vector<uint8_t> q4(18, 0x88);
  f.raw(q4).pad_to(32);
  for (int i = 0; i < 8; ++i)
    f.le(uint32_t(0x3F800000)); // 1.0f
  return f.b;
}

TEST(Gguf, EveryTruncationThrows) {
  const std::vector<uint8_t> file = small_file();
  auto f = GgufFile::parse(file.data(), file.size(), "small");
  ASSERT_EQ(f->tensors().size(), 2u);
  EXPECT_EQ(f->get_string("general.name"), "tiny");
  float row[8];
  gguf_decode_row(f->tensor("b"), 0, row);
  EXPECT_EQ(row[7], 1.0f);
  for (size_t n = 0; n < file.size(); ++n) {
    // A copy of exactly n bytes, so that ASan sees any read past it.
    std::vector<uint8_t> prefix(file.begin(), file.begin() + n);
    const std::string e = parse_error(prefix);
    EXPECT_EQ(e.rfind("t.gguf: ", 0), 0u) << "prefix " << n << ": " << e;
  }
}

TEST(Gguf, RejectsBadHeaders) {
  std::vector<uint8_t> file = small_file();
  file[0] = 'g';
  EXPECT_EQ(parse_error(file),
            "t.gguf: not a GGUF file (the magic is not \"GGUF\")");
  for (uint32_t version : {0u, 1u, 4u, 0x03000000u}) {
    Bytes b;
    b.header(0, 0, version);
    EXPECT_EQ(parse_error(b.b), "t.gguf: unsupported GGUF version " +
                                    std::to_string(version) +
                                    " (expected 2 or 3)");
  }
  Bytes v2;
  v2.header(0, 0, 2);
  EXPECT_EQ(GgufFile::parse(v2.b.data(), v2.b.size(), "v2")->version(), 2u);

  // Counts the file cannot hold are refused before anything is reserved.
  Bytes kv;
  kv.header(0, uint64_t(1) << 62);
  EXPECT_EQ(parse_error(kv.b), "t.gguf: metadata count 4611686018427387904 "
                               "does not fit the file (24 bytes)");
  Bytes neg;
  neg.header(0, ~uint64_t(0));
  EXPECT_EQ(parse_error(neg.b),
            "t.gguf: metadata count -1 does not fit the file (24 bytes)");
  Bytes tn;
  tn.header(~uint64_t(0) >> 1, 0);
  EXPECT_EQ(parse_error(tn.b), "t.gguf: tensor count 9223372036854775807 "
                               "does not fit the file (24 bytes)");
  Bytes s;
  s.header(0, 1).u64(~uint64_t(0));
  s.b.resize(s.b.size() + 16, 'k');
  EXPECT_EQ(parse_error(s.b), "t.gguf: truncated: the key of metadata entry 0 "
                              "at byte 32 needs 18446744073709551615 bytes, "
                              "16 left");
  Bytes e;
  e.header(0, 1).str("tok").u32(GgufValue::ARRAY).u32(GgufValue::STRING).u64(2);
  e.str("a").u64(100).u64(0);
  EXPECT_EQ(parse_error(e.b), "t.gguf: truncated: the value of 'tok'[1] at "
                              "byte 68 needs 100 bytes, 8 left");
  Bytes a;
  a.header(0, 1).str("k").u32(GgufValue::ARRAY).u32(GgufValue::UINT32).u64(
      uint64_t(1) << 61);
  EXPECT_EQ(parse_error(a.b), "t.gguf: key 'k' claims 2305843009213693952 "
                              "uint32 elements but only 0 bytes are left");
  Bytes as;
  as.header(0, 1).str("k").u32(GgufValue::ARRAY).u32(GgufValue::STRING).u64(3);
  as.u64(0).u64(0);
  EXPECT_EQ(parse_error(as.b), "t.gguf: key 'k' claims 3 string elements but "
                               "only 16 bytes are left");
}

TEST(Gguf, RejectsBadMetadata) {
  Bytes unknown;
  unknown.header(0, 1).str("k").u32(13).u32(0);
  EXPECT_EQ(parse_error(unknown.b), "t.gguf: key 'k' has unknown value type 13");
  Bytes unknown_element;
  unknown_element.header(0, 1).str("k").u32(GgufValue::ARRAY).u32(99).u64(0);
  EXPECT_EQ(parse_error(unknown_element.b),
            "t.gguf: key 'k' is an array of unknown value type 99");
  Bytes nested;
  nested.header(0, 1).str("k").u32(GgufValue::ARRAY).u32(GgufValue::ARRAY);
  nested.u64(1).u32(GgufValue::UINT8).u64(0);
  EXPECT_EQ(parse_error(nested.b), "t.gguf: key 'k' is an array of arrays "
                                   "(not supported; ggml rejects them too)");
  Bytes dup;
  dup.header(0, 2);
  dup.str("k").u32(GgufValue::UINT8).le(uint8_t(1));
  dup.str("k").u32(GgufValue::UINT8).le(uint8_t(2));
  EXPECT_EQ(parse_error(dup.b), "t.gguf: duplicate key 'k'");
  Bytes empty;
  empty.header(0, 1).str("").u32(GgufValue::UINT8).le(uint8_t(1));
  EXPECT_EQ(parse_error(empty.b), "t.gguf: metadata entry 0 has an empty key");
  Bytes align_type;
  align_type.header(0, 1).str("general.alignment").u32(GgufValue::UINT64).u64(64);
  EXPECT_EQ(parse_error(align_type.b),
            "t.gguf: general.alignment must be a uint32, not uint64");
  for (uint32_t a : {0u, 3u, 48u}) {
    Bytes align;
    align.header(0, 1).str("general.alignment").u32(GgufValue::UINT32).u32(a);
    EXPECT_EQ(parse_error(align.b), "t.gguf: general.alignment = " +
                                        std::to_string(a) +
                                        " is not a power of two");
  }
}

// A file with one metadata entry (general.alignment = 64) and the given
// tensor infos; `data` bytes of data after the aligned header.
std::vector<uint8_t> with_tensors(
    const std::vector<std::tuple<std::string, std::vector<uint64_t>, uint32_t,
                                 uint64_t>> &infos,
    size_t data) {
  Bytes f;
  f.header(infos.size(), 1);
  f.str("general.alignment").u32(GgufValue::UINT32).u32(64);
  for (const auto &[name, ne, type, offset] : infos)
    f.tensor(name, ne, type, offset);
  f.pad_to(64);
  f.b.resize(f.b.size() + data, 0);
  return f.b;
}

TEST(Gguf, RejectsBadTensors) {
  const uint32_t f32 = uint32_t(GgufType::F32);
  const uint32_t q4 = uint32_t(GgufType::Q4_0);
  // Valid: two f32 [16] tensors at 0 and 64 in 128 bytes.
  auto ok = with_tensors({{"a", {16}, f32, 0}, {"b", {16}, f32, 64}}, 128);
  auto f = GgufFile::parse(ok.data(), ok.size(), "ok");
  EXPECT_EQ(f->alignment(), 64u);
  EXPECT_EQ(f->tensor("b").offset, 64u);
  // Unordered offsets are fine as long as they do not overlap.
  auto swapped = with_tensors({{"a", {16}, f32, 64}, {"b", {16}, f32, 0}}, 128);
  EXPECT_NO_THROW(GgufFile::parse(swapped.data(), swapped.size(), "s"));

  EXPECT_EQ(parse_error(with_tensors({{"a", {16}, f32, 0}, {"b", {32}, f32, 64}},
                                     128)),
            "t.gguf: tensor 'b' (128 bytes at data offset 64) extends past "
            "the end of the file (128 bytes of data)");
  EXPECT_EQ(parse_error(with_tensors({{"a", {17}, f32, 0}, {"b", {16}, f32, 64}},
                                     256)),
            "t.gguf: tensors 'a' and 'b' overlap");
  EXPECT_EQ(parse_error(with_tensors({{"a", {16}, f32, 0}, {"b", {16}, f32, 0}},
                                     256)),
            "t.gguf: tensors 'a' and 'b' overlap");
  EXPECT_EQ(parse_error(with_tensors({{"a", {16}, f32, 32}}, 256)),
            "t.gguf: tensor 'a' has data offset 32, not a multiple of the "
            "alignment 64");
  EXPECT_EQ(parse_error(with_tensors({{"a", {16}, f32, ~uint64_t(0) << 6}}, 64)),
            "t.gguf: tensor 'a' (64 bytes at data offset 18446744073709551552) "
            "extends past the end of the file (64 bytes of data)");
  const std::string known =
      "(f32 0, f16 1, bf16 30, tq1_0 34, tq2_0 35, i2_s 36, q4_0 2, q4_1 3, "
      "q5_0 6, q5_1 7, q8_0 8, q2_k 10, q3_k 11, q4_k 12, q5_k 13, q6_k 14, "
      "iq4_nl 20)";
  EXPECT_EQ(parse_error(with_tensors({{"a", {256}, 23, 0}}, 256)),
            "t.gguf: tensor 'a' has ggml type 23 (iq4_xs), which lowbit does "
            "not read " + known);
  EXPECT_EQ(parse_error(with_tensors({{"a", {256}, 16, 0}}, 256)),
            "t.gguf: tensor 'a' has ggml type 16 (iq2_xxs), which lowbit does "
            "not read " + known);
  EXPECT_EQ(parse_error(with_tensors({{"a", {16}, 99, 0}}, 64)),
            "t.gguf: tensor 'a' has ggml type 99, which lowbit does not read " +
                known);
  // K-quants: rows of 256 values; a shorter row or missing super-blocks.
  EXPECT_EQ(parse_error(with_tensors({{"a", {128, 2}, 12, 0}}, 512)),
            "t.gguf: tensor 'a' [128, 2]: q4_k needs K % 256 == 0, got K = "
            "128");
  EXPECT_EQ(parse_error(with_tensors({{"a", {256, 2}, 14, 0}}, 384)),
            "t.gguf: tensor 'a' (420 bytes at data offset 0) extends past the "
            "end of the file (384 bytes of data)");
  EXPECT_EQ(parse_error(with_tensors({{"a", {}, f32, 0}}, 64)),
            "t.gguf: tensor 'a' has 0 dimensions (expected 1 to 4)");
  EXPECT_EQ(parse_error(with_tensors({{"a", {1, 1, 1, 1, 1}, f32, 0}}, 64)),
            "t.gguf: tensor 'a' has 5 dimensions (expected 1 to 4)");
  EXPECT_EQ(parse_error(with_tensors({{"a", {16, 0}, f32, 0}}, 64)),
            "t.gguf: tensor 'a' has dimension 1 = 0 (must be >= 1)");
  EXPECT_EQ(parse_error(with_tensors({{"a", {16, ~uint64_t(0)}, f32, 0}}, 64)),
            "t.gguf: tensor 'a' has dimension 1 = -1 (must be >= 1)");
  EXPECT_EQ(parse_error(with_tensors(
                {{"a", {uint64_t(1) << 32, uint64_t(1) << 31}, f32, 0}}, 64)),
            "t.gguf: tensor 'a' has too many elements");
  EXPECT_EQ(parse_error(with_tensors(
                {{"a", {uint64_t(1) << 31, uint64_t(1) << 31}, f32, 0}}, 64)),
            "t.gguf: tensor 'a' [2147483648, 2147483648]: f32: 2147483648 x "
            "2147483648 values overflow the byte count");
  EXPECT_EQ(parse_error(with_tensors({{"a", {48, 2}, q4, 0}}, 64)),
            "t.gguf: tensor 'a' [48, 2]: q4_0 needs K % 32 == 0, got K = 48");
  EXPECT_EQ(parse_error(with_tensors({{"a", {16}, f32, 0}, {"a", {16}, f32, 64}},
                                     128)),
            "t.gguf: duplicate tensor name 'a'");
  // The data section starts at the aligned end of the header: a file that
  // ends inside the padding is truncated.
  auto cut = with_tensors({{"a", {16}, f32, 0}}, 64);
  cut.resize(cut.size() - 64 - 1);
  EXPECT_NE(parse_error(cut).find("t.gguf: truncated: the data section would "
                                  "start at byte "),
            std::string::npos);
}

// --- block codecs -----------------------------------------------------------

std::vector<float> decode(const GgufTensor &t) {
  std::vector<float> out(size_t(t.rows() * t.K()));
  for (int64_t m = 0; m < t.rows(); ++m)
    gguf_decode_row(t, m, out.data() + m * t.K());
  return out;
}

TEST(GgufCodec, TypeNamesSizesAndIds) {
  EXPECT_EQ(uint32_t(GgufType::Q8_0), 8u);   // ggml.h
  EXPECT_EQ(uint32_t(GgufType::BF16), 30u);  // ggml.h
  EXPECT_EQ(uint32_t(GgufType::TQ1_0), 34u); // ggml.h
  EXPECT_EQ(uint32_t(GgufType::TQ2_0), 35u); // ggml.h
  EXPECT_EQ(uint32_t(GgufType::I2_S), 36u);  // bitnet.cpp's ggml fork
  // ggml.h's ids of the block types.
  EXPECT_EQ(uint32_t(GgufType::Q4_1), 3u);
  EXPECT_EQ(uint32_t(GgufType::Q5_0), 6u);
  EXPECT_EQ(uint32_t(GgufType::Q5_1), 7u);
  EXPECT_EQ(uint32_t(GgufType::Q2_K), 10u);
  EXPECT_EQ(uint32_t(GgufType::Q3_K), 11u);
  EXPECT_EQ(uint32_t(GgufType::Q4_K), 12u);
  EXPECT_EQ(uint32_t(GgufType::Q5_K), 13u);
  EXPECT_EQ(uint32_t(GgufType::Q6_K), 14u);
  EXPECT_EQ(uint32_t(GgufType::IQ4_NL), 20u);
  for (const char *n :
       {"f32", "f16", "bf16", "q4_0", "q8_0", "tq1_0", "tq2_0", "i2_s", "q4_1",
        "q5_0", "q5_1", "q2_k", "q3_k", "q4_k", "q5_k", "q6_k", "iq4_nl"})
    EXPECT_STREQ(gguf_type_name(parse_gguf_type(n)), n);
  EXPECT_EQ(parse_gguf_type("TQ2_0"), GgufType::TQ2_0);
  EXPECT_EQ(parse_gguf_type("Q4_K"), GgufType::Q4_K); // ggml spells q4_K
  EXPECT_EQ(error_of([] { parse_gguf_type("iq4_xs"); }),
            "unknown GGUF tensor type 'iq4_xs' (expected f32, f16, bf16, "
            "tq1_0, tq2_0, i2_s, q4_0, q4_1, q5_0, q5_1, q8_0, q2_k, q3_k, "
            "q4_k, q5_k, q6_k, iq4_nl)");
  EXPECT_TRUE(is_known_gguf_type(36));
  EXPECT_TRUE(is_known_gguf_type(3));
  EXPECT_FALSE(is_known_gguf_type(23));
  EXPECT_FALSE(is_known_gguf_type(37));
  EXPECT_STREQ(ggml_type_name_of(23), "iq4_xs");
  EXPECT_STREQ(ggml_type_name_of(4), "");
  EXPECT_STREQ(ggml_type_name_of(1000), "");
  EXPECT_EQ(gguf_block_size(GgufType::Q6_K), 256);
  EXPECT_EQ(gguf_tensor_bytes(GgufType::Q3_K, 2, 512), 440u);
  EXPECT_EQ(gguf_tensor_bytes(GgufType::IQ4_NL, 3, 64), 108u);
  EXPECT_EQ(gguf_block_size(GgufType::BF16), 1);
  EXPECT_EQ(gguf_block_size(GgufType::Q8_0), 32);
  EXPECT_EQ(gguf_block_size(GgufType::TQ1_0), 256);
  EXPECT_EQ(gguf_block_size(GgufType::I2_S), 128);
  // sizeof(block_q4_0) = 18, block_q8_0 = 34, block_tq1_0 = 54,
  // block_tq2_0 = 66; i2_s n / 4 + 32.
  EXPECT_EQ(gguf_tensor_bytes(GgufType::F32, 3, 5), 60u);
  EXPECT_EQ(gguf_tensor_bytes(GgufType::F16, 3, 5), 30u);
  EXPECT_EQ(gguf_tensor_bytes(GgufType::Q4_0, 2, 64), 72u);
  EXPECT_EQ(gguf_tensor_bytes(GgufType::Q8_0, 2, 64), 136u);
  EXPECT_EQ(gguf_tensor_bytes(GgufType::TQ1_0, 2, 512), 216u);
  EXPECT_EQ(gguf_tensor_bytes(GgufType::TQ2_0, 2, 512), 264u);
  EXPECT_EQ(gguf_tensor_bytes(GgufType::I2_S, 2, 256), 160u);
  EXPECT_EQ(error_of([] { gguf_tensor_bytes(GgufType::TQ2_0, 1, 128); }),
            "tq2_0 needs K % 256 == 0, got K = 128");
  EXPECT_EQ(error_of([] { gguf_tensor_bytes(GgufType::F32, 0, 4); }),
            "f32 needs rows >= 1 and K >= 1, got 0 x 4");
}

TEST(GgufCodec, FloatTypes) {
  const float x[4] = {1.0f, -2.5f, 65504.0f, 1.0f / 3.0f};
  const std::vector<uint8_t> f32 = gguf_encode(GgufType::F32, x, 1, 4);
  EXPECT_EQ(std::vector<uint8_t>(f32.begin(), f32.begin() + 4),
            (std::vector<uint8_t>{0x00, 0x00, 0x80, 0x3F}));
  const std::vector<uint8_t> f16 = gguf_encode(GgufType::F16, x, 1, 4);
  EXPECT_EQ(std::vector<uint8_t>(f16.begin(), f16.begin() + 6),
            (std::vector<uint8_t>{0x00, 0x3C, 0x00, 0xC1, 0xFF, 0x7B}));
  const std::vector<uint8_t> bf16 = gguf_encode(GgufType::BF16, x, 1, 4);
  EXPECT_EQ(std::vector<uint8_t>(bf16.begin(), bf16.begin() + 4),
            (std::vector<uint8_t>{0x80, 0x3F, 0x20, 0xC0}));
  float y[4];
  gguf_decode_row(tensor_of(GgufType::F32, f32, 1, 4), 0, y);
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(bits(y[i]), bits(x[i]));
  gguf_decode_row(tensor_of(GgufType::F16, f16, 1, 4), 0, y);
  EXPECT_EQ(y[1], -2.5f);
  EXPECT_EQ(y[3], half_to_float(float_to_half(1.0f / 3.0f)));
  gguf_decode_row(tensor_of(GgufType::BF16, bf16, 1, 4), 0, y);
  EXPECT_EQ(y[3], bf16_to_float(float_to_bf16(1.0f / 3.0f)));
}

TEST(GgufCodec, Q4_0ByHand) {
  // x_j = j - 16: max = -16 (the first |x|-largest), d = -16 / -8 = 2,
  // id = 0.5, c_j = min(15, trunc((j - 16) / 2 + 8.5)) = min(15, ceil(j / 2)).
  float x[32];
  for (int j = 0; j < 32; ++j)
    x[j] = float(j - 16);
  const std::vector<uint8_t> b = gguf_encode(GgufType::Q4_0, x, 1, 32);
  ASSERT_EQ(b.size(), 18u);
  EXPECT_EQ(b[0], 0x00); // fp16 2.0 = 0x4000, little-endian
  EXPECT_EQ(b[1], 0x40);
  for (int j = 0; j < 16; ++j) {
    const int lo = (j + 1) / 2, hi = std::min(15, (j + 16 + 1) / 2);
    EXPECT_EQ(b[2 + j], uint8_t(lo | hi << 4)) << j;
  }
  EXPECT_EQ(b[2], 0x80);
  EXPECT_EQ(b[3], 0x91);
  // The same bytes as quantize(q4_0): one quantizer.
  EXPECT_EQ(b, quantize(Format::parse("q4_0"), x, 1, 32).codes);
  float y[32];
  gguf_decode_row(tensor_of(GgufType::Q4_0, b, 1, 32), 0, y);
  for (int j = 0; j < 32; ++j) {
    const int c = j < 16 ? b[2 + j] & 15 : b[2 + j - 16] >> 4;
    EXPECT_EQ(y[j], 2.0f * float(c - 8)) << j;
  }
  EXPECT_EQ(y[0], -16.0f);
  EXPECT_EQ(y[31], 14.0f); // c = 15: the top code clips x = 15
}

TEST(GgufCodec, Q8_0ByHand) {
  // amax = 127: d = 1 (fp16 0x3C00), id = 1, q = roundf(x): halves away
  // from zero (2.5 -> 3, -0.5 -> -1).
  float x[32];
  for (int j = 0; j < 32; ++j)
    x[j] = float(j * 4 - 64);
  x[0] = -127.0f;
  x[1] = 2.5f;
  x[2] = -0.5f;
  x[3] = 0.49f;
  const std::vector<uint8_t> b = gguf_encode(GgufType::Q8_0, x, 1, 32);
  ASSERT_EQ(b.size(), 34u);
  EXPECT_EQ(b[0], 0x00);
  EXPECT_EQ(b[1], 0x3C);
  EXPECT_EQ(int8_t(b[2]), -127);
  EXPECT_EQ(int8_t(b[3]), 3);
  EXPECT_EQ(int8_t(b[4]), -1);
  EXPECT_EQ(int8_t(b[5]), 0);
  for (int j = 4; j < 32; ++j)
    EXPECT_EQ(int8_t(b[2 + j]), j * 4 - 64);
  float y[32];
  gguf_decode_row(tensor_of(GgufType::Q8_0, b, 1, 32), 0, y);
  EXPECT_EQ(y[0], -127.0f);
  EXPECT_EQ(y[1], 3.0f);
  EXPECT_EQ(y[31], 60.0f);
}

// q(v) for a block: a pattern with every trit in every position.
int pattern(int v) { return (v * 7 + v / 5) % 3 - 1; }

TEST(GgufCodec, TQ2_0ByHand) {
  // d = max |x| = 0.5 (fp16 0x3800); value 128 h + 32 i + m is bits 2i of
  // byte 32 h + m, code q + 1.
  float x[256];
  for (int v = 0; v < 256; ++v)
    x[v] = 0.5f * float(pattern(v));
  std::vector<uint8_t> expected(66, 0);
  for (int h = 0; h < 2; ++h)
    for (int m = 0; m < 32; ++m) {
      uint8_t byte = 0;
      for (int i = 0; i < 4; ++i)
        byte |= uint8_t((pattern(128 * h + 32 * i + m) + 1) << (2 * i));
      expected[32 * h + m] = byte;
    }
  expected[64] = 0x00;
  expected[65] = 0x38;
  // Byte 0 holds values 0, 32, 64, 96: q = -1, 1, 0, 0 -> codes 0, 2, 1, 1
  // at bits 0, 2, 4, 6: 0x58.
  EXPECT_EQ(pattern(0), -1);
  EXPECT_EQ(pattern(32), 1);
  EXPECT_EQ(pattern(64), 0);
  EXPECT_EQ(pattern(96), 0);
  EXPECT_EQ(expected[0], 0x58);
  EXPECT_EQ(gguf_encode(GgufType::TQ2_0, x, 1, 256), expected);
  float y[256];
  gguf_decode_row(tensor_of(GgufType::TQ2_0, expected, 1, 256), 0, y);
  for (int v = 0; v < 256; ++v)
    ASSERT_EQ(bits(y[v]), bits(x[v])) << v;
  // Code 3 decodes as ggml does, to 2 d.
  expected[5] |= 3;
  gguf_decode_row(tensor_of(GgufType::TQ2_0, expected, 1, 256), 0, y);
  EXPECT_EQ(y[5], 1.0f);
  // ggml rounds x / d with lroundf: 0.25 / 0.5 = 0.5 -> 1 (away from zero).
  x[0] = 0.25f;
  EXPECT_EQ(gguf_encode(GgufType::TQ2_0, x, 1, 256)[0] & 3, 2);
}

// The byte of ggml's tq1_0 for trits t[0..n) (first most significant),
// padded to five trits: ceil(x * 256 / 243).
uint8_t tq1_byte(std::vector<int> t) {
  int x = 0;
  for (int d : t)
    x = 3 * x + d;
  for (size_t i = t.size(); i < 5; ++i)
    x *= 3;
  return uint8_t((x * 256 + 242) / 243);
}

TEST(GgufCodec, TQ1_0ByHand) {
  // All zeros (trit 1): 5 trits 11111_3 = 121 -> ceil(121 * 256 / 243) =
  // 128; qh: 1111_3 * 3 = 120 -> 127. All +1 (trit 2): 242 -> 255 and
  // 240 -> 253. d = 0 for zeros.
  EXPECT_EQ(tq1_byte({1, 1, 1, 1, 1}), 128);
  EXPECT_EQ(tq1_byte({1, 1, 1, 1}), 127);
  EXPECT_EQ(tq1_byte({2, 2, 2, 2, 2}), 255);
  EXPECT_EQ(tq1_byte({2, 2, 2, 2}), 253);
  float zeros[256] = {};
  std::vector<uint8_t> z(54, 128);
  z[48] = z[49] = z[50] = z[51] = 127;
  z[52] = z[53] = 0;
  EXPECT_EQ(gguf_encode(GgufType::TQ1_0, zeros, 1, 256), z);

  // A pattern: qs[m] (m < 32) holds values m + 32 i, qs[32 + m] (m < 16)
  // values 160 + m + 16 i, qh[j] values 240 + j + 4 i.
  float x[256];
  for (int v = 0; v < 256; ++v)
    x[v] = -1.5f * float(pattern(v)); // d = 1.5, fp16 0x3E00
  auto trit = [&](int v) { return -pattern(v) + 1; };
  std::vector<uint8_t> expected(54);
  for (int m = 0; m < 32; ++m)
    expected[m] = tq1_byte({trit(m), trit(m + 32), trit(m + 64), trit(m + 96),
                            trit(m + 128)});
  for (int m = 0; m < 16; ++m)
    expected[32 + m] =
        tq1_byte({trit(160 + m), trit(176 + m), trit(192 + m), trit(208 + m),
                  trit(224 + m)});
  for (int j = 0; j < 4; ++j)
    expected[48 + j] =
        tq1_byte({trit(240 + j), trit(244 + j), trit(248 + j), trit(252 + j)});
  expected[52] = 0x00;
  expected[53] = 0x3E;
  EXPECT_EQ(gguf_encode(GgufType::TQ1_0, x, 1, 256), expected);
  float y[256];
  gguf_decode_row(tensor_of(GgufType::TQ1_0, expected, 1, 256), 0, y);
  for (int v = 0; v < 256; ++v)
    ASSERT_EQ(bits(y[v]), bits(x[v] == 0.0f ? 0.0f : x[v])) << v;
}

TEST(GgufCodec, I2_SByHand) {
  // One row of 256: two blocks of 128; element j of a block is bits
  // 6 - 2 (j / 32) of byte j % 32, code q + 1; then the f32 scale max |x|
  // and 28 zero bytes.
  float x[256];
  for (int v = 0; v < 256; ++v)
    x[v] = 0.75f * float(pattern(v));
  std::vector<uint8_t> expected(256 / 4 + 32, 0);
  for (int blk = 0; blk < 2; ++blk)
    for (int b = 0; b < 32; ++b) {
      auto code = [&](int g) { return pattern(128 * blk + 32 * g + b) + 1; };
      expected[32 * blk + b] =
          uint8_t(code(0) << 6 | code(1) << 4 | code(2) << 2 | code(3));
    }
  expected[64] = 0x00; // 0.75f = 0x3F400000
  expected[65] = 0x00;
  expected[66] = 0x40;
  expected[67] = 0x3F;
  // Values 0, 32, 64, 96: codes 0, 2, 1, 1 at bits 6, 4, 2, 0: 0x25.
  EXPECT_EQ(expected[0], 0x25);
  EXPECT_EQ(gguf_encode(GgufType::I2_S, x, 1, 256), expected);
  float y[256];
  gguf_decode_row(tensor_of(GgufType::I2_S, expected, 1, 256), 0, y);
  for (int v = 0; v < 256; ++v)
    ASSERT_EQ(y[v], x[v]) << v;
  // bitnet.cpp's quantizer keeps only the sign of |x| >= 1e-6.
  x[0] = 1e-7f;
  x[1] = -0.001f;
  const std::vector<uint8_t> s = gguf_encode(GgufType::I2_S, x, 1, 256);
  EXPECT_EQ(s[0] >> 6, 1);
  EXPECT_EQ(s[1] >> 6, 0);
  // Rows of a 2 x 128 tensor continue the flat blocks; the scale is after
  // all codes.
  std::vector<float> two(256);
  for (int v = 0; v < 256; ++v)
    two[v] = v < 128 ? 0.0f : 2.0f;
  const std::vector<uint8_t> t = gguf_encode(GgufType::I2_S, two.data(), 2, 128);
  EXPECT_EQ(t[0], 0x55);
  EXPECT_EQ(t[32], 0xAA);
  EXPECT_EQ(t[64 + 3], 0x40); // 2.0f = 0x40000000
  float row[128];
  gguf_decode_row(tensor_of(GgufType::I2_S, t, 2, 128), 1, row);
  EXPECT_EQ(row[127], 2.0f);
  EXPECT_EQ(error_of([&] {
              gguf_decode_row(tensor_of(GgufType::I2_S, t, 2, 128, "x"), 2, row);
            }),
            "x: row 2 is out of range for 2 rows");
  EXPECT_EQ(error_of([&] {
              gguf_decode_row(tensor_of(GgufType::I2_S, t, 2, 100, "x"), 0, row);
            }),
            "x: i2_s needs K % 128 == 0, got K = 100");
  EXPECT_EQ(error_of([&] {
              gguf_decode_row(tensor_of(GgufType::I2_S, t, 1, 128, "x"), 0, row);
            }),
            "x: the tensor's data does not match its type and shape");
}

TEST(GgufCodec, RejectsNonFiniteAndOverflow) {
  std::vector<float> x(256, 1.0f);
  x[3] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(error_of([&] { gguf_encode(GgufType::TQ2_0, x.data(), 1, 256); }),
            "value [0, 3] is not finite");
  x[3] = 1e6f;
  EXPECT_EQ(error_of([&] { gguf_encode(GgufType::TQ1_0, x.data(), 1, 256); }),
            "tq1_0 row 0 block 0: scale d = 1e+06 overflows fp16 (weights too "
            "large for tq1_0)");
  EXPECT_EQ(error_of([&] { gguf_encode(GgufType::TQ2_0, x.data(), 1, 100); }),
            "tq2_0 needs K % 256 == 0, got K = 100");
}

// --- import -----------------------------------------------------------------

void expect_exact_import(GgufType type, const std::vector<float> &W, int64_t M,
                         int64_t K, float a) {
  const std::vector<uint8_t> bytes = gguf_encode(type, W.data(), M, K);
  const GgufTensor t = tensor_of(type, bytes, M, K);
  const std::vector<float> values = decode(t);
  for (size_t i = 0; i < W.size(); ++i)
    ASSERT_EQ(values[i], W[i]) << i;
  for (const char *name : {"i2s", "tl1", "tl2"}) {
    SCOPED_TRACE(std::string(gguf_type_name(type)) + " -> " + name);
    const Format f = Format::parse(name);
    EXPECT_EQ(gguf_import_error(t, f), "");
    const PackedWeights P = import_tensor(t, f);
    EXPECT_EQ(P.M, M);
    EXPECT_EQ(P.K, K);
    EXPECT_EQ(bits(P.tensor_scale), bits(a));
    std::vector<int8_t> q(static_cast<size_t>(K));
    for (int64_t m = 0; m < M; ++m) {
      unpack_row(P, m, q.data());
      for (int64_t k = 0; k < K; ++k)
        ASSERT_EQ(q[k], int8_t(W[m * K + k] / a)) << m << ", " << k;
    }
    std::vector<float> D(W.size());
    dequantize(P, D.data());
    for (size_t i = 0; i < W.size(); ++i)
      ASSERT_EQ(D[i], values[i]) << i;
    // What the C API receives: the same bytes.
    const PackedWeights B =
        import_weights(type, bytes.data(), bytes.size(), M, K, f, "w");
    EXPECT_EQ(B.codes, P.codes);
  }
  EXPECT_EQ(gguf_default_format(t), "i2s");
}

TEST(GgufImport, TernaryTypesAreExact) {
  const int64_t M = 3, K = 768;
  const float a = 0.375f; // exact in fp16
  std::vector<float> W = ternary_values(M, K, a, 5);
  // A block of zeros (ggml writes d = 0 there) in row 1, block 1.
  for (int64_t k = 256; k < 512; ++k)
    W[K + k] = 0.0f;
  expect_exact_import(GgufType::TQ1_0, W, M, K, a);
  expect_exact_import(GgufType::TQ2_0, W, M, K, a);
  expect_exact_import(GgufType::I2_S, W, M, K, a);
  // The zero block's d is 0 indeed.
  const std::vector<uint8_t> b = gguf_encode(GgufType::TQ2_0, W.data(), M, K);
  EXPECT_EQ(b[(3 + 1) * 66 + 64], 0);
  EXPECT_EQ(b[(3 + 1) * 66 + 65], 0);
}

TEST(GgufImport, AllZeroTensorGetsTheScaleFloor) {
  const std::vector<float> W(2 * 256, 0.0f);
  for (GgufType type : {GgufType::TQ1_0, GgufType::TQ2_0, GgufType::I2_S}) {
    const std::vector<uint8_t> b = gguf_encode(type, W.data(), 2, 256);
    const PackedWeights P = import_tensor(tensor_of(type, b, 2, 256),
                                          Format::parse("tl2"));
    EXPECT_EQ(P.tensor_scale, 1e-5f);
    EXPECT_EQ(P.tensor_scale, quantize(Format::parse("tl2"), W.data(), 2, 256)
                                  .tensor_scale);
    std::vector<float> D(W.size(), 1.0f);
    dequantize(P, D.data());
    for (float d : D)
      ASSERT_EQ(d, 0.0f);
  }
}

TEST(GgufImport, MixedScalesAreAnError) {
  // Two blocks of one row with d = 0.5 and 0.25.
  std::vector<float> W = ternary_values(1, 512, 0.5f, 9);
  for (int k = 256; k < 512; ++k)
    W[k] *= 0.5f;
  for (GgufType type : {GgufType::TQ1_0, GgufType::TQ2_0}) {
    const std::vector<uint8_t> b = gguf_encode(type, W.data(), 1, 512);
    const GgufTensor t = tensor_of(type, b, 1, 512, "blk.0.attn_q.weight");
    const std::string expected =
        std::string("blk.0.attn_q.weight: ") + gguf_type_name(type) +
        " blocks carry 2 different scales; lowbit's ternary formats have one "
        "scale per tensor";
    EXPECT_EQ(error_of([&] { import_tensor(t, Format::parse("i2s")); }),
              expected);
    EXPECT_EQ(gguf_import_error(t, Format::parse("tl1")), expected);
  }
}

TEST(GgufImport, CodesOutsideTheTernaryRange) {
  std::vector<float> W = ternary_values(2, 256, 1.0f, 3);
  std::vector<uint8_t> b = gguf_encode(GgufType::TQ2_0, W.data(), 2, 256);
  b[66 + 33] |= 0x0C; // row 1, value 128 + 32 + 1 = 161: code 3
  EXPECT_EQ(error_of([&] {
              import_tensor(tensor_of(GgufType::TQ2_0, b, 2, 256),
                            Format::parse("i2s"));
            }),
            "w: tq2_0 code 3 at row 1, k = 161 is outside the ternary range");
  std::vector<uint8_t> s = gguf_encode(GgufType::I2_S, W.data(), 2, 256);
  s[40] |= 0x03; // block 1, byte 8: element 128 + 96 + 8 = 232 of row 0
  EXPECT_EQ(error_of([&] {
              import_tensor(tensor_of(GgufType::I2_S, s, 2, 256),
                            Format::parse("tl1"));
            }),
            "w: i2_s code 3 at row 0, k = 232 is outside the ternary range");
  // A non-positive scale.
  std::vector<uint8_t> n = gguf_encode(GgufType::I2_S, W.data(), 2, 256);
  n[128 + 3] |= 0x80; // the sign of the f32 scale
  EXPECT_EQ(error_of([&] {
              import_tensor(tensor_of(GgufType::I2_S, n, 2, 256),
                            Format::parse("i2s"));
            }),
            "w: i2_s scale -1 is not a finite positive number");
}

TEST(GgufImport, Q4_0AsItIs) {
  std::vector<float> W = test::random_values(4 * 64, 11);
  const std::vector<uint8_t> b = gguf_encode(GgufType::Q4_0, W.data(), 4, 64);
  const GgufTensor t = tensor_of(GgufType::Q4_0, b, 4, 64);
  const PackedWeights P = import_tensor(t, Format::parse("q4_0"));
  EXPECT_EQ(P.codes, b);
  EXPECT_EQ(P.tensor_scale, 0.0f);
  EXPECT_EQ(gguf_default_format(t), "q4_0");
  // Into anything else it would be re-quantized with a loss: refused.
  EXPECT_EQ(gguf_import_error(t, Format::parse("w4g32")).rfind(
                "w: q4_0 does not convert to w4g32 without loss (", 0),
            0u);
  EXPECT_THROW(import_tensor(t, Format::parse("i2s")), Error);
  // An infinite d is caught by validate.
  std::vector<uint8_t> inf = b;
  inf[0] = 0x00;
  inf[1] = 0x7C;
  EXPECT_EQ(error_of([&] {
              import_tensor(tensor_of(GgufType::Q4_0, inf, 4, 64),
                            Format::parse("q4_0"));
            }),
            "w: q4_0 row 0 block 0: scale d is not finite");
}

// Every block type: gguf_encode is quantize() (one quantizer), the import
// into its own format is a copy (lossless), gguf_decode_row is dequantize(),
// through a written and re-read file; K-quants' data need whole
// super-blocks.
TEST(GgufImport, BlockTypesAsTheyAre) {
  test::TempDir dir;
  const GgufType types[] = {GgufType::Q4_0, GgufType::Q4_1, GgufType::Q5_0,
                            GgufType::Q5_1, GgufType::Q8_0, GgufType::Q2_K,
                            GgufType::Q3_K, GgufType::Q4_K, GgufType::Q5_K,
                            GgufType::Q6_K, GgufType::IQ4_NL};
  const int64_t M = 3;
  GgufWriter w;
  std::vector<std::vector<float>> values;
  for (GgufType type : types) {
    const int64_t K = 2 * gguf_block_size(type);
    values.push_back(test::random_values(M * K, uint32_t(type) + 40));
    w.add_tensor(gguf_type_name(type), type, {K, M},
                 gguf_encode(type, values.back().data(), M, K));
  }
  const std::string path = dir.file("blocks.gguf");
  w.write(path);
  auto f = GgufFile::open(path);
  for (size_t i = 0; i < std::size(types); ++i) {
    const GgufTensor &t = f->tensor(gguf_type_name(types[i]));
    SCOPED_TRACE(t.name);
    const Format format = Format::parse(t.name);
    EXPECT_EQ(gguf_default_format(t), t.name);
    const PackedWeights P = import_tensor(t, format);
    const PackedWeights Q = quantize(format, values[i].data(), M, t.K());
    EXPECT_EQ(P.codes, Q.codes);
    EXPECT_EQ(P.codes, std::vector<uint8_t>(t.data, t.data + t.bytes));
    std::vector<float> D(values[i].size());
    dequantize(P, D.data());
    const std::vector<float> G = decode(t);
    for (size_t k = 0; k < D.size(); ++k)
      ASSERT_EQ(bits(D[k]), bits(G[k])) << k;
    // Into another format: re-quantization would lose values, refused.
    // (Not into q8_0: iq4_nl's values d * c with |c| <= 127 can fit it.)
    EXPECT_NE(gguf_import_error(t, Format::parse(format.kind == FormatKind::Q4_0
                                                     ? "q4_1"
                                                     : "q4_0"))
                  .find("without loss"),
              std::string::npos);
  }
  // A corrupt fp16 scale in the file: one error naming the tensor.
  std::vector<uint8_t> bytes = gguf_encode(GgufType::Q6_K, values[9].data(),
                                           M, 512);
  bytes[210 + 208 + 1] = 0x7c;
  bytes[210 + 208] = 0x00;
  EXPECT_EQ(error_of([&] {
              import_tensor(tensor_of(GgufType::Q6_K, bytes, M, 512),
                            Format::parse("q6_k"));
            }),
            "w: q6_k row 0 block 1: scale d is not finite");
  // Truncated super-blocks through the C-API path.
  EXPECT_EQ(error_of([&] {
              import_weights(GgufType::Q4_K, bytes.data(), 144, 1, 512,
                             Format::parse("q4_k"), "blk.0.ffn_up.weight");
            }),
            "blk.0.ffn_up.weight: q4_k [1 x 512] needs 288 bytes, got 144");
}

TEST(GgufImport, Q8_0OnlyWhereExact) {
  // q8_0 of ternary values: every block d = fp16(a / 127), values
  // +-127 d: one magnitude, so they import into i2s exactly.
  const std::vector<float> W = ternary_values(2, 64, 0.5f, 4);
  const std::vector<uint8_t> b = gguf_encode(GgufType::Q8_0, W.data(), 2, 64);
  const GgufTensor t = tensor_of(GgufType::Q8_0, b, 2, 64);
  const std::vector<float> values = decode(t);
  const PackedWeights P = import_tensor(t, Format::parse("i2s"));
  const float a = 127.0f * half_to_float(float_to_half(0.5f / 127.0f));
  EXPECT_EQ(P.tensor_scale, a);
  std::vector<float> D(values.size());
  dequantize(P, D.data());
  for (size_t i = 0; i < D.size(); ++i)
    ASSERT_EQ(D[i], values[i]);
  EXPECT_EQ(gguf_default_format(t), "q8_0");
  // Random q8_0 values do not survive: an error, never a silent loss.
  const std::vector<float> R = test::random_values(2 * 64, 5);
  const std::vector<uint8_t> r = gguf_encode(GgufType::Q8_0, R.data(), 2, 64);
  const std::string e =
      gguf_import_error(tensor_of(GgufType::Q8_0, r, 2, 64), Format::parse("q4_0"));
  EXPECT_EQ(e.rfind("w: q8_0 does not convert to q4_0 without loss (", 0), 0u);
  EXPECT_NE(e.find(" of 128 values would change); lowbit does not re-quantize "
                   "silently"),
            std::string::npos);
}

TEST(GgufImport, FloatsAreQuantized) {
  const int64_t M = 5, K = 64;
  const std::vector<float> R = test::random_values(M * K, 8);
  for (GgufType type : {GgufType::F32, GgufType::F16, GgufType::BF16}) {
    const std::vector<uint8_t> b = gguf_encode(type, R.data(), M, K);
    const GgufTensor t = tensor_of(type, b, M, K);
    const std::vector<float> values = decode(t);
    for (const char *name : {"i2s", "w2g32", "q4_0", "tl2"}) {
      const Format f = Format::parse(name);
      const PackedWeights P = import_tensor(t, f);
      const PackedWeights Q = quantize(f, values.data(), M, K);
      EXPECT_EQ(P.codes, Q.codes) << name;
      EXPECT_EQ(P.scales, Q.scales) << name;
      EXPECT_EQ(bits(P.tensor_scale), bits(Q.tensor_scale)) << name;
    }
    EXPECT_EQ(gguf_default_format(t), "");
  }
  // Ternary floats keep their scale and get i2s by default; a vector does
  // not.
  const std::vector<float> W = ternary_values(M, K, 0.1f, 2);
  const std::vector<uint8_t> b = gguf_encode(GgufType::F32, W.data(), M, K);
  const GgufTensor t = tensor_of(GgufType::F32, b, M, K);
  EXPECT_EQ(import_tensor(t, Format::parse("tl1")).tensor_scale, 0.1f);
  EXPECT_EQ(gguf_default_format(t), "i2s");
  GgufTensor vec = t;
  vec.ne = {M * K};
  EXPECT_EQ(gguf_default_format(vec), "");
  const std::vector<float> Z(size_t(M * K), 0.0f);
  const std::vector<uint8_t> zb = gguf_encode(GgufType::F16, Z.data(), M, K);
  EXPECT_EQ(gguf_default_format(tensor_of(GgufType::F16, zb, M, K)), "");
  // Non-finite weights and illegal shapes name the tensor.
  std::vector<float> bad = W;
  bad[K + 2] = std::numeric_limits<float>::infinity();
  const std::vector<uint8_t> bb = gguf_encode(GgufType::F32, bad.data(), M, K);
  EXPECT_EQ(gguf_import_error(tensor_of(GgufType::F32, bb, M, K, "x"),
                              Format::parse("i2s")),
            "x: weight [1, 2] is +inf");
  EXPECT_EQ(gguf_import_error(tensor_of(GgufType::F32, bb, M, K, "x"),
                              Format::parse("w2g128")),
            "x: w2g128 needs K % 128 == 0, got K = 64");
}

TEST(GgufImport, ImportWeightsChecksTheByteCount) {
  const std::vector<uint8_t> b(100);
  EXPECT_EQ(error_of([&] {
              import_weights(GgufType::TQ2_0, b.data(), b.size(), 1, 256,
                             Format::parse("i2s"), "lm");
            }),
            "lm: tq2_0 [1 x 256] needs 66 bytes, got 100");
  EXPECT_EQ(error_of([&] {
              import_weights(GgufType::TQ2_0, b.data(), b.size(), 1, 100,
                             Format::parse("i2s"), "lm");
            }),
            "lm: tq2_0 needs K % 256 == 0, got K = 100");
}

TEST(GgufImport, ExactTernaryScale) {
  const float zeros[4] = {0.0f, -0.0f, 0.0f, 0.0f};
  EXPECT_EQ(exact_ternary_scale(zeros, 4), 0.0f);
  const float t[6] = {0.3f, 0.0f, -0.3f, -0.3f, -0.0f, 0.3f};
  EXPECT_EQ(exact_ternary_scale(t, 6), 0.3f);
  const float one[1] = {-2.0f};
  EXPECT_EQ(exact_ternary_scale(one, 1), 2.0f);
  float off[6] = {0.3f, 0.0f, -0.3f, -0.3f, 0.0f, 0.3f};
  off[4] = std::nextafter(0.3f, 1.0f); // one value off by one ulp
  EXPECT_EQ(exact_ternary_scale(off, 6), 0.0f);
  const float inf[2] = {std::numeric_limits<float>::infinity(),
                        -std::numeric_limits<float>::infinity()};
  EXPECT_EQ(exact_ternary_scale(inf, 2), 0.0f);
  const float nan[2] = {1.0f, std::numeric_limits<float>::quiet_NaN()};
  EXPECT_EQ(exact_ternary_scale(nan, 2), 0.0f);
}

} // namespace
} // namespace lowbit
