//===- GgufCommand.cpp - `lowbit gguf` ------------------------------------===//

#include "Commands.h"

#include "lowbit/error.h"

namespace lowbit::cli {

static int runGguf(const ParsedOptions &) {
  throw Error("lowbit gguf: not built yet");
}

const Command &ggufCommand() {
  static const Command command{
      {"gguf", "GGUF model files: inspect, make synthetic ones.", nullptr, {}},
      runGguf};
  return command;
}

} // namespace lowbit::cli
