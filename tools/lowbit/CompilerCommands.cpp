//===- CompilerCommands.cpp - the commands liblowbit-codegen.so holds -----===//
//
// `lowbit tune` and `lowbit schedule` link lib/Tuning's tuner, search and
// schedule files (MLIR), so they live in the compiler's module with
// Codegen.h's implementation; the executable finds them through this one
// symbol once it has loaded the module (lowbit.cpp).
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include <vector>

extern "C" const std::vector<const lowbit::cli::Command *> *
lowbit_compiler_commands() {
  static const std::vector<const lowbit::cli::Command *> commands = {
      &lowbit::cli::tuneCommand(), &lowbit::cli::scheduleCommand()};
  return &commands;
}
