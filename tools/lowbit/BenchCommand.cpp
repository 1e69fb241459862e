//===- BenchCommand.cpp - `lowbit bench` ----------------------------------===//
//
// Roofline benchmark of generated kernels, per DESIGN.md "Measuring
// performance": the read bandwidth (and, for N > 1, the int8 peak) is
// measured on the same thread pool in the same run, right before every timed
// rep (this VM's limit moves while a run goes on), and each case reports the
// median of its per-rep ratios. N = 1 is timed cold, cycling through
// distinct packed copies totalling >= 256 MiB; N > 1 is compute bound and
// timed warm.
//
//===----------------------------------------------------------------------===//

#include "Bench.h"
#include "Commands.h"
#include "Inputs.h"
#include "Kernels.h"
#include "Models.h"
#include "Plot.h"

#include "lowbit/error.h"
#include "lowbit/upconvert.h"

#include <cstdio>
#include <memory>

namespace lowbit::cli {

namespace {
struct Case {
  LinearShape shape;
  int64_t N;
  Format format;
  KernelChoice choice;
};
} // namespace

static int runBench(const ParsedOptions &options) {
  if (options.has("model") == options.has("shapes"))
    throw Error("lowbit bench needs exactly one of --model and --shapes");
  std::vector<LinearShape> shapes =
      options.has("model") ? modelShapes(*options.get("model"))
                           : parseShapeList(*options.get("shapes"));
  std::vector<int64_t> ns = options.getPositiveList("n", "1");
  int reps = static_cast<int>(options.getPositive("reps", kMinReps));
  if (reps < kMinReps)
    throw Error("--reps: at least " + std::to_string(kMinReps) +
                " (medians need them)");
  int64_t threads = options.getPositive("threads", 2);
  if (threads > 256)
    throw Error("--threads: at most 256, got " + std::to_string(threads));
  Strategy strategy = parse_strategy(options.getOr("strategy", "auto"));

  // Every case, resolved and validated before anything is measured.
  std::vector<Case> cases;
  for (const std::string &formatName : splitList(*options.get("format"))) {
    Format format = Format::parse(formatName);
    for (const std::string &targetName :
         splitList(options.getOr("target", "native"))) {
      KernelChoice choice =
          resolveChoice(format, strategy, parse_target(targetName));
      if (choice.strategy == Strategy::Reference)
        throw Error("lowbit bench measures generated kernels; " +
                    format.name() + " has none for " +
                    target_name(choice.target) + " yet");
      for (const LinearShape &shape : shapes) {
        format.check_shape(shape.M, shape.K);
        for (int64_t N : ns)
          cases.push_back({shape, N, format, choice});
      }
    }
  }

  KernelOptions kernelOptions;
  kernelOptions.threads = static_cast<int>(threads);
  kernelOptions.schedulePath = options.getOr("schedule", "");
  kernelOptions.config = options.getOr("config", "");
  std::fprintf(stderr, "compiling %zu kernels...\n", cases.size());
  std::vector<CompiledKernel> kernels(cases.size());
  for (size_t i = 0; i < cases.size();) { // one batch per (format, target)
    size_t j = i;
    std::vector<KernelShape> batch;
    while (j < cases.size() && cases[j].format.name() == cases[i].format.name() &&
           cases[j].choice.target == cases[i].choice.target) {
      batch.push_back({cases[j].shape.M, cases[j].shape.K, cases[j].N});
      ++j;
    }
    std::vector<CompiledKernel> compiled =
        compileKernels(cases[i].format, cases[i].choice, batch, kernelOptions);
    std::move(compiled.begin(), compiled.end(), kernels.begin() + i);
    i = j;
  }

  ThreadPool pool(static_cast<int>(threads));
  std::fprintf(stderr, "measuring the read bandwidth (1 GiB, %lld threads)...\n",
               (long long)threads);
  ReadProbe probe(pool);
  BandwidthResult bandwidth = probe.measure(reps);
  std::printf("read bandwidth: %.1f GB/s (%s loads, %lld threads, median of "
              "%d)\n",
              bandwidth.gbps, bandwidth.loads.c_str(), (long long)threads,
              reps);
  std::unique_ptr<Int8Peak> peak;
  std::unique_ptr<PeakResult> peakResult;
  bool anyGemm = false;
  for (int64_t N : ns)
    anyGemm |= N > 1;
  std::string peakIsa = peak_isa_for(cases.front().choice.target);
  if (anyGemm && !peakIsa.empty()) {
    peak = std::make_unique<Int8Peak>(pool, peakIsa);
    peakResult = std::make_unique<PeakResult>(peak->measure(reps));
    std::printf("int8 peak: %.0f GOPS (%s, %lld threads)\n", peakResult->gops,
                peakIsa.c_str(), (long long)threads);
  }
  std::printf("\n%-7s %-15s %-12s %5s %10s %8s %8s %6s %9s %6s\n", "format",
              "target", "shape", "N", "us", "GB/s", "limit", "ratio", "GOPS",
              "ratio");

  std::vector<BenchRecord> records;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case &c = cases[i];
    std::fprintf(stderr, "[%zu/%zu] %s %s %lldx%lld N=%lld\r", i + 1,
                 cases.size(), c.format.name().c_str(),
                 target_name(c.choice.target).c_str(), (long long)c.shape.M,
                 (long long)c.shape.K, (long long)c.N);
    Matrix Wf = syntheticMatrix(c.shape.M, c.shape.K, 11 + i);
    UpconvertWeights W = pack_upconvert(
        quantize(c.format, Wf.data.data(), c.shape.M, c.shape.K));
    Matrix X = syntheticMatrix(c.N, c.shape.K, 7 + i);
    PreparedActivations A =
        prepare_activations(c.format, X.data.data(), c.N, c.shape.K);
    bool cold = c.N == 1 && !options.has("warm");
    Pairing pairing{&probe, c.N > 1 ? peak.get() : nullptr};
    KernelTiming timing =
        time_kernel(kernels[i].loaded.fn, W, A, pool, cold, reps, pairing);
    BenchRecord r = make_record(
        c.shape.M, c.shape.K, c.N, c.format.name(),
        strategy_name(c.choice.strategy), target_name(c.choice.target),
        static_cast<int>(threads), timing, bandwidth, peakResult.get());
    records.push_back(r);
    std::string shape = std::to_string(r.M) + "x" + std::to_string(r.K);
    std::printf("%-7s %-15s %-12s %5lld %10.1f %8.1f %8.1f %6.2f", r.format.c_str(),
                r.target.c_str(), shape.c_str(), (long long)r.N, r.us, r.gbps,
                r.roofline_gbps, r.ratio);
    if (r.N > 1)
      std::printf(" %9.0f %6.2f", r.gops, r.gops_ratio);
    std::printf("%s\n", cold ? "" : (r.N == 1 ? "  (warm)" : ""));
    std::fflush(stdout);
  }
  std::fprintf(stderr, "\n");
  if (auto path = options.get("json"))
    write_bench_json(*path, records, bandwidth, peakResult.get());
  if (auto path = options.get("plot"))
    write_svg(*path, roofline_chart(records, bandwidth));
  return 0;
}

const Command &benchCommand() {
  static const Command command{
      {"bench",
       "Benchmark generated kernels against the measured memory-bandwidth "
       "and int8 rooflines.",
       "N = 1 (decode) is timed cold: each rep cycles through distinct packed "
       "copies of the matrix\ntotalling >= 256 MiB, as a model does layer "
       "after layer. Right before every rep the\nbenchmark reads a 1 GiB "
       "buffer (every page written first) on the same threads; 'limit'\nis "
       "the median of those probes and 'ratio' the median of the per-rep "
       "ratios of effective\nweight bandwidth (packed bytes incl. scales / "
       "time) to it. N > 1 (prefill) is timed warm\nand reports GOPS and the "
       "ratio to an int8 peak microbenchmark (vpdpbusd chains) run the\nsame "
       "way. Medians of --reps runs (>= 5).\n",
       {{"model", "NAME", "every linear shape of schedules/models/NAME.json"},
        {"shapes", "MxK[,MxK...]", "explicit shapes instead of --model"},
        {"format", "F[,F...]", "weight formats", true},
        {"strategy", "S", "auto (default) or upconvert"},
        {"target", "T[,T...]", "targets to compare (default native)"},
        {"n", "LIST", "activation rows, e.g. 1,128 (default 1)"},
        {"threads", "N", "threads (default 2)"},
        {"reps", "R", "timed reps per case (default 5)"},
        {"schedule", "FILE", "tuned schedule to take kernel configs from"},
        {"config", "ATTR", "kernel config to use instead, e.g. "
                           "'#lowbit.upconvert<tile_m = 32, tile_k = 64, "
                           "tile_n = 1>'"},
        {"warm", nullptr, "time N = 1 on one matrix (L3-resident, labelled)"},
        {"json", "OUT", "write one JSON record per case"},
        {"plot", "OUT.svg", "draw the roofline chart (N = 1 cases)"}}},
      runBench};
  return command;
}

} // namespace lowbit::cli
