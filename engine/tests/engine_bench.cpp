//===- engine_bench.cpp - prefill and decode timing of the engine ---------===//
//
//   lowbit_engine_bench MODEL.gguf [-p 128] [-n 32] [--threads T]
//                       [--format F] [--synth PRESET] [--null-kernels]
//
// Times a prefill of -p tokens and -n decode steps. --synth writes the
// synthetic model PRESET (engine/synth.h: tiny, bitnet-2b) to MODEL.gguf
// first when the file does not exist. --null-kernels registers, for every
// (format, M, K) of the model, a kernel that does nothing: what is left is
// the engine's own time per token (activation quantization, attention,
// norms, RoPE, thread hand-offs), the part that must stay small next to the
// weight reads. Without it and without registered kernels every product
// runs the scalar reference (exact, slow).
//
//===----------------------------------------------------------------------===//
#include "engine.h"
#include "synth.h"

#include "lowbit/error.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <sys/stat.h>
#include <tuple>
#include <vector>

using namespace lowbit;
using namespace lowbit::engine;

namespace {

void null_kernel(const uint8_t *, const uint16_t *, const uint16_t *,
                 const int8_t *, const float *, const int32_t *, float *y,
                 int64_t, int64_t, int64_t, float) {
  (void)y;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
      .count();
}

} // namespace

int main(int argc, char **argv) {
  std::string path, synth, format;
  int64_t p = 128, n = 32;
  int threads = 1;
  bool null_kernels = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "-p")
      p = std::atoll(next().c_str());
    else if (a == "-n")
      n = std::atoll(next().c_str());
    else if (a == "--threads")
      threads = std::atoi(next().c_str());
    else if (a == "--format")
      format = next();
    else if (a == "--synth")
      synth = next();
    else if (a == "--null-kernels")
      null_kernels = true;
    else
      path = a;
  }
  if (path.empty()) {
    std::fprintf(stderr, "usage: lowbit_engine_bench MODEL.gguf [-p P] [-n N] "
                         "[--threads T] [--format F] [--synth PRESET] "
                         "[--null-kernels]\n");
    return 2;
  }
  try {
    struct stat st;
    if (!synth.empty() && stat(path.c_str(), &st) != 0) {
      auto t0 = std::chrono::steady_clock::now();
      write_synthetic_model(synth_preset(synth, "bitnet"), path);
      std::printf("wrote %s (%s) in %.1f s\n", path.c_str(), synth.c_str(),
                  seconds_since(t0));
    }
    std::vector<std::string> formats; // kept alive for the kernel table
    std::vector<lowbit_kernel_entry_t> entries;
    if (null_kernels) {
      auto file = GgufFile::open(path);
      std::set<std::tuple<std::string, int64_t, int64_t>> seen;
      std::vector<LinearSpec> specs = linear_specs(*file, format);
      formats.reserve(specs.size());
      for (const LinearSpec &s : specs)
        if (!s.format.empty() && seen.insert({s.format, s.M, s.K}).second) {
          formats.push_back(s.format);
          entries.push_back({formats.back().c_str(), s.M, s.K, 1, "generic",
                             "null", null_kernel});
        }
      if (lowbit_register_kernels(entries.data(), entries.size()) !=
          LOWBIT_OK)
        throw Error(lowbit_last_error());
    }
    Options o;
    o.threads = threads;
    o.format = format;
    o.n_ctx = p + n;
    auto t0 = std::chrono::steady_clock::now();
    auto model = Model::load(path, o);
    std::printf("load %.2f s, %s, %lld threads, weights %.1f MB/token\n",
                seconds_since(t0), model->hparams().arch_name.c_str(),
                (long long)threads, model->weight_bytes() / 1e6);
    for (const std::string &line : model->kernel_report(1))
      std::printf("  N=1 %s\n", line.c_str());
    const int64_t V = model->hparams().n_vocab;
    std::vector<int32_t> prompt(static_cast<size_t>(p));
    for (int64_t i = 0; i < p; ++i)
      prompt[i] = int32_t((i * 7919 + 13) % V);
    std::vector<float> logits(static_cast<size_t>(V));
    t0 = std::chrono::steady_clock::now();
    model->eval(prompt.data(), p, logits.data(), false);
    const double tp = seconds_since(t0);
    std::printf("prefill %lld: %.1f ms (%.1f tok/s)\n", (long long)p,
                tp * 1e3, p / tp);
    int32_t id = 1;
    t0 = std::chrono::steady_clock::now();
    for (int64_t i = 0; i < n; ++i) {
      model->eval(&id, 1, logits.data(), false);
      id = int32_t((id * 31 + 7) % V);
    }
    const double td = seconds_since(t0);
    const double bytes =
        double(model->weight_bytes()) + double(model->kv_bytes(p + n / 2));
    std::printf("decode %lld: %.2f ms/token (%.1f tok/s), %.1f GB/s of "
                "weights + KV\n",
                (long long)n, td * 1e3 / n, n / td, bytes * n / td / 1e9);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
