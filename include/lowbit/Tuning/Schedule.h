//===- Schedule.h - tuned configs keyed by problem --------------*- C++ -*-===//
//
// A schedule file (schedules/<device>.json) maps a problem to the config
// the tuner found best for it. Version 2 (what `lowbit tune` writes):
//
//   {"version": 2,
//    "tool_version": "lowbit 0.1.0",
//    "cpu": {"model": "AMD EPYC ...", "features": ["avx2", "avx512f", ...]},
//    "entries": [
//     {"format": "i2s", "M": 2560, "K": 2560, "n_class": "gemv",
//      "target": "x86-avx512vnni", "threads": 2,
//      "config": "#lowbit.upconvert<tile_m = 16, tile_k = 64, tile_n = 1>",
//      "us": 41.5, "gbps": 39.9,
//      "heuristic_config": "#lowbit.upconvert<...>", "heuristic_us": 44.0}]}
//
// Version 1 is the same without "tool_version", "cpu" and the measurement
// fields of the entries ("us", "gbps", "heuristic_config", "heuristic_us");
// both are read, anything else is rejected. Entries are unique per key and
// written sorted by key.
//
// A file that `lowbit tune --shard I/N` writes also has, after "cpu", the
// shard it holds (Sweep.h): its index and count, the sweep's name (a hash
// of all the sweep's problem keys) and problem count, this shard's
// problems (decided or not) and whether its run went through all of them:
//
//   "shard": {"index": 1, "count": 3, "sweep": "5f0e2c1a9b3d4e77",
//             "sweep_problems": 8, "complete": true,
//             "problems": [{"format": "i2s", "M": 640, "K": 2560,
//                           "n_class": "gemv", "target": "x86-avx2",
//                           "threads": 2}, ...]}
//
// Readers that only look up entries ignore it.
//
// This header reads, indexes, merges and writes the file;
// lowbit-select-config parses and verifies the config strings against the
// op they are for.
//
//===----------------------------------------------------------------------===//

#ifndef LOWBIT_TUNING_SCHEDULE_H
#define LOWBIT_TUNING_SCHEDULE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::lowbit {

/// What a schedule entry is for. `nClass` is "gemv" (N = 1) or "gemm".
struct ScheduleKey {
  std::string format;
  int64_t m = 0, k = 0;
  std::string nClass;
  std::string target;
  int64_t threads = 0;

  bool operator==(const ScheduleKey &other) const;
  /// The file's order: format, M, K, n_class, target, threads.
  bool operator<(const ScheduleKey &other) const;
  /// `format=i2s M=2560 K=2560 n_class=gemv target=... threads=2`.
  std::string str() const;
};

/// The part of a sweep a shard file holds (`lowbit tune --shard I/N`).
struct ShardInfo {
  int64_t index = 0, count = 1; // shard `index` of `count`, 0-based
  std::string sweep;            // sweepId() of all the sweep's problems
  int64_t sweepProblems = 0;    // how many problems the sweep has
  bool complete = false;        // the run went through all its problems
  std::vector<ScheduleKey> problems; // this shard's, decided or not

  /// `1/3`.
  std::string str() const;
};

struct ScheduleEntry {
  ScheduleKey key;
  std::string config; // an attribute, e.g. "#lowbit.upconvert<...>"
  size_t index = 0;   // position in "entries" of the file it was read from
  // Measurements (version 2; 0 / "" in a version-1 file).
  double us = 0;   // the config's median time per call
  double gbps = 0; // packed weight bytes / us
  std::string heuristicConfig;
  double heuristicUs = 0; // the heuristic's config, timed in the same run
};

class Schedule {
public:
  static constexpr int64_t kVersion = 2;

  /// Reads and checks the file at `path`. Every error is one line starting
  /// with "schedule '<path>': " and naming the entry (`entries[3]`) and
  /// field at fault; nothing of a file with an error is used.
  static llvm::Expected<Schedule> load(llvm::StringRef path);
  /// Checks schedule `text`; `name` is used in errors.
  static llvm::Expected<Schedule> parse(llvm::StringRef text,
                                        llvm::StringRef name);

  /// The entry for `key`, or null.
  const ScheduleEntry *lookup(const ScheduleKey &key) const;
  llvm::StringRef getName() const { return name; }

  /// Adds `entry`, replacing the entry of the same key.
  void set(ScheduleEntry entry);
  /// The entries in file order (set() appends new keys).
  const std::vector<ScheduleEntry> &getEntries() const { return entries; }

  /// The version the file was read in (kVersion for a new schedule).
  int64_t version = kVersion;
  /// Who wrote the file and for which CPU (version 2).
  std::string toolVersion, cpuModel;
  std::vector<std::string> cpuFeatures;
  /// The shard of a sweep this file holds, if it is a shard file.
  std::optional<ShardInfo> shard;

  /// The version-2 text: entries sorted by key, pretty-printed.
  std::string str() const;
  /// Writes str() to `path` atomically (a temporary file renamed over it).
  llvm::Error write(llvm::StringRef path) const;

private:
  std::string name;
  std::vector<ScheduleEntry> entries;
};

} // namespace mlir::lowbit

#endif // LOWBIT_TUNING_SCHEDULE_H
