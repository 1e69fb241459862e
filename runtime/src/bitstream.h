//===- bitstream.h - the one packer of b-bit weight codes -------*- C++ -*-===//
//
// Every sub-byte code array of lowbit (i2s codes, tl1/tl2 indices, tl2 sign
// bits, w1..w4 codes) is a little-endian bit stream: code j occupies bits
// [j*b, j*b + b) of the stream, where bit i is bit (i % 8) of byte i / 8.
// A stream ends at a whole byte; the padding bits after the last code are 0.
//
//===----------------------------------------------------------------------===//
#ifndef LOWBIT_SRC_BITSTREAM_H
#define LOWBIT_SRC_BITSTREAM_H

#include <cstdint>

namespace lowbit::detail {

/// Bytes of a stream of n codes of `bits` bits: ceil(n * bits / 8).
int64_t stream_bytes(int64_t n, int bits);

/// Writes the n codes (each < 2^bits, bits in 1..8) to the stream_bytes(n,
/// bits) bytes at `out`, including zero padding.
void pack_codes(const uint8_t *codes, int64_t n, int bits, uint8_t *out);

/// ORs the code of index j (< 2^bits, bits in 1..8) into a stream at `out`
/// whose bits [j * bits, j * bits + bits) are 0: one or two bytes (shift +
/// bits <= 7 + 8). For a code at a time (pack_codes' tail; the K-quant
/// sub-scales of kernel_abi.h, one row's a time).
inline void put_code(uint8_t *out, int64_t j, int bits, unsigned code) {
  const int64_t pos = j * bits;
  const unsigned v = code << (pos & 7);
  out[pos >> 3] |= uint8_t(v);
  if (v >> 8)
    out[(pos >> 3) + 1] |= uint8_t(v >> 8);
}

/// Reads n codes of `bits` bits from the stream at `in`.
void unpack_codes(const uint8_t *in, int64_t n, int bits, uint8_t *codes);

/// Whether the padding bits after n codes of `bits` bits are all zero.
bool padding_is_zero(const uint8_t *in, int64_t n, int bits);

} // namespace lowbit::detail

#endif // LOWBIT_SRC_BITSTREAM_H
