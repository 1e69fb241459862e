//===- packed_file.cpp - packed weight files ------------------------------===//
//
// Layout of a .lbw file, all little-endian (also in runtime/README.md):
//   0  "LOWBITW\0"           40  u64 K
//   8  u32 version = 1       48  f32 tensor_scale
//   12 u32 header size = 80  52  u32 reserved = 0
//   16 char format[16],      56  u64 codes (bytes)
//      NUL-padded name       64  u64 scales (fp16 count)
//   32 u64 M                 72  u64 zeros (fp16 count)
//   80 codes, then scales, then zeros (u16 each)
//
//===----------------------------------------------------------------------===//

#include "lowbit/packed_file.h"
#include "lowbit/error.h"

#include "byte_order.h"
#include "file_io.h"
#include "layout.h"

#include <cstring>
#include <string_view>
#include <vector>

namespace lowbit {

using namespace detail;

static constexpr char kMagic[8] = {'L', 'O', 'W', 'B', 'I', 'T', 'W', '\0'};
static constexpr uint32_t kVersion = 1;
static constexpr size_t kHeaderSize = 80;
static constexpr size_t kNameField = 16;

static std::vector<uint8_t> serialize(const PackedWeights &W) {
  validate(W);
  const std::string name = W.format.name();
  std::vector<uint8_t> bytes(kHeaderSize + W.codes.size() +
                             2 * (W.scales.size() + W.zeros.size()));
  uint8_t *p = bytes.data();
  std::memcpy(p, kMagic, sizeof(kMagic));
  store_le(p + 8, kVersion);
  store_le(p + 12, uint32_t(kHeaderSize));
  std::memcpy(p + 16, name.data(), name.size()); // < 16: the group fits int
  store_le(p + 32, uint64_t(W.M));
  store_le(p + 40, uint64_t(W.K));
  store_f32_le(p + 48, W.tensor_scale);
  store_le(p + 56, uint64_t(W.codes.size()));
  store_le(p + 64, uint64_t(W.scales.size()));
  store_le(p + 72, uint64_t(W.zeros.size()));
  p += kHeaderSize;
  if (!W.codes.empty())
    std::memcpy(p, W.codes.data(), W.codes.size());
  p += W.codes.size();
  for (uint16_t h : W.scales)
    store_le(p, h), p += 2;
  for (uint16_t h : W.zeros)
    store_le(p, h), p += 2;
  return bytes;
}

void save_packed(const std::string &path, const PackedWeights &W) {
  std::vector<uint8_t> bytes = serialize(W);
  write_file(path, bytes.data(), bytes.size());
}

namespace {
// Reads the header fields, prefixing every error with the file's name.
class Reader {
public:
  Reader(const uint8_t *bytes, size_t size, const std::string &what)
      : bytes(bytes), size(size), what(what) {}

  [[noreturn]] void fail(const std::string &problem) const {
    throw Error(what + ": " + problem);
  }

  PackedWeights read() {
    if (size < sizeof(kMagic) ||
        std::memcmp(bytes, kMagic, sizeof(kMagic)) != 0)
      fail("not a lowbit packed weight file (bad magic)");
    if (size < kHeaderSize)
      fail("truncated header: " + std::to_string(size) + " bytes, expected " +
           std::to_string(kHeaderSize));
    if (uint32_t v = load_le<uint32_t>(bytes + 8); v != kVersion)
      fail("unsupported version " + std::to_string(v) + " (expected " +
           std::to_string(kVersion) + ")");
    if (uint32_t h = load_le<uint32_t>(bytes + 12); h != kHeaderSize)
      fail("header size " + std::to_string(h) + ", expected " +
           std::to_string(kHeaderSize));
    if (load_le<uint32_t>(bytes + 52) != 0)
      fail("reserved header field is not 0");

    PackedWeights W;
    W.format = read_format();
    W.M = read_dimension(32, "M");
    W.K = read_dimension(40, "K");
    std::string shape_error = W.format.shape_error(W.M, W.K);
    if (!shape_error.empty())
      fail(shape_error);
    W.tensor_scale = load_f32_le(bytes + 48);

    // Counts must match the format before anything is allocated, so a
    // hostile header cannot request more memory than the file holds.
    int64_t scales = W.M * scales_per_row(W.format, W.K);
    uint64_t codes = check_count(56, "codes", W.M * W.row_bytes());
    uint64_t n_scales = check_count(64, "scales", scales);
    uint64_t n_zeros =
        check_count(72, "zeros", has_zeros(W.format) ? scales : 0);
    uint64_t expected = kHeaderSize + codes + 2 * (n_scales + n_zeros);
    if (size != expected)
      fail(std::string(size < expected ? "truncated" : "trailing") +
           " data: expected " + std::to_string(expected) + " bytes, got " +
           std::to_string(size));

    const uint8_t *p = bytes + kHeaderSize;
    W.codes.assign(p, p + codes);
    p += codes;
    W.scales = read_halves(p, n_scales);
    W.zeros = read_halves(p + 2 * n_scales, n_zeros);
    try {
      validate(W);
    } catch (const Error &e) {
      fail(e.what());
    }
    return W;
  }

private:
  Format read_format() const {
    const char *field = reinterpret_cast<const char *>(bytes + 16);
    size_t length = 0;
    while (length < kNameField && field[length] != '\0')
      ++length;
    if (length == kNameField)
      fail("format name is not NUL-terminated");
    for (size_t i = length; i < kNameField; ++i)
      if (field[i] != '\0')
        fail("format name field has bytes after its NUL");
    try {
      return Format::parse(std::string_view(field, length));
    } catch (const Error &e) {
      fail(e.what());
    }
  }

  int64_t read_dimension(size_t offset, const char *name) const {
    uint64_t v = load_le<uint64_t>(bytes + offset);
    if (v > uint64_t(kMaxWeights))
      fail(std::string(name) + " = " + std::to_string(v) + " is too large");
    return int64_t(v);
  }

  uint64_t check_count(size_t offset, const char *array,
                       int64_t expected) const {
    uint64_t v = load_le<uint64_t>(bytes + offset);
    if (v != uint64_t(expected))
      fail(std::string(array) + " count " + std::to_string(v) +
           " does not match the format (expected " + std::to_string(expected) +
           ")");
    return v;
  }

  static std::vector<uint16_t> read_halves(const uint8_t *p, uint64_t n) {
    std::vector<uint16_t> halves(n);
    for (uint64_t i = 0; i < n; ++i)
      halves[i] = load_le<uint16_t>(p + 2 * i);
    return halves;
  }

  const uint8_t *bytes;
  size_t size;
  const std::string &what;
};
} // namespace

PackedWeights parse_packed(const uint8_t *bytes, size_t size,
                           const std::string &what) {
  return Reader(bytes, size, what).read();
}

PackedWeights load_packed(const std::string &path) {
  std::vector<uint8_t> bytes = read_file(path);
  return parse_packed(bytes.data(), bytes.size(), path);
}

} // namespace lowbit
