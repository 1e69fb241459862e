//===- Commands.h - the subcommands of the lowbit CLI -----------*- C++ -*-===//
#ifndef LOWBIT_TOOLS_LOWBIT_COMMANDS_H
#define LOWBIT_TOOLS_LOWBIT_COMMANDS_H

#include "Options.h"

#include <string>
#include <vector>

namespace lowbit::cli {

struct Command {
  CommandSpec spec;
  int (*run)(const ParsedOptions &options);
};

const Command &targetsCommand();
const Command &runCommand();
const Command &packCommand();
const Command &verifyCommand();
const Command &benchCommand();
const Command &compileCommand();
const Command &tuneCommand();
const Command &scheduleCommand();
const Command &ggufCommand();
const Command &generateCommand();
const Command &benchModelCommand();

/// The ISA features of the host that lowbit detects (as `lowbit targets`
/// prints them).
std::vector<std::string> hostFeatureNames();

} // namespace lowbit::cli

#endif // LOWBIT_TOOLS_LOWBIT_COMMANDS_H
