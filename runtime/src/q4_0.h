//===- q4_0.h - GGUF Q4_0 blocks --------------------------------*- C++ -*-===//
//
// A row of K weights is K / 32 ggml block_q4_0 structs, each 18 bytes: the
// fp16 scale d (little-endian), then 16 bytes whose low nibble is code j and
// high nibble code j + 16. W ~= d * (q - 8). The q4_0 row of the block table
// (ggml_blocks.cpp implements these through it) for the kernels' packers.
//
//===----------------------------------------------------------------------===//
#ifndef LOWBIT_SRC_Q4_0_H
#define LOWBIT_SRC_Q4_0_H

#include <cstdint>

namespace lowbit::detail {

/// The 4-bit codes (0..15) of a row.
void decode_q4_0_row(const uint8_t *row, int64_t K, int8_t *q);

/// The fp16 bits of d of block b of a row.
uint16_t q4_0_block_scale(const uint8_t *row, int64_t b);

} // namespace lowbit::detail

#endif // LOWBIT_SRC_Q4_0_H
