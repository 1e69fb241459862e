//===- ModelCommands.cpp - `lowbit generate` and `lowbit bench-model` -----===//

#include "Commands.h"

#include "lowbit/error.h"

namespace lowbit::cli {

static int runGenerate(const ParsedOptions &) {
  throw Error("lowbit generate: not built yet");
}
static int runBenchModel(const ParsedOptions &) {
  throw Error("lowbit bench-model: not built yet");
}

const Command &generateCommand() {
  static const Command command{
      {"generate", "Greedy decoding of a GGUF model on lowbit kernels.",
       nullptr, {}},
      runGenerate};
  return command;
}

const Command &benchModelCommand() {
  static const Command command{
      {"bench-model", "Prompt and decode tokens per second of a GGUF model.",
       nullptr, {}},
      runBenchModel};
  return command;
}

} // namespace lowbit::cli
