//===- TuneCommand.cpp - `lowbit tune` ------------------------------------===//
//
// Parses the options into tuning problems (lib/Tuning: Search.h), runs the
// Tuner with the CLI's KernelMeasurer (TuneMeasurer.h), prints as it goes,
// merges each decided problem into the schedule file and prints the table.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "CrossRunner.h"
#include "Models.h"
#include "Progress.h"
#include "TuneMeasurer.h"

#include "lowbit/Tuning/Journal.h"
#include "lowbit/Tuning/Schedule.h"
#include "lowbit/Tuning/Search.h"
#include "lowbit/Tuning/Sweep.h"
#include "lowbit/Tuning/Tuner.h"

#include "lowbit/error.h"

#include "mlir/IR/MLIRContext.h"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <numeric>
#include <optional>

#include <unistd.h>

namespace lowbit::cli {

using namespace lowbit::jit;

namespace fs = std::filesystem;
using namespace mlir::lowbit;

#ifndef LOWBIT_VERSION
#define LOWBIT_VERSION "0.1.0"
#endif

namespace {

volatile std::sig_atomic_t interrupted = 0;

void onInterrupt(int) {
  interrupted = 1;
  std::signal(SIGINT, SIG_DFL); // a second Ctrl-C ends the process
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

/// A problem's label, with its thread count when the sweep has several
/// (`i2s 2560x2560 gemv x86-avx2 4t`).
std::string labelOf(const ScheduleKey &key, const std::string &label,
                    bool threads) {
  return threads ? label + " " + std::to_string(key.threads) + "t" : label;
}

/// Prints the search as it goes (with a progress line on a terminal) and
/// merges every decided problem into the schedule file.
class Printer : public TuneObserver {
public:
  Printer(Schedule &schedule, std::string out, TuneJournal &journal,
          size_t problems, bool threads)
      : schedule(schedule), out(std::move(out)), journal(journal),
        problems(problems), threads(threads), line("tune") {}

  void problemStarted(const TuningProblem &problem) override {
    line.clear();
    std::printf("%s: %zu candidates (heuristic %s)\n",
                labelOf(problem.key, problem.label(), threads).c_str(),
                problem.queue.size(), problem.queue.front().config.c_str());
    std::fflush(stdout);
  }
  void candidateFailed(const Candidate &c, const std::string &error) override {
    line.clear();
    std::printf("  FAIL %s: %s\n", c.config.c_str(), error.c_str());
    std::fflush(stdout);
  }
  void candidateTimed(const Candidate &c, const Measurement &m) override {
    line.clear();
    std::printf("  %s%10.1f us %8.1f GB/s  score %.3f %s\n",
                c.heuristic ? "H " : "  ", m.us, m.gbps, m.score,
                c.config.c_str());
    std::fflush(stdout);
  }
  void progress(const TuningProblem &problem, size_t done, size_t total,
                double eta) override {
    line.update(finished, problems,
                labelOf(problem.key, problem.label(), threads) + ": " +
                    std::to_string(done) + "/" +
                    std::to_string(total) + " candidates, ETA " +
                    Progress::duration(eta));
  }
  bool problemDone(const TuneOutcome &outcome) override {
    line.clear();
    ++finished;
    if (const std::optional<Confirmation> &c = outcome.confirmation)
      std::printf("  confirmation: best/heuristic %.3fx median, %.3f-%.3f "
                  "over the rounds: %s\n",
                  c->medianRatio, c->lowRatio, c->highRatio,
                  toString(outcome.status));
    if (outcome.status == TuneStatus::TooNoisy)
      std::printf("  the host is too noisy to decide (a round lost what the "
                  "median won): the heuristic stays, no entry written\n");
    std::fflush(stdout);
    if (!outcome.entry)
      return true;
    schedule.set(*outcome.entry);
    if (llvm::Error error = schedule.write(out)) {
      saveError = llvm::toString(std::move(error));
      return false; // the tuner is built without exceptions: stop it
    }
    journal.clear();
    written = true;
    return true;
  }

  bool written = false;
  std::string saveError; // the schedule file could not be written

private:
  Schedule &schedule;
  std::string out;
  TuneJournal &journal;
  size_t problems, finished = 0;
  bool threads;
  Progress line;
};

/// The problems of the options, each with its candidate queue, resolved and
/// validated before anything is measured.
std::vector<TuningProblem> problemsOf(const ParsedOptions &options,
                                      const std::vector<int> &threadCounts,
                                      Target target,
                                      const SearchOptions &search) {
  std::vector<LinearShape> shapes = optionShapes(options);
  std::vector<int64_t> ns = options.getPositiveList("n", "1");
  int64_t gemmN = 0;
  for (int64_t n : ns)
    if (n > 1) {
      if (gemmN)
        throw Error("--n: one N > 1 (the GEMM class is timed with it), got " +
                    std::to_string(gemmN) + " and " + std::to_string(n));
      gemmN = n;
    }
  mlir::MLIRContext context;
  std::vector<TuningProblem> problems;
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
    std::vector<std::string> strategies;
    for (const KernelChoice &choice : choices)
      strategies.push_back(strategy_name(choice.strategy));
    // The heuristic is the first allowed strategy's (auto's choice where
    // it is allowed: the strategies are tried in that order).
    KernelOptions heuristicOptions;
    heuristicOptions.strategy = choices.front().strategy;
    std::string targetName = target_name(choices.front().target);
    for (const LinearShape &shape : shapes) {
      format.check_shape(shape.M, shape.K);
      for (int64_t N : ns)
        for (int threads : threadCounts) {
          heuristicOptions.threads = threads;
          TuningProblem problem;
          problem.key = {format.name(), shape.M, shape.K,
                         N == 1 ? "gemv" : "gemm", targetName, threads};
          problem.n = N;
          bool seen = false;
          for (const TuningProblem &p : problems)
            seen |= p.key == problem.key;
          if (seen)
            continue;
          Candidate heuristic{generateKernelSource(
                                  format, targetName, {shape.M, shape.K, N, ""},
                                  heuristicOptions, "lowbit_tune_heuristic")
                                  .config,
                              strategies.front(), true};
          llvm::Expected<std::vector<Candidate>> space = getSearchSpace(
              &context, problem.key, strategies, search.allowLossy);
          if (!space)
            throw Error(llvm::toString(space.takeError()));
          problem.queue.push_back(std::move(heuristic));
          problem.queue.insert(problem.queue.end(), space->begin(),
                               space->end());
          problems.push_back(std::move(problem));
        }
    }
  }
  // A problem's index is its rank among the sweep's keys: its candidate
  // order (--seed) and its data then do not depend on the order the options
  // list shapes and formats in, and a shard sees what the whole sweep does.
  std::vector<size_t> byKey(problems.size());
  std::iota(byKey.begin(), byKey.end(), 0);
  std::sort(byKey.begin(), byKey.end(), [&](size_t a, size_t b) {
    return problems[a].key < problems[b].key;
  });
  for (size_t rank = 0; rank < byKey.size(); ++rank)
    problems[byKey[rank]].index = rank;
  for (TuningProblem &problem : problems) {
    Candidate heuristic = std::move(problem.queue.front());
    std::vector<Candidate> space(problem.queue.begin() + 1,
                                 problem.queue.end());
    problem.queue = orderCandidates(std::move(heuristic), std::move(space),
                                    search, problem.index);
  }
  return problems;
}

/// --threads: one count or a list ("1,2,4"), each a dimension of the sweep
/// (default: the CPUs this process may use).
std::vector<int> threadCountsOf(const ParsedOptions &options) {
  if (!options.has("threads"))
    return {options.threads()};
  std::vector<int> counts;
  for (int64_t threads : options.getPositiveList("threads", "1")) {
    if (threads > 256)
      throw Error("--threads: at most 256, got " + std::to_string(threads));
    if (std::find(counts.begin(), counts.end(), threads) == counts.end())
      counts.push_back(int(threads));
  }
  return counts;
}

/// With --shard I/N, the shard's problems of the sweep `problems` (in
/// their order, so each keeps the candidate order drawn for its index in
/// the sweep) and what the shard file records about them.
std::optional<ShardInfo> takeShard(const ParsedOptions &options,
                                   std::vector<TuningProblem> &problems) {
  std::optional<std::string> text = options.get("shard");
  if (!text)
    return std::nullopt;
  llvm::Expected<ShardInfo> shard = parseShardSpec(*text);
  if (!shard)
    throw Error("--shard: " + llvm::toString(shard.takeError()));
  if (!options.has("out") && !options.has("list"))
    throw Error("--shard needs --out: every shard writes its own file "
                "(merged by 'lowbit schedule merge')");
  std::vector<ScheduleKey> keys;
  std::vector<size_t> weights;
  for (const TuningProblem &p : problems) {
    keys.push_back(p.key);
    weights.push_back(p.queue.size());
  }
  std::vector<int64_t> assigned = assignShards(keys, weights, shard->count);
  shard->sweep = sweepId(keys);
  shard->sweepProblems = int64_t(problems.size());
  std::vector<TuningProblem> mine;
  for (size_t i = 0; i < problems.size(); ++i)
    if (assigned[i] == shard->index) {
      shard->problems.push_back(problems[i].key);
      mine.push_back(std::move(problems[i]));
    }
  problems = std::move(mine);
  return std::move(*shard);
}

/// --out, or ./schedules/<cpu>.json in the current directory (created).
std::string outPath(const ParsedOptions &options, const std::string &model) {
  if (auto out = options.get("out"))
    return *out;
  std::error_code ec;
  fs::create_directories("schedules", ec);
  if (ec)
    throw Error("cannot create " + fs::absolute("schedules").string() + ": " +
                ec.message() + " (or name a file with --out)");
  return "schedules/" + deviceSlug(model) + ".json";
}

} // namespace

static int runTune(const ParsedOptions &options) {
  double start = monotonicSeconds();
  if (options.has("model") == options.has("shapes"))
    throw Error("lowbit tune needs exactly one of --model and --shapes");
  const std::vector<int> threadCounts = threadCountsOf(options);
  const bool severalThreads = threadCounts.size() > 1;
  int reps = int(options.getPositive("reps", kMinReps));
  if (reps < kMinReps)
    throw Error("--reps: at least " + std::to_string(kMinReps) +
                " (medians need them)");
  TunerOptions tunerOptions;
  tunerOptions.batch = size_t(options.getPositive("batch", 8));
  tunerOptions.budgetSeconds = double(options.getPositive("budget", 240));
  // KernelMeasurer::timeRounds: one setup and a rep of each per round.
  tunerOptions.confirmationTimings =
      1 + 2.0 * tunerOptions.confirmRounds / reps;
  SearchOptions search;
  if (options.has("seed"))
    search.seed = uint64_t(parsePositive(*options.get("seed"), "--seed"));
  if (auto most = options.get("max-candidates"))
    search.maxCandidates =
        *most == "0" ? 0 : size_t(parsePositive(*most, "--max-candidates"));
  search.allowLossy = options.has("allow-lossy");

  Target target = parse_target(options.getOr("target", "native"));
  requireTimableTarget(target, "lowbit tune");
  std::vector<TuningProblem> problems =
      problemsOf(options, threadCounts, target, search);
  std::optional<ShardInfo> shard = takeShard(options, problems);

  if (options.has("list")) {
    if (shard)
      std::printf("shard %s of sweep %s: %zu of the sweep's %lld problems\n",
                  shard->str().c_str(), shard->sweep.c_str(), problems.size(),
                  (long long)shard->sweepProblems);
    for (const TuningProblem &p : problems) {
      std::printf("%s: %zu candidates\n",
                  labelOf(p.key, p.label(), severalThreads).c_str(),
                  p.queue.size());
      for (const Candidate &c : p.queue)
        std::printf("  %s %s\n", c.heuristic ? "H" : " ", c.config.c_str());
    }
    return 0;
  }

  const CpuFeatures &cpu = host_cpu_features();
  std::string out = outPath(options, cpu.model);
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
    // A shard file holds its shard alone: resuming one must find the same
    // shard of the same sweep there.
    const std::optional<ShardInfo> &held = schedule.shard;
    if (shard && (!held || held->sweep != shard->sweep ||
                  held->index != shard->index || held->count != shard->count))
      throw Error(
          "--out: " + out + " holds " +
          (held ? "shard " + held->str() + " of sweep " + held->sweep
                : std::string("a schedule that is no shard")) +
          ", not shard " + shard->str() + " of sweep " + shard->sweep +
          " (a shard writes its own file: name another --out)");
    if (!shard && held)
      throw Error("--out: " + out + " is shard " + held->str() + " of sweep " +
                  held->sweep + " (tune it with the same options and --shard " +
                  held->str() + ", or name another --out)");
  }
  schedule.toolVersion = "lowbit " LOWBIT_VERSION;
  schedule.cpuModel = cpu.model;
  schedule.cpuFeatures = hostFeatureNames();
  if (shard) {
    schedule.shard = shard;
    schedule.shard->complete = false;
  }
  TuneJournal journal(out + ".journal");
  if (journal.exists()) {
    std::vector<ScheduleEntry> recovered = journal.recover();
    for (ScheduleEntry &entry : recovered)
      schedule.set(entry);
    if (!recovered.empty())
      if (llvm::Error error = schedule.write(out))
        throw Error(llvm::toString(std::move(error)));
    journal.clear();
    std::fprintf(stderr,
                 "tune: merged %zu decided entries of an interrupted run "
                 "from %s\n",
                 recovered.size(), journal.path().c_str());
  }
  if (shard) {
    // Resuming: the problems decided by an earlier run of this shard (its
    // file, and the decisions its journal kept) are not tuned again.
    size_t all = problems.size();
    problems.erase(std::remove_if(problems.begin(), problems.end(),
                                  [&](const TuningProblem &p) {
                                    return schedule.lookup(p.key) != nullptr;
                                  }),
                   problems.end());
    std::fprintf(stderr,
                 "tune: shard %s of sweep %s: %zu of the sweep's %lld "
                 "problems, %zu already decided in %s, %zu to tune\n",
                 shard->str().c_str(), shard->sweep.c_str(), all,
                 (long long)shard->sweepProblems, all - problems.size(),
                 out.c_str(), problems.size());
    if (problems.empty())
      schedule.shard->complete = true;
    if (llvm::Error error = schedule.write(out))
      throw Error(llvm::toString(std::move(error)));
    if (problems.empty())
      return 0;
  }

  Printer printer(schedule, out, journal, problems.size(), severalThreads);
  // One thread pool (and read probe) per thread count, one after another;
  // the problems of a count get the share of what is left of the budget
  // that their number is of the problems left.
  std::signal(SIGINT, onInterrupt);
  std::vector<TuneOutcome> outcomes;
  std::vector<std::pair<int, Budget>> costs; // per thread count
  size_t left = problems.size();
  for (int threads : threadCounts) {
    std::vector<TuningProblem> group;
    for (const TuningProblem &p : problems)
      if (p.key.threads == threads)
        group.push_back(p);
    if (group.empty())
      continue;
    if (interrupted || !printer.saveError.empty())
      break;
    double now = monotonicSeconds();
    TunerOptions groupOptions = tunerOptions;
    groupOptions.budgetSeconds = (tunerOptions.budgetSeconds - (now - start)) *
                                 double(group.size()) / double(left);
    left -= group.size();
    ThreadPool pool(threads);
    std::fprintf(stderr,
                 "tune: measuring the read bandwidth (1 GiB, %d "
                 "threads)...\n",
                 threads);
    ReadProbe probe(pool);
    std::unique_ptr<Int8Peak> peak;
    std::string peakIsa = peak_isa_for(target);
    bool gemm = false;
    for (const TuningProblem &p : group)
      gemm |= p.n > 1;
    if (gemm && !peakIsa.empty())
      peak = std::make_unique<Int8Peak>(pool, peakIsa);
    KernelMeasurer measurer(pool, probe, peak.get(), reps, options.has("warm"),
                            interrupted);
    Tuner tuner(measurer, groupOptions, &printer, &journal);
    std::vector<TuneOutcome> done = tuner.run(group, now);
    outcomes.insert(outcomes.end(), done.begin(), done.end());
    costs.push_back({threads, tuner.getBudget()});
  }
  std::signal(SIGINT, SIG_DFL);
  if (!printer.saveError.empty())
    throw Error(printer.saveError);
  // Every decision is in OUT now; the measurements are in the output.
  journal.clear();
  // A shard that went through all its problems is complete (undecided ones
  // included: the merge names them); one stopped midway is not.
  if (shard && !interrupted && outcomes.size() == problems.size()) {
    schedule.shard->complete = true;
    if (llvm::Error error = schedule.write(out))
      throw Error(llvm::toString(std::move(error)));
    printer.written = true;
  }

  std::printf("\n%-32s %6s %10s %10s %8s  %-14s %s\n", "problem", "tried",
              "heur. us", "tuned us", "speedup", "decision", "config");
  size_t tried = 0, failed = 0, decided = 0;
  for (const TuneOutcome &o : outcomes) {
    tried += o.tried;
    failed += o.failed;
    decided += o.entry.has_value();
    std::string decision = toString(o.status);
    std::string label = labelOf(o.key, o.label, severalThreads);
    if (!o.entry) {
      std::printf("%-32s %6zu %10s %10s %8s  %-14s %s\n", label.c_str(),
                  o.tried, "-", "-", "-", decision.c_str(),
                  o.note.empty() ? "(no entry)" : o.note.c_str());
      continue;
    }
    std::printf("%-32s %6zu %10.1f %10.1f %7.2fx  %-14s %s\n", label.c_str(),
                o.tried, o.entry->heuristicUs, o.entry->us,
                o.entry->heuristicUs / o.entry->us, decision.c_str(),
                o.entry->config.c_str());
  }
  std::printf("\ntune: %zu candidates timed, %zu failed, %zu of %zu problems "
              "decided in %.0f s of the %.0f s budget%s; %s %s\n",
              tried, failed, decided, problems.size(), monotonicSeconds() - start,
              tunerOptions.budgetSeconds, interrupted ? " (interrupted)" : "",
              printer.written ? "wrote" : "nothing written to", out.c_str());
  for (const auto &[threads, budget] : costs)
    std::printf("tune: %sa candidate took %.1f s (compiling, verifying, one "
                "timing), a confirmation %.1f s (%d rounds)\n",
                severalThreads ? ("threads " + std::to_string(threads) + ": ").c_str()
                               : "",
                budget.candidateCost(),
                budget.confirmationCost(tunerOptions.confirmationTimings),
                tunerOptions.confirmRounds);
  return interrupted ? 130 : 0;
}

const Command &tuneCommand() {
  static const Command command{
      {"tune",
       "Search kernel configs per shape and write the winners to a schedule "
       "file.",
       "For every shape, format, N class (--n: 1 is GEMV, one N > 1 the GEMM "
       "class) and allowed\nstrategy, the candidates are the search space "
       "the dialect declares next to each config\nattribute (pruned by the "
       "attributes' verifiers), the heuristic's config first. They are\n"
       "compiled in batches (one shared object per batch), each is checked "
       "against the reference\nin a child process (a failing, crashing or "
       "hanging candidate is reported and skipped)\nand timed like 'lowbit "
       "bench' (GEMV cold, each rep paired with a read-bandwidth probe;\n"
       "GEMM warm, paired with the int8 peak). On spirv-* targets each "
       "candidate is checked in this\nprocess and timed by its warm "
       "dispatches (the fence, no upload or read back).\n\n"
       "The best candidate must then beat the heuristic in 5 alternating "
       "re-timings: its median\npaired ratio by more than 3% and every "
       "round. When the median wins but a round does not,\nthe host is too "
       "noisy to decide: tune says so and writes no entry. Only decided "
       "problems\nare written (the winner, or the heuristic that held); "
       "Ctrl-C stops, keeps the problems\ndecided so far and never writes "
       "an unconfirmed candidate.\n\n"
       "The budget counts everything from the start (the bandwidth probe, "
       "compiling, verifying,\ntiming, the confirmation): tune learns what "
       "a candidate costs, shares what is left\nevenly among the problems "
       "and starts no candidate or problem that would not finish in\ntime. "
       "Candidates are visited in grid order, or in an order drawn from "
       "--seed (same seed,\nsame points). Every measurement and decision is "
       "appended to OUT.journal at once; OUT is\nrewritten after each "
       "decided problem (merged with its existing entries; the decisions "
       "in\na journal left by a crash are merged first). Prints heuristic vs "
       "tuned time per problem\nat the end. Use the file with 'lowbit "
       "run/bench/compile --schedule OUT'.\n\n"
       "--shard I/N splits the sweep (every problem of the options) into N "
       "shards by their\ncandidate counts, the same split in every job, and "
       "tunes shard I into OUT, which\nrecords the shard (its problems, the "
       "sweep's name, whether the run finished). A re-run\nof a killed shard "
       "skips the problems it decided. 'lowbit schedule merge' joins the "
       "N\nfiles and names a shard that is missing or did not finish "
       "(docs/tuning-sweeps.md).\n",
       withShapeOptions({{"format", "F[,F...]", "weight formats", true},
        {"strategy", "S[,S...]",
         "strategies to search (default: every one with kernels for the "
         "format on the target)"},
        {"target", "T", "target (default native)"},
        {"n", "LIST", "N classes: 1 (GEMV, default) and/or one N > 1 (GEMM)"},
        {"threads", "N[,N...]",
         "threads, or several counts: each is a dimension of the sweep, "
         "tuned with its own thread pool (default: the CPUs this process "
         "may use)"},
        {"budget", "SECONDS",
         "wall-time budget of the whole run (default 240: a whole "
         "bitnet-b1.58-2b for one format in 4 minutes)"},
        {"seed", "N",
         "visit candidates in an order drawn from N (default: "
         "grid order)"},
        {"max-candidates", "K",
         "at most K candidates per problem besides the heuristic (0: time "
         "and record the heuristic alone)"},
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
        {"shard", "I/N",
         "tune shard I (0 to N-1) of the sweep the other options name: "
         "every job of a sweep computes the same split, each problem in "
         "one shard; needs --out (but with --list), a file of this shard "
         "alone, and a re-run resumes it"},
        {"out", "FILE",
         "schedule file (default schedules/<cpu-model>.json under the "
         "current directory, which is created if missing)"}})},
      runTune};
  return command;
}

} // namespace lowbit::cli
