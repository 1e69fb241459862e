//===- Journal.h - the tuner's append-only record ---------------*- C++ -*-===//
//
// Every measurement, failure and decision of a tuning run, one JSON object
// per line, each flushed and fsync'ed as it is taken, so that a crash or a
// kill keeps them:
//
//   {"format": "i2s", "M": 64, "K": 256, "n_class": "gemv",
//    "target": "x86-avx2", "threads": 2, "config": "#lowbit...",
//    "heuristic": true, "us": 1.2, "gbps": 3.4, "score": 0.5}
//   {..., "config": "#lowbit...", "error": "crashed (Segmentation fault)"}
//   {..., "decision": "winner", "config": "#lowbit...", "us": 1.0,
//    "gbps": 4.0, "heuristic_config": "#lowbit...", "heuristic_us": 1.2}
//
// Only decision lines become schedule entries again (recover): a search
// measurement alone was never confirmed against the heuristic.
//
//===----------------------------------------------------------------------===//

#ifndef LOWBIT_TUNING_JOURNAL_H
#define LOWBIT_TUNING_JOURNAL_H

#include "lowbit/Tuning/Schedule.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <string>
#include <vector>

namespace mlir::lowbit {

class TuneJournal {
public:
  explicit TuneJournal(std::string path) : path_(std::move(path)) {}

  /// Appends `fields` and the key's fields as one line.
  llvm::Error append(const ScheduleKey &key, llvm::json::Object fields);
  /// Appends the decision `entry` (status "winner" or "heuristic kept").
  llvm::Error appendDecision(const ScheduleEntry &entry,
                             llvm::StringRef status);

  /// The entries of the decision lines, the last per key (lines that do
  /// not parse, such as a last line cut short by a crash, are skipped).
  std::vector<ScheduleEntry> recover() const;

  bool exists() const;
  void clear() const;
  const std::string &path() const { return path_; }

private:
  std::string path_;
};

} // namespace mlir::lowbit

#endif // LOWBIT_TUNING_JOURNAL_H
