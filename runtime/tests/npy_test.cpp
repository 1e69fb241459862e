//===- npy_test.cpp - .npy reader and writer ------------------------------===//

#include "lowbit/npy.h"

#include "test_util.h"

#include <fstream>
#include <iterator>

namespace lowbit {
namespace {

using test::error_of;

// A .npy image: magic, version, header length, header text, payload.
std::vector<uint8_t> npy_image(const std::string &header, size_t payload_bytes,
                               int major = 1) {
  std::vector<uint8_t> bytes = {
      0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<uint8_t>(major), 0};
  const size_t length = header.size();
  bytes.push_back(static_cast<uint8_t>(length));
  bytes.push_back(static_cast<uint8_t>(length >> 8));
  if (major > 1) {
    bytes.push_back(static_cast<uint8_t>(length >> 16));
    bytes.push_back(static_cast<uint8_t>(length >> 24));
  }
  bytes.insert(bytes.end(), header.begin(), header.end());
  for (size_t i = 0; i < payload_bytes; ++i)
    bytes.push_back(static_cast<uint8_t>(i % 4 == 3 ? 0x3F : 0)); // 0.5f
  return bytes;
}

std::string header(const std::string &dict) { return dict + "   \n"; }

const std::string kGood =
    header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }");

std::string parse_error(const std::vector<uint8_t> &bytes) {
  return error_of([&] { parse_npy(bytes.data(), bytes.size(), "bad.npy"); });
}

TEST(Npy, ParsesAllVersions) {
  for (int major : {1, 2, 3}) {
    std::vector<uint8_t> bytes = npy_image(kGood, 24, major);
    NpyArray a = parse_npy(bytes.data(), bytes.size(), "x.npy");
    EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(a.data, std::vector<float>(6, 0.5f));
  }
}

TEST(Npy, AcceptsPythonSpellings) {
  const std::pair<const char *, std::vector<int64_t>> cases[] = {
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (6,), }", {6}},
      {"{\"shape\": (6,), \"fortran_order\": False, \"descr\": \"<f4\"}", {6}},
      {"{'descr':'<f4','fortran_order':False,'shape':(2,3)}", {2, 3}},
      {"{ 'descr' : '<f4' , 'fortran_order' : False , 'shape' : ( 1 , 6 , ) , "
       "}",
       {1, 6}},
  };
  for (const auto &[dict, shape] : cases) {
    std::vector<uint8_t> bytes = npy_image(header(dict), 24);
    NpyArray a = parse_npy(bytes.data(), bytes.size(), "x.npy");
    EXPECT_EQ(a.shape, shape) << dict;
  }
}

TEST(Npy, EmptyArraysParse) {
  std::vector<uint8_t> bytes = npy_image(
      header("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 5), }"), 0);
  NpyArray a = parse_npy(bytes.data(), bytes.size(), "x.npy");
  EXPECT_EQ(a.shape, (std::vector<int64_t>{0, 5}));
  EXPECT_TRUE(a.data.empty());
}

TEST(Npy, RejectsMalformedFiles) {
  std::vector<uint8_t> bad_magic = npy_image(kGood, 24);
  bad_magic[1] = 'X';
  EXPECT_EQ(parse_error(bad_magic), "bad.npy: not a .npy file (bad magic)");
  EXPECT_EQ(parse_error({}), "bad.npy: not a .npy file (bad magic)");

  std::vector<uint8_t> version = npy_image(kGood, 24);
  version[6] = 4;
  EXPECT_EQ(parse_error(version),
            "bad.npy: unsupported .npy version 4.0 (expected 1.0, 2.0 or 3.0)");

  EXPECT_EQ(parse_error(npy_image(header("{'descr': '<f8', 'fortran_order': "
                                         "False, 'shape': (2, 3), }"),
                                  48)),
            "bad.npy: dtype '<f8' is not supported (expected '<f4', "
            "little-endian float32)");
  EXPECT_EQ(parse_error(npy_image(header("{'descr': '>f4', 'fortran_order': "
                                         "False, 'shape': (2, 3), }"),
                                  24)),
            "bad.npy: dtype '>f4' is not supported (expected '<f4', "
            "little-endian float32)");
  EXPECT_EQ(parse_error(npy_image(header("{'descr': '<f4', 'fortran_order': "
                                         "True, 'shape': (2, 3), }"),
                                  24)),
            "bad.npy: Fortran-order arrays are not supported");
  EXPECT_EQ(parse_error(npy_image(header("{'descr': '<f4', 'fortran_order': "
                                         "False, 'shape': (1, 2, 3), }"),
                                  24)),
            "bad.npy: 3-D array, expected 1-D or 2-D");
  EXPECT_EQ(parse_error(npy_image(header("{'descr': '<f4', 'fortran_order': "
                                         "False, 'shape': (), }"),
                                  4)),
            "bad.npy: 0-D array, expected 1-D or 2-D");

  EXPECT_EQ(parse_error(npy_image(kGood, 23)),
            "bad.npy: truncated data: expected 24 bytes, got 23");
  EXPECT_EQ(parse_error(npy_image(kGood, 0)),
            "bad.npy: truncated data: expected 24 bytes, got 0");
  EXPECT_EQ(parse_error(npy_image(kGood, 25)),
            "bad.npy: trailing data: expected 24 bytes, got 25");

  std::vector<uint8_t> short_header = npy_image(kGood, 0);
  short_header.resize(40);
  EXPECT_EQ(
      parse_error(short_header).rfind("bad.npy: truncated .npy header", 0), 0u);
}

TEST(Npy, RejectsBadHeaderSyntax) {
  const char *dicts[] = {
      "",
      "[]",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), ",
      "{'descr': '<f4', 'fortran_order': False}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'x': 1}",
      "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (6,)}",
      "{'descr': '<f4' 'fortran_order': False, 'shape': (6,)}",
      "{'descr': <f4, 'fortran_order': False, 'shape': (6,)}",
      "{'descr': '<f4', 'fortran_order': false, 'shape': (6,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (6)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': [2, 3]}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 03)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2,, 3)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3.0)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': "
      "(99999999999999999999, 1)}",
      "{'descr': '<f4\\n', 'fortran_order': False, 'shape': (6,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (6,)} x",
  };
  for (const char *dict : dicts) {
    std::string message = parse_error(npy_image(header(dict), 24));
    EXPECT_EQ(message.rfind("bad.npy: bad .npy header: ", 0), 0u)
        << dict << " -> " << message;
  }
  // The header must end with a newline.
  std::string message = parse_error(npy_image(
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }   ", 24));
  EXPECT_EQ(message, "bad.npy: bad .npy header: header does not end with a "
                     "newline");
}

TEST(Npy, HugeShapesAreRejectedWithoutAllocating) {
  EXPECT_EQ(parse_error(npy_image(
                header("{'descr': '<f4', 'fortran_order': False, 'shape': "
                       "(4611686018427387904, 4), }"),
                0)),
            "bad.npy: array too large");
  EXPECT_EQ(parse_error(npy_image(
                header("{'descr': '<f4', 'fortran_order': False, 'shape': "
                       "(1000000000, 1000000000), }"),
                0)),
            "bad.npy: truncated data: expected 4000000000000000000 bytes, got "
            "0");
}

TEST(Npy, WriteReadRoundTrip) {
  test::TempDir dir;
  const std::vector<float> values = test::random_values(12, 7);
  write_npy(dir.file("a.npy"), {3, 4}, values.data());
  NpyArray a = read_npy(dir.file("a.npy"));
  EXPECT_EQ(a.shape, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(a.data, values);

  write_npy(dir.file("b.npy"), {12}, values.data());
  EXPECT_EQ(read_npy(dir.file("b.npy")).shape, (std::vector<int64_t>{12}));
  write_npy(dir.file("c.npy"), {0, 7}, nullptr);
  EXPECT_TRUE(read_npy(dir.file("c.npy")).data.empty());

  // numpy's layout: the data starts at a multiple of 64 bytes after a header
  // ending in '\n'.
  std::ifstream in(dir.file("a.npy"), std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  const size_t header_end = 10 + bytes[8] + (bytes[9] << 8);
  EXPECT_EQ(header_end % 64, 0u);
  EXPECT_EQ(bytes[header_end - 1], '\n');
  EXPECT_EQ(bytes.size(), header_end + 48);
}

TEST(Npy, FileErrorsNameTheFile) {
  test::TempDir dir;
  const std::string missing = dir.file("missing.npy");
  EXPECT_EQ(error_of([&] { read_npy(missing); }).rfind(missing + ": ", 0), 0u);
  const float x = 1.0f;
  const std::string unwritable = dir.file("no/such/dir.npy");
  EXPECT_EQ(error_of([&] {
              write_npy(unwritable, {1}, &x);
            }).rfind(unwritable + ": cannot write", 0),
            0u);
  EXPECT_EQ(error_of([&] {
              write_npy(dir.file("d.npy"), {1, 1, 1}, &x);
            }),
            dir.file("d.npy") + ": cannot write a 3-D array (1-D or 2-D only)");
  EXPECT_EQ(
      error_of([&] { read_npy(dir.file("")); }).rfind(dir.file("") + ": ", 0),
      0u);
}

} // namespace
} // namespace lowbit
