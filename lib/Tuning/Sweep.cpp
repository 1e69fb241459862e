//===- Sweep.cpp - a tuning sweep split into shards and merged ------------===//

#include "lowbit/Tuning/Sweep.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <algorithm>
#include <map>
#include <numeric>

using namespace llvm;
using namespace mlir::lowbit;

Expected<ShardInfo> mlir::lowbit::parseShardSpec(StringRef text) {
  auto [first, second] = text.split('/');
  ShardInfo shard;
  unsigned long long index = 0, count = 0;
  if (!text.contains('/') || getAsUnsignedInteger(first, 10, index) ||
      getAsUnsignedInteger(second, 10, count) || count == 0 || count > 100000)
    return createStringError("expected I/N (shard I of N, 0 <= I < N), got '" +
                             text + "'");
  if (index >= count)
    return createStringError(
        formatv("shard {0} of {1} does not exist: I counts from 0 to N-1 "
                "({2} here), as $SLURM_ARRAY_TASK_ID of --array=0-{2} does",
                index, count, count - 1));
  shard.index = int64_t(index);
  shard.count = int64_t(count);
  return shard;
}

std::vector<int64_t>
mlir::lowbit::assignShards(const std::vector<ScheduleKey> &keys,
                           const std::vector<size_t> &weights, int64_t count) {
  std::vector<size_t> order(keys.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (weights[a] != weights[b])
      return weights[a] > weights[b];
    return keys[a] < keys[b];
  });
  std::vector<size_t> load(size_t(count), 0);
  std::vector<int64_t> shard(keys.size(), 0);
  for (size_t problem : order) {
    size_t least = size_t(std::min_element(load.begin(), load.end()) -
                          load.begin()); // the first of equal loads
    shard[problem] = int64_t(least);
    load[least] += weights[problem];
  }
  return shard;
}

std::string mlir::lowbit::sweepId(std::vector<ScheduleKey> keys) {
  std::sort(keys.begin(), keys.end());
  std::string text;
  for (const ScheduleKey &key : keys)
    text += key.str() + "\n";
  std::string id;
  raw_string_ostream(id) << format_hex_no_prefix(xxh3_64bits(text), 16);
  return id;
}

std::string mlir::lowbit::deviceOf(const Schedule &schedule) {
  return "'" + schedule.cpuModel + "' (" + join(schedule.cpuFeatures, " ") +
         ")";
}

bool mlir::lowbit::fasterEntry(const ScheduleEntry &a, const ScheduleEntry &b) {
  if (a.heuristicConfig == b.heuristicConfig && a.us > 0 && b.us > 0)
    return a.heuristicUs / a.us > b.heuristicUs / b.us;
  return a.us < b.us;
}

namespace {

std::string measured(const ScheduleEntry &entry) {
  return formatv("{0}, {1} us, {2}x its heuristic", entry.config,
                 format("%.4g", entry.us),
                 format("%.3f", entry.heuristicUs / entry.us))
      .str();
}

/// What the inputs say about one sweep.
struct SweepFiles {
  int64_t count = 0, problems = 0;
  std::string firstFile;
  std::map<int64_t, std::string> present; // shard index -> a file of it
  std::map<int64_t, std::string> unfinished;
  std::map<ScheduleKey, int64_t> keys; // problem -> its shard
};

} // namespace

Expected<MergeResult>
mlir::lowbit::mergeSchedules(const std::vector<Schedule> &inputs,
                             const MergeOptions &options) {
  if (inputs.empty())
    return createStringError("nothing to merge");
  MergeResult result;
  const Schedule &first = inputs.front();
  std::map<std::string, SweepFiles> sweeps;
  for (const Schedule &input : inputs) {
    StringRef name = input.getName();
    if (input.version < 2)
      return createStringError(
          "schedule '" + name +
          "' is version 1: it records no device and no measurements to "
          "merge by (merge reads what lowbit tune writes, version 2)");
    if (deviceOf(input) != deviceOf(first)) {
      if (!options.mixedDevices)
        return createStringError(
            "schedule '" + name + "' was tuned on " + deviceOf(input) + ", '" +
            first.getName() + "' on " + deviceOf(first) +
            ": a schedule is for one device (--mixed-devices merges them "
            "anyway)");
      result.notes.push_back("'" + name.str() + "' was tuned on " +
                             deviceOf(input) +
                             " (merged as asked; the file "
                             "names " +
                             deviceOf(first) + ")");
    }
    if (!input.shard)
      continue;
    const ShardInfo &shard = *input.shard;
    SweepFiles &sweep = sweeps[shard.sweep];
    if (sweep.firstFile.empty()) {
      sweep.firstFile = name.str();
      sweep.count = shard.count;
      sweep.problems = shard.sweepProblems;
    } else if (sweep.count != shard.count ||
               sweep.problems != shard.sweepProblems) {
      return createStringError(formatv(
          "schedule '{0}' is shard {1} of sweep {2} with {3} problems, "
          "'{4}' a shard of {5} with {6}: the files of one sweep disagree",
          name, shard.str(), shard.sweep, shard.sweepProblems, sweep.firstFile,
          sweep.count, sweep.problems));
    }
    for (const ScheduleKey &key : shard.problems) {
      auto [it, added] = sweep.keys.insert({key, shard.index});
      if (!added && it->second != shard.index)
        return createStringError(formatv(
            "schedule '{0}' (shard {1}) lists {2}, which sweep {3} gave to "
            "shard {4}/{5}: the files of one sweep disagree",
            name, shard.str(), key.str(), shard.sweep, it->second,
            shard.count));
    }
    if (shard.complete)
      sweep.present[shard.index] = name.str();
    else
      sweep.unfinished.insert({shard.index, name.str()});
  }

  for (auto &[id, sweep] : sweeps) {
    std::vector<std::string> missing;
    for (int64_t index = 0; index < sweep.count; ++index) {
      if (sweep.present.count(index))
        continue;
      std::string shard =
          std::to_string(index) + "/" + std::to_string(sweep.count);
      auto unfinished = sweep.unfinished.find(index);
      missing.push_back(unfinished == sweep.unfinished.end()
                            ? "shard " + shard + " is missing"
                            : "shard " + shard + " ('" + unfinished->second +
                                  "') did not finish");
    }
    if (!missing.empty()) {
      std::string what = "sweep " + id + ": " + join(missing, ", ");
      if (!options.allowMissing)
        return createStringError(
            what + " (re-run or resubmit it: a shard resumes where it "
                   "stopped; --allow-missing merges without it)");
      result.notes.push_back(what + " (merged without it, as asked)");
    } else if (int64_t(sweep.keys.size()) != sweep.problems) {
      return createStringError(formatv(
          "sweep {0}: its {1} shards list {2} problems, the sweep has {3}: "
          "the files of one sweep disagree",
          id, sweep.count, sweep.keys.size(), sweep.problems));
    }
  }

  Schedule &merged = result.merged;
  merged.toolVersion = first.toolVersion;
  merged.cpuModel = first.cpuModel;
  merged.cpuFeatures = first.cpuFeatures;
  std::map<ScheduleKey, std::string> from; // key -> the file of its entry
  for (const Schedule &input : inputs) {
    for (const ScheduleEntry &entry : input.getEntries()) {
      auto [it, added] = from.insert({entry.key, input.getName().str()});
      if (added) {
        merged.set(entry);
        continue;
      }
      const ScheduleEntry &kept = *merged.lookup(entry.key);
      bool replace = fasterEntry(entry, kept);
      result.notes.push_back(
          entry.key.str() + ": in '" + it->second + "' (" + measured(kept) +
          ") and '" + input.getName().str() + "' (" + measured(entry) +
          "): kept the entry of '" +
          (replace ? input.getName().str() : it->second) +
          (entry.config == kept.config
               ? "' (the same config, the faster measurement)"
               : "' (the confirmed faster)"));
      if (replace) {
        merged.set(entry);
        it->second = input.getName().str();
      }
    }
  }

  for (auto &[id, sweep] : sweeps) {
    result.sweepProblems += size_t(sweep.problems);
    for (auto &[key, index] : sweep.keys) {
      if (merged.lookup(key)) {
        ++result.sweepDecided;
        continue;
      }
      result.notes.push_back(formatv("{0}: no entry (shard {1}/{2} of sweep "
                                     "{3} did not decide it: too noisy, "
                                     "failed or out of budget; see its log)",
                                     key.str(), index, sweep.count, id)
                                 .str());
    }
  }
  return result;
}
