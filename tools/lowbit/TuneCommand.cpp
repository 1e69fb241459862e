//===- TuneCommand.cpp - `lowbit tune` ------------------------------------===//
//
// The autotuner. For every problem (format, shape, N class, target,
// threads) it takes the candidate configs of every allowed strategy from
// the dialect (StrategyConfigAttrInterface::getSearchSpace, pruned by the
// attributes' own verifiers), compiles them in batches (one shared object
// per batch), checks every candidate against the reference in a child
// process (a crashing or hanging kernel is reported and skipped, never
// kept), times it with `lowbit bench`'s methodology (cold GEMV paired with a
// read-bandwidth probe before every rep; GEMM warm, paired with the int8
// peak) and keeps the best. The heuristic's config is timed first; at the
// end the heuristic and the winner are re-timed alternately and the winner
// replaces the heuristic only when its median paired score is clearly
// better, so the speedup compares one moment on this noisy host.
//
// Nothing measured is lost: every measurement is appended to
// <out>.journal as it is taken; the schedule file is rewritten (atomically,
// merged with its existing entries) after each problem, and a run that
// finds a journal left by an interrupted run merges it first. Ctrl-C stops
// the search, keeps what was measured and prints the table.
//
//===----------------------------------------------------------------------===//

#include "Bench.h"
#include "Commands.h"
#include "Inputs.h"
#include "Kernels.h"
#include "Models.h"

#include "lowbit/Dialect/LowBit/IR/LowBitDialect.h"
#include "lowbit/Dialect/LowBit/IR/LowBitFormats.h"
#include "lowbit/Target/TargetInfo.h"
#include "lowbit/Tuning/Schedule.h"

#include "lowbit/error.h"
#include "lowbit/lut.h"
#include "lowbit/reference.h"
#include "lowbit/run_kernel.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

namespace lowbit::cli {

namespace fs = std::filesystem;
using mlir::lowbit::Schedule;
using mlir::lowbit::ScheduleEntry;
using mlir::lowbit::ScheduleKey;

#ifndef LOWBIT_VERSION
#define LOWBIT_VERSION "0.1.0"
#endif

namespace {

/// Alternating re-timings of the heuristic and the winner at the end of a
/// problem, and how much better the winner's median paired score must be
/// to replace the heuristic (the run-to-run noise of a paired ratio here).
constexpr int kConfirmRounds = 3;
constexpr double kConfirmMargin = 0.03;

volatile std::sig_atomic_t interrupted = 0;

void onInterrupt(int) {
  interrupted = 1;
  std::signal(SIGINT, SIG_DFL); // a second Ctrl-C ends the process
}

double seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since)
      .count();
}

/// "AMD EPYC 9B45" -> "amd-epyc-9b45".
std::string deviceSlug(const std::string &model) {
  std::string slug;
  for (char c : model) {
    if (std::isalnum(static_cast<unsigned char>(c)))
      slug += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (!slug.empty() && slug.back() != '-')
      slug += '-';
  }
  while (!slug.empty() && slug.back() == '-')
    slug.pop_back();
  return slug.empty() ? "unknown-cpu" : slug;
}

/// One candidate of a problem.
struct Candidate {
  std::string config;
  KernelChoice choice;
  bool heuristic = false;
};

/// What a candidate gave.
struct Measurement {
  std::string config;
  bool heuristic = false;
  double us = 0, gbps = 0;
  double score = 0; // higher is better: the paired ratio to the roofline
};

/// A problem: one key of the schedule.
struct Problem {
  Format format;
  LinearShape shape;
  int64_t N = 1;
  Target target;
  std::vector<KernelChoice> choices; // the allowed strategies
  ScheduleKey key;
};

/// Appends the tuner's measurements to a JSON-lines file, one flushed line
/// per measurement, so that a crash or Ctrl-C keeps them.
class Journal {
public:
  explicit Journal(std::string path) : path_(std::move(path)) {}

  void append(const ScheduleKey &key, const nlohmann::json &fields) {
    nlohmann::json line = fields;
    line["format"] = key.format;
    line["M"] = key.m;
    line["K"] = key.k;
    line["n_class"] = key.nClass;
    line["target"] = key.target;
    line["threads"] = key.threads;
    std::FILE *file = std::fopen(path_.c_str(), "a");
    if (!file)
      throw Error("cannot append to the journal " + path_);
    std::fprintf(file, "%s\n", line.dump().c_str());
    std::fflush(file);
    fsync(fileno(file));
    std::fclose(file);
  }

  /// The best measurement per key in the journal (lines that do not parse,
  /// e.g. a last line cut short by a crash, are skipped), as schedule
  /// entries; keys whose heuristic was never timed are left out.
  std::vector<ScheduleEntry> recover() const {
    std::ifstream in(path_);
    std::map<ScheduleKey, std::pair<ScheduleEntry, double>> best;
    std::map<ScheduleKey, ScheduleEntry> heuristics;
    std::string text;
    while (std::getline(in, text)) {
      nlohmann::json line = nlohmann::json::parse(text, nullptr, false);
      if (!line.is_object() || !line.contains("us"))
        continue;
      try {
        ScheduleEntry entry;
        entry.key = {line.at("format"),  line.at("M"),      line.at("K"),
                     line.at("n_class"), line.at("target"), line.at("threads")};
        entry.config = line.at("config");
        entry.us = line.at("us");
        entry.gbps = line.at("gbps");
        double score = line.at("score");
        if (line.value("heuristic", false))
          heuristics[entry.key] = entry;
        auto it = best.find(entry.key);
        if (it == best.end() || score > it->second.second)
          best[entry.key] = {entry, score};
      } catch (const nlohmann::json::exception &) {
        continue;
      }
    }
    std::vector<ScheduleEntry> entries;
    for (auto &[key, value] : best) {
      auto h = heuristics.find(key);
      if (h == heuristics.end())
        continue;
      ScheduleEntry entry = value.first;
      entry.heuristicConfig = h->second.config;
      entry.heuristicUs = h->second.us;
      entries.push_back(entry);
    }
    return entries;
  }

  bool exists() const { return fs::exists(path_); }
  void clear() const {
    std::error_code ignored;
    fs::remove(path_, ignored);
  }
  const std::string &path() const { return path_; }

private:
  std::string path_;
};

/// The progress line: rewritten in place on a terminal, else plain lines.
class Progress {
public:
  Progress() : tty_(isatty(fileno(stderr))) {}

  /// `done` of `total` candidates of `problem`; `eta` seconds left in all.
  void update(const std::string &problem, size_t done, size_t total,
              double eta) {
    char line[512];
    std::snprintf(line, sizeof(line), "%zu/%zu candidates of %s, ETA %s", done,
                  total, problem.c_str(), duration(eta).c_str());
    if (tty_) {
      int width = 24;
      int filled = total ? int(width * double(done) / double(total)) : width;
      std::fprintf(stderr, "\r[%s%s] %s\033[K",
                   std::string(size_t(filled), '#').c_str(),
                   std::string(size_t(width - filled), '.').c_str(), line);
    } else {
      std::fprintf(stderr, "tune: %s\n", line);
    }
  }
  void finish() {
    if (tty_)
      std::fprintf(stderr, "\r\033[K");
  }

  static std::string duration(double s) {
    char text[32];
    if (s >= 60)
      std::snprintf(text, sizeof(text), "%dm%02ds", int(s) / 60, int(s) % 60);
    else
      std::snprintf(text, sizeof(text), "%.0fs", s);
    return text;
  }

private:
  bool tty_;
};

/// Runs `kernel` on the problem's verification cases in a child process and
/// compares each Y with the reference's. Returns "" or what went wrong
/// (a mismatch, a crash with its signal, a hang).
std::string verifyInChild(const CompiledKernel &kernel, PreparedWeights &W,
                          const std::vector<Matrix> &xs,
                          const std::vector<std::vector<float>> &wants,
                          int threads) {
  int fds[2];
  if (pipe(fds) != 0)
    throw Error("cannot create a pipe for the verification child");
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = fork();
  if (pid < 0)
    throw Error("cannot fork the verification child");
  if (pid == 0) {
    close(fds[0]);
    std::string problem;
    try {
      ThreadPool pool(threads);
      for (size_t i = 0; i < xs.size() && problem.empty(); ++i) {
        std::vector<float> got(wants[i].size());
        runKernel(&kernel, W, xs[i].data.data(), xs[i].rows, got.data(), pool);
        problem = compareWithReference(*W.canonical, xs[i].data.data(),
                                       xs[i].rows, got, wants[i],
                                       GpuDType::F32, kernel.tableActGroup,
                                       kernel.fastAggregation);
        if (!problem.empty())
          problem = "N=" + std::to_string(xs[i].rows) + ": " + problem;
      }
    } catch (const std::exception &e) {
      problem = e.what();
    }
    if (!problem.empty() && write(fds[1], problem.data(), problem.size()) < 0)
      _exit(3);
    _exit(problem.empty() ? 0 : 1);
  }
  close(fds[1]);
  // Read what the child reports until it closes the pipe (it finished or
  // crashed); a child that keeps it open past the deadline hangs and is
  // killed.
  constexpr int kDeadlineSeconds = 60;
  std::string message;
  auto start = std::chrono::steady_clock::now();
  bool hung = false;
  for (;;) {
    if (seconds(start) > kDeadlineSeconds) {
      hung = true;
      break;
    }
    pollfd ready{fds[0], POLLIN, 0};
    int events = poll(&ready, 1, 100);
    if (events < 0 && errno == EINTR)
      continue;
    if (events <= 0)
      continue;
    char buffer[512];
    ssize_t n = read(fds[0], buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    message.append(buffer, size_t(n));
  }
  close(fds[0]);
  int status = 0;
  if (hung)
    kill(pid, SIGKILL);
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      return "cannot wait for the verification child";
  if (hung)
    return "hung (killed after " + std::to_string(kDeadlineSeconds) + " s)";
  if (WIFSIGNALED(status))
    return std::string("crashed (") + strsignal(WTERMSIG(status)) + ")";
  if (WEXITSTATUS(status) != 0)
    return message.empty() ? "failed (exit status " +
                                 std::to_string(WEXITSTATUS(status)) + ")"
                           : message;
  return "";
}

/// The candidates of every allowed strategy, from the dialect's search
/// spaces, as config strings.
std::vector<Candidate> searchSpace(const Problem &problem, bool allowLossy) {
  mlir::MLIRContext context;
  context.loadDialect<mlir::lowbit::LowBitDialect>();
  std::optional<mlir::lowbit::WeightFormat> format =
      mlir::lowbit::parseFormatName(&context, problem.format.name());
  if (!format)
    throw Error("format '" + problem.format.name() + "' has no dialect form");
  std::unique_ptr<mlir::lowbit::TargetInfo> target =
      mlir::lowbit::createTargetInfo(target_name(problem.target));
  if (!target)
    throw Error("target '" + target_name(problem.target) +
                "' has no compiler target");
  mlir::lowbit::SearchSpaceQuery query;
  query.weight = format->weight;
  query.layout =
      mlir::lowbit::LayoutAttr::get(&context, format->layout, 0, 0, 1);
  query.m = problem.shape.M;
  query.k = problem.shape.K;
  query.gemv = problem.N == 1;
  query.registerBytes = target->getRegisterBytes();
  query.numRegisters = target->getNumRegisters();
  query.prefetchBytes = target->getPrefetchBytes();
  query.allowLossy = allowLossy;
  std::vector<Candidate> candidates;
  for (const KernelChoice &choice : problem.choices)
    for (mlir::lowbit::StrategyConfigAttrInterface config :
         mlir::lowbit::getStrategySearchSpace(
             &context, strategy_name(choice.strategy), query)) {
      Candidate candidate;
      llvm::raw_string_ostream os(candidate.config);
      os << config;
      os.flush();
      candidate.choice = choice;
      candidates.push_back(std::move(candidate));
    }
  return candidates;
}

/// Visit order: the grid's, or a permutation drawn from `seed` (a
/// Fisher-Yates shuffle driven by mt19937_64, whose output the C++ standard
/// fixes, so one seed visits the same points everywhere).
void order(std::vector<Candidate> &candidates, std::optional<uint64_t> seed,
           size_t problemIndex) {
  if (!seed)
    return;
  std::mt19937_64 random(*seed * 0x9E3779B97F4A7C15ull + problemIndex);
  for (size_t i = candidates.size(); i > 1; --i)
    std::swap(candidates[i - 1], candidates[random() % i]);
}

struct TuneSettings {
  int threads = 2;
  int reps = kMinReps;
  size_t batch = 8;
  std::optional<uint64_t> seed;
  size_t maxCandidates = SIZE_MAX;
  bool allowLossy = false;
  bool warm = false;
  double budget = 0;
};

/// The candidates of `problem` in visiting order: the heuristic's config
/// (what select-config picks without a schedule) first, then the search
/// space without it, in grid or seeded order, capped at --max-candidates.
std::vector<Candidate> candidateQueue(const Problem &problem, size_t index,
                                      const TuneSettings &settings) {
  // The first allowed strategy's heuristic (auto's choice where it is
  // allowed: the strategies are tried in that order).
  KernelChoice heuristicChoice = problem.choices.front();
  KernelOptions options;
  options.threads = settings.threads;
  options.strategy = heuristicChoice.strategy;
  std::string heuristicConfig =
      generateKernelSource(problem.format, target_name(problem.target),
                           {problem.shape.M, problem.shape.K, problem.N, ""},
                           options, "lowbit_tune_heuristic")
          .config;
  std::vector<Candidate> space = searchSpace(problem, settings.allowLossy);
  space.erase(std::remove_if(space.begin(), space.end(),
                             [&](const Candidate &c) {
                               return c.config == heuristicConfig;
                             }),
              space.end());
  order(space, settings.seed, index);
  if (space.size() > settings.maxCandidates)
    space.resize(settings.maxCandidates);
  std::vector<Candidate> queue = {{heuristicConfig, heuristicChoice, true}};
  queue.insert(queue.end(), space.begin(), space.end());
  return queue;
}

struct ProblemResult {
  Problem problem;
  ScheduleEntry entry;
  size_t tried = 0; // candidates verified (and timed when they passed)
  bool found = false;
};

class Tuner {
public:
  Tuner(const TuneSettings &settings, Journal &journal, ThreadPool &pool,
        ReadProbe &probe, Int8Peak *peak)
      : settings(settings), journal(journal), pool(pool), probe(probe),
        peak(peak) {}

  /// Tunes `problem` within `slice` seconds; `later` is the time the
  /// problems after it will take (for the ETA).
  ProblemResult tune(const Problem &problem, size_t index, double slice,
                     Progress &progress, double later);

  size_t verified = 0, failures = 0;

private:
  /// Times `kernel` as `lowbit bench` does.
  Measurement time(const Problem &problem, const CompiledKernel &kernel,
                   const UpconvertWeights &W, const PreparedActivations &A) {
    bool cold = problem.N == 1 && !settings.warm;
    Pairing pairing{&probe, problem.N == 1 ? nullptr : peak};
    KernelTiming timing =
        time_kernel(kernel.loaded.fn, W, A, pool, cold, settings.reps, pairing);
    Measurement m;
    m.config = kernel.config;
    m.us = timing.timing.us;
    m.gbps = timing.gbps;
    double paired = problem.N == 1 ? timing.ratio : timing.gops_ratio;
    m.score = paired > 0 ? paired : 1.0 / m.us;
    return m;
  }

  /// Generates and compiles `batch` into one shared object; a candidate the
  /// compiler rejects is reported and dropped (when the batch's C++ does
  /// not compile, each candidate is compiled alone to find the culprit).
  std::vector<std::pair<Candidate, CompiledKernel>>
  compile(const Problem &problem, const std::vector<Candidate> &batch,
          std::vector<std::string> &errors);

  const TuneSettings &settings;
  Journal &journal;
  ThreadPool &pool;
  ReadProbe &probe;
  Int8Peak *peak;
};

std::vector<std::pair<Candidate, CompiledKernel>>
Tuner::compile(const Problem &problem, const std::vector<Candidate> &batch,
               std::vector<std::string> &errors) {
  KernelOptions options;
  options.threads = settings.threads;
  // Each candidate is generated alone first, so that a config the
  // compiler rejects is reported without failing its batch; a batch may
  // mix strategies (the compile flags are the target's).
  std::vector<std::pair<Candidate, CompiledKernel>> compiled;
  std::vector<Candidate> generated;
  std::vector<KernelShape> shapes;
  for (const Candidate &candidate : batch) {
    KernelShape shape{problem.shape.M, problem.shape.K, problem.N,
                      candidate.config};
    try {
      generateKernelSource(problem.format, target_name(problem.target), shape,
                           options, "lowbit_tune_check");
    } catch (const Error &e) {
      errors.push_back(candidate.config + ": " + e.what());
      continue;
    }
    generated.push_back(candidate);
    shapes.push_back(shape);
  }
  if (generated.empty())
    return compiled;
  auto collect = [&](const std::vector<size_t> &which) {
    std::vector<KernelShape> some;
    for (size_t i : which)
      some.push_back(shapes[i]);
    std::vector<CompiledKernel> kernels = compileKernels(
        problem.format, generated[which.front()].choice, some, options);
    for (size_t j = 0; j < which.size(); ++j) {
      kernels[j].choice = generated[which[j]].choice;
      compiled.push_back({generated[which[j]], std::move(kernels[j])});
    }
  };
  std::vector<size_t> all(generated.size());
  for (size_t i = 0; i < all.size(); ++i)
    all[i] = i;
  try {
    collect(all);
  } catch (const Error &) {
    compiled.clear();
    for (size_t i : all) {
      try {
        collect({i});
      } catch (const Error &e) {
        errors.push_back(generated[i].config + ": " + e.what());
      }
    }
  }
  return compiled;
}

ProblemResult Tuner::tune(const Problem &problem, size_t index, double slice,
                          Progress &progress, double later) {
  auto start = std::chrono::steady_clock::now();
  ProblemResult result;
  result.problem = problem;
  std::string label = problem.format.name() + " " +
                      std::to_string(problem.shape.M) + "x" +
                      std::to_string(problem.shape.K) + " " +
                      problem.key.nClass + " " + problem.key.target;

  std::vector<Candidate> queue = candidateQueue(problem, index, settings);
  const std::string &heuristicConfig = queue.front().config;
  std::printf("%s: %zu candidates (heuristic %s)\n", label.c_str(),
              queue.size(), heuristicConfig.c_str());
  std::fflush(stdout);

  // The problem's data: weights packed per strategy, activations, and the
  // verification cases with the reference's answers.
  Matrix Wf = syntheticMatrix(problem.shape.M, problem.shape.K, 11 + index);
  PackedWeights canonical = quantize(problem.format, Wf.data.data(),
                                     problem.shape.M, problem.shape.K);
  std::map<Strategy, PreparedWeights> prepared;
  for (const KernelChoice &choice : problem.choices)
    prepared[choice.strategy] = prepareWeights(canonical, choice);
  prepared[queue.front().choice.strategy] =
      prepareWeights(canonical, queue.front().choice);
  Matrix X = syntheticMatrix(problem.N, problem.shape.K, 7 + index);
  PreparedActivations A = prepare_activations(problem.format, X.data.data(),
                                              problem.N, problem.shape.K);
  std::vector<Matrix> checkXs;
  std::vector<std::vector<float>> checkWants;
  for (int64_t n : problem.N == 1 ? std::vector<int64_t>{1, 3}
                                  : std::vector<int64_t>{problem.N, 5}) {
    checkXs.push_back(syntheticMatrix(n, problem.shape.K, 1000 + index + n));
    checkWants.emplace_back(size_t(n * problem.shape.M));
    reference_mpgemm(canonical, checkXs.back().data.data(), n,
                     checkWants.back().data());
  }

  std::optional<Measurement> best, heuristic;
  std::optional<CompiledKernel> bestKernel, heuristicKernel;
  size_t done = 0;
  double perCandidate = 0; // running estimate, seconds
  for (size_t next = 0; next < queue.size() && !interrupted;) {
    // Fit the batch into what is left of this problem's slice (the
    // heuristic always runs).
    double left = slice - seconds(start);
    if (next > 0 && left <= 0)
      break;
    size_t size = settings.batch;
    if (next > 0 && perCandidate > 0)
      size = std::min(size, std::max<size_t>(1, size_t(left / perCandidate)));
    std::vector<Candidate> batch(queue.begin() + long(next),
                                 queue.begin() +
                                     long(std::min(queue.size(), next + size)));
    next += batch.size();
    auto batchStart = std::chrono::steady_clock::now();
    std::vector<std::string> errors;
    auto kernels = compile(problem, batch, errors);
    for (const std::string &error : errors) {
      ++failures;
      std::printf("  FAIL %s\n", error.c_str());
      journal.append(problem.key, {{"error", error}});
    }
    for (auto &[candidate, kernel] : kernels) {
      if (interrupted)
        break;
      PreparedWeights &W = prepared.at(candidate.choice.strategy);
      std::string problemText =
          verifyInChild(kernel, W, checkXs, checkWants, settings.threads);
      ++result.tried;
      if (!problemText.empty()) {
        ++failures;
        std::printf("  FAIL %s: %s\n", candidate.config.c_str(),
                    problemText.c_str());
        journal.append(problem.key,
                       {{"config", candidate.config}, {"error", problemText}});
      } else {
        ++verified;
        Measurement m = time(problem, kernel, *W.upconvert, A);
        m.heuristic = candidate.heuristic;
        journal.append(problem.key, {{"config", m.config},
                                     {"heuristic", m.heuristic},
                                     {"us", m.us},
                                     {"gbps", m.gbps},
                                     {"score", m.score}});
        char line[128];
        std::snprintf(line, sizeof(line), "%10.1f us %8.1f GB/s  score %.3f",
                      m.us, m.gbps, m.score);
        std::printf("  %s%s %s\n", candidate.heuristic ? "H " : "  ", line,
                    candidate.config.c_str());
        if (m.heuristic) {
          heuristic = m;
          heuristicKernel = kernel;
        }
        if (!best || m.score > best->score) {
          best = m;
          bestKernel = kernel;
        }
      }
      std::fflush(stdout);
      ++done;
      double elapsed = seconds(start);
      double eta =
          std::min(std::max(0.0, slice - elapsed),
                   elapsed / double(done) * double(queue.size() - done));
      progress.update(label, done, queue.size(), eta + later);
    }
    perCandidate =
        seconds(batchStart) / double(std::max<size_t>(1, batch.size()));
  }
  if (!heuristic || !best)
    return result; // nothing to compare with: the problem keeps no entry

  // Time the heuristic and the winner again, alternating for
  // kConfirmRounds rounds, so that the recorded speedup compares one moment
  // and one lucky rep cannot pick a winner; the heuristic stays unless the
  // winner's median score beats it by more than kConfirmMargin.
  if (!interrupted && bestKernel->config != heuristicKernel->config) {
    std::vector<Measurement> hs, bs;
    for (int round = 0; round < kConfirmRounds && !interrupted; ++round) {
      hs.push_back(time(problem, *heuristicKernel,
                        *prepared.at(heuristicKernel->choice.strategy).upconvert,
                        A));
      bs.push_back(time(problem, *bestKernel,
                        *prepared.at(bestKernel->choice.strategy).upconvert,
                        A));
    }
    auto median = [](std::vector<Measurement> ms) {
      std::sort(ms.begin(), ms.end(),
                [](const Measurement &a, const Measurement &b) {
                  return a.score < b.score;
                });
      return ms[ms.size() / 2];
    };
    Measurement h = median(hs), b = median(bs);
    heuristic->us = h.us;
    if (b.score > h.score * (1 + kConfirmMargin)) {
      best->us = b.us;
      best->gbps = b.gbps;
    } else {
      best = h;
    }
  } else if (bestKernel->config == heuristicKernel->config) {
    best = heuristic;
  }
  result.found = true;
  result.entry.key = problem.key;
  result.entry.config = best->config;
  result.entry.us = best->us;
  result.entry.gbps = best->gbps;
  result.entry.heuristicConfig = heuristic->config;
  result.entry.heuristicUs = heuristic->us;
  return result;
}

} // namespace

static int runTune(const ParsedOptions &options) {
  auto start = std::chrono::steady_clock::now();
  if (options.has("model") == options.has("shapes"))
    throw Error("lowbit tune needs exactly one of --model and --shapes");
  std::vector<LinearShape> shapes =
      optionShapes(options);
  TuneSettings settings;
  int64_t threads = options.getPositive("threads", 2);
  if (threads > 256)
    throw Error("--threads: at most 256, got " + std::to_string(threads));
  settings.threads = int(threads);
  settings.reps = int(options.getPositive("reps", kMinReps));
  if (settings.reps < kMinReps)
    throw Error("--reps: at least " + std::to_string(kMinReps) +
                " (medians need them)");
  settings.batch = size_t(options.getPositive("batch", 8));
  if (options.has("seed"))
    settings.seed = uint64_t(parsePositive(*options.get("seed"), "--seed"));
  if (options.has("max-candidates"))
    settings.maxCandidates = size_t(options.getPositive("max-candidates", 1));
  settings.allowLossy = options.has("allow-lossy");
  settings.warm = options.has("warm");
  settings.budget = double(options.getPositive("budget", 240));

  std::vector<int64_t> ns = options.getPositiveList("n", "1");
  int64_t gemmN = 0;
  for (int64_t n : ns)
    if (n > 1) {
      if (gemmN)
        throw Error("--n: one N > 1 (the GEMM class is timed with it), got " +
                    std::to_string(gemmN) + " and " + std::to_string(n));
      gemmN = n;
    }

  // Every problem, resolved and validated before anything is measured.
  Target target = parse_target(options.getOr("target", "native"));
  requireTimableTarget(target, "lowbit tune");
  std::vector<Problem> problems;
  for (const std::string &formatName : splitList(*options.get("format"))) {
    Format format = Format::parse(formatName);
    std::vector<KernelChoice> choices;
    if (auto list = options.get("strategy")) {
      for (const std::string &name : splitList(*list)) {
        Strategy strategy = parse_strategy(name);
        if (strategy == Strategy::Reference || strategy == Strategy::Auto)
          throw Error("--strategy: tune searches the configs of generated "
                      "kernels (upconvert, lut-elementwise, lut-bitserial), "
                      "not '" +
                      name + "'");
        choices.push_back(resolveChoice(format, strategy, target));
      }
    } else {
      for (Strategy strategy : {Strategy::Upconvert, Strategy::LutElementwise,
                                Strategy::LutBitserial}) {
        try {
          choices.push_back(resolveChoice(format, strategy, target));
        } catch (const Error &) {
        }
      }
      if (choices.empty()) {
        resolveChoice(format, Strategy::Auto, target); // a target error
        throw Error("no strategy generates kernels for " + format.name() +
                    " on target '" + target_name(target) +
                    "' yet; nothing to tune");
      }
    }
    for (const LinearShape &shape : shapes) {
      format.check_shape(shape.M, shape.K);
      for (int64_t N : ns) {
        Problem problem{format, shape, N, choices.front().target, choices, {}};
        problem.key = {format.name(),
                       shape.M,
                       shape.K,
                       N == 1 ? "gemv" : "gemm",
                       target_name(problem.target),
                       threads};
        bool seen = false;
        for (const Problem &p : problems)
          seen |= p.key == problem.key;
        if (!seen)
          problems.push_back(problem);
      }
    }
  }

  if (options.has("list")) {
    for (size_t i = 0; i < problems.size(); ++i) {
      const Problem &p = problems[i];
      std::vector<Candidate> queue = candidateQueue(p, i, settings);
      std::printf("%s %lldx%lld %s %s: %zu candidates\n",
                  p.format.name().c_str(), (long long)p.shape.M,
                  (long long)p.shape.K, p.key.nClass.c_str(),
                  p.key.target.c_str(), queue.size());
      for (const Candidate &c : queue)
        std::printf("  %s %s\n", c.heuristic ? "H" : " ", c.config.c_str());
    }
    return 0;
  }

  const CpuFeatures &cpu = host_cpu_features();
  std::string out = options.getOr("out", schedulesDir() + "/" +
                                             deviceSlug(cpu.model) + ".json");
  fs::path outDir = fs::absolute(out).parent_path();
  if (!fs::is_directory(outDir) || access(outDir.c_str(), W_OK) != 0)
    throw Error("--out: cannot write into " + outDir.string());
  Schedule schedule;
  if (fs::exists(out)) {
    llvm::Expected<Schedule> existing = Schedule::load(out);
    if (!existing)
      throw Error(llvm::toString(existing.takeError()) +
                  " (fix or remove it; tune merges into it)");
    schedule = std::move(*existing);
  }
  schedule.toolVersion = "lowbit " LOWBIT_VERSION;
  schedule.cpuModel = cpu.model;
  schedule.cpuFeatures = hostFeatureNames();
  auto save = [&] {
    if (llvm::Error error = schedule.write(out))
      throw Error(llvm::toString(std::move(error)));
  };
  Journal journal(out + ".journal");
  if (journal.exists()) {
    std::vector<ScheduleEntry> recovered = journal.recover();
    for (ScheduleEntry &entry : recovered)
      schedule.set(entry);
    save();
    journal.clear();
    std::fprintf(stderr,
                 "tune: merged %zu entries of an interrupted run from %s\n",
                 recovered.size(), journal.path().c_str());
  }

  ThreadPool pool(settings.threads);
  std::fprintf(stderr,
               "tune: measuring the read bandwidth (1 GiB, %d "
               "threads)...\n",
               settings.threads);
  ReadProbe probe(pool);
  std::unique_ptr<Int8Peak> peak;
  std::string peakIsa = peak_isa_for(target);
  if (gemmN && !peakIsa.empty())
    peak = std::make_unique<Int8Peak>(pool, peakIsa);

  std::signal(SIGINT, onInterrupt);
  Tuner tuner(settings, journal, pool, probe, peak.get());
  Progress progress;
  std::vector<ProblemResult> results;
  for (size_t i = 0; i < problems.size() && !interrupted; ++i) {
    double left = settings.budget - seconds(start);
    double slice = left / double(problems.size() - i);
    ProblemResult result = tuner.tune(problems[i], i, slice, progress,
                                      slice * double(problems.size() - i - 1));
    progress.finish();
    if (result.found) {
      schedule.set(result.entry);
      save();
      journal.clear();
    }
    results.push_back(result);
  }
  std::signal(SIGINT, SIG_DFL);

  std::printf("\n%-7s %-12s %-5s %-15s %6s %10s %10s %8s  %s\n", "format",
              "shape", "N", "target", "tried", "heur. us", "tuned us",
              "speedup", "config");
  for (const ProblemResult &r : results) {
    std::string shape = std::to_string(r.problem.shape.M) + "x" +
                        std::to_string(r.problem.shape.K);
    if (!r.found) {
      std::printf("%-7s %-12s %-5s %-15s %6zu %10s %10s %8s  (no verified "
                  "heuristic)\n",
                  r.problem.format.name().c_str(), shape.c_str(),
                  r.problem.key.nClass.c_str(), r.problem.key.target.c_str(),
                  r.tried, "-", "-", "-");
      continue;
    }
    std::printf("%-7s %-12s %-5s %-15s %6zu %10.1f %10.1f %7.2fx  %s\n",
                r.problem.format.name().c_str(), shape.c_str(),
                r.problem.key.nClass.c_str(), r.problem.key.target.c_str(),
                r.tried, r.entry.heuristicUs, r.entry.us,
                r.entry.heuristicUs / r.entry.us, r.entry.config.c_str());
  }
  std::printf("\ntune: %zu candidates timed, %zu failed, %zu of %zu problems "
              "in %.0f s%s; wrote %s\n",
              tuner.verified, tuner.failures, results.size(), problems.size(),
              seconds(start), interrupted ? " (interrupted)" : "", out.c_str());
  return interrupted ? 130 : 0;
}

const Command &tuneCommand() {
  static const Command command{
      {"tune",
       "Search kernel configs per shape and write the fastest to a schedule "
       "file.",
       "For every shape, format, N class (--n: 1 is GEMV, one N > 1 the GEMM "
       "class) and allowed\nstrategy, the candidates are the search space "
       "the dialect declares next to each config\nattribute (pruned by the "
       "attributes' verifiers). They are compiled in batches (one\nshared "
       "object per batch), each is checked against the reference in a child "
       "process (a\nfailing, crashing or hanging candidate is reported and "
       "skipped) and timed like 'lowbit\nbench' (GEMV cold, each rep paired "
       "with a read-bandwidth probe; GEMM warm, paired with\nthe int8 peak); "
       "the best paired ratio wins. The heuristic's config is timed first "
       "and\nagain, alternating with the winner three times; the winner must beat "
       "it by 3%\n(median paired ratio), so the speedup compares one moment.\n\nThe budget is split evenly over the problems; candidates "
       "are visited in grid order, or\nin an order drawn from --seed (same "
       "seed, same points). Every measurement is appended\nto OUT.journal at "
       "once, OUT is rewritten after each problem (merged with its "
       "existing\nentries; a journal left by an interrupted run is merged "
       "first), and Ctrl-C stops the\nsearch keeping what was measured. "
       "Prints heuristic vs tuned time per problem at the\nend. Use the file "
       "with 'lowbit run/bench/compile --schedule OUT'.\n",
       {{"model", "NAME", "every linear shape of schedules/models/NAME.json"},
        {"with-output", nullptr,
         "--model: also the output head and embedding shapes (vocab x hidden)"},
        {"shapes", "MxK[,MxK...]", "explicit shapes instead of --model"},
        {"format", "F[,F...]", "weight formats", true},
        {"strategy", "S[,S...]",
         "strategies to search (default: every one with kernels for the "
         "format on the target)"},
        {"target", "T", "target (default native)"},
        {"n", "LIST", "N classes: 1 (GEMV, default) and/or one N > 1 (GEMM)"},
        {"threads", "N", "threads the kernels are tuned for (default 2)"},
        {"budget", "SECONDS",
         "wall-time budget of the search (default 240: a whole "
         "bitnet-b1.58-2b for one format in under 5 minutes)"},
        {"seed", "N",
         "visit candidates in an order drawn from N (default: "
         "grid order)"},
        {"max-candidates", "K",
         "at most K candidates per problem besides the heuristic"},
        {"batch", "B", "candidates per compiled shared object (default 8)"},
        {"list", nullptr,
         "print each problem's candidates in visiting order (heuristic "
         "first, marked H) and exit: nothing is compiled or timed"},
        {"reps", "R", "timed reps per candidate (default 5)"},
        {"warm", nullptr,
         "time GEMV on one L3-resident matrix (quick runs; not a decode "
         "timing)"},
        {"allow-lossy", nullptr,
         "also search lossy options (lut-bitserial int8 tables, table_bits "
         "= 8, act_group 32 and 64; verified against their documented "
         "bound)"},
        {"out", "FILE", "schedule file (default schedules/<cpu-model>.json)"}}},
      runTune};
  return command;
}

} // namespace lowbit::cli
