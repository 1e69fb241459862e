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

/// Reads n codes of `bits` bits from the stream at `in`.
void unpack_codes(const uint8_t *in, int64_t n, int bits, uint8_t *codes);

/// Whether the padding bits after n codes of `bits` bits are all zero.
bool padding_is_zero(const uint8_t *in, int64_t n, int bits);

} // namespace lowbit::detail

#endif // LOWBIT_SRC_BITSTREAM_H
