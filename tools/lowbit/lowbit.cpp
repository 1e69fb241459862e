//===- lowbit.cpp - the lowbit command-line tool --------------------------===//
//
// `lowbit <command> [options]`. Every error is reported as one line,
// "lowbit: error: <what>", with exit status 1; `--help` works everywhere,
// and a bare `lowbit` prints the same usage (exit status 0).
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "CrossRunner.h"

#include "lowbit/error.h"

#include "llvm/Config/llvm-config.h"

#include <cstdio>
#include <exception>
#include <new>
#include <string>
#include <vector>

using namespace lowbit::cli;

static const std::vector<const Command *> &commands() {
  static const std::vector<const Command *> all = {
      &targetsCommand(), &runCommand(), &packCommand(), &verifyCommand(),
      &benchCommand(), &compileCommand(), &tuneCommand(), &scheduleCommand(),
      &ggufCommand(), &generateCommand(), &benchModelCommand()};
  return all;
}

static void printUsage() {
  std::printf("usage: lowbit <command> [options]\n\n"
                   "lowbit compiles and runs mixed-precision (1-4 bit weight) "
                   "matrix multiplication.\n\ncommands:\n");
  for (const Command *c : commands())
    std::printf("  %-10s %s\n", c->spec.name, c->spec.summary);
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
  for (const Command *c : commands()) {
    if (name != c->spec.name)
      continue;
    ParsedOptions options(c->spec, {args.begin() + 1, args.end()});
    if (options.helpRequested()) {
      std::fputs(renderHelp(c->spec).c_str(), stdout);
      return 0;
    }
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
