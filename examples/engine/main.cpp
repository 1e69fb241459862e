//===- main.cpp - greedy generation with the engine on a bundle -----------===//
//
// The example engine (engine/engine.h) on the kernels of a bundle from
// `lowbit compile --gguf`: registers the bundle's kernels, loads the GGUF
// model (every linear weight packed through the C API for the registered
// kernel of its (format, M, K)) and decodes greedily. Prints the generated
// ids on one line, space-separated, exactly as
//
//   lowbit generate --model M.gguf --tokens 1,2,3 --n 8
//
// does; which kernels run goes to stderr.
//
//   lowbit_engine_generate --model M.gguf --tokens IDS [--n N] [--format F]
//                          [--threads T]
//
//===----------------------------------------------------------------------===//

#include LOWBIT_BUNDLE_HEADER

#include "engine.h"

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

const char *kUsage =
    "usage: lowbit_engine_generate --model M.gguf --tokens IDS [--n N]\n"
    "                              [--format F] [--threads T]\n"
    "  --model M.gguf  the model file (the bundle's --gguf model)\n"
    "  --tokens IDS    prompt token ids, comma-separated\n"
    "  --n N           tokens to generate (default 8)\n"
    "  --format F      lowbit format of the ternary/float linear weights\n"
    "                  (default: the file's; must be the bundle's)\n"
    "  --threads T     threads (default: the host's CPUs)\n";

[[noreturn]] void fail(const std::string &message) {
  std::fprintf(stderr, "lowbit_engine_generate: error: %s\n", message.c_str());
  std::exit(1);
}

long long parseInteger(const std::string &text, const std::string &what,
                       long long min) {
  char *end = nullptr;
  errno = 0;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0 || value < min ||
      value > INT32_MAX)
    fail(what + ": '" + text + "' is not an integer >= " +
         std::to_string(min));
  return value;
}

std::vector<int32_t> parseTokens(const std::string &text) {
  std::vector<int32_t> tokens;
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find(',', begin);
    if (end == std::string::npos)
      end = text.size();
    tokens.push_back(
        int32_t(parseInteger(text.substr(begin, end - begin), "--tokens", 0)));
    begin = end + 1;
  }
  return tokens;
}

} // namespace

int main(int argc, char **argv) {
  std::string model, tokens, format;
  long long n = 8;
  int threads = int(std::thread::hardware_concurrency());
  if (threads < 1)
    threads = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (i + 1 >= argc)
      fail(arg == "--model" || arg == "--tokens" || arg == "--n" ||
                   arg == "--format" || arg == "--threads"
               ? arg + " needs a value"
               : "unknown argument '" + arg + "' (see --help)");
    const std::string value = argv[++i];
    if (arg == "--model")
      model = value;
    else if (arg == "--tokens")
      tokens = value;
    else if (arg == "--n")
      n = parseInteger(value, "--n", 1);
    else if (arg == "--format")
      format = value;
    else if (arg == "--threads")
      threads = int(parseInteger(value, "--threads", 1));
    else
      fail("unknown argument '" + arg + "' (see --help)");
  }
  if (model.empty() || tokens.empty())
    fail("--model and --tokens are required (see --help)");
  const std::vector<int32_t> prompt = parseTokens(tokens);

  if (LOWBIT_BUNDLE_REGISTER() != LOWBIT_OK)
    fail(lowbit_last_error());
  std::fprintf(stderr, "bundle: running %s kernels, %d threads\n",
               LOWBIT_BUNDLE_ACTIVE_TARGET(), threads);
  try {
    lowbit::engine::Options options;
    options.format = format;
    options.threads = threads;
    options.n_ctx = int64_t(prompt.size()) + n;
    std::unique_ptr<lowbit::engine::Model> m =
        lowbit::engine::Model::load(model, options);
    for (const std::string &line : m->kernel_report(1))
      std::fprintf(stderr, "kernel: %s\n", line.c_str());
    const std::vector<int32_t> ids = m->generate(prompt, n, nullptr);
    for (size_t i = 0; i < ids.size(); ++i)
      std::printf("%s%d", i ? " " : "", ids[i]);
    std::printf("\n");
  } catch (const std::exception &e) {
    fail(e.what());
  }
  return 0;
}
