//===- bitstream.cpp - the one packer of b-bit weight codes ---------------===//

#include "bitstream.h"

#include <cassert>
#include <cstring>

namespace lowbit::detail {

int64_t stream_bytes(int64_t n, int bits) { return (n * bits + 7) / 8; }

void pack_codes(const uint8_t *codes, int64_t n, int bits, uint8_t *out) {
  assert(bits >= 1 && bits <= 8);
  std::memset(out, 0, size_t(stream_bytes(n, bits)));
  for (int64_t j = 0; j < n; ++j) {
    assert(codes[j] >> bits == 0);
    int64_t pos = j * bits;
    // A code spans at most two bytes: shift + bits <= 7 + 8.
    unsigned v = unsigned(codes[j]) << (pos & 7);
    out[pos >> 3] |= uint8_t(v);
    if (v >> 8)
      out[(pos >> 3) + 1] |= uint8_t(v >> 8);
  }
}

void unpack_codes(const uint8_t *in, int64_t n, int bits, uint8_t *codes) {
  assert(bits >= 1 && bits <= 8);
  const unsigned mask = (1u << bits) - 1;
  for (int64_t j = 0; j < n; ++j) {
    int64_t pos = j * bits;
    int shift = int(pos & 7);
    unsigned window = in[pos >> 3];
    if (shift + bits > 8)
      window |= unsigned(in[(pos >> 3) + 1]) << 8;
    codes[j] = uint8_t((window >> shift) & mask);
  }
}

bool padding_is_zero(const uint8_t *in, int64_t n, int bits) {
  int used = int((n * bits) & 7);
  if (used == 0)
    return true;
  return (in[(n * bits) >> 3] >> used) == 0;
}

} // namespace lowbit::detail
