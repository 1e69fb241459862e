//===- SweepTests.cpp - tests of lib/Tuning's shard split and merge -------===//
//
// The split of a sweep into shards (every problem in exactly one, the same
// split whatever the order of the problems, pinned to assignments worked
// out by hand) and the merge rules of shard files (a key twice, another
// device, a missing or unfinished shard, files that disagree).
//
//===----------------------------------------------------------------------===//

#include "lowbit/Tuning/Sweep.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

namespace mlir::lowbit {
namespace {

ScheduleKey key(const std::string &format, int64_t m, int64_t k) {
  return {format, m, k, "gemv", "x86-avx2", 2};
}

/// Some problems of a sweep: `n` keys with weights from a few sizes.
void sweep(size_t n, uint64_t seed, std::vector<ScheduleKey> &keys,
           std::vector<size_t> &weights) {
  std::mt19937_64 random(seed);
  const size_t sizes[] = {1, 13, 13, 63, 64, 120};
  keys.clear();
  weights.clear();
  for (size_t i = 0; i < n; ++i) {
    keys.push_back(key(i % 2 ? "tl2" : "i2s", 64 * int64_t(i + 1), 256));
    weights.push_back(sizes[random() % 6]);
  }
}

TEST(SweepShard, ParsesIOfN) {
  llvm::Expected<ShardInfo> shard = parseShardSpec("2/3");
  ASSERT_TRUE(bool(shard));
  EXPECT_EQ(shard->index, 2);
  EXPECT_EQ(shard->count, 3);
  EXPECT_EQ(shard->str(), "2/3");
  for (const char *bad :
       {"3/3", "1/0", "x", "1", "/3", "1/", "-1/3", "1/3/4", "a/b", "1 /3"}) {
    llvm::Expected<ShardInfo> wrong = parseShardSpec(bad);
    EXPECT_FALSE(bool(wrong)) << bad;
    if (!wrong)
      llvm::consumeError(wrong.takeError());
  }
  llvm::Expected<ShardInfo> past = parseShardSpec("3/3");
  ASSERT_FALSE(bool(past));
  EXPECT_EQ(llvm::toString(past.takeError()),
            "shard 3 of 3 does not exist: I counts from 0 to N-1 (2 here), as "
            "$SLURM_ARRAY_TASK_ID of --array=0-2 does");
}

TEST(SweepShard, EveryProblemInExactlyOneShard) {
  std::vector<ScheduleKey> keys;
  std::vector<size_t> weights;
  for (size_t n : {1, 2, 5, 8, 17, 40})
    for (int64_t count = 1; count <= 7; ++count) {
      sweep(n, n * 31 + uint64_t(count), keys, weights);
      std::vector<int64_t> shard = assignShards(keys, weights, count);
      ASSERT_EQ(shard.size(), n);
      // What every job of the sweep does: take the problems of its shard.
      std::map<ScheduleKey, int> taken;
      size_t most = *std::max_element(weights.begin(), weights.end());
      std::vector<size_t> load(size_t(count), 0);
      for (int64_t index = 0; index < count; ++index)
        for (size_t i = 0; i < n; ++i)
          if (shard[i] == index) {
            ++taken[keys[i]];
            load[size_t(index)] += weights[i];
          }
      ASSERT_EQ(taken.size(), n) << n << " problems, " << count << " shards";
      for (const auto &[k, times] : taken)
        EXPECT_EQ(times, 1) << k.str();
      // Greedy list scheduling: no shard carries more than the lightest
      // one plus one problem.
      auto [low, high] = std::minmax_element(load.begin(), load.end());
      EXPECT_LE(*high, *low + most) << n << " problems, " << count;
      // With at least as many problems as shards, none is empty.
      if (n >= size_t(count))
        EXPECT_GT(*low, 0u) << n << " problems, " << count;
    }
}

TEST(SweepShard, SameSplitInAnyOrder) {
  std::vector<ScheduleKey> keys;
  std::vector<size_t> weights;
  sweep(23, 5, keys, weights);
  std::vector<int64_t> shard = assignShards(keys, weights, 4);
  std::map<ScheduleKey, int64_t> expected;
  for (size_t i = 0; i < keys.size(); ++i)
    expected[keys[i]] = shard[i];
  std::vector<size_t> order(keys.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  for (uint64_t seed : {1, 2, 3}) {
    std::shuffle(order.begin(), order.end(), std::mt19937_64(seed));
    std::vector<ScheduleKey> k;
    std::vector<size_t> w;
    for (size_t i : order) {
      k.push_back(keys[i]);
      w.push_back(weights[i]);
    }
    std::vector<int64_t> again = assignShards(k, w, 4);
    for (size_t i = 0; i < k.size(); ++i)
      EXPECT_EQ(again[i], expected[k[i]]) << k[i].str();
  }
}

TEST(SweepShard, PinnedSplit) {
  // bitnet-like problems: three i2s shapes of 63 candidates, two tl2 of 13.
  // Worked out by hand: heaviest first, ties by key (format, M, K), each to
  // the lightest shard, ties to the lowest index.
  std::vector<ScheduleKey> keys = {
      key("tl2", 2560, 2560), key("i2s", 2560, 6912), key("i2s", 640, 2560),
      key("tl2", 640, 2560), key("i2s", 2560, 2560)};
  std::vector<size_t> weights = {13, 63, 63, 13, 63};
  // 2 shards: i2s 640 -> 0, i2s 2560x2560 -> 1, i2s 2560x6912 -> 0 (63/63),
  // tl2 640 -> 1 (126/63), tl2 2560 -> 1 (126/76).
  EXPECT_EQ(assignShards(keys, weights, 2),
            (std::vector<int64_t>{1, 0, 0, 1, 1}));
  // 3 shards: the i2s shapes 0, 1, 2 in key order; tl2 640 -> 0, then tl2
  // 2560 -> 1 (loads 76, 63, 63).
  EXPECT_EQ(assignShards(keys, weights, 3),
            (std::vector<int64_t>{1, 2, 0, 0, 1}));
  // More shards than problems: the last ones are empty.
  EXPECT_EQ(assignShards(keys, weights, 7),
            (std::vector<int64_t>{4, 2, 0, 3, 1}));
}

TEST(SweepShard, SweepIdNamesTheSetOfProblems) {
  std::vector<ScheduleKey> keys = {key("i2s", 64, 256), key("tl2", 96, 256),
                                   key("i2s", 32, 512)};
  std::string id = sweepId(keys);
  EXPECT_EQ(id.size(), 16u);
  EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos);
  std::reverse(keys.begin(), keys.end());
  EXPECT_EQ(sweepId(keys), id);
  keys[0].threads = 4;
  EXPECT_NE(sweepId(keys), id);
  keys.pop_back();
  EXPECT_NE(sweepId(keys), id);
}

ScheduleEntry entry(const ScheduleKey &k, const std::string &config, double us,
                    const std::string &heuristic, double heuristicUs) {
  ScheduleEntry e;
  e.key = k;
  e.config = config;
  e.us = us;
  e.gbps = 1;
  e.heuristicConfig = heuristic;
  e.heuristicUs = heuristicUs;
  return e;
}

/// A schedule as a file named `name` holds it (written and read back).
Schedule file(const std::string &name,
              const std::vector<ScheduleEntry> &entries,
              std::optional<ShardInfo> shard = std::nullopt,
              const std::string &cpu = "AMD EPYC 9B45") {
  Schedule s;
  s.toolVersion = "lowbit 0.1.0";
  s.cpuModel = cpu;
  s.cpuFeatures = {"avx2", "avx512vnni"};
  s.shard = shard;
  for (const ScheduleEntry &e : entries)
    s.set(e);
  llvm::Expected<Schedule> read = Schedule::parse(s.str(), name);
  EXPECT_TRUE(bool(read)) << (read ? "" : llvm::toString(read.takeError()));
  return std::move(*read);
}

ShardInfo shardOf(int64_t index, int64_t count,
                  const std::vector<ScheduleKey> &problems,
                  int64_t sweepProblems, bool complete = true) {
  ShardInfo shard;
  shard.index = index;
  shard.count = count;
  shard.sweep = "00000000000000ab";
  shard.sweepProblems = sweepProblems;
  shard.complete = complete;
  shard.problems = problems;
  return shard;
}

::testing::AssertionResult startsWith(const std::string &text,
                                      const std::string &prefix) {
  if (text.compare(0, prefix.size(), prefix) == 0)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << text << "' does not start "
                                       << "with '" << prefix << "'";
}

std::string mergeError(const std::vector<Schedule> &inputs,
                       const MergeOptions &options = {}) {
  llvm::Expected<MergeResult> result = mergeSchedules(inputs, options);
  if (result)
    return "(merged)";
  return llvm::toString(result.takeError());
}

const ScheduleKey a = key("i2s", 64, 256), b = key("i2s", 96, 256),
                  c = key("tl2", 64, 256);

TEST(SweepMerge, ShardFileRoundTrip) {
  Schedule s = file("s1.json", {entry(a, "#x", 2, "#h", 3)},
                    shardOf(1, 3, {a, b}, 5, false));
  ASSERT_TRUE(s.shard);
  EXPECT_EQ(s.shard->index, 1);
  EXPECT_EQ(s.shard->count, 3);
  EXPECT_EQ(s.shard->sweep, "00000000000000ab");
  EXPECT_EQ(s.shard->sweepProblems, 5);
  EXPECT_FALSE(s.shard->complete);
  ASSERT_EQ(s.shard->problems.size(), 2u);
  EXPECT_EQ(s.shard->problems[1], b);
  EXPECT_EQ(s.version, 2);
  // A shard index past its count is one error naming the field.
  std::string text = s.str();
  size_t at = text.find("\"index\": 1");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 10, "\"index\": 3");
  llvm::Expected<Schedule> bad = Schedule::parse(text, "bad.json");
  ASSERT_FALSE(bool(bad));
  EXPECT_EQ(llvm::toString(bad.takeError()),
            "schedule 'bad.json': shard: \"index\" must be an integer from 0 "
            "to 2 (count - 1)");
}

TEST(SweepMerge, ShardsJoinAndUndecidedAreNamed) {
  // Shard 0 decided a and b; shard 1 decided nothing of c (too noisy).
  Schedule s0 =
      file("s0.json", {entry(a, "#a", 2, "#h", 2), entry(b, "#b", 3, "#h", 4)},
           shardOf(0, 2, {a, b}, 3));
  Schedule s1 = file("s1.json", {}, shardOf(1, 2, {c}, 3));
  llvm::Expected<MergeResult> result = mergeSchedules({s0, s1}, {});
  ASSERT_TRUE(bool(result)) << llvm::toString(result.takeError());
  ASSERT_EQ(result->merged.getEntries().size(), 2u);
  EXPECT_EQ(result->merged.lookup(b)->config, "#b");
  EXPECT_FALSE(result->merged.shard);
  EXPECT_EQ(result->merged.cpuModel, "AMD EPYC 9B45");
  EXPECT_EQ(result->sweepProblems, 3u);
  EXPECT_EQ(result->sweepDecided, 2u);
  ASSERT_EQ(result->notes.size(), 1u);
  EXPECT_EQ(result->notes[0],
            "format=tl2 M=64 K=256 n_class=gemv target=x86-avx2 threads=2: "
            "no entry (shard 1/2 of sweep 00000000000000ab did not decide "
            "it: too noisy, failed or out of budget; see its log)");
}

TEST(SweepMerge, KeyTwiceKeepsTheConfirmedFaster) {
  // Both timed heuristic #h: #fast won 1.25x over it in its run, #slow
  // 1.1x; #slow's run was on a quieter moment (lower us), which does not
  // make it faster.
  Schedule x = file("x.json", {entry(a, "#slow", 9, "#h", 9.9)});
  Schedule y = file("y.json", {entry(a, "#fast", 10, "#h", 12.5)});
  for (bool swap : {false, true}) {
    llvm::Expected<MergeResult> result =
        swap ? mergeSchedules({y, x}, {}) : mergeSchedules({x, y}, {});
    ASSERT_TRUE(bool(result));
    EXPECT_EQ(result->merged.lookup(a)->config, "#fast");
    ASSERT_EQ(result->notes.size(), 1u);
    EXPECT_NE(result->notes[0].find("kept the entry of 'y.json' (the "
                                    "confirmed faster)"),
              std::string::npos)
        << result->notes[0];
  }
  EXPECT_NE(
      mergeSchedules({x, y}, {})
          ->notes[0]
          .find("in 'x.json' (#slow, 9 us, 1.100x its heuristic) and 'y.json' "
                "(#fast, 10 us, 1.250x its heuristic)"),
      std::string::npos);
  // Different heuristics (another run's default): by time.
  Schedule z = file("z.json", {entry(a, "#z", 8, "#h2", 8)});
  EXPECT_EQ(mergeSchedules({y, z}, {})->merged.lookup(a)->config, "#z");
  // The same config twice: one entry, said so.
  Schedule w = file("w.json", {entry(a, "#fast", 11, "#h", 12.5)});
  llvm::Expected<MergeResult> same = mergeSchedules({w, y}, {});
  EXPECT_EQ(same->merged.lookup(a)->us, 10);
  EXPECT_NE(same->notes[0].find("(the same config, the faster measurement)"),
            std::string::npos);
}

TEST(SweepMerge, AnotherDeviceIsRefusedUnlessAsked) {
  Schedule x = file("x.json", {entry(a, "#a", 2, "#h", 2)});
  Schedule y = file("y.json", {entry(b, "#b", 2, "#h", 2)}, std::nullopt,
                    "Intel Xeon 8480");
  EXPECT_EQ(mergeError({x, y}),
            "schedule 'y.json' was tuned on 'Intel Xeon 8480' (avx2 "
            "avx512vnni), 'x.json' on 'AMD EPYC 9B45' (avx2 avx512vnni): a "
            "schedule is for one device (--mixed-devices merges them anyway)");
  MergeOptions mixed;
  mixed.mixedDevices = true;
  llvm::Expected<MergeResult> result = mergeSchedules({x, y}, mixed);
  ASSERT_TRUE(bool(result));
  EXPECT_EQ(result->merged.getEntries().size(), 2u);
  EXPECT_EQ(result->merged.cpuModel, "AMD EPYC 9B45");
  ASSERT_EQ(result->notes.size(), 1u);
}

TEST(SweepMerge, MissingOrUnfinishedShardIsNamed) {
  Schedule s0 =
      file("s0.json", {entry(a, "#a", 2, "#h", 2)}, shardOf(0, 3, {a}, 3));
  Schedule s1 = file("s1.json", {}, shardOf(1, 3, {b}, 3, false));
  Schedule s2 =
      file("s2.json", {entry(c, "#c", 2, "#h", 2)}, shardOf(2, 3, {c}, 3));
  EXPECT_EQ(mergeError({s0, s2}),
            "sweep 00000000000000ab: shard 1/3 is missing (re-run or resubmit "
            "it: a shard resumes where it stopped; --allow-missing merges "
            "without it)");
  EXPECT_TRUE(startsWith(mergeError({s2, s1, s0}),
                         "sweep 00000000000000ab: shard 1/3 ('s1.json') did "
                         "not finish (re-run or resubmit it"));
  EXPECT_TRUE(startsWith(mergeError({s0}),
                         "sweep 00000000000000ab: shard 1/3 is missing, shard "
                         "2/3 is missing (re-run"));
  MergeOptions allow;
  allow.allowMissing = true;
  llvm::Expected<MergeResult> result = mergeSchedules({s0, s2}, allow);
  ASSERT_TRUE(bool(result));
  EXPECT_EQ(result->merged.getEntries().size(), 2u);
  // The rerun of shard 1 finished: with it the sweep is whole.
  Schedule s1done = file("s1-rerun.json", {entry(b, "#b", 2, "#h", 2)},
                         shardOf(1, 3, {b}, 3));
  result = mergeSchedules({s0, s1, s1done, s2}, {});
  ASSERT_TRUE(bool(result)) << llvm::toString(result.takeError());
  EXPECT_EQ(result->sweepDecided, 3u);
  EXPECT_TRUE(result->notes.empty());
}

TEST(SweepMerge, FilesThatDisagreeAreRefused) {
  Schedule s0 = file("s0.json", {}, shardOf(0, 2, {a}, 2));
  Schedule s1 = file("s1.json", {}, shardOf(1, 3, {b}, 2));
  EXPECT_EQ(mergeError({s0, s1}),
            "schedule 's1.json' is shard 1/3 of sweep 00000000000000ab with 2 "
            "problems, 's0.json' a shard of 2 with 2: the files of one sweep "
            "disagree");
  Schedule both = file("s1.json", {}, shardOf(1, 2, {a, b}, 2));
  EXPECT_EQ(mergeError({s0, both}),
            "schedule 's1.json' (shard 1/2) lists format=i2s M=64 K=256 "
            "n_class=gemv target=x86-avx2 threads=2, which sweep "
            "00000000000000ab gave to shard 0/2: the files of one sweep "
            "disagree");
  Schedule few = file("s1.json", {}, shardOf(1, 2, {}, 2));
  EXPECT_EQ(mergeError({s0, few}),
            "sweep 00000000000000ab: its 2 shards list 1 problems, the sweep "
            "has 2: the files of one sweep disagree");
  llvm::Expected<Schedule> v1 =
      Schedule::parse(R"({"version": 1, "entries": []})", "old.json");
  ASSERT_TRUE(bool(v1));
  EXPECT_TRUE(startsWith(mergeError({s0, *v1}),
                         "schedule 'old.json' is version 1: it records no "
                         "device and no measurements"));
}

} // namespace
} // namespace mlir::lowbit
