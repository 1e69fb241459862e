//===- CrossRunner.h - kernels for another architecture, under qemu -*- C++ -*-//
//
// An x86 process cannot dlopen AArch64 code. For an aarch64-* target on an x86
// host (lowbit::jit::isEmulatedTarget), lowbit::jit::compileKernels calls the
// builder that installCrossRunner installs: it writes the `lowbit compile`
// bundle of the kernels `lowbit run` or `lowbit verify` needs (Bundle.h: the
// same generator, no second code path), cross-builds it with the driver
// tools/lowbit/cross/lowbit_cross_main.cpp into an executable (objects and
// executable cached by content hash beside the shared objects of
// lowbit/Jit/KernelCache.h) and runs every call under qemu-aarch64, exchanging
// the packed weights (.lbw), the activations and the result (.npy) through
// files. The host quantizes the weights once, so the emulated kernel and the
// host's reference see the same codes.
//
//===----------------------------------------------------------------------===//
#ifndef LOWBIT_TOOLS_LOWBIT_CROSSRUNNER_H
#define LOWBIT_TOOLS_LOWBIT_CROSSRUNNER_H

#include "lowbit/target.h"

#include <string>

namespace lowbit::cli {

/// Installs the qemu runner as lowbit::jit's emulated builder: the kernels
/// of an aarch64-* target cross-built into one executable, for each shape
/// the bundle's GEMV kernel (nHint 1) or GEMM kernel (nHint > 1) with the
/// config the compiler chose, each call run under the emulator (a failure
/// throws Error with the driver's message).
void installCrossRunner();

/// Throws the one-line error of a command that times kernels (`command`:
/// "lowbit bench", "lowbit tune") for a target this host only emulates.
void requireTimableTarget(Target target, const std::string &command);

} // namespace lowbit::cli

#endif // LOWBIT_TOOLS_LOWBIT_CROSSRUNNER_H
