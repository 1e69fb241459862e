//===- BenchCommand.cpp - `lowbit bench` ----------------------------------===//
//
// Roofline benchmark of generated kernels, per docs/design.md "Measuring
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
#include "CrossRunner.h"
#include "Inputs.h"
#include "Models.h"
#include "Plot.h"
#include "Progress.h"

#include "lowbit/Jit/Jit.h"

#include "lowbit/error.h"
#include "lowbit/run_kernel.h"
#include "lowbit/scheduler.h"
#include "lowbit/lut.h"
#include "lowbit/upconvert.h"

#include <algorithm>
#include <cstdio>
#include <unistd.h>
#include <cstdlib>
#include <memory>

namespace lowbit::cli {

using namespace lowbit::jit;

namespace {
struct Case {
  LinearShape shape;
  int64_t N;
  Format format;
  KernelChoice choice;
  bool anyShape = false; // the format's any-shape kernel (--any-shape)
  std::string config;    // one of --config's attributes, "" for the default
  std::string configTag; // "#k" for the k-th of several --config attributes
  std::string layout;    // --layout's attribute for this config, "" for
                         // the format's own
};

/// The strategy column of a case: `+any` for an any-shape kernel, `#k` for
/// the k-th of several --config attributes.
std::string strategyLabel(const Case &c) {
  return strategy_name(c.choice.strategy) + (c.anyShape ? "+any" : "") +
         c.configTag;
}

/// A case as the interleaved ratios name it: format, strategy, target, shape
/// and N.
std::string caseLabel(const Case &c) {
  return c.format.name() + " " + strategyLabel(c) + " " +
         target_name(c.choice.target) + " " + std::to_string(c.shape.M) + "x" +
         std::to_string(c.shape.K) + " N=" + std::to_string(c.N);
}

/// A record's columns up to the bandwidth ratio (no newline).
void printTimingColumns(const BenchRecord &r) {
  std::printf("%-7s %-15s %-15s %-12s %5lld %-7s %10.1f %8.1f %8.1f %6.2f",
              r.format.c_str(), r.strategy.c_str(), r.target.c_str(),
              (std::to_string(r.M) + "x" + std::to_string(r.K)).c_str(),
              (long long)r.N, r.schedule_policy.c_str(), r.us, r.gbps,
              r.roofline_gbps, r.ratio);
}

/// The median over rounds of a's rep time / b's (timed in the same rounds).
double paired_time_ratio(const KernelTiming &a, const KernelTiming &b) {
  std::vector<double> ratios;
  for (size_t k = 0;
       k < std::min(a.timing.rep_us.size(), b.timing.rep_us.size()); ++k)
    ratios.push_back(a.timing.rep_us[k] / b.timing.rep_us[k]);
  return median(ratios);
}
} // namespace

/// GPU targets: the median of `reps` dispatches (submit to fence, after
/// one warm-up) per case, weights resident in the kernel's buffer (warm:
/// one copy, no cycling through 256 MiB), GB/s of codes, scales and zero
/// points. No
/// roofline: bench has no GPU bandwidth probe, and on lavapipe the "GPU" is
/// this CPU running the shader through llvmpipe.
static int benchGpu(const std::vector<Case> &cases,
                    const std::vector<CompiledKernel> &kernels, int reps,
                    GpuDType dtype) {
  std::printf("vulkan device: %s; dispatch time only (no upload or read "
              "back), warm weights, median of %d, %s X and Y\n",
              vulkan_device_name().c_str(), reps,
              gpu_dtype_name(dtype).c_str());
  std::printf("\n%-7s %-15s %-12s %5s %10s %8s %9s\n", "format", "target",
              "shape", "N", "us", "GB/s", "GOPS");
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case &c = cases[i];
    Matrix Wf = syntheticMatrix(c.shape.M, c.shape.K, 11 + i);
    PackedWeights W = quantize(c.format, Wf.data.data(), c.shape.M, c.shape.K);
    Matrix X = syntheticMatrix(c.N, c.shape.K, 7 + i);
    std::vector<float> Y(size_t(c.N * c.shape.M));
    VulkanKernel kernel(kernels[i].spirv, W);
    kernel.run(X.data.data(), c.N, Y.data());
    std::vector<double> us;
    for (int r = 0; r < reps; ++r) {
      kernel.run(X.data.data(), c.N, Y.data());
      us.push_back(kernel.last_dispatch_seconds() * 1e6);
    }
    double t = median(us);
    const double bytes = double(kernel.weight_bytes());
    std::string shape =
        std::to_string(c.shape.M) + "x" + std::to_string(c.shape.K);
    std::printf("%-7s %-15s %-12s %5lld %10.1f %8.2f %9.1f  (warm)\n",
                c.format.name().c_str(), target_name(c.choice.target).c_str(),
                shape.c_str(), (long long)c.N, t, bytes / t * 1e-3,
                2.0 * double(c.N) * double(c.shape.M) * double(c.shape.K) /
                    t * 1e-3);
  }
  return 0;
}

static int runBench(const ParsedOptions &options) {
  if (options.has("model") == options.has("shapes"))
    throw Error("lowbit bench needs exactly one of --model and --shapes");
  std::vector<LinearShape> shapes =
      optionShapes(options);
  std::vector<int64_t> ns = options.getPositiveList("n", "1");
  int reps = static_cast<int>(options.getPositive("reps", kMinReps));
  if (reps < kMinReps)
    throw Error("--reps: at least " + std::to_string(kMinReps) +
                " (medians need them)");
  const int threads = options.threads();
  for (const char *output : {"json", "plot"})
    if (auto path = options.get(output))
      requireWritable(*path);
  std::vector<Strategy> strategies;
  for (const std::string &name : splitList(options.getOr("strategy", "auto")))
    strategies.push_back(parse_strategy(name));
  std::vector<SchedulePolicy> policies;
  for (const std::string &name :
       splitList(options.getOr("schedule-policy", "dynamic"))) {
    SchedulePolicy policy = parse_schedule_policy(name);
    for (SchedulePolicy seen : policies)
      if (seen == policy)
        throw Error("--schedule-policy: " + name + " is listed twice");
    policies.push_back(policy);
  }
  double alpha = 0.3;
  if (auto text = options.get("schedule-alpha")) {
    char *end = nullptr;
    alpha = std::strtod(text->c_str(), &end);
    if (text->empty() || *end != '\0' || !(alpha >= 0.0 && alpha <= 1.0))
      throw Error("--schedule-alpha: expected a number in [0, 1], got '" +
                  *text + "'");
  }
  int loadCore = -1;
  if (auto text = options.get("load-core")) {
    if (text->empty() ||
        text->find_first_not_of("0123456789") != std::string::npos ||
        text->size() > 4)
      throw Error("--load-core: expected a CPU number, got '" + *text + "'");
    loadCore = std::stoi(*text);
  }
  int slowCore = -1;
  double slowFactor = 1.0;
  if (auto text = options.get("slow-core")) {
    const size_t colon = text->find(':');
    const std::string cpu = text->substr(0, colon);
    char *end = nullptr;
    if (colon != std::string::npos)
      slowFactor = std::strtod(text->c_str() + colon + 1, &end);
    if (colon == std::string::npos || cpu.empty() || cpu.size() > 4 ||
        cpu.find_first_not_of("0123456789") != std::string::npos ||
        *end != '\0' || !(slowFactor >= 1.0 && slowFactor <= 100.0))
      throw Error("--slow-core: expected CPU:FACTOR with a factor in "
                  "[1, 100], e.g. 1:3, got '" +
                  *text + "'");
    slowCore = std::stoi(cpu);
  }
  for (int cpu : {loadCore, slowCore})
    if (cpu >= 0 && !cpu_allowed(cpu))
      throw Error("--" + std::string(cpu == loadCore ? "load" : "slow") +
                  "-core: CPU " + std::to_string(cpu) +
                  " is not one this process may use");
  const bool showRatios = options.has("show-ratios");
  const bool anyShape = options.has("any-shape");

  KernelOptions kernelOptions;
  kernelOptions.threads = threads;
  kernelOptions.schedule = loadSchedule(options.getOr("schedule", ""));
  // --config: one case per attribute (';'-separated: attributes hold
  // commas), compiled per kernel (KernelShape::config).
  std::vector<std::string> configs = {""};
  if (auto text = options.get("config")) {
    configs.clear();
    for (size_t begin = 0; begin <= text->size();) {
      const size_t end = std::min(text->find(';', begin), text->size());
      std::string config = text->substr(begin, end - begin);
      config.erase(0, config.find_first_not_of(' '));
      config.erase(config.find_last_not_of(' ') + 1);
      if (config.empty())
        throw Error("--config: empty attribute in '" + *text + "'");
      configs.push_back(config);
      begin = end + 1;
    }
  }
  // --layout: the weights' layout of each --config attribute, in order
  // ('-' for the format's own).
  std::vector<std::string> layouts(configs.size());
  if (auto text = options.get("layout")) {
    std::vector<std::string> given;
    for (size_t begin = 0; begin <= text->size();) {
      const size_t end = std::min(text->find(';', begin), text->size());
      std::string layout = text->substr(begin, end - begin);
      layout.erase(0, layout.find_first_not_of(' '));
      layout.erase(layout.find_last_not_of(' ') + 1);
      given.push_back(layout == "-" ? "" : layout);
      begin = end + 1;
    }
    if (given.size() != configs.size())
      throw Error("--layout: " + std::to_string(given.size()) +
                  " attribute(s) for " + std::to_string(configs.size()) +
                  " --config attribute(s); give one per config ('-' for "
                  "the format's own layout)");
    layouts = given;
  }
  for (size_t k = 0; configs.size() > 1 && k < configs.size(); ++k)
    std::printf("config #%zu: %s%s%s\n", k + 1, configs[k].c_str(),
                layouts[k].empty() ? "" : ", ", layouts[k].c_str());

  // Every case, resolved and validated before anything is measured; `auto`
  // per shape (a --schedule entry's strategy, else by format).
  std::vector<Case> cases;
  for (const std::string &formatName : splitList(*options.get("format")))
    for (Strategy strategy : strategies)
      for (size_t k = 0; k < configs.size(); ++k) {
        Format format = Format::parse(formatName);
        for (const std::string &targetName :
             splitList(options.getOr("target", "native")))
          for (const LinearShape &shape : shapes) {
            format.check_shape(shape.M, shape.K);
            for (int64_t N : ns) {
              KernelChoice choice =
                  resolveChoiceFor(format, strategy, parse_target(targetName),
                                   {shape.M, shape.K, N}, kernelOptions);
              requireTimableTarget(choice.target, "lowbit bench");
              if (choice.strategy == Strategy::Reference)
                throw Error("lowbit bench measures generated kernels; " +
                            format.name() + " has none for " +
                            target_name(choice.target) + " yet");
              kernelOptions.dtype = parseDtypeFor(options.get("dtype"), choice);
              const std::string tag =
                  configs.size() > 1 ? "#" + std::to_string(k + 1) : "";
              cases.push_back({shape, N, format, choice, false, configs[k],
                               tag, layouts[k]});
              // --any-shape: the any-shape kernel of the same choice right
              // after it, timed with it in alternating reps.
              if (anyShape && !isGpuTarget(choice.target))
                cases.push_back({shape, N, format, choice, true, configs[k],
                                 tag, layouts[k]});
            }
          }
      }

  std::fprintf(stderr, "compiling %zu kernels...\n", cases.size());
  std::vector<CompiledKernel> kernels(cases.size());
  Progress progress("bench");
  // One batch per run of cases with the same (format, target, strategy),
  // each kernel with its case's --config attribute.
  for (size_t i = 0; i < cases.size();) {
    progress.update(i, cases.size(),
                    "compiling " + cases[i].format.name() + " " +
                        strategyLabel(cases[i]) + " " +
                        target_name(cases[i].choice.target));
    size_t j = i;
    std::vector<KernelShape> batch;
    while (j < cases.size() &&
           cases[j].format.name() == cases[i].format.name() &&
           cases[j].choice.target == cases[i].choice.target &&
           cases[j].choice.strategy == cases[i].choice.strategy) {
      KernelShape kernelShape =
          cases[j].anyShape
              ? KernelShape::anyShape(cases[j].N)
              : KernelShape(cases[j].shape.M, cases[j].shape.K, cases[j].N);
      kernelShape.config = cases[j].config;
      kernelShape.layout = cases[j].layout;
      batch.push_back(kernelShape);
      ++j;
    }
    std::vector<CompiledKernel> compiled =
        compileKernels(cases[i].format, cases[i].choice, batch, kernelOptions);
    std::move(compiled.begin(), compiled.end(), kernels.begin() + i);
    i = j;
  }
  progress.clear();

  size_t gpuCases = 0;
  for (const Case &c : cases)
    gpuCases += isGpuTarget(c.choice.target);
  if (gpuCases > 0) {
    if (gpuCases != cases.size() || options.has("json") ||
        options.has("plot"))
      throw Error("lowbit bench: GPU targets are timed on their own (no "
                  "CPU targets, --json or --plot with them)");
    return benchGpu(cases, kernels, reps, kernelOptions.dtype);
  }

  ThreadPool::Options poolOptions;
  poolOptions.threads = threads;
  poolOptions.policy = policies.front();
  poolOptions.alpha = alpha;
  ThreadPool pool(poolOptions);
  std::printf("threads on CPUs");
  for (int t = 0; t < pool.size(); ++t)
    std::printf(" %d", pool.cpu_of(t));
  std::printf("%s; schedule %s, alpha %.2f, ratio seed %s [",
              pool.pinned() ? "" : " (not pinned)",
              options.getOr("schedule-policy", "dynamic").c_str(), alpha,
              pool.seed_source().c_str());
  for (int t = 0; t < pool.size(); ++t)
    std::printf("%s%.2f", t ? " " : "", pool.seed_ratios()[size_t(t)]);
  std::printf("]\n");
  std::fprintf(stderr,
               "measuring the read bandwidth (1 GiB, %lld threads)...\n",
               (long long)threads);
  ReadProbe probe(pool);
  BandwidthResult bandwidth = probe.measure(reps);
  std::printf("read limit: %.1f GB/s (read probe: %s loads, %lld threads, "
              "median of %d; each row's limit is the probe right before its "
              "own reps)\n",
              bandwidth.gbps, bandwidth.loads.c_str(), (long long)threads,
              reps);
  if (threads > 1)
    std::printf("thread handoff: %.2f us (an empty job on all threads, "
                "median)\n",
                bandwidth.handoff_us);
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
  // The competing process of the loaded-core experiment runs while the
  // kernels are timed (after the run's probe, which therefore shows the
  // unloaded limit; each rep's own probe pass sees the load).
  std::unique_ptr<CoreLoad> load;
  if (loadCore >= 0) {
    load = std::make_unique<CoreLoad>(loadCore);
    std::printf("load: a CPU-bound process pinned to CPU %d while kernels "
                "are timed\n",
                loadCore);
  }
  bool slowThread = slowCore < 0;
  for (int t = 0; t < pool.size(); ++t)
    slowThread |= pool.cpu_of(t) == slowCore;
  if (!slowThread)
    throw Error("--slow-core: no pool thread is pinned to CPU " +
                std::to_string(slowCore));
  if (slowCore >= 0)
    std::printf("slow core: the pool thread on CPU %d takes %.2fx as long "
                "for its chunk (it spins after the kernel)\n",
                slowCore, slowFactor);
  std::printf("\n%-7s %-15s %-15s %-12s %5s %-7s %10s %8s %8s %6s %9s %6s  %s\n",
              "format", "strategy", "target", "shape", "N", "policy", "us",
              "GB/s", "limit",
              "ratio", "GOPS", "ratio",
              showRatios ? "tiles/thread  us/thread  ratios" : "");

  std::vector<BenchRecord> records;
  // Paired speedups static/dynamic: per case, the median over rounds of
  // static rep / dynamic rep (the reps of one round ran back to back).
  std::vector<std::pair<std::string, double>> speedups;
  // Cases timed together: with --interleave, every case of one (M, K, N)
  // in alternating reps; else each case on its own.
  const bool interleave = options.has("interleave") || anyShape;
  std::vector<std::vector<size_t>> groups;
  for (size_t i = 0; i < cases.size(); ++i) {
    // --any-shape alone pairs each case with its any-shape twin (same
    // format, strategy and target), so that every ratio is any-shape /
    // specialized.
    const bool pairs = anyShape && !options.has("interleave");
    auto same = [&](const std::vector<size_t> &g) {
      const Case &first = cases[g.front()];
      return first.shape.M == cases[i].shape.M &&
             first.shape.K == cases[i].shape.K && first.N == cases[i].N &&
             (!pairs || (first.format.name() == cases[i].format.name() &&
                         first.choice.target == cases[i].choice.target &&
                         first.choice.strategy == cases[i].choice.strategy &&
                         first.config == cases[i].config));
    };
    auto it = interleave ? std::find_if(groups.begin(), groups.end(), same)
                         : groups.end();
    if (it == groups.end())
      groups.push_back({i});
    else
      it->push_back(i);
  }
  // --interleave: per case after the first of its group, the median over
  // rounds of its rep time / the first case's rep time (same policy).
  std::vector<std::pair<std::string, double>> paired;
  // --read-floor: per case, the median over rounds of its rep time / its
  // matrix's pure read.
  const bool readFloor = options.has("read-floor");
  if (readFloor && options.has("warm"))
    throw Error("--read-floor times cold reads of the weights; it does not "
                "go with --warm");
  std::vector<std::pair<std::string, double>> floors;
  for (size_t g = 0; g < groups.size(); ++g) {
    const std::vector<size_t> &group = groups[g];
    const Case &first = cases[group.front()];
    progress.update(g, groups.size(),
                    "timing " + caseLabel(first) +
                        (group.size() > 1 ? " (interleaved)" : ""));
    std::vector<UpconvertWeights> weights;
    std::vector<PreparedActivations> activations;
    weights.reserve(group.size());
    activations.reserve(group.size());
    std::vector<Contender> contenders;
    for (size_t i : group) {
      const Case &c = cases[i];
      Matrix Wf = syntheticMatrix(c.shape.M, c.shape.K, 11 + i);
      PackedWeights canonical =
          quantize(c.format, Wf.data.data(), c.shape.M, c.shape.K);
      weights.push_back(
          std::move(*prepareWeights(canonical, &kernels[i]).upconvert));
      Matrix X = syntheticMatrix(c.N, c.shape.K, 7 + i);
      activations.push_back(
          prepare_activations(c.format, X.data.data(), c.N, c.shape.K));
      // An any-shape kernel learns its own per-core ratios (a class of its
      // own), as the registry would keep it apart from the shape's kernel.
      const int kernelClass = pool.kernel_class(
          upconvert_kernel_class(c.format, target_name(c.choice.target)) +
          (c.anyShape ? " any-shape" : ""));
      for (SchedulePolicy policy : policies) {
        contenders.push_back(
            {slow_core_kernel(kernels[i].loaded.fn, slowCore, slowFactor),
             &weights.back(), &activations.back(), kernelClass, policy});
        contenders.back().any_kernel = kernels[i].anyFn;
      }
    }
    bool cold = first.N == 1 && !options.has("warm");
    // --read-floor: a pure read of each distinct matrix of the group, timed
    // in the same rounds after the kernels; floorOf[ci] is case ci's.
    std::vector<size_t> floorOf(group.size(), SIZE_MAX);
    std::vector<size_t> floorCase; // per floor contender, its first case
    const size_t kernelContenders = contenders.size();
    if (readFloor && cold)
      for (size_t ci = 0; ci < group.size(); ++ci) {
        for (size_t f = 0; f < floorCase.size() && floorOf[ci] == SIZE_MAX;
             ++f) {
          const size_t other = floorCase[f];
          if (cases[group[other]].format.name() ==
                  cases[group[ci]].format.name() &&
              weights[other].packed_bytes() == weights[ci].packed_bytes())
            floorOf[ci] = kernelContenders + f;
        }
        if (floorOf[ci] != SIZE_MAX)
          continue;
        floorOf[ci] = contenders.size();
        floorCase.push_back(ci);
        contenders.push_back(
            {nullptr, &weights[ci], &activations[ci],
             pool.kernel_class("read " + cases[group[ci]].format.name()),
             policies.front(), &probe});
      }
    Pairing pairing{&probe, first.N > 1 ? peak.get() : nullptr};
    std::vector<KernelTiming> all = time_contenders(
        contenders, pool, cold, reps, pairing, /*trace_limit=*/256);
    progress.clear();
    for (size_t ci = 0; ci < group.size(); ++ci) {
      const size_t i = group[ci];
      const Case &c = cases[i];
      std::vector<KernelTiming> timings(
          all.begin() + ptrdiff_t(ci * policies.size()),
          all.begin() + ptrdiff_t((ci + 1) * policies.size()));
      std::string shape =
          std::to_string(c.shape.M) + "x" + std::to_string(c.shape.K);
      for (const KernelTiming &timing : timings) {
        BenchRecord r = make_record(
            c.shape.M, c.shape.K, c.N, c.format.name(),
            strategyLabel(c), target_name(c.choice.target),
            threads, timing, bandwidth, peakResult.get());
        r.load_core = loadCore;
        r.slow_core = slowCore;
        r.slow_factor = slowFactor;
        records.push_back(r);
        printTimingColumns(r);
        if (r.N > 1)
          std::printf(" %9.0f %6.2f", r.gops, r.gops_ratio);
        else
          std::printf(" %9s %6s", "", "");
        if (showRatios) {
          std::printf(" ");
          for (double v : r.thread_tiles)
            std::printf(" %.1f", v);
          std::printf("  ");
          for (double v : r.thread_us)
            std::printf(" %.1f", v);
          std::printf(" (job %.1f)", r.job_us);
          if (!r.ratios.empty()) {
            std::printf("  ");
            for (double v : r.ratios)
              std::printf(" %.3f", v);
          }
        }
        std::printf("%s\n", cold ? "" : (r.N == 1 ? "  (warm)" : ""));
      }
      if (timings.size() == 2) { // static/dynamic or dynamic/static
        const bool staticFirst = policies[0] == SchedulePolicy::Static;
        const KernelTiming &st = timings[staticFirst ? 0 : 1];
        const KernelTiming &dy = timings[staticFirst ? 1 : 0];
        speedups.push_back({c.format.name() + " " + shape + " N=" +
                                std::to_string(c.N),
                            paired_time_ratio(st, dy)});
      }
      if (ci > 0)
        paired.push_back({caseLabel(c) + " / " + caseLabel(first),
                          paired_time_ratio(timings.front(), all.front())});
      if (floorOf[ci] != SIZE_MAX) {
        const size_t firstRecord = records.size() - timings.size();
        for (size_t k = 0; k < timings.size(); ++k)
          records[firstRecord + k].read_floor_ratio =
              paired_time_ratio(timings[k], all[floorOf[ci]]);
        floors.push_back({caseLabel(c), records[firstRecord].read_floor_ratio});
      }
      if (showRatios && i == 0) {
        for (const KernelTiming &timing : timings) {
          if (timing.ratio_trace.empty())
            continue;
          std::printf("  ratio table after dynamic call 1, 2, 4, 8, ... of this "
                      "case (warm-up pass first):\n");
          for (size_t k = 1; k <= timing.ratio_trace.size(); k *= 2) {
            std::printf("    %5zu:", k);
            for (double v : timing.ratio_trace[k - 1])
              std::printf(" %.3f", v);
            std::printf("\n");
          }
        }
      }
    }
    for (size_t f = 0; f < floorCase.size(); ++f) {
      const Case &c = cases[group[floorCase[f]]];
      const KernelTiming &timing = all[kernelContenders + f];
      BenchRecord r = make_record(c.shape.M, c.shape.K, c.N, c.format.name(),
                                  "read", probe.loads(),
                                  threads, timing,
                                  bandwidth, nullptr);
      records.push_back(r);
      printTimingColumns(r);
      std::printf("\n");
    }
    std::fflush(stdout);
  }
  if (!floors.empty()) {
    std::printf("\ntime / a pure read of the same bytes ('read' rows; median "
                "of the per-round ratios;\n1: the kernel costs no more than "
                "reading its weights)\n");
    for (const auto &[name, value] : floors)
      std::printf("  %-64s %6.3f\n", name.c_str(), value);
  }
  if (!paired.empty()) {
    std::printf("\ninterleaved time ratios (median of the per-round ratios; "
                "<1: the first is faster)\n");
    for (const auto &[name, value] : paired)
      std::printf("  %-64s %6.3f\n", name.c_str(), value);
  }
  if (load) {
    const double wall = load->wall_seconds(), cpu = load->cpu_seconds();
    std::printf("\nload process on CPU %d: %.1f s of CPU in %.1f s (%.0f%% of "
                "the core)\n",
                loadCore, cpu, wall, wall > 0 ? 100.0 * cpu / wall : 0.0);
    load.reset();
  }
  if (!speedups.empty()) {
    std::printf("\nstatic / dynamic time (median of the per-round ratios; "
                ">1: dynamic faster)\n");
    std::vector<double> all;
    for (const auto &[name, value] : speedups) {
      std::printf("  %-28s %6.3f\n", name.c_str(), value);
      all.push_back(value);
    }
    std::printf("  %-28s %6.3f\n", "median over cases", median(all));
  }
  if (showRatios) {
    std::printf("\nratio tables (%s):\n", pool.seed_source().c_str());
    for (const std::string &key : pool.kernel_classes()) {
      const int k = pool.kernel_class(key);
      std::printf("  %-36s", key.c_str());
      for (double v : pool.ratios(k))
        std::printf(" %.3f", v);
      std::printf("   (%lld updates in %lld runs, %lld stalled)\n",
                  (long long)pool.updates(k), (long long)pool.runs(k),
                  (long long)pool.stalls(k));
    }
  }
  if (auto path = options.get("json"))
    write_bench_json(*path, records, bandwidth, peakResult.get());
  if (auto path = options.get("plot")) {
    // One series per policy when several were measured.
    std::vector<BenchRecord> charted = records;
    if (policies.size() > 1 || loadCore >= 0 || slowCore >= 0)
      for (BenchRecord &r : charted)
        r.strategy +=
            " " + r.schedule_policy +
            (loadCore >= 0 ? " cpu" + std::to_string(loadCore) + "-loaded"
                           : "") +
            (slowCore >= 0 ? " cpu" + std::to_string(slowCore) + "-slow" : "");
    write_svg(*path, roofline_chart(charted, bandwidth));
  }
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
       "way. Medians of --reps runs (>= 5). Each probe also times an empty "
       "job on all threads\n('thread handoff', 'rep_handoff_us' in --json): "
       "~0.2 us when the threads share a core\ncomplex, several times that "
       "across complexes, where small kernels pay it per call.\n",
       withShapeOptions({{"format", "F[,F...]", "weight formats", true},
        {"strategy", "S[,S...]",
         "strategies to compare: auto (default: per shape the --schedule "
         "entry's strategy, else upconvert, tl1/tl2 lut-elementwise, w3gG "
         "lut-bitserial), upconvert, lut-elementwise, lut-bitserial"},
        {"target", "T[,T...]", "targets to compare (default native)"},
        {"n", "LIST", "activation rows, e.g. 1,128 (default 1)"},
        {"threads", "N", kThreadsHelp},
        {"reps", "R", "timed reps per case (default 5)"},
        {"schedule", "FILE", "tuned schedule to take kernel configs from"},
        {"config", "ATTR[;ATTR...]",
         "kernel config to use instead, e.g. "
         "'#lowbit.upconvert<tile_m = 32, tile_k = 64, "
         "tile_n = 1>'; several (';'-separated) are cases of their own "
         "('#k' after the strategy), compared with --interleave"},
        {"layout", "ATTR[;ATTR...]",
         "the weights' layout of each --config attribute, in order ('-': "
         "the format's own): '#lowbit.layout<gguf, tile_m = 1, tile_k = "
         "256, block_bytes = 54>' is i2s weights as TQ1_0 rows "
         "(kernel_abi.h's GGML ROWS LAYOUT), for a config of tile_m below "
         "16"},
        {"warm", nullptr, "time N = 1 on one matrix (L3-resident, labelled)"},
        {"read-floor", nullptr,
         "N = 1: also time, in the same rounds, a pure read of each case's "
         "packed weights (the same bytes over the same threads, cold): 'read' "
         "rows, and each kernel's time / that read's"},
        {"dtype", "T",
         "GPU targets: element type of X and Y, f32 (default), f16, bf16"},
        {"schedule-policy", "P[,P]",
         "static, dynamic (default) or both: both time every case with each "
         "policy in alternating reps and print static/dynamic"},
        {"schedule-alpha", "A",
         "filter gain of the dynamic ratios, in [0, 1] (default 0.3)"},
        {"load-core", "CPU",
         "run a competing CPU-bound process pinned to CPU while kernels are "
         "timed"},
        {"slow-core", "CPU:F",
         "make the pool thread on CPU F times slower (it spins after each "
         "kernel call until the call took F times as long)"},
        {"interleave", nullptr,
         "time the cases of one shape and N together in alternating reps "
         "(same moments of the host; each keeps its own cold copies) and "
         "print their per-round time ratios"},
        {"any-shape", nullptr,
         "also time the any-shape kernel of each CPU case (M and K "
         "run-time arguments, kernel_abi.h; strategy e.g. 'upconvert+any') "
         "interleaved with the shape's own kernel, and print any-shape / "
         "specialized time per case (pairs them; with --interleave every "
         "case of a shape and N together)"},
        {"show-ratios", nullptr,
         "print per-thread tiles, times and ratio tables, and how the first "
         "case's table converged"},
        {"json", "OUT", "write one JSON record per case"},
        {"plot", "OUT.svg", "draw the roofline chart (N = 1 cases)"}})},
      runBench};
  return command;
}

} // namespace lowbit::cli
