//===- upconvert_rows.h - the upconvert layout a row range at a time -*- C++ -*-//
//
// The pieces of pack_upconvert (upconvert.cpp) that the direct GGUF import
// (gguf_pack_rows, gguf_import.cpp) calls on the rows of a tensor as they
// are read, without a canonical copy of the whole tensor.
//
//===----------------------------------------------------------------------===//
#ifndef LOWBIT_SRC_UPCONVERT_ROWS_H
#define LOWBIT_SRC_UPCONVERT_ROWS_H

#include "lowbit/kernel_abi.h"
#include "lowbit/upconvert.h"

#include <cstdint>
#include <type_traits>

namespace lowbit::detail {

/// Row m of i2s weights U from its canonical i2s row (code q + 1 of k in
/// bits 2 (k % 4) of byte k / 4; U.Kp / 4 bytes, zero past K).
void put_i2s_row(UpconvertWeights &U, int64_t m, const uint8_t *row);

/// Rows [m_begin, m_end) of q4_0 or ggml block weights U (shaped by
/// shape_upconvert) from their blocks, row m's at rows + (m - m_begin) *
/// code_row_bytes(U.format, U.K): codes, scales and zeros, as
/// pack_upconvert writes them. The rows of a tile share the K-quants'
/// sub-scale bytes: ranges that run on different threads start and end at
/// a tile (a multiple of 16, or M).
void pack_block_rows(UpconvertWeights &U, const uint8_t *rows, int64_t m_begin,
                     int64_t m_end);

/// Calls f(std::integral_constant<int, W>{}, first, shift) for each plane
/// a b-bit code occupies in the upconvert layout: the low plane of
/// lowbit_vnni4_low_bits(b) bits (first bit 0), then, for codes of 3, 5 and 6
/// bits, the high plane (its first bit and shift the low plane's width).
/// W is the plane's width in bits (1, 2, 4 or 8): the one dispatch of the
/// packer (upconvert.cpp) and its inverse (reencode.cpp).
template <typename F> void for_each_code_plane(int b, F f) {
  auto plane = [&](int width, int first) {
    switch (width) {
    case 1:
      return f(std::integral_constant<int, 1>{}, first, first);
    case 2:
      return f(std::integral_constant<int, 2>{}, first, first);
    case 4:
      return f(std::integral_constant<int, 4>{}, first, first);
    default:
      return f(std::integral_constant<int, 8>{}, first, first);
    }
  };
  const int low = lowbit_vnni4_low_bits(b);
  plane(low, 0);
  if (low < b)
    plane(b - low, low);
}

} // namespace lowbit::detail

#endif // LOWBIT_SRC_UPCONVERT_ROWS_H
