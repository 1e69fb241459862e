//===- bitstream.cpp - the one packer of b-bit weight codes ---------------===//

#include "bitstream.h"

#include <cassert>
#include <cstring>

namespace lowbit::detail {

int64_t stream_bytes(int64_t n, int bits) { return (n * bits + 7) / 8; }

namespace {

// Codes of 1, 2, 4 or 8 bits never straddle a byte: each whole byte holds
// 8 / B codes, in loops without branches that the compiler vectorizes (the
// general loops below handle the other widths and the last partial byte).
template <int B>
int64_t pack_whole_bytes(const uint8_t *codes, int64_t n, uint8_t *out) {
  constexpr int per = 8 / B;
  const int64_t bytes = n / per;
  for (int64_t i = 0; i < bytes; ++i) {
    unsigned v = 0;
    for (int j = 0; j < per; ++j)
      v |= unsigned(codes[i * per + j]) << (j * B);
    out[i] = uint8_t(v);
  }
  return bytes * per;
}

template <int B>
int64_t unpack_whole_bytes(const uint8_t *in, int64_t n, uint8_t *codes) {
  constexpr int per = 8 / B;
  constexpr unsigned mask = (1u << B) - 1;
  const int64_t bytes = n / per;
  for (int64_t i = 0; i < bytes; ++i)
    for (int j = 0; j < per; ++j)
      codes[i * per + j] = uint8_t((in[i] >> (j * B)) & mask);
  return bytes * per;
}

// The codes [0, done) of a whole-byte width, or 0 for the other widths.
int64_t pack_fast(const uint8_t *codes, int64_t n, int bits, uint8_t *out) {
  switch (bits) {
  case 1:
    return pack_whole_bytes<1>(codes, n, out);
  case 2:
    return pack_whole_bytes<2>(codes, n, out);
  case 4:
    return pack_whole_bytes<4>(codes, n, out);
  case 8:
    return pack_whole_bytes<8>(codes, n, out);
  default:
    return 0;
  }
}

int64_t unpack_fast(const uint8_t *in, int64_t n, int bits, uint8_t *codes) {
  switch (bits) {
  case 1:
    return unpack_whole_bytes<1>(in, n, codes);
  case 2:
    return unpack_whole_bytes<2>(in, n, codes);
  case 4:
    return unpack_whole_bytes<4>(in, n, codes);
  case 8:
    return unpack_whole_bytes<8>(in, n, codes);
  default:
    return 0;
  }
}

} // namespace

void pack_codes(const uint8_t *codes, int64_t n, int bits, uint8_t *out) {
  assert(bits >= 1 && bits <= 8);
  const int64_t done = pack_fast(codes, n, bits, out);
  const int64_t from = done * bits / 8; // whole bytes written
  std::memset(out + from, 0, size_t(stream_bytes(n, bits) - from));
  for (int64_t j = done; j < n; ++j) {
    assert(codes[j] >> bits == 0);
    put_code(out, j, bits, codes[j]);
  }
}

void unpack_codes(const uint8_t *in, int64_t n, int bits, uint8_t *codes) {
  assert(bits >= 1 && bits <= 8);
  const unsigned mask = (1u << bits) - 1;
  for (int64_t j = unpack_fast(in, n, bits, codes); j < n; ++j) {
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
