//===- lowbit.cpp - the lowbit command-line tool --------------------------===//
//
// `lowbit <command> [options]`. Every error is reported as one line,
// "lowbit: error: <what>", with exit status 1; `--help` works everywhere.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "lowbit/error.h"

#include <cstdio>
#include <exception>
#include <new>
#include <string>
#include <vector>

using namespace lowbit::cli;

static const std::vector<const Command *> &commands() {
  static const std::vector<const Command *> all = {
      &targetsCommand(), &runCommand(), &packCommand(), &verifyCommand(),
      &benchCommand(), &compileCommand(), &tuneCommand(), &ggufCommand(),
      &generateCommand(), &benchModelCommand()};
  return all;
}

static void printUsage(std::FILE *to) {
  std::fprintf(to, "usage: lowbit <command> [options]\n\n"
                   "lowbit compiles and runs mixed-precision (1-4 bit weight) "
                   "matrix multiplication.\n\ncommands:\n");
  for (const Command *c : commands())
    std::fprintf(to, "  %-10s %s\n", c->spec.name, c->spec.summary);
  std::fprintf(to, "\n'lowbit <command> --help' describes a command.\n");
}

static int dispatch(const std::vector<std::string> &args) {
  if (args.empty()) {
    printUsage(stderr);
    return 1;
  }
  const std::string &name = args[0];
  if (name == "-h" || name == "--help" || name == "help") {
    printUsage(stdout);
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
