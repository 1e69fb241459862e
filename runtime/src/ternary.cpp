//===- ternary.cpp - i2s, tl1 and tl2 encodings ---------------------------===//

#include "ternary.h"
#include "bitstream.h"
#include "layout.h"

#include "lowbit/error.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace lowbit::detail {

float ternary_scale(const float *W, int64_t count) {
  // One pass for both, without branches: the absmean's sum (in double, in
  // order) and the largest and smallest non-zero |W|, equal when the
  // weights are {-a, 0, a}.
  constexpr float kInf = std::numeric_limits<float>::infinity();
  double sum = 0.0;
  float largest = 0.0f, smallest = kInf;
  for (int64_t i = 0; i < count; ++i) {
    const float m = std::fabs(W[i]);
    sum += double(m);
    largest = std::max(largest, m);
    smallest = std::min(smallest, m == 0.0f ? kInf : m);
  }
  if (largest > 0.0f && smallest == largest)
    return largest;
  return std::max(float(sum / double(count)), 1e-5f);
}

float exact_ternary_scale(const float *W, int64_t count) {
  float a = 0.0f;
  for (int64_t i = 0; i < count; ++i) {
    if (W[i] == 0.0f)
      continue; // +0 and -0
    const float m = std::fabs(W[i]);
    if (!(m <= std::numeric_limits<float>::max()))
      return 0.0f; // infinite or NaN
    if (a == 0.0f)
      a = m;
    else if (m != a)
      return 0.0f;
  }
  return a;
}

int8_t ternary_value(float w, float s) {
  return int8_t(std::clamp(std::nearbyintf(w / s), -1.0f, 1.0f));
}

// tl1: the pair (q0, q1) becomes the index 3 * (q0 + 1) + (q1 + 1) in 0..8.
static void encode_tl1(const int8_t *q, int64_t count, uint8_t *out) {
  std::vector<uint8_t> index(size_t(count / 2));
  for (int64_t i = 0; i < count / 2; ++i)
    index[i] = uint8_t(3 * (q[2 * i] + 1) + (q[2 * i + 1] + 1));
  pack_codes(index.data(), count / 2, 4, out);
}

// tl2: the triple (q0, q1, q2) becomes v = 9 (q0 + 1) + 3 (q1 + 1) + (q2 + 1)
// - 13 in -13..13, stored as |v| (0..13) and a sign bit. Negating a triple
// negates v, so a kernel needs tables for the 14 magnitudes only (bitnet.cpp's
// mirror consolidation).
static int tl2_value(const int8_t *q) {
  return 9 * (q[0] + 1) + 3 * (q[1] + 1) + (q[2] + 1) - 13;
}

void encode_ternary_row(const Format &format, const int8_t *q, int64_t K,
                        uint8_t *row) {
  if (format.kind == FormatKind::I2S) {
    std::vector<uint8_t> codes(K);
    for (int64_t k = 0; k < K; ++k)
      codes[k] = uint8_t(q[k] + 1);
    pack_codes(codes.data(), K, 2, row);
    return;
  }
  if (format.kind == FormatKind::TL1) {
    encode_tl1(q, K, row);
    return;
  }
  Tl2Split split = tl2_split(K);
  std::vector<uint8_t> index(split.triples), sign(index.size());
  for (int64_t t = 0; t < split.triples; ++t) {
    int v = tl2_value(q + 3 * t);
    index[t] = uint8_t(std::abs(v));
    sign[t] = v < 0;
  }
  pack_codes(index.data(), split.triples, 4, row);
  row += stream_bytes(split.triples, 4);
  pack_codes(sign.data(), split.triples, 1, row);
  row += stream_bytes(split.triples, 1);
  encode_tl1(q + 3 * split.triples, split.tail, row);
}

namespace {
// Decodes with the format name and row at hand for error messages.
class RowDecoder {
public:
  RowDecoder(const Format &format, int64_t m) : format(format), m(m) {}

  [[noreturn]] void fail(const std::string &problem) const {
    throw Error(format.name() + " row " + std::to_string(m) + ": " + problem);
  }

  static std::string range(int64_t first, int64_t count) {
    std::string text = "k = " + std::to_string(first);
    return count == 1 ? text : text + ".." + std::to_string(first + count - 1);
  }

  // Reads n codes of `bits` bits, checking each is <= max_code and the
  // padding is zero; codes[j] describes the weights from k0 + j * width.
  std::vector<uint8_t> read(const uint8_t *in, int64_t n, int bits,
                            unsigned max_code, int64_t k0, int width,
                            const char *what) const {
    std::vector<uint8_t> codes(n);
    unpack_codes(in, n, bits, codes.data());
    // The largest code first (a loop without exits, vectorized); the first
    // bad one is searched only when there is one.
    unsigned largest = 0;
    for (int64_t j = 0; j < n; ++j)
      largest = std::max<unsigned>(largest, codes[j]);
    for (int64_t j = 0; largest > max_code && j < n; ++j)
      if (codes[j] > max_code)
        fail(std::string(what) + " " + std::to_string(codes[j]) + " at " +
             range(k0 + j * width, width) + " is out of range 0.." +
             std::to_string(max_code));
    if (!padding_is_zero(in, n, bits))
      fail(std::string("non-zero padding bits after the ") + what + " stream");
    return codes;
  }

  void decode_tl1(const uint8_t *in, int64_t count, int64_t k0,
                  int8_t *q) const {
    std::vector<uint8_t> index = read(in, count / 2, 4, 8, k0, 2, "index");
    for (int64_t i = 0; i < count / 2; ++i) {
      q[2 * i] = int8_t(index[i] / 3 - 1);
      q[2 * i + 1] = int8_t(index[i] % 3 - 1);
    }
  }

private:
  const Format &format;
  int64_t m;
};
} // namespace

void decode_ternary_row(const Format &format, const uint8_t *row, int64_t K,
                        int64_t m, int8_t *q) {
  RowDecoder decoder(format, m);
  if (format.kind == FormatKind::I2S) {
    std::vector<uint8_t> codes = decoder.read(row, K, 2, 2, 0, 1, "code");
    for (int64_t k = 0; k < K; ++k)
      q[k] = int8_t(codes[k] - 1);
    return;
  }
  if (format.kind == FormatKind::TL1) {
    decoder.decode_tl1(row, K, 0, q);
    return;
  }
  Tl2Split split = tl2_split(K);
  std::vector<uint8_t> index =
      decoder.read(row, split.triples, 4, 13, 0, 3, "index");
  row += stream_bytes(split.triples, 4);
  std::vector<uint8_t> sign =
      decoder.read(row, split.triples, 1, 1, 0, 3, "sign");
  row += stream_bytes(split.triples, 1);
  for (int64_t t = 0; t < split.triples; ++t) {
    // A negative zero would make the encoding of a row non-unique.
    if (sign[t] && index[t] == 0)
      decoder.fail("sign bit set on the zero triple at " +
                   RowDecoder::range(3 * t, 3));
    int u = (sign[t] ? -index[t] : index[t]) + 13; // 0..26, base-3 digits
    q[3 * t] = int8_t(u / 9 - 1);
    q[3 * t + 1] = int8_t(u / 3 % 3 - 1);
    q[3 * t + 2] = int8_t(u % 3 - 1);
  }
  decoder.decode_tl1(row, split.tail, 3 * split.triples, q + 3 * split.triples);
}

} // namespace lowbit::detail
