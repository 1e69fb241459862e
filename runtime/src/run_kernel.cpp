//===- run_kernel.cpp - calling a generated kernel on a thread pool -------===//

#include "lowbit/run_kernel.h"
#include "lowbit/bitserial.h"
#include "lowbit/error.h"
#include "lowbit/lut.h"

#include <algorithm>
#include <string>
#include <utility>

namespace lowbit {

lowbit_layout_t vnni4_layout(const Format &format) {
  lowbit_layout_t layout = {};
  layout.family = LOWBIT_LAYOUT_VNNI4;
  layout.lane_order = LOWBIT_LANE_ROWS;
  layout.tile_rows = LOWBIT_TILE_ROWS;
  layout.tile_k = uint16_t(lowbit_vnni4_tile_k(std::max(1, format.bits)));
  layout.panel_blocks = 0;
  return layout;
}

lowbit_layout_t lut_layout(const Format &format, uint8_t lane_order) {
  lowbit_layout_t layout = {};
  layout.family = LOWBIT_LAYOUT_LUT;
  layout.lane_order = lane_order;
  layout.tile_rows = LOWBIT_TILE_ROWS;
  layout.tile_k = format.kind == FormatKind::TL2 ? LOWBIT_LUT_TL2_BLOCK
                                                 : LOWBIT_LUT_TL1_VECTOR;
  layout.panel_blocks = LOWBIT_LUT_PANEL_BLOCKS;
  return layout;
}

lowbit_layout_t bitplanes_layout(uint8_t lane_order) {
  lowbit_layout_t layout = {};
  layout.family = LOWBIT_LAYOUT_BITPLANES;
  layout.lane_order = lane_order;
  layout.tile_rows = LOWBIT_TILE_ROWS;
  layout.tile_k = LOWBIT_BITSERIAL_BLOCK;
  layout.panel_blocks = LOWBIT_BITSERIAL_PANEL_BLOCKS;
  return layout;
}

lowbit_layout_t ggml_rows_layout(int block_bytes) {
  lowbit_layout_t layout = {};
  layout.family = LOWBIT_LAYOUT_GGML_ROWS;
  layout.lane_order = LOWBIT_LANE_ROWS;
  layout.tile_rows = 1;
  layout.tile_k = LOWBIT_GGML_ROWS_BLOCK;
  layout.panel_blocks = 0;
  layout.block_bytes = uint16_t(block_bytes);
  return layout;
}

static const char *family_name(uint8_t family) {
  switch (family) {
  case LOWBIT_LAYOUT_GGML_ROWS:
    return "ggml_rows";
  case LOWBIT_LAYOUT_VNNI4:
    return "vnni4";
  case LOWBIT_LAYOUT_LUT:
    return "lut";
  case LOWBIT_LAYOUT_BITPLANES:
    return "bitplanes";
  default:
    return nullptr;
  }
}

std::string layout_name(const lowbit_layout_t &layout) {
  const char *family = family_name(layout.family);
  std::string order = layout.lane_order == LOWBIT_LANE_ROWS    ? "rows"
                      : layout.lane_order == LOWBIT_LANE_LANES ? "lanes"
                                                               : "lane order ";
  if (layout.lane_order > LOWBIT_LANE_LANES)
    order += std::to_string(layout.lane_order);
  return (family ? std::string(family)
                 : "family " + std::to_string(layout.family)) +
         "<" + order + ", tile_rows " + std::to_string(layout.tile_rows) +
         ", tile_k " + std::to_string(layout.tile_k) + ", panel " +
         std::to_string(layout.panel_blocks) +
         (layout.block_bytes
              ? ", block " + std::to_string(layout.block_bytes) + " bytes"
              : "") +
         ">";
}

std::string layout_error(const lowbit_layout_t &layout, const Format &format) {
  const char *family = family_name(layout.family);
  if (!family)
    return "layout descriptor " + layout_name(layout) +
           " names no layout family (kernel_abi.h: vnni4, lut, bitplanes, "
           "ggml_rows)";
  lowbit_layout_t want;
  if (layout.family == LOWBIT_LAYOUT_GGML_ROWS) {
    if (!format.is_ternary() || format.kind != FormatKind::I2S)
      return "a ggml_rows layout (kernel_abi.h) for " + format.name() +
             " weights: only i2s has one";
    // TQ1_0's blocks, else TQ2_0's (the comparison below names a third).
    want = ggml_rows_layout(layout.block_bytes == LOWBIT_GGML_ROWS_TQ1_0_BYTES
                                ? LOWBIT_GGML_ROWS_TQ1_0_BYTES
                                : LOWBIT_GGML_ROWS_TQ2_0_BYTES);
  } else if (layout.family == LOWBIT_LAYOUT_VNNI4) {
    if (format.kind == FormatKind::TL1 || format.kind == FormatKind::TL2)
      return std::string("a vnni4 layout (kernel_abi.h) for ") +
             format.name() + " weights: tl1/tl2 kernels read lut_abi.h";
    want = vnni4_layout(format);
  } else if (layout.family == LOWBIT_LAYOUT_LUT) {
    if (!has_lut_layout(format))
      return "a lut layout (lut_abi.h) for " + format.name() +
             " weights: only tl1 and tl2 have one";
    want = lut_layout(format, layout.lane_order == LOWBIT_LANE_LANES
                                  ? LOWBIT_LANE_LANES
                                  : LOWBIT_LANE_ROWS);
  } else {
    if (!has_bitserial_layout(format))
      return "a bitplanes layout (bitserial_abi.h) for " + format.name() +
             " weights: only i2s and w1gG..w4gG have one";
    want = bitplanes_layout(layout.lane_order == LOWBIT_LANE_LANES
                                ? LOWBIT_LANE_LANES
                                : LOWBIT_LANE_ROWS);
  }
  if (layout.lane_order != want.lane_order ||
      layout.tile_rows != want.tile_rows || layout.tile_k != want.tile_k ||
      layout.panel_blocks != want.panel_blocks ||
      layout.block_bytes != want.block_bytes)
    return "layout descriptor " + layout_name(layout) + " for " +
           format.name() + " weights is not the " + family +
           " layout this runtime packs (" + layout_name(want) + ")";
  return "";
}

UpconvertWeights pack_for_kernel(const PackedWeights &canonical,
                                 const lowbit_layout_t &layout) {
  if (std::string problem = layout_error(layout, canonical.format);
      !problem.empty())
    throw Error("pack_for_kernel: " + problem);
  switch (layout.family) {
  case LOWBIT_LAYOUT_LUT:
    return pack_lut(canonical, layout.lane_order == LOWBIT_LANE_LANES
                                   ? LutOrder::Lanes
                                   : LutOrder::Rows);
  case LOWBIT_LAYOUT_BITPLANES:
    return pack_bitserial(canonical, layout.lane_order == LOWBIT_LANE_LANES
                                         ? BitplaneOrder::Lanes
                                         : BitplaneOrder::Rows);
  case LOWBIT_LAYOUT_GGML_ROWS:
    return pack_ggml_rows(canonical, layout.block_bytes);
  default:
    return pack_upconvert(canonical);
  }
}

/// What run_kernel and run_any_kernel check of the activations.
static void check_activations(const UpconvertWeights &W,
                              const PreparedActivations &A) {
  const int64_t block = W.format.is_ternary() ? W.Kp : 32;
  if (A.K != W.K || A.Kp != W.Kp || A.block != block)
    throw Error("run_kernel: activations have K = " + std::to_string(A.K) +
                " (block " + std::to_string(A.block) +
                "), weights K = " + std::to_string(W.K) + " (" +
                W.format.name() + ", block " + std::to_string(block) + ")");
  if (A.N < 1)
    throw Error("run_kernel: activations have N = " + std::to_string(A.N));
}

/// Checks the activations, then runs `call` on the tiles of W split by the
/// pool's policy for `kernel_class` (-1: the format's up-convert class).
template <typename F>
static void run_tiles(const UpconvertWeights &W, const PreparedActivations &A,
                      ThreadPool &pool, int kernel_class, F &&call) {
  check_activations(W, A);
  if (kernel_class < 0)
    kernel_class = pool.kernel_class(upconvert_kernel_class(W.format));
  pool.run_scheduled(kernel_class, W.num_tiles(), std::forward<F>(call));
}

void run_kernel(lowbit_kernel_fn kernel, const UpconvertWeights &W,
                const PreparedActivations &A, float *y, int64_t M,
                ThreadPool &pool, int kernel_class) {
  if (!kernel)
    throw Error("run_kernel: no kernel function");
  if (M != W.M)
    throw Error("run_kernel: M = " + std::to_string(M) +
                " but the weights have M = " + std::to_string(W.M));
  run_tiles(W, A, pool, kernel_class,
            [&](int64_t begin, int64_t end, int) {
              kernel(W.codes.data(), W.scales_or_null(), W.zeros_or_null(),
                     A.xq.data(), A.x_scales.data(), A.x_sums.data(), y, A.N,
                     begin, end, W.w_scale);
            });
}

std::string any_kernel_shape_error(const Format &format, int64_t K,
                                   bool bit_planes) {
  // The LUT kernels' limit is their table buffer's (tl1/tl2 are ternary
  // too).
  const bool lut = has_lut_layout(format) || bit_planes;
  const int64_t limit = lut ? LOWBIT_ANY_SHAPE_MAX_LUT_K
                            : LOWBIT_ANY_SHAPE_MAX_TERNARY_K;
  if ((lut || format.is_ternary()) && K > limit)
    return "K = " + std::to_string(K) + " is past the " +
           std::to_string(limit) + " of " +
           (bit_planes ? "a lut-bitserial"
            : lut      ? "a tl1/tl2"
                       : "a ternary") +
           " any-shape kernel (kernel_abi.h); use a kernel generated for "
           "the shape";
  return "";
}

void run_any_kernel(lowbit_any_kernel_fn kernel, const UpconvertWeights &W,
                    const PreparedActivations &A, float *y, ThreadPool &pool,
                    int kernel_class) {
  if (!kernel)
    throw Error("run_any_kernel: no kernel function");
  if (std::string problem =
          any_kernel_shape_error(W.format, W.K, W.bit_planes);
      !problem.empty())
    throw Error("run_any_kernel: " + problem);
  run_tiles(W, A, pool, kernel_class,
            [&](int64_t begin, int64_t end, int) {
              kernel(W.codes.data(), W.scales_or_null(), W.zeros_or_null(),
                     A.xq.data(), A.x_scales.data(), A.x_sums.data(), y, A.N,
                     begin, end, W.w_scale, W.M, W.K);
            });
}

std::string upconvert_kernel_class(const Format &format,
                                   const std::string &target) {
  return target.empty() ? "upconvert " + format.name()
                        : "upconvert " + target + " " + format.name();
}

} // namespace lowbit
