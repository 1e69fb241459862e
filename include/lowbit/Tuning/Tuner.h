//===- Tuner.h - the autotuner's search, budget and decision ----*- C++ -*-===//
//
// The tuner walks each problem's candidate queue (Search.h): it compiles
// the candidates in batches, verifies each against the reference, times
// the survivors and keeps the best; then it re-times the best and the
// heuristic in alternating rounds and lets the best replace the heuristic
// only when `decide` says it won beyond the noise. Compiling, verifying
// and timing are injected (Measurer): `lowbit tune` implements them with
// the kernel cache and `lowbit bench`'s paired timing, a test with a fake.
//
// The budget counts every second from the start of the run (the caller's
// setup included) and the tuner starts no step it expects not to finish:
// the costs of compiling, verifying and timing one candidate are learned
// as the run goes, the first batch of a problem is the heuristic alone,
// later batches are cut to what fits, and the confirmation's time is kept
// aside before any candidate after the heuristic starts.
//
// A problem ends with a schedule entry only when its decision was made:
// the confirmed winner or the heuristic that held. A stop request (Ctrl-C),
// a budget that ran out before the decision or a host too noisy to tell
// leave no entry, so an unconfirmed candidate is never saved.
//
//===----------------------------------------------------------------------===//

#ifndef LOWBIT_TUNING_TUNER_H
#define LOWBIT_TUNING_TUNER_H

#include "lowbit/Tuning/Schedule.h"
#include "lowbit/Tuning/Search.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mlir::lowbit {

class TuneJournal;

/// One timing of a candidate.
struct Measurement {
  double us = 0;     // median time per call
  double gbps = 0;   // packed weight bytes / us
  double score = 0;  // higher is better: the paired ratio to the roofline
  std::string error; // "" or why it could not be timed
};

/// Seconds on the steady clock (Measurer::now's default).
double monotonicSeconds();

/// What the tuner needs done for it. The library is built without
/// exceptions: an implementation reports every failure in its return value
/// and never lets an exception out.
class Measurer {
public:
  virtual ~Measurer();
  /// Makes `problem`'s data (weights, activations, the reference's answers)
  /// for the calls that follow, seeded by `index` (its TuningProblem::index
  /// in the sweep); "" or what went wrong.
  virtual std::string prepare(const TuningProblem &problem, size_t index) = 0;
  /// Compiles `batch` (candidates of the prepared problem); per candidate,
  /// "" or why it did not compile.
  virtual std::vector<std::string>
  compile(const std::vector<Candidate> &batch) = 0;
  /// Checks a compiled candidate against the reference, counting it as hung
  /// after `deadline` seconds; "" or what went wrong.
  virtual std::string verify(const Candidate &candidate, double deadline) = 0;
  /// Times a verified candidate once.
  virtual Measurement time(const Candidate &candidate) = 0;
  /// Times `a` and `b` in `rounds` rounds, `a` then `b` in each, and gives
  /// each round's pair; by default time(a), time(b) per round. An
  /// implementation that can alternate single reps within one setup (one
  /// set of cold copies) makes the confirmation cheaper.
  virtual std::vector<std::pair<Measurement, Measurement>>
  timeRounds(const Candidate &a, const Candidate &b, int rounds);
  /// Seconds on a monotonic clock (the budget's).
  virtual double now();
  /// Whether to stop (Ctrl-C): nothing more is started.
  virtual bool stopRequested() { return false; }
};

/// How the confirmation of a problem ended.
enum class Verdict {
  Winner,         // the candidate won every round and the median by the margin
  HeuristicHolds, // its median ratio did not beat the heuristic by the margin
  TooNoisy,       // the median says it won, but it lost a round: noise as
                  // large as the win, so nothing is decided
};

struct Confirmation {
  Verdict verdict = Verdict::HeuristicHolds;
  // The candidate's score over the heuristic's, per round: median and range.
  double medianRatio = 0, lowRatio = 0, highRatio = 0;
};

/// The decision rule. Round i timed the heuristic (scores h[i]) and the
/// candidate (c[i]) one after the other, so c[i] / h[i] compares one
/// moment of the host. The candidate wins when the median ratio exceeds
/// 1 + margin and no round's ratio is at or below 1; a median past the
/// margin with a lost round is TooNoisy. `h` and `c` are equally long and
/// not empty.
Confirmation decide(const std::vector<double> &h, const std::vector<double> &c,
                    double margin);

/// Where a run's seconds go, learned as it goes.
class Budget {
public:
  Budget(double seconds, double start) : end_(start + seconds) {}
  double end() const { return end_; }
  void addPrepare(double seconds) { prepare_.add(seconds, 1); }
  void addCompile(double seconds, size_t kernels) {
    compile_.add(seconds, kernels);
  }
  void addVerify(double seconds) { verify_.add(seconds, 1); }
  void addTiming(double seconds) { timing_.add(seconds, 1); }
  void addConfirmation(double seconds) { confirm_.add(seconds, 1); }
  /// Whether one compile, one verification and one timing were seen.
  bool known() const { return compile_.n && verify_.n && timing_.n; }
  /// Compiling, verifying and timing one candidate (running means).
  double candidateCost() const {
    return compile_.mean() + verify_.mean() + timing_.mean();
  }
  /// One timing (running mean).
  double timingCost() const { return timing_.mean(); }
  /// Preparing one problem (running mean).
  double prepareCost() const { return prepare_.mean(); }
  /// One confirmation: the running mean, or before the first, `timings`
  /// times what one timing costs.
  double confirmationCost(double timings) const {
    return confirm_.n ? confirm_.mean() : timings * timing_.mean();
  }

private:
  struct Mean {
    double sum = 0;
    size_t n = 0;
    void add(double seconds, size_t count) {
      sum += seconds;
      n += count;
    }
    double mean() const { return n ? sum / double(n) : 0; }
  };
  double end_;
  Mean prepare_, compile_, verify_, timing_, confirm_;
};

struct TunerOptions {
  double budgetSeconds = 240;
  size_t batch = 8;      // candidates per compile
  int confirmRounds = 5; // alternating timings of heuristic and winner
  double margin = 0.03;  // the paired ratio's run-to-run noise here
  double verifyDeadline = 60;
  /// What a confirmation costs in timings, until one was measured: two per
  /// round with Measurer::timeRounds' default.
  double confirmationTimings = 2 * 5;
};

enum class TuneStatus {
  Winner,        // the entry is the confirmed winner
  HeuristicKept, // the entry is the heuristic (nothing beat it)
  TooNoisy,      // no entry: the confirmation could not decide
  Failed,        // no entry: the problem or its heuristic failed (note)
  OutOfBudget,   // no entry: the budget ran out before a decision
  Interrupted,   // no entry: stopped before a decision
};

/// "winner", "heuristic kept", "too noisy", ...
const char *toString(TuneStatus status);

struct TuneOutcome {
  ScheduleKey key;
  std::string label;
  TuneStatus status = TuneStatus::OutOfBudget;
  std::optional<ScheduleEntry> entry; // Winner and HeuristicKept only
  size_t tried = 0;                   // candidates verified (and timed)
  size_t failed = 0; // candidates that did not compile, verify or time
  std::optional<Measurement> heuristic, best; // from the search
  std::optional<Confirmation> confirmation;
  std::string note; // Failed: what went wrong
};

/// Reports as the tuner goes (all optional).
class TuneObserver {
public:
  virtual ~TuneObserver();
  virtual void problemStarted(const TuningProblem &) {}
  virtual void candidateFailed(const Candidate &, const std::string &) {}
  virtual void candidateTimed(const Candidate &, const Measurement &) {}
  /// `done` of `total` candidates of the problem; `eta` seconds left in all.
  virtual void progress(const TuningProblem &, size_t, size_t, double) {}
  /// After each problem, before the next starts (save here); false stops
  /// the run (the problems left are not started).
  virtual bool problemDone(const TuneOutcome &) { return true; }
};

class Tuner {
public:
  Tuner(Measurer &measurer, TunerOptions options,
        TuneObserver *observer = nullptr, TuneJournal *journal = nullptr);

  /// Tunes `problems` in order; the budget counts from `start` (a
  /// Measurer::now() time, so that the caller's setup is counted).
  std::vector<TuneOutcome> run(const std::vector<TuningProblem> &problems,
                               double start);
  /// What the last run learned about its costs.
  const Budget &getBudget() const { return *budget; }

private:
  TuneOutcome tune(const TuningProblem &problem, size_t index,
                   double deadline);
  /// Times the heuristic and `best` alternately for confirmRounds rounds
  /// and decides; nullopt when stopped or when a timing failed.
  std::optional<Confirmation> confirm(const Candidate &heuristic,
                                      const Candidate &best,
                                      Measurement &heuristicMedian,
                                      Measurement &bestMedian);
  Measurement timeOnce(const Candidate &candidate);
  /// What deciding a problem costs at least: its data, its heuristic, one
  /// candidate and the confirmation (0 before the first problem ran).
  double leastCost() const;
  bool fits(double seconds) const;
  /// A stop request, or a journal that cannot be written.
  bool stopping();
  void record(const ScheduleKey &key, const Candidate &candidate,
              const std::string &error, const Measurement *measurement);

  Measurer &measurer;
  TunerOptions options;
  TuneObserver *observer;
  TuneJournal *journal;
  std::optional<Budget> budget;
  std::string journalError;
};

} // namespace mlir::lowbit

#endif // LOWBIT_TUNING_TUNER_H
