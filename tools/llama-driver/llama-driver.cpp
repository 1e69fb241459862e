// llama-driver: greedy decoding of a GGUF model through llama.cpp's public
// API (llama.h), the peer that lowbit generate is compared with. Token ids
// in, ids out, optionally the float32 logits of every evaluated position in
// the same layout as `lowbit generate --logits`.
//
//   llama-driver --model M.gguf --tokens 1,2,3 [-n 8] [-t T] [--logits L.npy]
//                [--timings] [--flash-attn]
//
// The context keeps its K/V cache in float32 and runs attention without
// flash attention, as lowbit's engine does, so that what differs between the
// two is the weights' arithmetic, not the cache's precision. --flash-attn
// keeps llama.cpp's defaults instead (an F16 cache, flash attention "auto")
// with batches of at least 32 tokens, so that a backend that runs a
// prompt's flash attention (ggml-lowbit) is asked about one.
#include "npy.h"

#include "ggml-backend.h"
#include "llama.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Args {
  std::string model, logits;
  std::vector<llama_token> tokens;
  int n = 8;
  int threads = int(std::max(1u, std::thread::hardware_concurrency()));
  bool timings = false;
  bool flash_attn = false;
};

const char *usage =
    "usage: llama-driver --model M.gguf --tokens IDS [options]\n"
    "\n"
    "Greedy decoding of a GGUF model with llama.cpp (CPU backend, and any\n"
    "backend GGML_BACKEND_PATH names).\n"
    "\n"
    "options:\n"
    "  --model M.gguf   the model file (required)\n"
    "  --tokens IDS     prompt token ids, comma-separated (required)\n"
    "  -n, --n N        tokens to generate (default 8)\n"
    "  -t, --threads T  threads (default: all CPUs)\n"
    "  --logits L.npy   write float32 logits [len(tokens) + n - 1, vocab]\n"
    "  --timings        print load and first-token times (ms) to stderr\n"
    "  --flash-attn     llama.cpp's F16 K/V cache and flash attention (auto),\n"
    "                   batches of at least 32 tokens\n";

int positive(const std::string &flag, const char *text) {
  char *end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (*text == '\0' || *end != '\0' || v < 1 || v > (1 << 20))
    throw std::runtime_error(flag + ": '" + text +
                             "' is not a positive integer");
  return int(v);
}

std::vector<llama_token> parse_tokens(const std::string &list) {
  std::vector<llama_token> ids;
  size_t at = 0;
  while (at <= list.size()) {
    const size_t comma = std::min(list.find(',', at), list.size());
    const std::string item = list.substr(at, comma - at);
    char *end = nullptr;
    const long v = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < 0 || v > INT32_MAX)
      throw std::runtime_error("--tokens: '" + item +
                               "' is not a token id (a non-negative integer)");
    ids.push_back(llama_token(v));
    at = comma + 1;
  }
  return ids;
}

Args parse(int argc, char **argv) {
  Args a;
  bool have_tokens = false;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "-h" || flag == "--help") {
      std::fputs(usage, stdout);
      std::exit(0);
    }
    if (flag == "--timings") {
      a.timings = true;
      continue;
    }
    if (flag == "--flash-attn") {
      a.flash_attn = true;
      continue;
    }
    if (i + 1 >= argc)
      throw std::runtime_error("unknown option or missing value: " + flag);
    const char *value = argv[++i];
    if (flag == "--model")
      a.model = value;
    else if (flag == "--tokens") {
      a.tokens = parse_tokens(value);
      have_tokens = true;
    } else if (flag == "-n" || flag == "--n")
      a.n = positive(flag, value);
    else if (flag == "-t" || flag == "--threads")
      a.threads = positive(flag, value);
    else if (flag == "--logits")
      a.logits = value;
    else
      throw std::runtime_error("unknown option: " + flag);
  }
  if (a.model.empty() || !have_tokens)
    throw std::runtime_error("--model and --tokens are required (see --help)");
  return a;
}

// llama.cpp logs every step of loading; only its errors reach stderr.
void log_errors(ggml_log_level level, const char *text, void *) {
  if (level == GGML_LOG_LEVEL_ERROR)
    std::fputs(text, stderr);
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - t0)
      .count();
}

int run(const Args &a) {
  const auto t0 = std::chrono::steady_clock::now();
  llama_log_set(log_errors, nullptr);
  llama_backend_init();
  ggml_backend_load_all(); // GGML_BACKEND_PATH's out-of-tree backend

  llama_model_params mp = llama_model_default_params();
  llama_model *model = llama_model_load_from_file(a.model.c_str(), mp);
  if (!model)
    throw std::runtime_error("llama.cpp cannot load " + a.model);
  const int32_t vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
  for (llama_token t : a.tokens)
    if (t >= vocab)
      throw std::runtime_error("--tokens: id " + std::to_string(t) +
                               " is outside the vocabulary of " +
                               std::to_string(vocab));

  const int n_prompt = int(a.tokens.size());
  llama_context_params cp = llama_context_default_params();
  const int ubatch = std::max(n_prompt, a.flash_attn ? 32 : 1);
  cp.n_ctx = uint32_t(std::max(n_prompt + a.n, ubatch));
  cp.n_batch = cp.n_ubatch = uint32_t(ubatch);
  cp.n_threads = cp.n_threads_batch = a.threads;
  if (!a.flash_attn) {
    cp.type_k = cp.type_v = GGML_TYPE_F32;
    cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;
  }
  cp.no_perf = true;
  llama_context *ctx = llama_init_from_model(model, cp);
  if (!ctx)
    throw std::runtime_error("llama.cpp cannot create a context for " +
                             a.model);
  const double load_ms = ms_since(t0);

  std::vector<float> logits; // one row per evaluated position
  std::vector<llama_token> ids;
  // The prompt in one batch with every position's logits, then one token
  // at a time, each the argmax (lowest id on ties) of the last logits.
  llama_batch batch = llama_batch_init(n_prompt, 0, 1);
  for (int i = 0; i < n_prompt; ++i) {
    batch.token[i] = a.tokens[size_t(i)];
    batch.pos[i] = i;
    batch.n_seq_id[i] = 1;
    batch.seq_id[i][0] = 0;
    batch.logits[i] = 1;
  }
  batch.n_tokens = n_prompt;
  int evaluated = n_prompt;
  double first_ms = 0;
  for (int step = 0; step < a.n; ++step) {
    if (llama_decode(ctx, batch) != 0)
      throw std::runtime_error("llama_decode failed");
    const int rows = step == 0 ? evaluated : 1;
    for (int r = 0; r < rows; ++r) {
      const float *row = llama_get_logits_ith(ctx, r);
      if (!a.logits.empty())
        logits.insert(logits.end(), row, row + vocab);
    }
    const float *last = llama_get_logits_ith(ctx, rows - 1);
    const llama_token next =
        llama_token(std::max_element(last, last + vocab) - last);
    ids.push_back(next);
    if (step == 0)
      first_ms = ms_since(t0);
    batch.token[0] = next;
    batch.pos[0] = evaluated++;
    batch.n_tokens = 1;
  }
  llama_batch_free(batch);

  for (size_t i = 0; i < ids.size(); ++i)
    std::printf("%s%d", i ? " " : "", ids[i]);
  std::printf("\n");
  if (!a.logits.empty()) {
    // The last id is not fed back (as in lowbit): prompt + n - 1 rows.
    npy::write(a.logits, int64_t(logits.size()) / vocab, vocab,
               logits.data());
  }
  if (a.timings)
    std::fprintf(stderr, "load_ms %.1f first_token_ms %.1f\n", load_ms,
                 first_ms);
  llama_free(ctx);
  llama_model_free(model);
  llama_backend_free();
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  try {
    return run(parse(argc, argv));
  } catch (const std::exception &e) {
    std::fprintf(stderr, "llama-driver: error: %s\n", e.what());
    return 1;
  }
}
