//===- Tuner.cpp - the autotuner's search, budget and decision ------------===//

#include "lowbit/Tuning/Tuner.h"
#include "lowbit/Tuning/Journal.h"

#include "llvm/Support/Error.h"

#include <algorithm>
#include <chrono>

using namespace mlir::lowbit;

namespace {

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

ScheduleEntry entryOf(const ScheduleKey &key, const Candidate &chosen,
                      const Measurement &measured, const Candidate &heuristic,
                      const Measurement &heuristicMeasured) {
  ScheduleEntry entry;
  entry.key = key;
  entry.config = chosen.config;
  entry.us = measured.us;
  entry.gbps = measured.gbps;
  entry.heuristicConfig = heuristic.config;
  entry.heuristicUs = heuristicMeasured.us;
  return entry;
}

} // namespace

Measurer::~Measurer() = default;
TuneObserver::~TuneObserver() = default;

double mlir::lowbit::monotonicSeconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double Measurer::now() { return monotonicSeconds(); }

std::vector<std::pair<Measurement, Measurement>>
Measurer::timeRounds(const Candidate &a, const Candidate &b, int rounds) {
  std::vector<std::pair<Measurement, Measurement>> pairs;
  for (int round = 0; round < rounds && !stopRequested(); ++round) {
    Measurement first = time(a);
    pairs.push_back({first, time(b)});
  }
  return pairs;
}

Confirmation mlir::lowbit::decide(const std::vector<double> &h,
                                  const std::vector<double> &c,
                                  double margin) {
  std::vector<double> ratios;
  for (size_t i = 0; i < h.size() && i < c.size(); ++i)
    ratios.push_back(h[i] > 0 ? c[i] / h[i] : 0.0);
  Confirmation result;
  result.medianRatio = median(ratios);
  result.lowRatio = *std::min_element(ratios.begin(), ratios.end());
  result.highRatio = *std::max_element(ratios.begin(), ratios.end());
  if (result.medianRatio <= 1 + margin)
    result.verdict = Verdict::HeuristicHolds;
  else if (result.lowRatio <= 1)
    result.verdict = Verdict::TooNoisy;
  else
    result.verdict = Verdict::Winner;
  return result;
}

const char *mlir::lowbit::toString(TuneStatus status) {
  switch (status) {
  case TuneStatus::Winner:
    return "winner";
  case TuneStatus::HeuristicKept:
    return "heuristic kept";
  case TuneStatus::TooNoisy:
    return "too noisy";
  case TuneStatus::Failed:
    return "failed";
  case TuneStatus::OutOfBudget:
    return "out of budget";
  case TuneStatus::Interrupted:
    return "interrupted";
  }
  return "?";
}

Tuner::Tuner(Measurer &measurer, TunerOptions options, TuneObserver *observer,
             TuneJournal *journal)
    : measurer(measurer), options(options), observer(observer),
      journal(journal) {}

double Tuner::leastCost() const {
  return budget->prepareCost() + 2 * budget->candidateCost() +
         budget->confirmationCost(options.confirmationTimings);
}

bool Tuner::fits(double seconds) const {
  return measurer.now() + seconds <= budget->end();
}

bool Tuner::stopping() {
  return !journalError.empty() || measurer.stopRequested();
}

void Tuner::record(const ScheduleKey &key, const Candidate &candidate,
                   const std::string &error, const Measurement *measurement) {
  if (!journal || !journalError.empty())
    return;
  llvm::json::Object fields{{"config", candidate.config}};
  if (measurement) {
    fields["heuristic"] = candidate.heuristic;
    fields["us"] = measurement->us;
    fields["gbps"] = measurement->gbps;
    fields["score"] = measurement->score;
  } else {
    fields["error"] = error;
  }
  if (llvm::Error e = journal->append(key, std::move(fields)))
    journalError = llvm::toString(std::move(e));
}

Measurement Tuner::timeOnce(const Candidate &candidate) {
  double start = measurer.now();
  Measurement m = measurer.time(candidate);
  budget->addTiming(measurer.now() - start);
  return m;
}

std::vector<TuneOutcome>
Tuner::run(const std::vector<TuningProblem> &problems, double start) {
  budget.emplace(options.budgetSeconds, start);
  journalError.clear();
  std::vector<TuneOutcome> outcomes;
  for (size_t i = 0; i < problems.size(); ++i) {
    const TuningProblem &problem = problems[i];
    double least = leastCost();
    TuneOutcome outcome;
    if (stopping()) {
      outcome.status = TuneStatus::Interrupted;
    } else if (budget->known() && !fits(least)) {
      outcome.status = TuneStatus::OutOfBudget;
    } else {
      // An even share of what is left, never less than the least.
      double now = measurer.now();
      double share = (budget->end() - now) / double(problems.size() - i);
      double deadline = std::min(budget->end(), now + std::max(share, least));
      outcome = tune(problem, problem.index, deadline);
    }
    outcome.key = problem.key;
    outcome.label = problem.label();
    if (outcome.entry && journal && journalError.empty()) {
      if (llvm::Error e =
              journal->appendDecision(*outcome.entry, toString(outcome.status)))
        journalError = llvm::toString(std::move(e));
    }
    if (!journalError.empty() && outcome.status != TuneStatus::Failed) {
      outcome.status = TuneStatus::Failed;
      outcome.entry.reset();
      outcome.note = journalError;
    }
    bool go = !observer || observer->problemDone(outcome);
    outcomes.push_back(std::move(outcome));
    if (!go)
      break;
  }
  return outcomes;
}

TuneOutcome Tuner::tune(const TuningProblem &problem, size_t index,
                        double deadline) {
  TuneOutcome outcome;
  if (observer)
    observer->problemStarted(problem);
  double problemStart = measurer.now();
  std::string error = measurer.prepare(problem, index);
  budget->addPrepare(measurer.now() - problemStart);
  if (!error.empty()) {
    outcome.status = TuneStatus::Failed;
    outcome.note = error;
    return outcome;
  }
  const std::vector<Candidate> &queue = problem.queue;
  const Candidate &heuristic = queue.front();
  const Candidate *best = nullptr;
  std::string heuristicError;
  double confirmation = 0; // seconds kept aside for the confirmation
  size_t done = 0;
  bool stopped = false;
  for (size_t next = 0; next < queue.size() && !stopped;) {
    // The heuristic alone first (its costs size the later batches), then
    // what fits before the problem's deadline besides the confirmation.
    size_t size = 1;
    if (next > 0) {
      confirmation = budget->confirmationCost(options.confirmationTimings);
      double room = deadline - measurer.now() - confirmation;
      double cost = std::max(budget->candidateCost(), 1e-9);
      size = room > 0 ? std::min({options.batch, queue.size() - next,
                                  size_t(room / cost)})
                      : 0;
      if (size == 0) {
        outcome.status = TuneStatus::OutOfBudget;
        break;
      }
    }
    std::vector<Candidate> batch(queue.begin() + long(next),
                                 queue.begin() + long(next + size));
    next += size;
    double compileStart = measurer.now();
    std::vector<std::string> errors = measurer.compile(batch);
    budget->addCompile(measurer.now() - compileStart, batch.size());
    for (size_t i = 0; i < batch.size(); ++i) {
      if (stopping()) {
        stopped = true;
        break;
      }
      const Candidate &candidate = batch[i];
      std::string problemText = i < errors.size() ? errors[i] : "";
      if (problemText.empty()) {
        double verifyStart = measurer.now();
        double left = budget->end() - verifyStart;
        problemText = measurer.verify(
            candidate, std::clamp(left, 1.0, options.verifyDeadline));
        budget->addVerify(measurer.now() - verifyStart);
      }
      Measurement m;
      if (problemText.empty()) {
        m = timeOnce(candidate);
        problemText = m.error;
      }
      ++done;
      if (!problemText.empty()) {
        ++outcome.failed;
        if (candidate.heuristic)
          heuristicError = problemText;
        record(problem.key, candidate, problemText, nullptr);
        if (observer)
          observer->candidateFailed(candidate, problemText);
      } else {
        ++outcome.tried;
        record(problem.key, candidate, "", &m);
        if (observer)
          observer->candidateTimed(candidate, m);
        if (candidate.heuristic)
          outcome.heuristic = m;
        if (!outcome.best || m.score > outcome.best->score) {
          outcome.best = m;
          best = &queue[next - batch.size() + i];
        }
      }
      if (observer) {
        double now = measurer.now();
        double thisProblem =
            std::min(std::max(0.0, deadline - now),
                     double(queue.size() - done) * budget->candidateCost() +
                         confirmation);
        observer->progress(problem, done, queue.size(),
                           std::min(budget->end() - now,
                                    thisProblem + (budget->end() - deadline)));
      }
    }
    if (!outcome.heuristic && !stopped && !stopping()) {
      outcome.status = TuneStatus::Failed;
      outcome.note = "the heuristic's config failed: " + heuristicError;
      return outcome;
    }
    // The first problem's share was drawn before any cost was known: it
    // gets at least what deciding costs, if the budget has it.
    deadline = std::min(budget->end(),
                        std::max(deadline, problemStart + leastCost()));
  }
  if (stopped || stopping()) {
    outcome.status = TuneStatus::Interrupted;
    return outcome;
  }
  if (!outcome.heuristic)
    return outcome; // out of budget before the heuristic was timed
  if (best == &heuristic || best->config == heuristic.config) {
    // Nothing timed beat the heuristic; with candidates left untried for
    // the budget that is no decision.
    if (done < queue.size() && outcome.tried < 2)
      return outcome;
    outcome.status = TuneStatus::HeuristicKept;
    outcome.entry = entryOf(problem.key, heuristic, *outcome.heuristic,
                            heuristic, *outcome.heuristic);
    return outcome;
  }
  if (!fits(budget->confirmationCost(options.confirmationTimings))) {
    outcome.status = TuneStatus::OutOfBudget;
    return outcome;
  }
  Measurement heuristicMedian, bestMedian;
  std::optional<Confirmation> confirmed =
      confirm(heuristic, *best, heuristicMedian, bestMedian);
  if (!confirmed) {
    if (stopping()) {
      outcome.status = TuneStatus::Interrupted;
    } else {
      outcome.status = TuneStatus::Failed;
      outcome.note = "a timing of the confirmation failed";
    }
    return outcome;
  }
  outcome.confirmation = confirmed;
  switch (confirmed->verdict) {
  case Verdict::Winner:
    outcome.status = TuneStatus::Winner;
    outcome.entry = entryOf(problem.key, *best, bestMedian, heuristic,
                            heuristicMedian);
    break;
  case Verdict::HeuristicHolds:
    outcome.status = TuneStatus::HeuristicKept;
    outcome.entry = entryOf(problem.key, heuristic, heuristicMedian, heuristic,
                            heuristicMedian);
    break;
  case Verdict::TooNoisy:
    outcome.status = TuneStatus::TooNoisy;
    break;
  }
  return outcome;
}

std::optional<Confirmation> Tuner::confirm(const Candidate &heuristic,
                                           const Candidate &best,
                                           Measurement &heuristicMedian,
                                           Measurement &bestMedian) {
  double start = measurer.now();
  std::vector<std::pair<Measurement, Measurement>> rounds =
      measurer.timeRounds(heuristic, best, options.confirmRounds);
  budget->addConfirmation(measurer.now() - start);
  if (stopping() || rounds.size() != size_t(options.confirmRounds))
    return std::nullopt;
  std::vector<double> hScores, bScores, hUs, bUs, hGbps, bGbps;
  for (const auto &[h, b] : rounds) {
    if (!h.error.empty() || !b.error.empty())
      return std::nullopt;
    hScores.push_back(h.score);
    bScores.push_back(b.score);
    hUs.push_back(h.us);
    bUs.push_back(b.us);
    hGbps.push_back(h.gbps);
    bGbps.push_back(b.gbps);
  }
  heuristicMedian.us = median(hUs);
  heuristicMedian.gbps = median(hGbps);
  heuristicMedian.score = median(hScores);
  bestMedian.us = median(bUs);
  bestMedian.gbps = median(bGbps);
  bestMedian.score = median(bScores);
  return decide(hScores, bScores, options.margin);
}
