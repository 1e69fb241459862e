//===- ScheduleCommand.cpp - `lowbit schedule merge|ls|diff` --------------===//
//
// Reads schedule files: `merge` joins the shard files of a sweep (or any
// schedules of one device) into one with lib/Tuning's mergeSchedules, `ls`
// prints what a file holds, `diff` compares the entries of two.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "lowbit/Tuning/Schedule.h"
#include "lowbit/Tuning/Sweep.h"

#include "lowbit/error.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace lowbit::cli {
namespace {

using namespace mlir::lowbit;

mlir::lowbit::Schedule load(const std::string &path) {
  llvm::Expected<mlir::lowbit::Schedule> schedule =
      mlir::lowbit::Schedule::load(path);
  if (!schedule)
    throw Error(llvm::toString(schedule.takeError()));
  return std::move(*schedule);
}

/// Options of another subcommand are an error, not silently ignored.
void onlyOptions(const ParsedOptions &options, const std::string &sub,
                 const std::set<std::string> &allowed) {
  for (const char *name : {"out", "mixed-devices", "allow-missing"})
    if (options.has(name) && !allowed.count(name))
      throw Error("lowbit schedule " + sub + ": --" + name +
                  " is not an option of '" + sub +
                  "' (see 'lowbit schedule --help')");
}

std::string speedup(const ScheduleEntry &entry) {
  char text[32];
  if (entry.us > 0 && entry.heuristicUs > 0)
    std::snprintf(text, sizeof text, "%.2fx", entry.heuristicUs / entry.us);
  else
    std::snprintf(text, sizeof text, "-");
  return text;
}

std::string micros(double us) {
  char text[32];
  if (us > 0)
    std::snprintf(text, sizeof text, "%.4g", us);
  else
    std::snprintf(text, sizeof text, "-");
  return text;
}

int runMerge(const ParsedOptions &options,
             const std::vector<std::string> &files) {
  std::optional<std::string> out = options.get("out");
  if (!out)
    throw Error("lowbit schedule merge: --out FILE names the merged schedule");
  if (files.empty())
    throw Error("lowbit schedule merge: name the schedule files to merge");
  std::vector<mlir::lowbit::Schedule> inputs;
  for (const std::string &file : files)
    inputs.push_back(load(file));
  MergeOptions mergeOptions;
  mergeOptions.mixedDevices = options.has("mixed-devices");
  mergeOptions.allowMissing = options.has("allow-missing");
  llvm::Expected<MergeResult> result = mergeSchedules(inputs, mergeOptions);
  if (!result)
    throw Error(llvm::toString(result.takeError()));
  for (const std::string &note : result->notes)
    std::printf("merge: %s\n", note.c_str());
  if (llvm::Error error = result->merged.write(*out))
    throw Error(llvm::toString(std::move(error)));
  std::printf("merge: %zu files, %zu entries", files.size(),
              result->merged.getEntries().size());
  if (result->sweepProblems)
    std::printf(" (%zu of the sweeps' %zu problems decided)",
                result->sweepDecided, result->sweepProblems);
  std::printf("; wrote %s\n", out->c_str());
  return 0;
}

int runLs(const std::vector<std::string> &files) {
  if (files.empty())
    throw Error("lowbit schedule ls: name the schedule files to list");
  for (const std::string &file : files) {
    mlir::lowbit::Schedule schedule = load(file);
    std::printf("%s: version %lld", file.c_str(), (long long)schedule.version);
    if (schedule.version >= 2)
      std::printf(", %s, cpu %s", schedule.toolVersion.c_str(),
                  deviceOf(schedule).c_str());
    std::printf("\n");
    if (const std::optional<ShardInfo> &shard = schedule.shard)
      std::printf("shard %s of sweep %s: %zu of the sweep's %lld problems, "
                  "%s\n",
                  shard->str().c_str(), shard->sweep.c_str(),
                  shard->problems.size(), (long long)shard->sweepProblems,
                  shard->complete ? "complete" : "did not finish");
    std::printf("%-8s %6s %6s %-5s %-15s %7s %9s %9s %7s  %s\n", "format", "M",
                "K", "class", "target", "threads", "us", "heur. us", "speedup",
                "config");
    std::vector<const ScheduleEntry *> entries;
    for (const ScheduleEntry &entry : schedule.getEntries())
      entries.push_back(&entry);
    std::sort(entries.begin(), entries.end(),
              [](const ScheduleEntry *a, const ScheduleEntry *b) {
                return a->key < b->key;
              });
    for (const ScheduleEntry *entry : entries) {
      const ScheduleKey &key = entry->key;
      std::printf("%-8s %6lld %6lld %-5s %-15s %7lld %9s %9s %7s  %s\n",
                  key.format.c_str(), (long long)key.m, (long long)key.k,
                  key.nClass.c_str(), key.target.c_str(),
                  (long long)key.threads, micros(entry->us).c_str(),
                  micros(entry->heuristicUs).c_str(), speedup(*entry).c_str(),
                  entry->config.c_str());
    }
    size_t undecided = 0;
    if (schedule.shard)
      for (const ScheduleKey &key : schedule.shard->problems)
        if (!schedule.lookup(key)) {
          std::printf("undecided: %s\n", key.str().c_str());
          ++undecided;
        }
    std::printf("%zu entries", entries.size());
    if (schedule.shard)
      std::printf(", %zu undecided", undecided);
    std::printf("\n");
  }
  return 0;
}

int runDiff(const std::vector<std::string> &files) {
  if (files.size() != 2)
    throw Error("lowbit schedule diff: name two schedule files, got " +
                std::to_string(files.size()));
  const std::string &a = files[0], &b = files[1];
  mlir::lowbit::Schedule left = load(a), right = load(b);
  if (left.version >= 2 && right.version >= 2 &&
      deviceOf(left) != deviceOf(right))
    std::printf("device: %s %s, %s %s\n", a.c_str(), deviceOf(left).c_str(),
                b.c_str(), deviceOf(right).c_str());
  std::map<ScheduleKey, std::pair<const ScheduleEntry *, const ScheduleEntry *>>
      keys;
  for (const ScheduleEntry &entry : left.getEntries())
    keys[entry.key].first = &entry;
  for (const ScheduleEntry &entry : right.getEntries())
    keys[entry.key].second = &entry;
  size_t same = 0, different = 0, onlyLeft = 0, onlyRight = 0;
  for (const auto &[key, pair] : keys) {
    auto [l, r] = pair;
    if (!r) {
      ++onlyLeft;
      std::printf("only in %s: %s: %s\n", a.c_str(), key.str().c_str(),
                  l->config.c_str());
    } else if (!l) {
      ++onlyRight;
      std::printf("only in %s: %s: %s\n", b.c_str(), key.str().c_str(),
                  r->config.c_str());
    } else if (l->config != r->config) {
      ++different;
      std::printf("differs: %s: %s %s (%s us, %s), %s %s (%s us, %s)\n",
                  key.str().c_str(), a.c_str(), l->config.c_str(),
                  micros(l->us).c_str(), speedup(*l).c_str(), b.c_str(),
                  r->config.c_str(), micros(r->us).c_str(),
                  speedup(*r).c_str());
    } else {
      ++same;
    }
  }
  std::printf("diff: %zu keys in %s, %zu in %s: %zu with the same config, "
              "%zu with another, %zu only in %s, %zu only in %s\n",
              left.getEntries().size(), a.c_str(), right.getEntries().size(),
              b.c_str(), same, different, onlyLeft, a.c_str(), onlyRight,
              b.c_str());
  return 0;
}

int runSchedule(const ParsedOptions &options) {
  const std::vector<std::string> &words = options.positional();
  if (words.empty())
    throw Error("lowbit schedule: missing subcommand (merge, ls or diff; see "
                "'lowbit schedule --help')");
  const std::string &sub = words[0];
  std::vector<std::string> files(words.begin() + 1, words.end());
  if (sub == "merge") {
    onlyOptions(options, sub, {"out", "mixed-devices", "allow-missing"});
    return runMerge(options, files);
  }
  if (sub == "ls") {
    onlyOptions(options, sub, {});
    return runLs(files);
  }
  if (sub == "diff") {
    onlyOptions(options, sub, {});
    return runDiff(files);
  }
  throw Error("lowbit schedule: unknown subcommand '" + sub +
              "' (expected merge, ls or diff)");
}

} // namespace

const Command &scheduleCommand() {
  static const Command command{
      {"schedule",
       "Merge, list and compare schedule files.",
       "merge:  joins schedule files of one device into --out: the shard "
       "files of a sweep\n        ('lowbit tune --shard I/N'), each merged "
       "file, any tune output. A key in\n        several files keeps the "
       "confirmed faster entry (the larger speedup over\n        its "
       "heuristic when both timed the same heuristic config, else the "
       "lower\n        time) and each such key is printed with both. Refused, "
       "naming the file:\n        another device (CPU model and features; "
       "--mixed-devices merges anyway),\n        a missing shard or one whose "
       "run did not finish (--allow-missing merges\n        without it), "
       "version-1 files. Problems of a sweep without an entry\n        (too "
       "noisy, failed, out of budget) are printed.\n"
       "ls:     each file's device, shard and entries (time, the heuristic's "
       "time, speedup)\n"
       "diff:   the keys of two files: only in one, another config, and a "
       "count line\n        (exit status 0 either way)\n",
       {{"out", "FILE", "merge: the merged schedule (written atomically)"},
        {"mixed-devices", nullptr, "merge: also files tuned on another device"},
        {"allow-missing", nullptr,
         "merge: write the merge although a shard is missing or did not "
         "finish"}},
       "merge FILE... | ls FILE... | diff A B"},
      runSchedule};
  return command;
}

} // namespace lowbit::cli
