//===- run_kernel.cpp - calling a generated kernel on a thread pool -------===//

#include "lowbit/run_kernel.h"
#include "lowbit/bitserial.h"
#include "lowbit/error.h"
#include "lowbit/lut.h"

#include <string>
#include <utility>

namespace lowbit {

UpconvertWeights pack_for_kernel(const PackedWeights &canonical,
                                 std::string_view config,
                                 std::string_view target) {
  if (is_bitserial_config(config))
    return pack_bitserial(canonical);
  if (has_lut_layout(canonical.format))
    return pack_lut(canonical, lut_order(target));
  return pack_upconvert(canonical);
}

bool is_bitserial_config(std::string_view config) {
  return config.substr(0, 21) == "#lowbit.lut_bitserial";
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
