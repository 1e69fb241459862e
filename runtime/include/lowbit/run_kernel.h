//===- run_kernel.h - calling a generated kernel on a thread pool -*- C++ -*-=//
#ifndef LOWBIT_RUN_KERNEL_H
#define LOWBIT_RUN_KERNEL_H

#include "lowbit/kernel_abi.h"
#include "lowbit/thread_pool.h"
#include "lowbit/upconvert.h"

#include <cstdint>
#include <string>

namespace lowbit {

/// Computes y [A.N][M] = kernel(W, A): the 16-row tiles [0, W.num_tiles())
/// are split over the pool by ThreadPool::run_scheduled (the pool's policy:
/// equal chunks, or chunks in proportion to the ratio table of
/// `kernel_class`, which the run then updates) and each thread with a
/// non-empty chunk calls `kernel` once on it. `kernel_class` is a pool
/// class index; -1 uses upconvert_kernel_class(W.format). M must equal W.M
/// (the M the kernel was generated for) and A must have W's K and format
/// block; throws Error otherwise.
void run_kernel(lowbit_kernel_fn kernel, const UpconvertWeights &W,
                const PreparedActivations &A, float *y, int64_t M,
                ThreadPool &pool, int kernel_class = -1);

/// "" when an any-shape kernel (kernel_abi.h) computes weights of `format`
/// with this K, else why not (a ternary K past the kernel's limit, or a K
/// past LOWBIT_ANY_SHAPE_MAX_LUT_K for tl1/tl2 and, with `bit_planes`, the
/// lut-bitserial kernels: their tables of all K are on their stack).
std::string any_kernel_shape_error(const Format &format, int64_t K,
                                   bool bit_planes = false);

/// run_kernel for an any-shape kernel (kernel_abi.h, lowbit_any_kernel_fn):
/// the same split, each call with W.M and W.K; W packed as for the
/// shape-specialized kernel of the same config. Throws Error for a K past
/// the kernel's limit (any_kernel_shape_error, W.bit_planes) and as
/// run_kernel otherwise.
void run_any_kernel(lowbit_any_kernel_fn kernel, const UpconvertWeights &W,
                    const PreparedActivations &A, float *y, ThreadPool &pool,
                    int kernel_class = -1);

/// The layout descriptors (kernel_abi.h, LAYOUT DESCRIPTOR) of weights of
/// `format` as the compiler's pack-layout lays them out for an up-convert
/// kernel (kernel_abi.h), a lut-elementwise one (lut_abi.h, tl1/tl2, in
/// `lane_order`) and a lut-bitserial one (bitserial_abi.h).
lowbit_layout_t vnni4_layout(const Format &format);
lowbit_layout_t lut_layout(const Format &format,
                           uint8_t lane_order = LOWBIT_LANE_ROWS);
lowbit_layout_t bitplanes_layout(uint8_t lane_order = LOWBIT_LANE_ROWS);
/// The descriptor of kernel_abi.h's GGML ROWS LAYOUT (i2s weights as TQ2_0
/// or TQ1_0 rows, `block_bytes` per block: tile_rows 1, tile_k 256).
lowbit_layout_t
ggml_rows_layout(int block_bytes = LOWBIT_GGML_ROWS_TQ2_0_BYTES);

/// `layout` as text, e.g. "lut<lanes, tile_rows 16, tile_k 96, panel 16>".
std::string layout_name(const lowbit_layout_t &layout);

/// "" when weights of `format` can be packed in `layout`, else why not (an
/// unknown family, a family the format has no layout in, or a tile, block
/// or panel size this runtime does not pack).
std::string layout_error(const lowbit_layout_t &layout, const Format &format);

/// `canonical` packed in the layout a generated kernel reads, named by its
/// descriptor (lowbit_kernel_entry_t::layout): LOWBIT_LAYOUT_VNNI4
/// kernel_abi.h, LOWBIT_LAYOUT_LUT lut_abi.h in the descriptor's lane
/// order, LOWBIT_LAYOUT_BITPLANES bitserial_abi.h, LOWBIT_LAYOUT_GGML_ROWS
/// kernel_abi.h's TQ2_0 or TQ1_0 rows (pack_ggml_rows). Throws Error with
/// layout_error's message when the descriptor does not fit the weights.
UpconvertWeights pack_for_kernel(const PackedWeights &canonical,
                                 const lowbit_layout_t &layout);

/// The key of the ratio table of upconvert kernels: "upconvert <target>
/// <format>" ("upconvert <format>" when target is empty). Kernels of one
/// strategy, target and format share their instruction mix and so their
/// per-core performance ratios (the hybrid-CPU scheduling paper keeps one table per ISA).
std::string upconvert_kernel_class(const Format &format,
                                   const std::string &target = "");

} // namespace lowbit

#endif // LOWBIT_RUN_KERNEL_H
