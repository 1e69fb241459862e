//===- Codegen.h - the compiler, behind one narrow interface ----*- C++ -*-===//
//
// Everything lib/Jit needs from the compiler (lib/Pipeline, lib/Tuning's
// schedule files, lib/Target), which links libMLIR and libLLVM: generating
// a kernel's source, reading a schedule file and the target registry's
// answers for `lowbit compile`. lib/Jit itself links neither, so that a
// program that finds every kernel in the kernel cache (a warm `lowbit
// generate`) never maps them: the compiler is loaded on first use.
//
// Where it comes from: a program that links LowBitCodegen (the tests,
// examples/jit) has it in-process (its factory, lowbit_codegen_create, is
// then defined); the lowbit executable does not, and dlopens
// liblowbit-codegen.so from the directory of its own executable
// (/proc/self/exe) the first time a command needs the compiler. Errors
// thrown by the compiler (lowbit::Error, one line) cross the boundary as
// they are.
//
//===----------------------------------------------------------------------===//
#ifndef LOWBIT_JIT_CODEGEN_H
#define LOWBIT_JIT_CODEGEN_H

#include "lowbit/Pipeline/KernelRequest.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace lowbit::jit {

/// A schedule file's entry for one problem: its config and measured time
/// (0 in a version-1 file).
struct ScheduledConfig {
  std::string config;
  double us = 0;
};

class Codegen {
public:
  virtual ~Codegen() = default;

  /// Pipeline.h's generateKernel; throws Error with its one line.
  virtual mlir::lowbit::KernelSource
  generateKernel(const mlir::lowbit::KernelRequest &request) const = 0;

  /// Schedule::load of `path`; throws Error naming the file (and entry).
  virtual std::shared_ptr<const mlir::lowbit::Schedule>
  loadSchedule(const std::string &path) const = 0;
  /// Schedule::lookup of (format, M, K, nClass "gemv"/"gemm", target,
  /// threads).
  virtual std::optional<ScheduledConfig>
  lookup(const mlir::lowbit::Schedule &schedule, const std::string &format,
         int64_t M, int64_t K, const std::string &nClass,
         const std::string &target, int64_t threads) const = 0;
  /// Schedule::str (the file's canonical text: the kept sources' key).
  virtual std::string
  scheduleText(const mlir::lowbit::Schedule &schedule) const = 0;

  /// The target registry (TargetInfo.h): whether `target` is one,
  /// its getFallbackTarget ("generic" for none), whether it has byte table
  /// lookups (LUT kernels), and every name.
  virtual bool isTarget(const std::string &target) const = 0;
  virtual std::string fallbackTarget(const std::string &target) const = 0;
  virtual bool hasByteTableLookup(const std::string &target) const = 0;
  virtual std::vector<std::string> targetNames() const = 0;
};

/// The compiler of this process: linked in, or liblowbit-codegen.so loaded
/// on the first call (once; later calls return the same object). Throws
/// Error with one line naming the module when it is missing or broken.
const Codegen &codegen();

/// The file the compiler comes from (the module, or this executable when it
/// is linked in), "" where it cannot be found: what the kept kernel sources
/// are keyed by. Does not load the module.
const std::string &codegenFile();

/// The address of `symbol` in the loaded module (codegen() loads it), or
/// null when the compiler is linked in or the module lacks it.
void *codegenSymbol(const char *symbol);

} // namespace lowbit::jit

/// The factory liblowbit-codegen.so (and LowBitCodegen) exports.
extern "C" lowbit::jit::Codegen *lowbit_codegen_create();

#endif // LOWBIT_JIT_CODEGEN_H
