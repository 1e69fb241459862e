//===- CrossRunner.h - kernels for another architecture, under qemu -*- C++
//-*-//
//
// An x86 process cannot dlopen AArch64 code. For an aarch64-* target on an
// x86 host, `lowbit run` and `lowbit verify` write the `lowbit compile`
// bundle of the kernels they need (Bundle.h: the same generator, no second
// code path), cross-build it with the driver tools/lowbit/cross/
// lowbit_cross_main.cpp into an executable (objects and executable cached
// by content hash beside the shared objects of KernelCache.h) and run every
// call under qemu-aarch64, exchanging the packed weights (.lbw), the
// activations and the result (.npy) through files. The host quantizes the
// weights once, so the emulated kernel and the host's reference see the
// same codes.
//
//===----------------------------------------------------------------------===//
#ifndef LOWBIT_TOOLS_LOWBIT_CROSSRUNNER_H
#define LOWBIT_TOOLS_LOWBIT_CROSSRUNNER_H

#include "KernelCache.h"
#include "Kernels.h"

#include "lowbit/format.h"

#include <cstdint>
#include <string>
#include <vector>

namespace lowbit::cli {

/// One kernel of a cross-built bundle executable.
struct CrossKernel {
  CrossToolchain toolchain;
  std::string executable;
  std::string target;
  int64_t minN = 1; // the bundle entry: 1 the GEMV kernel, 2 the GEMM one
};

/// The kernels of `shapes` for `choice` (an aarch64-* target), cross-built
/// into one executable: for each shape the bundle's GEMV kernel (nHint 1)
/// or GEMM kernel (nHint > 1), with the config the compiler chose.
std::vector<CompiledKernel>
compileCrossKernels(const Format &format, KernelChoice choice,
                    const std::vector<KernelShape> &shapes,
                    const KernelOptions &options);

/// Y [N][M] = X [N][K] * W^T by `kernel` under the emulator, on `threads`
/// threads. Throws Error with the driver's message when it fails.
void runCrossKernel(const CrossKernel &kernel, const PackedWeights &W,
                    const float *X, int64_t N, float *Y, int threads);

} // namespace lowbit::cli

#endif // LOWBIT_TOOLS_LOWBIT_CROSSRUNNER_H
