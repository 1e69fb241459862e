//===- reencode.h - ggml's block bytes back from the upconvert layout -*- C++ -*-//
//
// The inverse of pack_upconvert (upconvert.h) for ggml's block formats (q4_0
// ... q8_0, the K-quants, iq4_nl): their packed form holds every bit of
// every block (the codes in the vnni4 planes, the fp16 fields as they are,
// the K-quants' sub-scales at ggml's own widths, kernel_abi.h K-QUANT
// SCALES), so ggml's bytes are a permutation of the packed bits, up to
// fixed sign flips (q8_0's code offset, q3_k's sub-scale offset, -dmin).
// A program that keeps only the packed weights (libggml-lowbit) gives
// ggml's bytes back from them.
//
//===----------------------------------------------------------------------===//
#ifndef LOWBIT_REENCODE_H
#define LOWBIT_REENCODE_H

#include "lowbit/upconvert.h"

#include <cstdint>

namespace lowbit {

/// Whether encode_block_rows takes weights of `format`: the ggml block
/// formats (format.h's ggml_block_type is not null).
bool reencodes_blocks(const Format &format);

/// Writes ggml's bytes of rows [m0, m1) of U (pack_upconvert of a ggml block
/// format) to `out`, one row of K / block blocks after another: the bytes
/// pack_upconvert read, exactly. Throws Error for another format or rows
/// out of range.
void encode_block_rows(const UpconvertWeights &U, int64_t m0, int64_t m1,
                       uint8_t *out);

} // namespace lowbit

#endif // LOWBIT_REENCODE_H
