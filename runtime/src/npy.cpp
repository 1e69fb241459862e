//===- npy.cpp - NumPy .npy reader and writer -----------------------------===//
//
// Format: "\x93NUMPY", major and minor version bytes, the header length
// (u16 for 1.0, u32 for 2.0 and 3.0), then an ASCII Python dict literal such
// as {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), } padded with
// spaces and ended by '\n', then the raw little-endian data.
//
// The reader is written for hostile input (it runs under libFuzzer): it
// parses the dict with a strict grammar instead of evaluating it, keeps every
// size in checked 64-bit arithmetic, and never allocates more than the input
// holds.
//
//===----------------------------------------------------------------------===//

#include "lowbit/npy.h"
#include "lowbit/error.h"

#include "byte_order.h"
#include "file_io.h"

#include <cstring>
#include <limits>
#include <string_view>

namespace lowbit {

using namespace detail;

static constexpr char kMagic[] = "\x93NUMPY";
static constexpr size_t kMagicLength = 6;

namespace {

struct Header {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

// Recursive-descent parser of the header dict: exactly the keys 'descr' (a
// string), 'fortran_order' (True or False) and 'shape' (a tuple of
// non-negative integers), each once, in any order, with Python's whitespace
// and optional trailing commas.
class HeaderParser {
public:
  HeaderParser(std::string_view text, const std::string &what)
      : text(text), what(what) {}

  Header parse() {
    Header header;
    bool seen[3] = {false, false, false};
    skip_space();
    expect('{', "'{' opening the header dict");
    skip_space();
    while (!consume('}')) {
      std::string key = parse_string();
      int index = key == "descr"           ? 0
                  : key == "fortran_order" ? 1
                  : key == "shape"         ? 2
                                           : -1;
      if (index < 0)
        fail("unknown key '" + printable(key) + "'");
      if (seen[index])
        fail("duplicate key '" + key + "'");
      seen[index] = true;
      skip_space();
      expect(':', "':' after a key");
      skip_space();
      if (index == 0)
        header.descr = parse_string();
      else if (index == 1)
        header.fortran_order = parse_bool();
      else
        header.shape = parse_shape();
      skip_space();
      if (!consume(',')) {
        expect('}', "',' or '}' after a value");
        break;
      }
      skip_space();
    }
    static const char *const keys[] = {"descr", "fortran_order", "shape"};
    for (int i = 0; i < 3; ++i)
      if (!seen[i])
        fail(std::string("missing key '") + keys[i] + "'");
    skip_space();
    if (pos != text.size())
      fail("unexpected text after the header dict");
    if (text.back() != '\n')
      fail("header does not end with a newline");
    return header;
  }

  // Strings from the file, shortened and made safe for a one-line message.
  static std::string printable(std::string_view s) {
    std::string out;
    for (char c : s.substr(0, 32))
      out += c >= 0x20 && c < 0x7F ? c : '?';
    return s.size() > 32 ? out + "..." : out;
  }

private:
  [[noreturn]] void fail(const std::string &why) const {
    throw Error(what + ": bad .npy header: " + why);
  }

  void skip_space() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' ||
                                 text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
  }

  bool consume(char c) {
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }

  void expect(char c, const char *expected) {
    if (!consume(c))
      fail(std::string("expected ") + expected + " at byte " +
           std::to_string(pos));
  }

  std::string parse_string() {
    char quote = pos < text.size() ? text[pos] : 0;
    if (quote != '\'' && quote != '"')
      fail("expected a quoted string at byte " + std::to_string(pos));
    size_t start = ++pos;
    while (pos < text.size() && text[pos] != quote) {
      // No escapes: none of the accepted values needs one.
      if (text[pos] == '\\' || text[pos] < 0x20 || text[pos] >= 0x7F)
        fail("unsupported character in a string at byte " +
             std::to_string(pos));
      ++pos;
    }
    if (pos == text.size())
      fail("unterminated string");
    return std::string(text.substr(start, pos++ - start));
  }

  bool parse_bool() {
    for (bool value : {false, true}) {
      std::string_view word = value ? "True" : "False";
      if (text.substr(pos, word.size()) == word) {
        pos += word.size();
        return value;
      }
    }
    fail("expected True or False for 'fortran_order' at byte " +
         std::to_string(pos));
  }

  int64_t parse_dimension() {
    if (pos < text.size() && text[pos] == '-')
      fail("negative dimension in 'shape'");
    size_t start = pos;
    int64_t value = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      int digit = text[pos++] - '0';
      if (value > (std::numeric_limits<int64_t>::max() - digit) / 10)
        fail("dimension too large in 'shape'");
      value = value * 10 + digit;
    }
    if (pos == start)
      fail("expected an integer in 'shape' at byte " + std::to_string(pos));
    if (text[start] == '0' && pos - start > 1)
      fail("integer with a leading zero in 'shape'");
    return value;
  }

  // "()", "(3,)", "(3, 4)", "(3, 4,)"; "(3)" is an int, not a tuple.
  std::vector<int64_t> parse_shape() {
    std::vector<int64_t> shape;
    expect('(', "a tuple for 'shape'");
    skip_space();
    if (consume(')'))
      return shape;
    while (true) {
      shape.push_back(parse_dimension());
      skip_space();
      if (consume(')')) {
        if (shape.size() == 1)
          fail("'shape' is not a tuple (a 1-tuple needs a trailing comma)");
        return shape;
      }
      expect(',', "',' or ')' in 'shape'");
      skip_space();
      if (consume(')'))
        return shape;
    }
  }

  std::string_view text;
  const std::string &what;
  size_t pos = 0;
};

} // namespace

NpyArray parse_npy(const uint8_t *bytes, size_t size, const std::string &what) {
  if (size < kMagicLength || std::memcmp(bytes, kMagic, kMagicLength) != 0)
    throw Error(what + ": not a .npy file (bad magic)");
  if (size < kMagicLength + 2)
    throw Error(what + ": truncated .npy header");
  const int major = bytes[6], minor = bytes[7];
  if (major < 1 || major > 3 || minor != 0)
    throw Error(what + ": unsupported .npy version " + std::to_string(major) +
                "." + std::to_string(minor) + " (expected 1.0, 2.0 or 3.0)");
  const size_t length_bytes = major == 1 ? 2 : 4;
  const size_t prefix = kMagicLength + 2 + length_bytes;
  if (size < prefix)
    throw Error(what + ": truncated .npy header");
  const uint64_t header_length =
      major == 1 ? load_le<uint16_t>(bytes + 8) : load_le<uint32_t>(bytes + 8);
  if (header_length > size - prefix)
    throw Error(what + ": truncated .npy header (" +
                std::to_string(header_length) + " bytes announced, " +
                std::to_string(size - prefix) + " present)");

  std::string_view text(reinterpret_cast<const char *>(bytes + prefix),
                        size_t(header_length));
  Header header = HeaderParser(text, what).parse();
  if (header.descr != "<f4")
    throw Error(what + ": dtype '" + HeaderParser::printable(header.descr) +
                "' is not supported (expected '<f4', little-endian float32)");
  if (header.fortran_order)
    throw Error(what + ": Fortran-order arrays are not supported");
  if (header.shape.empty() || header.shape.size() > 2)
    throw Error(what + ": " + std::to_string(header.shape.size()) +
                "-D array, expected 1-D or 2-D");

  int64_t count = 1;
  for (int64_t d : header.shape) {
    if (d != 0 && count > std::numeric_limits<int64_t>::max() / 4 / d)
      throw Error(what + ": array too large");
    count *= d;
  }
  const uint64_t expected = uint64_t(count) * 4;
  const uint64_t present = size - prefix - header_length;
  if (present != expected)
    throw Error(what + (present < expected ? ": truncated" : ": trailing") +
                " data: expected " + std::to_string(expected) + " bytes, got " +
                std::to_string(present));

  NpyArray array;
  array.shape = header.shape;
  array.data.resize(size_t(count));
  const uint8_t *data = bytes + prefix + header_length;
  for (int64_t i = 0; i < count; ++i)
    array.data[i] = load_f32_le(data + 4 * i);
  return array;
}

NpyArray read_npy(const std::string &path) {
  std::vector<uint8_t> bytes = read_file(path);
  return parse_npy(bytes.data(), bytes.size(), path);
}

void write_npy(const std::string &path, const std::vector<int64_t> &shape,
               const float *data) {
  if (shape.empty() || shape.size() > 2)
    throw Error(path + ": cannot write a " + std::to_string(shape.size()) +
                "-D array (1-D or 2-D only)");
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0 ||
        (d != 0 && count > std::numeric_limits<int64_t>::max() / 4 / d))
      throw Error(path + ": invalid shape for writing");
    count *= d;
  }
  // The header numpy.save writes: sorted keys, repr of the shape tuple, room
  // to grow the first axis to 21 digits, then spaces and '\n' so that the
  // data starts at a multiple of 64 bytes.
  std::string dims =
      std::to_string(shape[0]) +
      (shape.size() == 1 ? "," : ", " + std::to_string(shape[1]));
  std::string dict =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
  dict += std::string(21 - std::to_string(shape[0]).size(), ' ');
  const size_t prefix = kMagicLength + 4;
  dict += std::string(64 - (prefix + dict.size() + 1) % 64, ' ') + "\n";

  std::vector<uint8_t> bytes(prefix + dict.size() + size_t(count) * 4);
  std::memcpy(bytes.data(), kMagic, kMagicLength);
  bytes[6] = 1;
  bytes[7] = 0;
  store_le(bytes.data() + 8, uint16_t(dict.size()));
  std::memcpy(bytes.data() + prefix, dict.data(), dict.size());
  for (int64_t i = 0; i < count; ++i)
    store_f32_le(bytes.data() + prefix + dict.size() + 4 * i, data[i]);
  write_file(path, bytes.data(), bytes.size());
}

} // namespace lowbit
