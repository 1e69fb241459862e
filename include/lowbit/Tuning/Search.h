//===- Search.h - the candidates of a tuning problem ------------*- C++ -*-===//
//
// What the tuner visits for one problem (a schedule key): the heuristic's
// config (what lowbit-select-config picks without a schedule) first, then
// the search space every allowed strategy declares beside its config
// attribute (StrategyConfigAttrInterface::getSearchSpace, pruned by the
// attributes' verifiers and the target's register file), in grid order or
// in an order drawn from a seed, capped per problem.
//
//===----------------------------------------------------------------------===//

#ifndef LOWBIT_TUNING_SEARCH_H
#define LOWBIT_TUNING_SEARCH_H

#include "lowbit/Tuning/Schedule.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace mlir::lowbit {

/// One config to try: the attribute's text and the strategy that
/// generates it (the CLI spelling: "upconvert", "lut-elementwise",
/// "lut-bitserial").
struct Candidate {
  std::string config;
  std::string strategy;
  bool heuristic = false;

  bool operator==(const Candidate &other) const {
    return config == other.config && strategy == other.strategy &&
           heuristic == other.heuristic;
  }
};

/// A problem as the tuner sees it: the schedule key it decides, the N it
/// times (1 for the GEMV class) and its candidates in visiting order, the
/// heuristic first (buildCandidateQueue).
struct TuningProblem {
  ScheduleKey key;
  int64_t n = 1;
  std::vector<Candidate> queue;
  /// Its place in the whole sweep (`lowbit tune` ranks the keys), which
  /// seeds its data (Measurer::prepare) and its candidate order, so that a
  /// shard or a resumed run sees what the whole run would.
  size_t index = 0;

  /// `i2s 2560x2560 gemv x86-avx2`.
  std::string label() const;
};

struct SearchOptions {
  /// Visit order: the grid's, or a permutation drawn from the seed.
  std::optional<uint64_t> seed;
  /// At most this many candidates per problem besides the heuristic.
  size_t maxCandidates = SIZE_MAX;
  /// Also lossy options (lut-bitserial int8 tables, table_bits = 8).
  bool allowLossy = false;
};

/// The search space of `strategies` for `key` (in LowBitTuningSearch, which
/// links the dialect and the targets) (key.target a concrete
/// compiler target, key.format a runtime format name), as config strings,
/// strategy after strategy. Fails for a format or target the compiler does
/// not know.
llvm::Expected<std::vector<Candidate>>
getSearchSpace(MLIRContext *context, const ScheduleKey &key,
               const std::vector<std::string> &strategies, bool allowLossy);

/// Puts `heuristic` first and then `space` without it, in grid order or,
/// with a seed, in the order of a Fisher-Yates shuffle driven by
/// mt19937_64 (whose output the C++ standard fixes, so one seed visits the
/// same points everywhere; `problemIndex` varies it per problem), capped at
/// options.maxCandidates.
std::vector<Candidate> orderCandidates(Candidate heuristic,
                                       std::vector<Candidate> space,
                                       const SearchOptions &options,
                                       size_t problemIndex);

} // namespace mlir::lowbit

#endif // LOWBIT_TUNING_SEARCH_H
