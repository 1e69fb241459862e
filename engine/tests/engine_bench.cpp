//===- engine_bench.cpp - prefill and decode timing of the engine ---------===//
//
//   lowbit_engine_bench MODEL.gguf [-p 128] [-n 32] [--threads T]
//                       [--format F] [--synth PRESET] [--null-kernels]
//                       [--floor R] [--check]
//
// Times a prefill of -p tokens and -n decode steps. --floor R then
// alternates R rounds of -n decode steps with -n passes of the products
// alone (every linear weight packed once more and multiplied with one row
// through lowbit_mpgemm_quantized on a context of the same threads): the
// ratio is how close decoding comes to its GEMVs, measured under the same
// conditions. --check compares the logits of the prompt evaluated as one
// batch (the kernels' GEMM configs) with token-by-token decoding (GEMV).
// --synth writes the synthetic model PRESET (engine/synth.h: tiny, bitnet-2b)
// to MODEL.gguf first when the file does not exist. --null-kernels registers,
// for every (format, M, K) of the model, a kernel that does nothing: what is
// left is the engine's own time per token (activation quantization, attention,
// norms, RoPE, thread hand-offs), the part that must stay small next to the
// weight reads. Without it and without registered kernels every product
// runs the scalar reference (exact, slow). Built with
// -DLOWBIT_BUNDLE_HEADER='"NAME_kernels.h"' -DLOWBIT_BUNDLE_REGISTER=
// NAME_bundle_register against a bundle of `lowbit compile --gguf`, it
// registers that bundle's kernels first.
//
//===----------------------------------------------------------------------===//
#include "engine.h"
#include "synth.h"
#ifdef LOWBIT_BUNDLE_HEADER
#include LOWBIT_BUNDLE_HEADER
#endif

#include "lowbit/error.h"
#include "lowbit/lut.h"
#include "lowbit/run_kernel.h"

#include <algorithm>
#include <chrono>
#include <cmath>
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

void check(lowbit_status_t status) {
  if (status != LOWBIT_OK)
    throw Error(lowbit_last_error());
}

/// Alternates rounds of n decode steps with n passes over every product.
void gemv_floor(const std::string &path, const std::string &format, int threads,
                Model &model, int64_t p, int64_t n, int rounds) {
  auto file = GgufFile::open(path);
  struct Packed {
    lowbit_weights_t *w;
    std::vector<float> y;
  };
  std::vector<Packed> packed;
  for (const LinearSpec &s : linear_specs(*file, format)) {
    if (s.format.empty())
      continue;
    const GgufTensor &t = file->tensor(s.tensor);
    lowbit_weights_t *w = nullptr;
    check(lowbit_pack_gguf(s.format.c_str(), gguf_type_name(t.type), t.data,
                           t.bytes, s.M, s.K, &w));
    packed.push_back({w, std::vector<float>(static_cast<size_t>(s.M))});
  }
  lowbit_context_t *ctx = nullptr;
  check(lowbit_context_create(threads, &ctx));
  lowbit_activations_t *acts = nullptr;
  check(lowbit_activations_create(&acts));
  std::vector<float> x(static_cast<size_t>(model.hparams().n_ff), 0.5f);
  const int64_t V = model.hparams().n_vocab;
  std::vector<float> logits(static_cast<size_t>(V));
  double decode_s = 0.0, gemv_s = 0.0;
  for (int r = 0; r < rounds; ++r) {
    model.reset();
    model.eval(std::vector<int32_t>(static_cast<size_t>(p), 1).data(), p,
               nullptr, false);
    auto t0 = std::chrono::steady_clock::now();
    int32_t id = 1;
    for (int64_t i = 0; i < n; ++i) {
      model.eval(&id, 1, logits.data(), false);
      id = int32_t((id * 31 + 7) % V);
    }
    decode_s += seconds_since(t0);
    t0 = std::chrono::steady_clock::now();
    for (int64_t i = 0; i < n; ++i)
      for (Packed &q : packed) {
        check(lowbit_quantize_activations(q.w, x.data(), 1, acts, nullptr));
        check(lowbit_mpgemm_quantized(q.w, acts, q.y.data(), ctx));
      }
    gemv_s += seconds_since(t0);
  }
  const double tokens = double(rounds) * double(n);
  std::printf("floor: decode %.2f ms/token, its products alone %.2f "
              "ms/token: products / decode = %.2f\n",
              decode_s * 1e3 / tokens, gemv_s * 1e3 / tokens,
              gemv_s / decode_s);
  for (Packed &q : packed)
    lowbit_free_weights(q.w);
  lowbit_activations_free(acts);
  lowbit_context_free(ctx);
}

} // namespace

int main(int argc, char **argv) {
  std::string path, synth, format;
  int64_t p = 128, n = 32;
  int threads = 1;
  bool null_kernels = false;
  int floor_rounds = 0;
  bool check_batch = false;
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
    else if (a == "--check")
      check_batch = true;
    else if (a == "--floor")
      floor_rounds = std::atoi(next().c_str());
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
#ifdef LOWBIT_BUNDLE_REGISTER
    if (LOWBIT_BUNDLE_REGISTER() != LOWBIT_OK)
      throw Error(lowbit_last_error());
#endif
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
          const Format f = Format::parse(s.format);
          entries.push_back({formats.back().c_str(), s.M, s.K, 1, "generic",
                             "null",
                             has_lut_layout(f) ? lut_layout(f)
                                               : vnni4_layout(f),
                             null_kernel});
        }
      if (lowbit_register_kernels(entries.data(), entries.size()) != LOWBIT_OK)
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
    std::printf("prefill %lld: %.1f ms (%.1f tok/s)\n", (long long)p, tp * 1e3,
                p / tp);
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
    if (check_batch) {
      const int64_t P = std::min<int64_t>(p, 32);
      std::vector<float> batch(static_cast<size_t>(P * V)),
          step(static_cast<size_t>(P * V));
      model->reset();
      model->eval(prompt.data(), P, batch.data(), true);
      model->reset();
      for (int64_t i = 0; i < P; ++i)
        model->eval(&prompt[i], 1, step.data() + i * V, false);
      double diff = 0.0, scale = 0.0;
      int64_t argmax_differ = 0;
      for (int64_t i = 0; i < P; ++i) {
        const float *b = batch.data() + i * V, *t = step.data() + i * V;
        for (int64_t j = 0; j < V; ++j) {
          diff = std::max(diff, double(std::fabs(b[j] - t[j])));
          scale = std::max(scale, double(std::fabs(t[j])));
        }
        argmax_differ +=
            std::max_element(b, b + V) - b != std::max_element(t, t + V) - t;
      }
      std::printf("check: %lld tokens, batch vs token by token: max |diff| "
                  "%.3g (max |logit| %.3g), argmax differs in %lld rows\n",
                  (long long)P, diff, scale, (long long)argmax_differ);
    }
    if (floor_rounds > 0)
      gemv_floor(path, format, threads, *model, p, n, floor_rounds);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
