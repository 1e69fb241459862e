//===- Bundle.h - the bundle generator of `lowbit compile` ------*- C++ -*-===//
//
// Writes a self-contained bundle directory (generated kernels, dispatch
// table, runtime sources, CMakeLists.txt, README; see CompileCommand.cpp;
// the text of the files other than kernels comes from bundle/*.in).
// `lowbit compile` writes one for the user; the qemu runner (CrossRunner.h)
// writes one per kernel set and cross-builds it with a small driver, so that
// code for another architecture is built by exactly one code path.
//
//===----------------------------------------------------------------------===//
#ifndef LOWBIT_TOOLS_LOWBIT_BUNDLE_H
#define LOWBIT_TOOLS_LOWBIT_BUNDLE_H

#include "Models.h"

#include "lowbit/format.h"
#include "lowbit/kernel_abi.h"
#include "lowbit/target.h"
#include "lowbit/vulkan.h"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace mlir::lowbit {
class Schedule;
} // namespace mlir::lowbit

namespace lowbit::cli {

struct BundleKernel {
  std::string target; // e.g. x86-avx2
  std::string format; // e.g. i2s
  int64_t M = 0, K = 0; // 0, 0: an any-shape kernel (lowbit_any_kernel_fn)
  int64_t minN = 1;     // 1: the GEMV config, 2: the GEMM config (N >= 2)
  std::string function; // C symbol
  std::string config;
  lowbit_layout_t layout = {}; // the packed layout it reads (kernel_abi.h)
  int64_t tableActGroup = 0;    // lut-bitserial int8 tables (lossy)
  std::string file; // kernels/<function>.cpp
  std::vector<std::string> flags;
};

/// One weight format of a bundle and the shapes compiled for it.
struct BundleGroup {
  Format format;
  std::vector<LinearShape> shapes;
};

struct BundleSpec {
  Format format;                   // the format of `shapes`, when `groups`
  std::vector<LinearShape> shapes; // is empty (a one-format bundle)
  std::vector<BundleGroup> groups; // else every format and its shapes
  std::string name = "lowbit"; // prefix of the CMake target, the header
                               // (NAME_kernels.h) and every C symbol
                               // (NAME_bundle_register, ...)
  std::string target; // a concrete target name (not native)
  Strategy strategy = Strategy::Auto; // or LutBitserial for the target's
                                      // kernels (of the formats that have
                                      // a lut-bitserial layout)
  int threads = 1;      // threads the kernels are configured for
  /// The --schedule file, read once (jit::loadSchedule), or null for the
  /// heuristic.
  std::shared_ptr<const mlir::lowbit::Schedule> schedule;
  std::string config;   // "" or one kernel config for every target kernel
                        // (lowbit run/verify --config on emulated targets)
  bool fallback = true; // also the generic kernels (when target is not)
  bool any_shape_only = false; // only the target's any-shape kernels: no
                               // kernel per shape of `shapes`, no fallback
  std::string command;  // the command line the README quotes
  GpuDType dtype = GpuDType::F32; // GPU targets: X / Y on the device
};

/// The groups of `spec`: `groups`, or {format, shapes} when it is empty.
std::vector<BundleGroup> bundleGroups(const BundleSpec &spec);

/// Writes the bundle of `spec` into `out` (created; stale kernels removed)
/// and returns its kernels. `runtimeSources` receives the bundle-relative
/// runtime .cpp files. Throws Error for a target or format without kernels.
std::vector<BundleKernel> writeBundle(const std::filesystem::path &out,
                                      const BundleSpec &spec,
                                      std::vector<std::string> &runtimeSources);

} // namespace lowbit::cli

#endif // LOWBIT_TOOLS_LOWBIT_BUNDLE_H
