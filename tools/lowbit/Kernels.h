//===- Kernels.h - choosing, compiling and running kernels ------*- C++ -*-===//
//
// The one path from (format, shape, strategy, target) to Y = X * W^T that
// `lowbit run`, `lowbit verify` and `lowbit bench` share: resolve `auto` and
// `native`, generate the kernel through the compiler pipeline, compile it
// into a cached shared object, repack the weights into its layout and call
// it on the thread pool. The reference strategy takes the same path minus
// the compiler.
//
//===----------------------------------------------------------------------===//
#ifndef LOWBIT_TOOLS_LOWBIT_KERNELS_H
#define LOWBIT_TOOLS_LOWBIT_KERNELS_H

#include "KernelCache.h"

#include "lowbit/Pipeline/Pipeline.h"

#include "lowbit/format.h"
#include "lowbit/target.h"
#include "lowbit/thread_pool.h"
#include "lowbit/upconvert.h"

#include <optional>
#include <string>

namespace lowbit::cli {

/// A strategy and a concrete target (never `auto` or `native`).
struct KernelChoice {
  Strategy strategy;
  Target target;
};

/// Resolves `native` to the best target of this host and `auto` to the
/// fastest strategy available for the format; throws Error when the
/// combination cannot run here.
KernelChoice resolveChoice(const Format &format, Strategy strategy,
                           Target target);

struct KernelOptions {
  int threads = 1;
  std::string schedulePath; // "" for the heuristic
  std::string config;       // config attribute override, "" for none
  /// The strategy to generate (compileKernels sets the choice's); only
  /// lut-bitserial changes what the compiler picks for a format.
  Strategy strategy = Strategy::Auto;
};

/// One kernel to generate: its weight shape and expected N (1 selects the
/// GEMV config, larger N the register-blocked GEMM config).
struct KernelShape {
  int64_t M = 0, K = 0, nHint = 1;
};

/// A generated kernel for one (format, M, K, choice), compiled and loaded.
struct CompiledKernel {
  KernelChoice choice;
  std::string config; // the config attribute the compiler chose
  LoadedKernel loaded;
};

/// The C++ source of one kernel for `target` (a target name such as
/// "x86-avx2") with C symbol `functionName`. Throws Error with the compiler's
/// one-line diagnostic on failure.
mlir::lowbit::KernelSource generateKernelSource(const Format &format,
                                                const std::string &target,
                                                const KernelShape &shape,
                                                const KernelOptions &options,
                                                const std::string &functionName);

/// Generates the kernels of `shapes` and compiles them into one shared
/// object (one compiler run). Throws Error with the compiler's one-line
/// diagnostic on failure.
std::vector<CompiledKernel> compileKernels(const Format &format,
                                           KernelChoice choice,
                                           const std::vector<KernelShape> &shapes,
                                           const KernelOptions &options);
CompiledKernel compileKernel(const Format &format, KernelChoice choice,
                             const KernelShape &shape,
                             const KernelOptions &options);

/// Weights in the form a choice consumes: canonical for the reference,
/// repacked for compiled kernels (`upconvert` holds the vnni4 layout of
/// kernel_abi.h, for lut-elementwise the layout of lut_abi.h, for
/// lut-bitserial that of bitserial_abi.h).
struct PreparedWeights {
  const PackedWeights *canonical = nullptr;
  std::optional<UpconvertWeights> upconvert;
};
PreparedWeights prepareWeights(const PackedWeights &W, KernelChoice choice);

/// Y [N][M] = X [N][K] * W^T with the chosen kernel (nullptr for reference).
void runKernel(const CompiledKernel *kernel, const PreparedWeights &W,
               const float *X, int64_t N, float *Y, ThreadPool &pool);

} // namespace lowbit::cli

#endif // LOWBIT_TOOLS_LOWBIT_KERNELS_H
