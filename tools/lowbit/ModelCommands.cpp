//===- ModelCommands.cpp - `lowbit generate` and `lowbit bench-model` -----===//
//
// Both run the example engine (engine/engine.h) on a GGUF model with kernels
// JIT-compiled through the kernel cache: every distinct (format, M, K) of the
// model's linear weights gets a GEMV kernel and, where the compiler picks
// another config for N > 1, a GEMM kernel, registered with the C API
// (lowbit_register_kernels) exactly as a bundle registers its table. The
// engine then packs and runs its weights through lowbit.h as any engine
// would.
//
//===----------------------------------------------------------------------===//

#include "Bench.h"
#include "Commands.h"
#include "Progress.h"

#include "engine.h"

#include "lowbit/Jit/Jit.h"

#include "lowbit/error.h"
#include "lowbit/gguf.h"
#include "lowbit/lowbit.h"
#include "lowbit/npy.h"
#include "lowbit/target.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <chrono>
#include <cstdio>
#include <deque>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <set>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace lowbit::cli {

using namespace lowbit::jit;

namespace {

/// The kernels of one model, compiled, loaded and registered; they stay
/// loaded while this object lives.
struct ModelKernels {
  std::vector<CompiledKernel> compiled;
  std::deque<std::string> strings; // the entries' format/target/config text
  std::vector<lowbit_kernel_entry_t> entries;
  std::vector<std::string> report; // one line per kernel
};

/// The choice for one format of the model: `strategy` where the format has
/// it; a format it does not cover (a q4_0 output head under
/// lut-elementwise) takes `auto`, and the report says so.
KernelChoice choiceFor(const Format &format, Strategy strategy,
                       Target target) {
  try {
    return resolveChoice(format, strategy, target);
  } catch (const Error &) {
    if (strategy == Strategy::Auto)
      throw;
    return resolveChoice(format, Strategy::Auto, target);
  }
}

/// The up-convert configs of kernel_abi.h's GGML ROWS LAYOUT (lower-upconvert's
/// row kernel) for the i2s shapes whose weights are TQ2_0 or TQ1_0 rows in
/// the file (TQ1_0's named by kTq1Rows):
/// the kernels read the file's mapping, so those weights are never packed
/// (issue 28 item 7), with --in-place: decode measured 0.76-1.07x and
/// prefill 0.77-0.88x of the packed kernels' for TQ2_0, 0.72-0.77x and
/// 0.63-1.16x for TQ1_0 (whose digits are decoded in registers; loaded
/// host, docs/perf/llama-cpp.md), so not the default. GEMV: one row per
/// group, a sequential stream of the rows, prefetched 4 rows ahead. GEMM:
/// TQ2_0 the packed i2s GEMM's tile (64 rows x 4 activation rows), each
/// group of 64 rows repacked once into vnni4 i2s codes on the stack and
/// read by the vnni4 GEMM loops (lower-upconvert's KernelPlan::ggmlRows);
/// TQ1_0 4 rows x 4 activation rows, each group of 4 rows decoded once into
/// int8 codes (RowPlan::decodeRows). The
/// x86-avx512vnni, x86-avx2, aarch64-neon and -nodot row kernels are
/// checked against the reference (test/e2e/upconvert-ggml-rows.test,
/// upconvert-ggml-rows-aarch64.test), so they take it; the others (generic
/// and its 4-byte registers) keep the packed i2s.
const char *const kGgmlRowsGemv =
    "#lowbit.upconvert<tile_m = 1, tile_k = 256, tile_n = 1, prefetch = 4>";
const char *const kGgmlRowsGemm =
    "#lowbit.upconvert<tile_m = 64, tile_k = 256, tile_n = 4>";
const char *const kTq1RowsGemm =
    "#lowbit.upconvert<tile_m = 4, tile_k = 256, tile_n = 4>";
const char *const kTq2Rows = "#lowbit.layout<gguf, tile_m = 1, tile_k = 256>";
const char *const kTq1Rows =
    "#lowbit.layout<gguf, tile_m = 1, tile_k = 256, block_bytes = 54>";
bool takesGgmlRows(const KernelChoice &choice) {
  return choice.strategy == Strategy::Upconvert &&
         (choice.target == Target::X86Avx512Vnni ||
          choice.target == Target::X86Avx2 ||
          choice.target == Target::Aarch64Neon ||
          choice.target == Target::Aarch64NeonNoDot);
}

/// The (M, K) of the i2s weights of `specs` that are all TQ2_0 or all
/// TQ1_0 in `file`, each with its type's block bytes (kernel_abi.h).
std::map<std::pair<int64_t, int64_t>, int>
ggmlRowsShapes(const GgufFile &file,
               const std::vector<engine::LinearSpec> &specs) {
  std::map<std::pair<int64_t, int64_t>, int> rows;
  std::set<std::pair<int64_t, int64_t>> other;
  for (const engine::LinearSpec &spec : specs) {
    if (spec.format != "i2s")
      continue;
    const GgufType type = file.tensor(spec.tensor).type;
    const int block = type == GgufType::TQ2_0   ? LOWBIT_GGML_ROWS_TQ2_0_BYTES
                      : type == GgufType::TQ1_0 ? LOWBIT_GGML_ROWS_TQ1_0_BYTES
                                                : 0;
    const std::pair<int64_t, int64_t> shape{spec.M, spec.K};
    const auto [it, added] = rows.insert({shape, block});
    if (!block || spec.K % LOWBIT_GGML_ROWS_BLOCK != 0 ||
        (!added && it->second != block))
      other.insert(shape);
  }
  for (const auto &shape : other)
    rows.erase(shape);
  return rows;
}

/// Compiles and registers the kernels of every lowbit linear weight of a
/// model (`specs`: engine::linear_specs of its file and format); the i2s
/// shapes in `ggmlRows` (ggmlRowsShapes) get the ggml rows configs (and
/// TQ1_0's layout) where the choice takes them (takesGgmlRows) and no
/// schedule is given.
ModelKernels
compileModelKernels(const std::vector<engine::LinearSpec> &specs,
                    Strategy strategy, Target target,
                    const KernelOptions &options,
                    const std::map<std::pair<int64_t, int64_t>, int>
                        &ggmlRows = {}) {
  std::map<std::string, std::vector<std::pair<int64_t, int64_t>>> shapes;
  for (const engine::LinearSpec &spec : specs) {
    if (spec.format.empty())
      continue;
    auto &list = shapes[spec.format];
    if (std::find(list.begin(), list.end(),
                  std::make_pair(spec.M, spec.K)) == list.end())
      list.push_back({spec.M, spec.K});
  }
  ModelKernels kernels;
  for (const auto &[name, all] : shapes) {
    const Format f = Format::parse(name);
    // Per shape, a schedule entry (its GEMV's: decode) may name the
    // strategy and, with `native`, the target (resolveChoiceFor); the
    // shape's GEMM kernel takes the same choice, so both read one packing.
    std::vector<
        std::pair<KernelChoice, std::vector<std::pair<int64_t, int64_t>>>>
        groups;
    for (const auto &[M, K] : all) {
      const KernelChoice choice =
          strategy == Strategy::Auto
              ? resolveChoiceFor(f, strategy, target, {M, K, 1}, options)
              : choiceFor(f, strategy, target);
      auto group = std::find_if(groups.begin(), groups.end(), [&](auto &g) {
        return g.first.strategy == choice.strategy &&
               g.first.target == choice.target;
      });
      if (group == groups.end())
        group = groups.insert(groups.end(), {choice, {}});
      group->second.push_back({M, K});
    }
    for (const auto &[choice, list] : groups) {
      if (choice.strategy == Strategy::Reference) {
        // No kernel: the C API runs the scalar reference, and the report says
        // so for every shape (never silently: it is far slower).
        const std::string why = strategy == Strategy::Reference
                                    ? "--strategy reference"
                                    : "no generated kernel for " + f.name() +
                                          " on " + target_name(choice.target);
        for (const auto &[M, K] : list)
          kernels.report.push_back(f.name() + " " + std::to_string(M) + "x" +
                                   std::to_string(K) +
                                   ": reference, the scalar C++ (" + why + ")");
        continue;
      }
      if (isGpuTarget(choice.target) || !host_runs(choice.target))
        throw Error("target '" + target_name(choice.target) +
                    "' does not run in this process; the engine runs on host "
                    "CPU targets (see 'lowbit targets')");
      // A GEMV kernel per shape, and the GEMM config (as `lowbit compile`).
      std::vector<KernelShape> batch;
      for (const auto &[M, K] : list) {
        // A schedule's tuned configs (vnni4) win over the row kernels.
        const bool rows = f.name() == "i2s" && takesGgmlRows(choice) &&
                          !options.schedule && ggmlRows.count({M, K});
        const bool tq1 =
            rows && ggmlRows.at({M, K}) == LOWBIT_GGML_ROWS_TQ1_0_BYTES;
        batch.emplace_back(M, K, 1, rows ? kGgmlRowsGemv : "",
                           tq1 ? kTq1Rows : "");
        batch.emplace_back(M, K, 16,
                           !rows ? ""
                           : tq1 ? kTq1RowsGemm
                                 : kGgmlRowsGemm,
                           !rows ? ""
                           : tq1 ? kTq1Rows
                                 : kTq2Rows);
      }
      std::vector<CompiledKernel> compiled =
          compileKernels(f, choice, batch, options);
      for (size_t i = 0; i < compiled.size(); ++i) {
        const bool gemm = i % 2 == 1;
        if (gemm && compiled[i].config == compiled[i - 1].config)
          continue;
        const std::string &format_ = kernels.strings.emplace_back(f.name());
        const std::string &target_ =
            kernels.strings.emplace_back(target_name(choice.target));
        const std::string &config =
            kernels.strings.emplace_back(compiled[i].config);
        kernels.entries.push_back({format_.c_str(), batch[i].M, batch[i].K,
                                   gemm ? 2 : 1, target_.c_str(),
                                   config.c_str(), compiled[i].layout,
                                   compiled[i].loaded.fn, nullptr});
        kernels.report.push_back(
            f.name() + " " + std::to_string(batch[i].M) + "x" +
            std::to_string(batch[i].K) + (gemm ? " N>=2" : " N=1") + ": " +
            target_ + " " + strategy_name(choice.strategy) + " " + config);
        kernels.compiled.push_back(std::move(compiled[i]));
      }
    }
  }
  if (lowbit_register_kernels(kernels.entries.data(), kernels.entries.size()) !=
      LOWBIT_OK)
    throw Error(lowbit_last_error());
  return kernels;
}

struct Session {
  std::shared_ptr<const GgufFile> file; // shared with the model
  ModelKernels kernels;
  std::unique_ptr<engine::Model> model;
};

/// Opens the model, calls `check` on its hyperparameters (when set: the
/// command's own limits, before any work), compiles its kernels and loads it
/// (progress on stderr).
Session openModel(const ParsedOptions &options, int64_t n_ctx,
                  const std::function<void(const engine::Hparams &)> &check =
                      nullptr) {
  Session s;
  const std::string path = *options.get("model");
  s.file = GgufFile::open(path);
  if (check)
    check(engine::read_hparams(*s.file));
  const std::string format = options.getOr("format", "");
  if (!format.empty())
    Format::parse(format); // the error names the accepted formats
  const Strategy strategy = parse_strategy(options.getOr("strategy", "auto"));
  const Target target = parse_target(options.getOr("target", "native"));
  KernelOptions kernelOptions;
  kernelOptions.schedule = loadSchedule(options.getOr("schedule", ""));
  // The engine's thread count: the schedule's entries are per thread count.
  kernelOptions.threads = options.threads();
  // Once, for the kernels and the load (a float tensor is read to see
  // whether it is ternary); a bad model fails here, before the work.
  const std::vector<engine::LinearSpec> specs =
      engine::linear_specs(*s.file, format);
  std::fprintf(stderr, "lowbit: compiling the kernels of %s...\n",
               path.c_str());
  const auto start = std::chrono::steady_clock::now();
  s.kernels = compileModelKernels(
      specs, strategy, target, kernelOptions,
      options.has("in-place")
          ? ggmlRowsShapes(*s.file, specs)
          : std::map<std::pair<int64_t, int64_t>, int>{});
#if defined(__GLIBC__)
  // The compiler's heap (MLIR contexts, kernel sources) is freed by now:
  // handed back before the weights arrive (a small model's peak RSS, 134
  // -> 100 MiB, is otherwise mostly that heap).
  malloc_trim(0);
#endif
  const double seconds = std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - start)
                             .count();
  std::fprintf(stderr, "lowbit: %zu kernels ready in %.1f s; per weight "
               "shape:\n", s.kernels.entries.size(), seconds);
  for (const std::string &line : s.kernels.report)
    std::fprintf(stderr, "  %s\n", line.c_str());
  engine::Options engineOptions;
  engineOptions.format = format;
  engineOptions.threads = options.threads();
  engineOptions.n_ctx = n_ctx;
  engineOptions.verbose = options.has("verbose");
  std::fprintf(stderr, "lowbit: loading %s...\n", path.c_str());
  const auto loadStart = std::chrono::steady_clock::now();
  // The same mapping and specs: a float file's values are read once.
  s.model = engine::Model::load(s.file, specs, engineOptions);
  const double loadSeconds = std::chrono::duration<double>(
                                 std::chrono::steady_clock::now() - loadStart)
                                 .count();
  // What loading made of the linear weights against what the file holds.
  uint64_t fileBytes = 0;
  for (const engine::LinearSpec &spec : specs)
    fileBytes += s.file->tensor(spec.tensor).bytes;
  const double packed = double(s.model->linear_bytes());
  std::fprintf(stderr,
               "lowbit: loaded in %.2f s; linear weights %.1f MiB as loaded, "
               "%.1f MiB in the file (%.3fx)\n",
               loadSeconds, packed / 1048576.0, fileBytes / 1048576.0,
               packed / double(fileBytes));
  return s;
}

std::vector<int32_t> parseTokens(const std::string &text) {
  std::vector<int32_t> tokens;
  for (const std::string &item : splitList(text)) {
    char *end = nullptr;
    errno = 0;
    const long long value = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || errno != 0 || value < 0 ||
        value > INT32_MAX)
      throw Error("--tokens: '" + item +
                  "' is not a token id (a non-negative integer)");
    tokens.push_back(int32_t(value));
  }
  if (tokens.empty())
    throw Error("--tokens: no token ids");
  return tokens;
}

} // namespace

static int runGenerate(const ParsedOptions &options) {
  const std::vector<int32_t> prompt = parseTokens(*options.get("tokens"));
  const int64_t n = options.getPositive("n", 8);
  const auto logitsPath = options.get("logits");
  if (logitsPath) { // fail before the work, not after it
    std::ofstream probe(*logitsPath, std::ios::binary | std::ios::app);
    if (!probe)
      throw Error("cannot write " + *logitsPath);
  }
  const int64_t positions = int64_t(prompt.size()) + n;
  Session s = openModel(options, positions, [&](const engine::Hparams &hp) {
    // Refused up front: a run past the context would grow its KV cache for
    // minutes before failing (or run past what the model was trained on).
    if (hp.n_ctx_train > 0 && positions > hp.n_ctx_train)
      throw Error("generate: " + std::to_string(prompt.size()) +
                  " prompt tokens plus --n " + std::to_string(n) + " = " +
                  std::to_string(positions) +
                  " tokens exceed the model's context length of " +
                  std::to_string(hp.n_ctx_train) + " (" + hp.arch_name +
                  ".context_length)");
    for (const int32_t id : prompt)
      if (id >= hp.n_vocab)
        throw Error("--tokens: token id " + std::to_string(id) +
                    " is outside the vocabulary [0, " +
                    std::to_string(hp.n_vocab) + ")");
  });
  std::vector<float> logits;
  // Each id as soon as it is decoded: a long run shows its progress.
  bool first = true;
  s.model->generate(prompt, n, logitsPath ? &logits : nullptr,
                    [&](int32_t id) {
                      std::printf("%s%d", first ? "" : " ", id);
                      std::fflush(stdout);
                      first = false;
                    });
  std::printf("\n");
  if (logitsPath) {
    const int64_t vocab = s.model->hparams().n_vocab;
    write_npy(*logitsPath, {int64_t(logits.size()) / vocab, vocab},
              logits.data());
  }
  return 0;
}

namespace {

struct Spread {
  double median = 0, min = 0, max = 0;
};

Spread spread(const std::vector<double> &values) {
  return {median(values), *std::min_element(values.begin(), values.end()),
          *std::max_element(values.begin(), values.end())};
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                       start)
      .count();
}

/// Per forward pass (`what`: "decode" per token, "prefill" per batch):
/// each step's calls, time, share of the pass, and for the products the
/// rate at which they read their weights against the read limit (`gbps`,
/// the probe's median).
void printProfile(const char *what, const engine::DecodeProfile &p,
                  double gbps, int threads) {
  const double tokens = double(std::max<int64_t>(p.tokens, 1));
  std::printf("%s profile: %.1f parallel regions and %.3f ms per pass\n",
              what, double(p.regions) / tokens, 1e3 * p.seconds / tokens);
  std::printf("  %-10s %8s %10s %7s %10s %12s\n", "step", "calls", "ms",
              "share", "GB/s", "/ read limit");
  const std::pair<const char *, const engine::StepProfile *> steps[] = {
      {"qkv", &p.qkv},    {"wo", &p.wo},     {"gate_up", &p.gate_up},
      {"down", &p.down},  {"head", &p.head}, {"attention", &p.attention},
      {"other", &p.other}};
  double productSeconds = 0, productBytes = 0;
  for (const auto &[name, s] : steps) {
    std::printf("  %-10s %8.1f %10.3f %6.1f%%", name, double(s->calls) / tokens,
                1e3 * s->seconds / tokens,
                100.0 * s->seconds / std::max(p.seconds, 1e-12));
    if (s->bytes > 0 && s->seconds > 0) {
      const double rate = double(s->bytes) / s->seconds / 1e9;
      std::printf(" %10.1f %12.2f", rate, rate / gbps);
      productSeconds += s->seconds;
      productBytes += double(s->bytes);
    }
    std::printf("\n");
  }
  if (productSeconds > 0)
    std::printf("  products: %.1f GB/s, %.2f of the read limit; the rest of "
                "the token %.1f%%\n",
                productBytes / productSeconds / 1e9,
                productBytes / productSeconds / 1e9 / gbps,
                100.0 * (1.0 - productSeconds / std::max(p.seconds, 1e-12)));
  // The products' parallel regions: threads x wall time split into kernel
  // calls, idle before a thread's first chunk and after its last, and the
  // rest (between chunks); "kernel / limit" is the weights' rate while the
  // threads are in kernel calls; "outside ms" the step's time outside its
  // regions (the activation quantization, scales and biases).
  std::printf("  %-10s %10s %8s %8s %8s %8s %14s %10s\n", "regions",
              "wall ms", "kernel", "start", "end", "between",
              "kernel / limit", "outside ms");
  for (const auto &[name, s] : steps) {
    if (s->region_seconds <= 0)
      continue;
    const double capacity = double(threads) * s->region_seconds;
    const double between = capacity - s->kernel_seconds -
                           s->start_idle_seconds - s->end_idle_seconds;
    std::printf("  %-10s %10.3f %7.1f%% %7.1f%% %7.1f%% %7.1f%% %14.2f "
                "%10.3f\n",
                name, 1e3 * s->region_seconds / tokens,
                100.0 * s->kernel_seconds / capacity,
                100.0 * s->start_idle_seconds / capacity,
                100.0 * s->end_idle_seconds / capacity,
                100.0 * between / capacity,
                double(s->bytes) * threads / s->kernel_seconds / 1e9 / gbps,
                1e3 * (s->seconds - s->region_seconds) / tokens);
  }
}

} // namespace

static int runBenchModel(const ParsedOptions &options) {
  const int64_t p = options.getPositive("p", 128);
  const int64_t n = options.getPositive("n", 64);
  const int reps = int(options.getPositive("reps", 5));
  const auto jsonPath = options.get("json");
  if (jsonPath) {
    std::ofstream probe(*jsonPath, std::ios::app);
    if (!probe)
      throw Error("cannot write " + *jsonPath);
  }
  Session s = openModel(options, std::max(p, n));
  engine::Model &model = *s.model;
  const engine::Hparams &hp = model.hparams();
  const int threads = options.threads();

  // The read limit, measured on as many threads in the same run: a probe
  // pass right before every timed decode rep.
  ThreadPool::Options poolOptions;
  poolOptions.threads = threads;
  poolOptions.pin = false; // the engine's context is not pinned either
  poolOptions.pin_caller = false;
  ThreadPool probePool(poolOptions);
  std::fprintf(stderr, "lowbit: writing the 1 GiB read probe...\n");
  ReadProbe probe(probePool);

  std::mt19937 rng(1);
  std::uniform_int_distribution<int32_t> token(0, int32_t(hp.n_vocab - 1));
  std::vector<int32_t> prompt(static_cast<size_t>(p));
  for (int32_t &t : prompt)
    t = token(rng);
  std::vector<float> logits(size_t(hp.n_vocab));

  // Bytes one decoded token reads: the weights, the output head, the
  // embedding row and the KV cache of the positions before it (averaged
  // over the n positions of the run).
  double kv = 0;
  for (int64_t pos = 0; pos < n; ++pos)
    kv += double(model.kv_bytes(pos));
  const double tokenBytes = double(model.weight_bytes()) + kv / double(n);

  std::vector<double> pp, tg, probeGbps, ratio;
  engine::DecodeProfile profile, prefillProfile;
  const bool profiling = options.has("profile");
  Progress progress("bench-model");
  for (int rep = -1; rep < reps; ++rep) { // rep -1: warm-up, untimed
    progress.update(size_t(rep + 1), size_t(reps) + 1,
                    rep < 0 ? "warm-up" : "rep " + std::to_string(rep + 1));
    model.reset();
    model.set_profile(profiling && rep >= 0 ? &prefillProfile : nullptr);
    auto start = std::chrono::steady_clock::now();
    model.eval(prompt.data(), p, logits.data(), false);
    const double ppSeconds = secondsSince(start);

    const double gbps = probe.pass();
    model.reset();
    int32_t next = prompt[0];
    model.set_profile(profiling && rep >= 0 ? &profile : nullptr);
    start = std::chrono::steady_clock::now();
    for (int64_t i = 0; i < n; ++i)
      model.eval(&next, 1, logits.data(), false);
    const double tgSeconds = secondsSince(start);
    model.set_profile(nullptr);
    if (rep < 0)
      continue;
    pp.push_back(double(p) / ppSeconds);
    tg.push_back(double(n) / tgSeconds);
    probeGbps.push_back(gbps);
    ratio.push_back(tokenBytes * tg.back() / (gbps * 1e9));
  }
  progress.clear();

  const Spread ppS = spread(pp), tgS = spread(tg), bw = spread(probeGbps),
               r = spread(ratio);
  const double roofline = bw.median * 1e9 / tokenBytes;
  std::printf("model: %s  %s  %lld layers  n_embd %lld  vocab %lld\n",
              s.file->path().c_str(), hp.arch_name.c_str(),
              (long long)hp.n_layer, (long long)hp.n_embd,
              (long long)hp.n_vocab);
  std::printf("threads %d, %d reps (median [min, max])\n", threads, reps);
  std::printf("pp%-4lld %8.1f tok/s  [%.1f, %.1f]\n", (long long)p,
              ppS.median, ppS.min, ppS.max);
  std::printf("tg%-4lld %8.2f tok/s  [%.2f, %.2f]\n", (long long)n,
              tgS.median, tgS.min, tgS.max);
  std::printf("decode roofline: %.1f MB read per token / %.1f GB/s read "
              "limit [%.1f, %.1f] = %.1f tok/s; tg / roofline %.2f "
              "(median of per-rep ratios) [%.2f, %.2f]\n",
              tokenBytes / 1e6, bw.median, bw.min, bw.max, roofline, r.median,
              r.min, r.max);
  if (profiling) {
    printProfile("prefill", prefillProfile, bw.median, threads);
    printProfile("decode", profile, bw.median, threads);
  }
  if (jsonPath) {
    nlohmann::ordered_json j;
    j["model"] = s.file->path();
    j["arch"] = hp.arch_name;
    j["format"] = options.getOr("format", "");
    j["threads"] = threads;
    j["reps"] = reps;
    j["kernels"] = s.kernels.report;
    j["pp"] = {{"tokens", p}, {"tok_s", ppS.median}, {"rep_tok_s", pp}};
    j["tg"] = {{"tokens", n}, {"tok_s", tgS.median}, {"rep_tok_s", tg}};
    j["bytes_per_token"] = tokenBytes;
    j["read_gbps"] = bw.median;
    j["rep_read_gbps"] = probeGbps;
    j["roofline_tok_s"] = roofline;
    j["roofline_ratio"] = r.median;
    j["rep_roofline_ratio"] = ratio;
    std::ofstream out(*jsonPath);
    out << j.dump(2) << "\n";
    if (!out)
      throw Error("cannot write " + *jsonPath);
  }
  return 0;
}

static const char *kModelNotes =
    "The kernels of every distinct (format, M, K) of the model's linear "
    "weights are\ngenerated and compiled through the kernel cache (the first "
    "run of a model\ncompiles, later runs load them). --format imports the "
    "ternary (or float)\nlinear weights into that lowbit format (i2s, tl1, "
    "tl2, w<b>g<G>, q4_0); the\ndefault follows the file's types (tq1_0, "
    "tq2_0, i2_s -> i2s; q4_0 -> q4_0).\n--strategy applies to the formats "
    "that have it; the others take auto.\n";

static const std::string kGenerateNotes =
    std::string(kModelNotes) +
    "The ids go to stdout as they are decoded. A prompt plus --n longer than "
    "the\nmodel's context length (<arch>.context_length) is refused before "
    "any work.\n";

/// --in-place (generate, bench-model): ggmlRowsShapes' kernels.
const char *const kInPlaceHelp =
    "TQ2_0 and TQ1_0 weights: kernels that read the file's rows in place "
    "(no packed copy: a faster load, a slower decode and prefill; "
    "x86-avx512vnni, x86-avx2, aarch64-neon and -nodot; no --schedule)";

const Command &generateCommand() {
  static const Command command{
      {"generate",
       "Greedy decoding of a GGUF model (llama, bitnet) on lowbit kernels.",
       kGenerateNotes.c_str(),
       {{"model", "M.gguf", "the model file", true},
        {"tokens", "IDS", "prompt token ids, comma-separated", true},
        {"n", "N", "tokens to generate (default 8)"},
        {"format", "F", "lowbit format of the ternary/float linear weights"},
        {"strategy", "S", "kernel strategy (default auto)"},
        {"target", "T", "target ISA (default native)"},
        {"schedule", "FILE", "tuned schedule to take kernel configs from"},
        {"threads", "T", kThreadsHelp, false, "t"},
        {"in-place", nullptr, kInPlaceHelp},
        {"verbose", nullptr, "log the load's phases and their times"},
        {"logits", "L.npy",
         "write float32 logits [len(tokens) + n - 1, vocab]"}}},
      runGenerate};
  return command;
}

const Command &benchModelCommand() {
  static const Command command{
      {"bench-model",
       "Prompt and decode tokens per second of a GGUF model, like "
       "llama-bench, with the decode roofline.",
       "pp: one batch of -p random tokens from an empty cache; tg: -n tokens "
       "decoded\none at a time from an empty cache. The roofline is the bytes "
       "one decoded\ntoken reads (packed linear weights, output head, "
       "embedding row, KV cache)\nover the read bandwidth a 1 GiB probe "
       "measures right before every rep.\n",
       {{"model", "M.gguf", "the model file", true},
        {"p", "N", "prompt tokens (default 128)"},
        {"n", "N", "decoded tokens (default 64)"},
        {"reps", "N", "timed repetitions (default 5)", false, "r"},
        {"format", "F", "lowbit format of the ternary/float linear weights"},
        {"strategy", "S", "kernel strategy (default auto)"},
        {"target", "T", "target ISA (default native)"},
        {"schedule", "FILE", "tuned schedule to take kernel configs from"},
        {"threads", "T", kThreadsHelp, false, "t"},
        {"in-place", nullptr, kInPlaceHelp},
        {"json", "FILE", "write the results as JSON"},
        {"profile", nullptr,
         "time each step of the prompt's and the decoded tokens' passes "
         "(products, attention, the rest)"}}},
      runBenchModel};
  return command;
}

} // namespace lowbit::cli
