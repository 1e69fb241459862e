//===- Sweep.h - a tuning sweep split into shards and merged ----*- C++ -*-===//
//
// A sweep is every problem one `lowbit tune` command line names (model or
// shapes x formats x N classes, at one thread count and target). On a
// cluster it is split into N shards, each tuned by its own job on a node
// of the device kind (`lowbit tune --shard I/N`), and the shard files are
// merged into the device's schedule (`lowbit schedule merge`).
//
// The split depends only on the set of problems and their candidate
// counts, never on the order the options list them, so every job of a
// sweep computes the same split on its own; every problem lands in
// exactly one shard. The merge refuses what would silently give a wrong
// or partial schedule: files of another device, a shard that is missing or
// whose run did not finish (each named), shard files of one sweep that
// disagree.
//
//===----------------------------------------------------------------------===//

#ifndef LOWBIT_TUNING_SWEEP_H
#define LOWBIT_TUNING_SWEEP_H

#include "lowbit/Tuning/Schedule.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::lowbit {

/// Parses `I/N` (0 <= I < N, N >= 1) into a ShardInfo's index and count.
llvm::Expected<ShardInfo> parseShardSpec(llvm::StringRef text);

/// The shard (0 .. count-1) of each problem: `keys[i]` is a problem whose
/// search has `weights[i]` candidates (its cost, roughly: each candidate is
/// compiled, verified and timed). Longest processing time first (R. L.
/// Graham, "Bounds on Multiprocessing Timing Anomalies", 1969): the
/// problems by descending weight, ties by key, each to the shard with the
/// least weight so far, ties to the lowest index. The keys are distinct;
/// the result does not depend on their order.
std::vector<int64_t> assignShards(const std::vector<ScheduleKey> &keys,
                                  const std::vector<size_t> &weights,
                                  int64_t count);

/// The sweep's name: 16 hex digits of xxh3-64 over its problem keys, sorted
/// (the same set of problems gives the same name in any order).
std::string sweepId(std::vector<ScheduleKey> keys);

/// The device a schedule was tuned on: its CPU model and features.
std::string deviceOf(const Schedule &schedule);

/// Whether entry `a` is the confirmed faster of two entries of one key.
/// When both runs timed the same heuristic config, by the speedup over it
/// (heuristic_us / us, each ratio taken within one run, so runs at
/// different moments of a noisy host compare fairly), else by `us`.
bool fasterEntry(const ScheduleEntry &a, const ScheduleEntry &b);

struct MergeOptions {
  /// Merge files tuned on different devices (the first file's CPU is
  /// written).
  bool mixedDevices = false;
  /// Merge although a shard is missing or did not finish.
  bool allowMissing = false;
};

struct MergeResult {
  Schedule merged;
  /// What the merge decided and found, one line each: a key present
  /// twice (which entry was kept and why), a shard allowed missing, the
  /// problems of the sweep that have no entry.
  std::vector<std::string> notes;
  /// Problems of the shards' sweeps, and how many of them have an entry.
  size_t sweepProblems = 0, sweepDecided = 0;
};

/// Merges `inputs` (version-2 schedules, shard files or not) into one
/// schedule: a key in several files keeps the fasterEntry. Errors name the
/// file: a version-1 file (no device, no measurements), another device
/// (unless options.mixedDevices), shards of one sweep with different
/// counts or problems, a missing or unfinished shard (unless
/// options.allowMissing).
llvm::Expected<MergeResult> mergeSchedules(const std::vector<Schedule> &inputs,
                                           const MergeOptions &options);

} // namespace mlir::lowbit

#endif // LOWBIT_TUNING_SWEEP_H
