//===- validate.cpp - consistency checks of PackedWeights -----------------===//
//
// Accepts exactly what quantize() can produce: the arrays have the sizes of
// the layout, every code is in range, padding bits are zero and every scale
// is finite. Row decoding (unpack_row) is the one place that checks codes
// (the ggml block formats have no invalid codes).
//
//===----------------------------------------------------------------------===//

#include "ggml_blocks.h"
#include "group.h"
#include "layout.h"

#include "lowbit/error.h"
#include "lowbit/format.h"

#include <cmath>
#include <string>
#include <vector>

namespace lowbit {

using namespace detail;

static void check_tensor_scale(const PackedWeights &W) {
  const float s = W.tensor_scale;
  if (W.format.is_ternary()) {
    if (!std::isfinite(s) || !(s > 0.0f))
      throw Error(W.format.name() + ": tensor scale " + std::to_string(s) +
                  " is not a finite positive number");
  } else if (s != 0.0f || std::signbit(s)) {
    throw Error(W.format.name() + ": tensor scale must be 0 (unused), got " +
                std::to_string(s));
  }
}

static void check_scales(const PackedWeights &W, int64_t m) {
  if (const GgmlBlockType *type = ggml_block_type(W.format.kind)) {
    check_block_row(*type, W.codes.data() + m * W.row_bytes(), W.K, m);
    return;
  }
  const int64_t groups = scales_per_row(W.format, W.K);
  for (int64_t g = 0; g < groups; ++g)
    check_group_scale(W.format, W.scales[m * groups + g],
                      has_zeros(W.format) ? W.zeros[m * groups + g] : 0, m, g);
}

void validate(const PackedWeights &W) {
  check_layout(W);
  check_tensor_scale(W);
  if (ggml_block_type(W.format.kind)) {
    // Every code bit pattern of a ggml block is a valid code: only the fp16
    // fields can be wrong, and decoding the codes would cost an import of
    // a GGUF tensor (a copy) several times over.
    for (int64_t m = 0; m < W.M; ++m)
      check_scales(W, m);
    return;
  }
  std::vector<int8_t> q(W.K);
  for (int64_t m = 0; m < W.M; ++m) {
    unpack_row(W, m, q.data());
    if (!W.format.is_ternary())
      check_scales(W, m);
  }
}

} // namespace lowbit
