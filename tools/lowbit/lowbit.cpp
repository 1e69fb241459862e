//===- lowbit.cpp - the lowbit command-line tool --------------------------===//
//
// `lowbit <command> [options]`. Every error is reported as one line,
// "lowbit: error: <what>", with exit status 1; `--help` works everywhere,
// and a bare `lowbit` prints the same usage (exit status 0).
//
// This executable links no LLVM or MLIR: the commands that compile kernels
// (compile, run, verify, bench) load the compiler, liblowbit-codegen.so
// beside the executable, at their start, and tune and schedule live in it
// (they link lib/Tuning's tuner); the engine commands (generate,
// bench-model) load it only when a kernel is not in the kernel cache
// (lowbit/Jit/Codegen.h).
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "CrossRunner.h"

#include "lowbit/Jit/Codegen.h"
#include "lowbit/error.h"

// LLVM's version as a compile-time constant (macros only).
#include "llvm/Config/llvm-config.h"

#include <cstdio>
#include <exception>
#include <new>
#include <string>
#include <vector>

using namespace lowbit::cli;

/// The commands of this executable.
static const std::vector<const Command *> &commands() {
  static const std::vector<const Command *> all = {
      &targetsCommand(), &runCommand(),     &packCommand(),
      &verifyCommand(),  &benchCommand(),   &compileCommand(),
      &ggufCommand(),    &generateCommand(), &benchModelCommand()};
  return all;
}

/// Those of the compiler's module (CompilerCommands.cpp), which loads it;
/// Error when it cannot be loaded.
static const std::vector<const Command *> &compilerCommands() {
  auto list = reinterpret_cast<const std::vector<const Command *> *(*)()>(
      lowbit::jit::codegenSymbol("lowbit_compiler_commands"));
  if (!list)
    throw lowbit::Error("the compiler " + lowbit::jit::codegenFile() +
                        " has no commands (lowbit_compiler_commands)");
  return *list();
}

static bool isCompilerCommand(const std::string &name) {
  return name == "tune" || name == "schedule";
}

/// Whether `name` compiles kernels: the compiler is loaded before it runs,
/// so that a missing one is its first and only error.
static bool needsCompiler(const std::string &name) {
  return name == "compile" || name == "run" || name == "verify" ||
         name == "bench";
}

static void printUsage() {
  std::printf("usage: lowbit <command> [options]\n\n"
                   "lowbit compiles and runs mixed-precision (1-4 bit weight) "
                   "matrix multiplication.\n\ncommands:\n");
  for (const Command *c : commands())
    std::printf("  %-10s %s\n", c->spec.name, c->spec.summary);
  try {
    for (const Command *c : compilerCommands())
      std::printf("  %-10s %s\n", c->spec.name, c->spec.summary);
  } catch (const lowbit::Error &e) {
    std::printf("  (tune, schedule: %s)\n", e.what());
  }
  std::printf("\n'lowbit <command> --help' describes a command; "
                   "'lowbit --version' prints the version.\n");
}

static int dispatch(const std::vector<std::string> &args) {
  const std::string name = args.empty() ? "--help" : args[0];
  if (name == "-h" || name == "--help" || name == "help") {
    printUsage();
    return 0;
  }
  if (name == "--version") {
    std::printf("lowbit %s (LLVM %s)\n", LOWBIT_VERSION, LLVM_VERSION_STRING);
    return 0;
  }
  for (const Command *c :
       isCompilerCommand(name) ? compilerCommands() : commands()) {
    if (name != c->spec.name)
      continue;
    ParsedOptions options(c->spec, {args.begin() + 1, args.end()});
    if (options.helpRequested()) {
      std::fputs(renderHelp(c->spec).c_str(), stdout);
      return 0;
    }
    if (needsCompiler(name))
      lowbit::jit::codegen();
    return c->run(options);
  }
  throw lowbit::Error("unknown command '" + name +
                      "' (see 'lowbit --help')");
}

int main(int argc, char **argv) {
  // aarch64-* targets on another host: their kernels under qemu.
  installCrossRunner();
  try {
    return dispatch({argv + 1, argv + argc});
  } catch (const lowbit::Error &e) {
    std::fprintf(stderr, "lowbit: error: %s\n", e.what());
  } catch (const std::bad_alloc &) {
    std::fprintf(stderr, "lowbit: error: out of memory\n");
  } catch (const std::exception &e) {
    std::fprintf(stderr, "lowbit: error: internal: %s\n", e.what());
  }
  return 1;
}
