//===- TunerTests.cpp - tests of lib/Tuning's tuner with a fake measurer --===//
//
// The tuner's rules with a Measurer whose clock, costs and scores the test
// sets: no real compiling or timing, so these run in milliseconds.
//
//===----------------------------------------------------------------------===//

#include "lowbit/Tuning/Journal.h"
#include "lowbit/Tuning/Search.h"
#include "lowbit/Tuning/Tuner.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>

#include <unistd.h>

namespace mlir::lowbit {
namespace {

namespace fs = std::filesystem;

/// A measurer on a fake clock: every step costs what the test says, and a
/// candidate's score is its true score times noise(config, timing number).
class FakeMeasurer : public Measurer {
public:
  std::string prepare(const TuningProblem &, size_t) override {
    clock += 0.1;
    return prepareError;
  }
  std::vector<std::string> compile(const std::vector<Candidate> &batch) override {
    clock += compileCost * double(batch.size());
    compiled += batch.size();
    return std::vector<std::string>(batch.size());
  }
  std::string verify(const Candidate &c, double) override {
    clock += verifyCost;
    return wrong.count(c.config) ? "N=1: Y[0][3] = 2, want 1" : "";
  }
  Measurement time(const Candidate &c) override {
    clock += timeCost;
    ++timings;
    Measurement m;
    m.score = score.at(c.config) * noise(c.config, timings);
    m.us = 100 / m.score;
    m.gbps = m.score * 10;
    timed.push_back(c.config);
    return m;
  }
  double now() override { return clock; }
  bool stopRequested() override { return stopAt && timings >= stopAt; }

  double clock = 1000;
  double compileCost = 1, verifyCost = 0.5, timeCost = 0.25;
  std::map<std::string, double> score;
  std::function<double(const std::string &, int)> noise =
      [](const std::string &, int) { return 1.0; };
  std::set<std::string> wrong;
  std::string prepareError;
  int stopAt = 0; // stop once this many timings were taken (0: never)
  int timings = 0;
  size_t compiled = 0;
  std::vector<std::string> timed;
};

/// A problem whose queue is the heuristic "h" then "c1".."cN".
TuningProblem problem(int m, size_t candidates) {
  TuningProblem p;
  p.key = {"i2s", m, 256, "gemv", "x86-avx2", 2};
  p.queue.push_back({"h", "upconvert", true});
  for (size_t i = 1; i <= candidates; ++i)
    p.queue.push_back({"c" + std::to_string(i), "upconvert", false});
  return p;
}

/// Scores: the heuristic 1, every candidate 0.9 but `better` (its score).
FakeMeasurer measurer(size_t candidates, const std::string &better = "",
                      double betterScore = 1) {
  FakeMeasurer f;
  f.score["h"] = 1;
  for (size_t i = 1; i <= candidates; ++i)
    f.score["c" + std::to_string(i)] = 0.9;
  if (!better.empty())
    f.score[better] = betterScore;
  return f;
}

TunerOptions plenty() {
  TunerOptions options;
  options.budgetSeconds = 1000;
  options.batch = 4;
  return options;
}

TEST(TunerDecide, WinsOnlyByTheMarginInEveryRound) {
  EXPECT_EQ(decide({1, 1, 1, 1, 1}, {1.2, 1.1, 1.3, 1.2, 1.15}, 0.03).verdict,
            Verdict::Winner);
  // The median within the margin: the heuristic holds.
  EXPECT_EQ(decide({1, 1, 1, 1, 1}, {1.02, 1.0, 1.03, 1.01, 1.02}, 0.03).verdict,
            Verdict::HeuristicHolds);
  EXPECT_EQ(decide({1, 1, 1}, {0.91, 0.9, 0.95}, 0.03).verdict,
            Verdict::HeuristicHolds);
  // The median wins by 25%, one round lost: noise as large as the win.
  Confirmation noisy =
      decide({1, 1, 1, 1, 1}, {1.25, 0.8, 1.3, 1.25, 0.97}, 0.03);
  EXPECT_EQ(noisy.verdict, Verdict::TooNoisy);
  EXPECT_DOUBLE_EQ(noisy.medianRatio, 1.25);
  EXPECT_DOUBLE_EQ(noisy.lowRatio, 0.8);
  EXPECT_DOUBLE_EQ(noisy.highRatio, 1.3);
  // Ratios are per round: a host that halves both in one round is no loss.
  EXPECT_EQ(decide({1, 0.5, 1}, {1.1, 0.55, 1.1}, 0.03).verdict,
            Verdict::Winner);
}

TEST(TunerSearch, HeuristicFirstSeededOrderAndCap) {
  std::vector<Candidate> space;
  for (int i = 0; i < 10; ++i)
    space.push_back({"c" + std::to_string(i), "upconvert", false});
  Candidate heuristic{"c4", "upconvert", false};
  SearchOptions grid;
  std::vector<Candidate> queue = orderCandidates(heuristic, space, grid, 0);
  ASSERT_EQ(queue.size(), 10u);
  EXPECT_EQ(queue[0].config, "c4");
  EXPECT_TRUE(queue[0].heuristic);
  EXPECT_EQ(queue[1].config, "c0");
  EXPECT_EQ(queue[4].config, "c3");
  EXPECT_EQ(queue[5].config, "c5");

  SearchOptions seeded;
  seeded.seed = 3;
  seeded.maxCandidates = 5;
  std::vector<Candidate> a = orderCandidates(heuristic, space, seeded, 0);
  EXPECT_EQ(a, orderCandidates(heuristic, space, seeded, 0));
  EXPECT_NE(a, orderCandidates(heuristic, space, seeded, 1));
  ASSERT_EQ(a.size(), 6u);
  std::set<std::string> seen;
  for (size_t i = 1; i < a.size(); ++i) {
    EXPECT_NE(a[i].config, "c4");
    EXPECT_FALSE(a[i].heuristic);
    seen.insert(a[i].config);
  }
  EXPECT_EQ(seen.size(), 5u);
}

TEST(Tuner, ConfirmedWinnerIsTheEntry) {
  FakeMeasurer f = measurer(3, "c2", 1.2);
  Tuner tuner(f, plenty());
  std::vector<TuneOutcome> out = tuner.run({problem(64, 3)}, f.now());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].status, TuneStatus::Winner);
  ASSERT_TRUE(out[0].entry);
  EXPECT_EQ(out[0].entry->config, "c2");
  EXPECT_EQ(out[0].entry->heuristicConfig, "h");
  EXPECT_DOUBLE_EQ(out[0].entry->us, 100 / 1.2);
  EXPECT_DOUBLE_EQ(out[0].entry->heuristicUs, 100);
  EXPECT_EQ(out[0].tried, 4u);
  // 4 search timings, then 5 rounds of heuristic and winner alternately.
  ASSERT_EQ(f.timed.size(), 14u);
  for (size_t i = 4; i < 14; i += 2) {
    EXPECT_EQ(f.timed[i], "h");
    EXPECT_EQ(f.timed[i + 1], "c2");
  }
}

TEST(Tuner, HeuristicAloneIsKept) {
  // A queue of the heuristic alone (--max-candidates 0) is decided once it
  // is timed: nothing was left untried.
  FakeMeasurer f = measurer(0);
  Tuner tuner(f, plenty());
  std::vector<TuneOutcome> out = tuner.run({problem(64, 0)}, f.now());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].status, TuneStatus::HeuristicKept);
  ASSERT_TRUE(out[0].entry);
  EXPECT_EQ(out[0].entry->config, "h");
  EXPECT_EQ(f.timed.size(), 1u);
}

TEST(Tuner, LuckyCandidateIsNotSaved) {
  // c1 timed 1.3x in the search (one lucky moment) but 0.91x of the
  // heuristic in every confirmation round.
  FakeMeasurer f = measurer(2, "c1", 0.91);
  f.noise = [](const std::string &config, int timing) {
    return config == "c1" && timing == 2 ? 1.3 / 0.91 : 1.0;
  };
  Tuner tuner(f, plenty());
  std::vector<TuneOutcome> out = tuner.run({problem(64, 2)}, f.now());
  EXPECT_EQ(out[0].status, TuneStatus::HeuristicKept);
  ASSERT_TRUE(out[0].entry);
  EXPECT_EQ(out[0].entry->config, "h");
  ASSERT_TRUE(out[0].confirmation);
  EXPECT_NEAR(out[0].confirmation->medianRatio, 0.91, 1e-12);
}

TEST(Tuner, NoisyHostDecidesNothing) {
  // The candidate wins by 30% in most rounds and loses one.
  FakeMeasurer f = measurer(1, "c1", 1.3);
  f.noise = [](const std::string &config, int timing) {
    return config == "c1" && timing == 8 ? 0.7 : 1.0;
  };
  Tuner tuner(f, plenty());
  std::vector<TuneOutcome> out = tuner.run({problem(64, 1)}, f.now());
  EXPECT_EQ(out[0].status, TuneStatus::TooNoisy);
  EXPECT_FALSE(out[0].entry);
  EXPECT_LT(out[0].confirmation->lowRatio, 1);
}

TEST(Tuner, InterruptSavesOnlyDecidedProblems) {
  // The first problem is decided; the second is stopped after its search
  // found a (better) candidate, before the confirmation.
  FakeMeasurer f = measurer(2, "c1", 1.5);
  f.stopAt = 13 + 3;
  Tuner tuner(f, plenty());
  std::vector<TuneOutcome> out =
      tuner.run({problem(64, 2), problem(128, 2), problem(256, 2)}, f.now());
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].status, TuneStatus::Winner);
  EXPECT_EQ(out[1].status, TuneStatus::Interrupted);
  EXPECT_FALSE(out[1].entry);
  EXPECT_EQ(out[1].best->score, 1.5);
  EXPECT_EQ(out[2].status, TuneStatus::Interrupted);
  EXPECT_EQ(f.timings, 16);
}

TEST(Tuner, ObserverStopsTheRun) {
  // An observer that cannot save the first decision stops the run.
  struct Refuse : TuneObserver {
    bool problemDone(const TuneOutcome &) override { return false; }
  } refuse;
  FakeMeasurer f = measurer(2, "c1", 1.5);
  Tuner tuner(f, plenty(), &refuse);
  std::vector<TuneOutcome> out =
      tuner.run({problem(64, 2), problem(128, 2)}, f.now());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].status, TuneStatus::Winner);
  EXPECT_EQ(f.timings, 13);
}

TEST(Tuner, BudgetIsRespected) {
  // 20 candidates per problem at 1.75 s each, a 2.5 s confirmation, three
  // problems (about 120 s): each budget must hold, the caller's setup
  // included.
  for (double budget : {15.0, 25.0, 40.0, 70.0}) {
    FakeMeasurer f = measurer(20, "c7", 1.2);
    TunerOptions options = plenty();
    options.budgetSeconds = budget;
    Tuner tuner(f, options);
    double start = f.now();
    f.clock += 2; // the caller's setup counts
    std::vector<TuneOutcome> out = tuner.run(
        {problem(64, 20), problem(128, 20), problem(256, 20)}, start);
    EXPECT_LE(f.now() - start, budget) << "budget " << budget;
    EXPECT_LT(f.compiled, 60u) << "budget " << budget;
    // The confirmation's time was kept aside: a problem that searched
    // past its heuristic reached a decision.
    for (const TuneOutcome &o : out) {
      if (o.tried > 1)
        EXPECT_NE(o.status, TuneStatus::OutOfBudget) << "budget " << budget;
      if (o.status == TuneStatus::Winner)
        EXPECT_EQ(o.entry->config, "c7");
    }
  }
  // With room for everything, everything is decided.
  FakeMeasurer f = measurer(20, "c7", 1.2);
  Tuner tuner(f, plenty());
  std::vector<TuneOutcome> out =
      tuner.run({problem(64, 20), problem(128, 20)}, f.now());
  EXPECT_EQ(out[0].status, TuneStatus::Winner);
  EXPECT_EQ(out[1].status, TuneStatus::Winner);
}

TEST(Tuner, BudgetTooSmallForAnyCandidateDecidesNothing) {
  FakeMeasurer f = measurer(5, "c1", 2);
  TunerOptions options = plenty();
  options.budgetSeconds = 3;
  Tuner tuner(f, options);
  std::vector<TuneOutcome> out =
      tuner.run({problem(64, 5), problem(128, 5)}, f.now());
  EXPECT_EQ(out[0].status, TuneStatus::OutOfBudget);
  EXPECT_FALSE(out[0].entry);
  EXPECT_EQ(out[1].status, TuneStatus::OutOfBudget);
  EXPECT_EQ(f.compiled, 1u); // the first heuristic only
}

TEST(Tuner, FailingCandidatesAndHeuristic) {
  FakeMeasurer f = measurer(2, "c1", 3);
  f.wrong = {"c1"};
  Tuner tuner(f, plenty());
  std::vector<TuneOutcome> out = tuner.run({problem(64, 2)}, f.now());
  EXPECT_EQ(out[0].status, TuneStatus::HeuristicKept);
  EXPECT_EQ(out[0].failed, 1u);
  EXPECT_EQ(out[0].entry->config, "h");

  f.wrong = {"h"};
  out = tuner.run({problem(64, 2)}, f.now());
  EXPECT_EQ(out[0].status, TuneStatus::Failed);
  EXPECT_FALSE(out[0].entry);
  EXPECT_EQ(out[0].note, "the heuristic's config failed: N=1: Y[0][3] = 2, "
                         "want 1");

  f.prepareError = "q4_0 needs K % 32 == 0";
  out = tuner.run({problem(64, 2)}, f.now());
  EXPECT_EQ(out[0].status, TuneStatus::Failed);
  EXPECT_EQ(out[0].note, "q4_0 needs K % 32 == 0");
}

TEST(TuneJournal, OnlyDecisionsAreRecovered) {
  fs::path path = fs::temp_directory_path() /
                  ("lowbit-journal-test-" + std::to_string(::getpid()));
  TuneJournal journal(path.string());
  journal.clear();
  EXPECT_FALSE(journal.exists());
  FakeMeasurer f = measurer(2, "c2", 1.5);
  Tuner tuner(f, plenty(), nullptr, &journal);
  tuner.run({problem(64, 2)}, f.now());
  // The search and the decision were journaled; a second problem's search
  // without a decision (a crash) must not become an entry.
  ScheduleKey other = problem(128, 2).key;
  ASSERT_FALSE(llvm::errorToBool(
      journal.append(other, llvm::json::Object{{"config", "c1"},
                                               {"heuristic", false},
                                               {"us", 1.0},
                                               {"gbps", 1.0},
                                               {"score", 9.0}})));
  {
    std::ofstream cut(path, std::ios::app);
    cut << "{\"decision\": \"winner\", \"format\": \"i2s\", \"M\": 12";
  }
  std::vector<ScheduleEntry> entries = journal.recover();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].key, problem(64, 2).key);
  EXPECT_EQ(entries[0].config, "c2");
  EXPECT_EQ(entries[0].heuristicConfig, "h");
  journal.clear();
  EXPECT_FALSE(journal.exists());
}

} // namespace
} // namespace mlir::lowbit
