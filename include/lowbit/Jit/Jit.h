//===- Jit.h - compile-and-load low-bit GEMM kernels ------------*- C++ -*-===//
//
// The one path from (format, shape, strategy, target) to Y = X * W^T, for an
// engine, a script or the lowbit CLI (`lowbit run`, `verify`, `bench`,
// `tune`, `generate`): resolve `auto` and `native`, generate the kernel
// through the compiler pipeline (lib/Pipeline, reached through Codegen.h:
// loaded on a cache miss), compile it into a cached
// shared object (KernelCache.h), repack the weights into its layout and call
// it on the thread pool. The reference strategy takes the same path minus
// the compiler. Bad input (a format or target without kernels, a shape the
// format does not allow, a compiler failure) throws lowbit::Error (the
// runtime's error.h) with one line that names it.
//
// Targets this host runs only under an emulator (AArch64 on x86) have no
// code to dlopen: compileKernels hands them to the builder installed with
// setEmulatedBuilder (the CLI installs its qemu runner, tools/lowbit's
// CrossRunner) and throws Error when there is none.
//
//===----------------------------------------------------------------------===//
#ifndef LOWBIT_JIT_JIT_H
#define LOWBIT_JIT_JIT_H

#include "lowbit/Jit/KernelCache.h"

#include "lowbit/Pipeline/KernelRequest.h"

#include "lowbit/format.h"
#include "lowbit/target.h"
#include "lowbit/thread_pool.h"
#include "lowbit/upconvert.h"
#include "lowbit/vulkan.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace lowbit::jit {

using lowbit::KernelChoice;

/// Whether `t` is a target this host runs only under an emulator (AArch64
/// code on another architecture: setEmulatedBuilder).
bool isEmulatedTarget(Target t);

/// Resolves `native` to the best target of this host and `auto` to the
/// fastest strategy available for the format; throws Error when the
/// combination cannot run here: choose_kernel (lowbit/target.h), the one
/// place that decides it.
KernelChoice resolveChoice(const Format &format, Strategy strategy,
                           Target target);

/// resolveChoice for a caller that runs what it asked for (`lowbit run`,
/// `lowbit verify`, an engine): `auto` that finds no generated kernel for
/// the format on the target is an error naming the reference strategy, not
/// a quiet run of the scalar reference on the CPU.
KernelChoice resolveKernelChoice(const Format &format, Strategy strategy,
                                 Target target);

/// The strategy of a config attribute: its mnemonic, `_` spelled `-`
/// (`#lowbit.lut_bitserial<...>` is lut-bitserial); the GPU config is the
/// up-convert strategy. Throws Error for text that is not a #lowbit
/// attribute.
Strategy strategyOfConfig(const std::string &config);

struct KernelOptions {
  int threads = 1;
  /// The --schedule file (loadSchedule: read once per command, shared by
  /// every kernel), or null for the heuristic; an entry whose strategy is
  /// not the kernel's (an explicit strategy) leaves that strategy's
  /// heuristic.
  std::shared_ptr<const mlir::lowbit::Schedule> schedule;
  std::string config;       // config attribute override, "" for none
  /// The weights' layout attribute (KernelRequest::layout: a tiled gguf
  /// layout, TQ1_0 or TQ2_0 rows), "" for the format's own.
  std::string layout;
  /// The strategy to generate (compileKernels sets the choice's); only
  /// lut-bitserial changes what the compiler picks for a format.
  Strategy strategy = Strategy::Auto;
  /// GPU targets: the element type of X and Y (--dtype).
  GpuDType dtype = GpuDType::F32;
};

/// The schedule file at `path` (Schedule::load), or null for "". Throws
/// Error with the one-line message naming the file (and the entry) at fault.
std::shared_ptr<const mlir::lowbit::Schedule>
loadSchedule(const std::string &path);

/// One kernel to generate: its weight shape and expected N (1 selects the
/// GEMV config, larger N the register-blocked GEMM config). M = K = 0 is
/// the any-shape kernel of the N class (kernel_abi.h, lowbit_any_kernel_fn:
/// M and K run-time arguments; CPU targets): anyShape(nHint).
struct KernelShape {
  KernelShape() = default;
  KernelShape(int64_t M, int64_t K, int64_t nHint = 1, std::string config = "",
              std::string layout = "")
      : M(M), K(K), nHint(nHint), config(std::move(config)),
        layout(std::move(layout)) {}
  static KernelShape anyShape(int64_t nHint = 1) { return {0, 0, nHint}; }
  bool isAnyShape() const { return M == 0 && K == 0; }

  int64_t M = 0, K = 0, nHint = 1;
  std::string config; // config attribute for this kernel alone, "" for
                      // KernelOptions::config (the tuner's candidates)
  std::string layout; // likewise, KernelOptions::layout for this kernel
};

/// resolveChoice for one problem: with `auto` and a schedule file that has
/// an entry for (format, shape, N class, target, threads), the strategy of
/// that entry's config (the tuner measured it fastest there); with `native`
/// the entry may name another target this host runs (`lowbit tune
/// --target x86-avx2` next to the x86-avx512vnni entries): of the entries
/// for the host's targets, the one with the shortest measured time decides
/// strategy and target. Otherwise resolveChoice's choice by format.
KernelChoice resolveChoiceFor(const Format &format, Strategy strategy,
                              Target target, const KernelShape &shape,
                              const KernelOptions &options);

/// A kernel this process cannot call: code for a target the host runs only
/// under an emulator, run by the builder that made it (setEmulatedBuilder).
class EmulatedKernel {
public:
  virtual ~EmulatedKernel() = default;
  /// Y [N][M] = X [N][K] * W^T for the canonical weights W on `threads`
  /// threads. Throws Error when the emulated run fails.
  virtual void run(const PackedWeights &W, const float *X, int64_t N, float *Y,
                   int threads) const = 0;
};

/// A generated kernel for one (format, M, K, choice), compiled and loaded,
/// or for a target this host runs only under an emulator, built by the
/// emulated builder (`loaded` is then empty).
struct CompiledKernel {
  KernelChoice choice;
  Format format;
  int64_t M = 0, K = 0; // the weight shape it was compiled for (0, 0: any)
  std::string config; // the config attribute the compiler chose
  lowbit_layout_t layout = {}; // the packed layout it reads (kernel_abi.h)
  int64_t tableActGroup = 0; // lut-bitserial int8 tables: act_group (lossy)
  LoadedKernel loaded; // CPU targets: the function
  /// An any-shape kernel (KernelShape::anyShape): its function, which runs
  /// every shape of the format (`loaded.fn` is then null).
  lowbit_any_kernel_fn anyFn = nullptr;
  SpirvKernel spirv;   // GPU targets: the embedded binary (vulkan.h)
  std::shared_ptr<const EmulatedKernel> emulated; // emulated targets
};

/// Whether `t` is a GPU target (its kernels run through vulkan.h).
bool isGpuTarget(Target t);
/// Whether the GPU targets have a kernel for `format` (i2s, w1gG..w4gG,
/// q4_0).
bool hasGpuKernel(const Format &format);

/// The C++ source of one kernel for `target` (a target name such as
/// "x86-avx2") with C symbol `functionName`. Throws Error with the compiler's
/// one-line diagnostic on failure. For KernelShape::anyShape(nHint) the
/// source's function is a lowbit_any_kernel_fn (KernelSource::anyShape) and
/// its weights are packed by pack_for_kernel(W, source.layoutDescriptor), as
/// those of the shape-specialized kernels.
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

/// What compileKernels does for a target this host only emulates: build
/// the kernels of `shapes`, each with its EmulatedKernel.
using EmulatedBuilder = std::function<std::vector<CompiledKernel>(
    const Format &format, KernelChoice choice,
    const std::vector<KernelShape> &shapes, const KernelOptions &options)>;

/// Installs the builder of emulated targets' kernels for this process (an
/// empty function removes it). Not thread-safe: call it once at start.
void setEmulatedBuilder(EmulatedBuilder builder);

/// Weights in the form a kernel consumes: canonical for the reference (no
/// kernel), GPU and emulated kernels, else repacked in the layout the
/// kernel's descriptor names (pack_for_kernel: `upconvert` holds the vnni4
/// layout of kernel_abi.h, lut_abi.h's or bitserial_abi.h's).
struct PreparedWeights {
  const PackedWeights *canonical = nullptr;
  std::optional<UpconvertWeights> upconvert;
  /// GPU targets: the kernel with these weights uploaded, made by the first
  /// runKernel and reused by later ones (the same kernel every time).
  std::shared_ptr<VulkanKernel> gpu;
};
/// Throws Error when W's format or shape is not the kernel's.
PreparedWeights prepareWeights(const PackedWeights &W,
                               const CompiledKernel *kernel);

/// Compares a kernel's Y [N][M] for weights W and activations X [N][K] with
/// the reference's `want`: bit-exact for ternary formats, else within 1e-5
/// (normalized) of the reference; for a lossy kernel (`tableActGroup` > 0:
/// CompiledKernel::tableActGroup) instead every output
/// within the bound of bitserial_abi.h of the reference
/// (bitserial_int8_table_bound); and 1e-2
/// of the fp64 product of the dequantized weights (or no worse than the
/// reference, plus the bound for a lossy kernel) for all but the exact
/// ternary case. A kernel whose Y is rounded to a 16-bit `dtype` gets that
/// type's unit roundoff on top of both bounds (ternary: `want` must be
/// rounded as Y was). Returns "" or what is wrong.
std::string compareWithReference(const PackedWeights &W, const float *X,
                                 int64_t N, const std::vector<float> &got,
                                 const std::vector<float> &want,
                                 GpuDType dtype = GpuDType::F32,
                                 int64_t tableActGroup = 0);

/// Y [N][M] = X [N][K] * W^T with the chosen kernel (nullptr for reference).
void runKernel(const CompiledKernel *kernel, PreparedWeights &W,
               const float *X, int64_t N, float *Y, ThreadPool &pool);

} // namespace lowbit::jit

#endif // LOWBIT_JIT_JIT_H
