//===- Schedule.h - tuned configs keyed by problem --------------*- C++ -*-===//
//
// A schedule file (schedules/<device>.json) maps a problem to the config
// the tuner found best for it. Version 1:
//
//   {"version": 1, "entries": [
//     {"format": "i2s", "M": 2560, "K": 2560, "n_class": "gemv",
//      "target": "x86-avx512vnni", "threads": 2,
//      "config": "#lowbit.upconvert<tile_m = 32, tile_k = 64, tile_n = 1>"}]}
//
// This header only reads and indexes the file; lowbit-select-config parses
// and verifies the config strings against the op they are for.
//
//===----------------------------------------------------------------------===//

#ifndef LOWBIT_TUNING_SCHEDULE_H
#define LOWBIT_TUNING_SCHEDULE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
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
  /// `format=i2s M=2560 K=2560 n_class=gemv target=... threads=2`.
  std::string str() const;
};

struct ScheduleEntry {
  ScheduleKey key;
  std::string config; // an attribute, e.g. "#lowbit.upconvert<...>"
  size_t index = 0;   // position in "entries"
};

class Schedule {
public:
  static constexpr int64_t kVersion = 1;

  /// Reads and checks the file at `path`. Every error is one line starting
  /// with "schedule '<path>': " and naming the entry (`entries[3]`) and
  /// field at fault.
  static llvm::Expected<Schedule> load(llvm::StringRef path);
  /// Checks schedule `text`; `name` is used in errors.
  static llvm::Expected<Schedule> parse(llvm::StringRef text,
                                        llvm::StringRef name);

  /// The entry for `key`, or null.
  const ScheduleEntry *lookup(const ScheduleKey &key) const;
  llvm::StringRef getName() const { return name; }
  const std::vector<ScheduleEntry> &getEntries() const { return entries; }

private:
  std::string name;
  std::vector<ScheduleEntry> entries;
};

} // namespace mlir::lowbit

#endif // LOWBIT_TUNING_SCHEDULE_H
