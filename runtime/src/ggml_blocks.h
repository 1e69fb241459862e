//===- ggml_blocks.h - ggml's block formats, row by row ---------*- C++ -*-===//
//
// The rows of lowbit's block formats (q4_0 ... iq4_nl) are ggml's blocks, one
// after another (runtime/README.md, "ggml block formats"). What they have in
// common is the table of format.h (GgmlBlockType); what is truly per type is
// here: the decoder of one block's bytes and ggml's reference quantizer of
// one block (ggml_blocks.cpp), reached through block_codec().
//
//===----------------------------------------------------------------------===//
#ifndef LOWBIT_SRC_GGML_BLOCKS_H
#define LOWBIT_SRC_GGML_BLOCKS_H

#include "lowbit/format.h"

#include <cstdint>

namespace lowbit::detail {

/// The code z a kernel reads for value 0 of a ggml block type's codes
/// (upconvert and GPU layouts): 2^(b-1) for the types with a code offset,
/// 0 for those with a minimum or a codebook (whose codes are its indices).
/// The kernel code is the stored one plus z - code_offset.
inline int kernel_code_offset(const GgmlBlockType &type) {
  return type.has_min || type.codebook ? 0 : 1 << (type.code_bits - 1);
}

/// The per-type code of one ggml block type.
struct BlockCodec {
  /// Decodes one block: q[0, block) the stored codes (0..2^bits - 1; q8_0
  /// its int8), s[0, block / scale_block) the scales and, where the type
  /// has a min, o[...] the offsets, computed as ggml's dequantize_row_*.
  void (*decode)(const uint8_t *block, int8_t *q, float *s, float *o);
  /// ggml's reference quantizer of one block (x[0, block) finite). Throws
  /// Fp16Overflow when one of the block's fp16 fields would be infinite.
  void (*quantize)(const float *x, uint8_t *block);
  /// K-quants: the integer sub-scales sc[0, block / scale_block) and (types
  /// with a min) sub-minimums m[...] as the block stores them (q3_k's 6-bit
  /// scale less 32, q6_k's int8), so that s_j = d * sc_j and o_j = -dmin *
  /// m_j; null for the types with one fp16 scale per block.
  void (*sub_scales)(const uint8_t *block, int *sc, int *m) = nullptr;
};

/// Thrown by a BlockCodec::quantize: `field` ("d", "dmin", "m") would be
/// `value`, which fp16 cannot hold. quantize_block_row names row and block.
struct Fp16Overflow {
  const char *field;
  float value;
};

/// The codec of a block type (kind must be one of ggml_block_types()).
const BlockCodec &block_codec(FormatKind kind);

/// Quantizes one row of K weights (K a multiple of the type's block) into
/// K / block blocks; throws Error naming the row and block whose fp16 field
/// overflows.
void quantize_block_row(const GgmlBlockType &type, const float *x, int64_t K,
                        int64_t m, uint8_t *row);

/// The stored codes of one row (K values), as unpack_row returns them.
void decode_block_row_codes(const GgmlBlockType &type, const uint8_t *row,
                            int64_t K, int8_t *q);

/// Dequantizes one row of K values from ggml's block bytes: s_j * c_k (+ o_j
/// where the type has a min), bit-identical to ggml's dequantize_row_<type>.
void dequantize_block_row(const GgmlBlockType &type, const uint8_t *row,
                          int64_t K, float *out);

/// Throws Error naming row m, the block and the field unless every fp16
/// field (d, and m / dmin where stored) of the row is finite.
void check_block_row(const GgmlBlockType &type, const uint8_t *row, int64_t K,
                     int64_t m);

} // namespace lowbit::detail

#endif // LOWBIT_SRC_GGML_BLOCKS_H
