//===- layout.h - sizes of the canonical packed arrays ----------*- C++ -*-===//
//
// The one place that knows how many bytes and scales each format stores
// (runtime/README.md describes the same layout in prose).
//
//===----------------------------------------------------------------------===//
#ifndef LOWBIT_SRC_LAYOUT_H
#define LOWBIT_SRC_LAYOUT_H

#include "lowbit/format.h"
#include "lowbit/upconvert.h"

#include <cstdint>

namespace lowbit::detail {

/// Block along K of the int8 activations of the non-ternary formats (as
/// ggml's Q8_0); every group size is a multiple of it.
constexpr int64_t kActivationBlock = 32;

/// Largest M * K any format accepts (4 TiB of fp32 input): keeps every size
/// derived from M and K far from int64 overflow.
constexpr int64_t kMaxWeights = int64_t(1) << 40;

/// How tl2 splits a row of K (even) weights: `triples` sign+index triples
/// cover the first 3 * triples weights, tl1 pairs cover the `tail` rest.
struct Tl2Split {
  int64_t triples, tail;
};
Tl2Split tl2_split(int64_t K);

/// Bytes of one row of `codes`.
int64_t code_row_bytes(const Format &format, int64_t K);
/// Entries per row of `scales` (and of `zeros` where the format has them).
int64_t scales_per_row(const Format &format, int64_t K);
bool has_zeros(const Format &format);

/// Throws Error unless M, K are legal for the format and codes, scales and
/// zeros have exactly the sizes it requires. O(1): contents are validate()'s.
void check_layout(const PackedWeights &W);

/// The unsigned code of kernel_abi.h of a value returned by unpack_row:
/// ternary q + 1, binary 1 for +1 and 0 for -1, else q.
uint8_t kernel_code(Encoding encoding, int8_t q);

/// Fills U.scales (and U.zeros) in the tiled fp16 [Mp/16][Kp/G][16] layout
/// of kernel_abi.h from validated canonical w<b>gG weights' scales (and
/// zeros); nothing when U.group is 0 (i2s). U.Mp, U.Kp, U.group must be
/// set. (The ggml block formats' scales are in their blocks:
/// pack_block_rows.)
void pack_tile_scales(const PackedWeights &canonical, UpconvertWeights &U);

} // namespace lowbit::detail

#endif // LOWBIT_SRC_LAYOUT_H
