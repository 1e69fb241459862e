//===- Search.cpp - the candidates of a tuning problem --------------------===//

#include "lowbit/Tuning/Search.h"

#include "lowbit/Dialect/LowBit/IR/LowBitAttrs.h"
#include "lowbit/Dialect/LowBit/IR/LowBitDialect.h"
#include "lowbit/Dialect/LowBit/IR/LowBitFormats.h"
#include "lowbit/Target/TargetInfo.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <random>

using namespace mlir;
using namespace mlir::lowbit;

std::string TuningProblem::label() const {
  return key.format + " " + std::to_string(key.m) + "x" +
         std::to_string(key.k) + " " + key.nClass + " " + key.target;
}

llvm::Expected<std::vector<Candidate>>
mlir::lowbit::getSearchSpace(MLIRContext *context, const ScheduleKey &key,
                             const std::vector<std::string> &strategies,
                             bool allowLossy) {
  context->loadDialect<LowBitDialect>();
  std::optional<WeightFormat> format = parseFormatName(context, key.format);
  if (!format)
    return llvm::createStringError("format '" + key.format +
                                   "' has no dialect form");
  std::unique_ptr<TargetInfo> target = createTargetInfo(key.target);
  if (!target)
    return llvm::createStringError("target '" + key.target +
                                   "' has no compiler target");
  SearchSpaceQuery query;
  query.weight = format->weight;
  query.layout = LayoutAttr::get(context, format->layout, 0, 0, 1);
  query.m = key.m;
  query.k = key.k;
  query.gemv = key.nClass == "gemv";
  query.registerBytes = target->getRegisterBytes();
  query.numRegisters = target->getNumRegisters();
  query.prefetchBytes = target->getPrefetchBytes();
  query.allowLossy = allowLossy;
  std::vector<Candidate> candidates;
  for (const std::string &strategy : strategies)
    for (StrategyConfigAttrInterface config :
         getStrategySearchSpace(context, strategy, query)) {
      Candidate candidate;
      llvm::raw_string_ostream os(candidate.config);
      os << config;
      os.flush();
      candidate.strategy = strategy;
      candidates.push_back(std::move(candidate));
    }
  return candidates;
}

std::vector<Candidate>
mlir::lowbit::orderCandidates(Candidate heuristic, std::vector<Candidate> space,
                              const SearchOptions &options,
                              size_t problemIndex) {
  space.erase(std::remove_if(space.begin(), space.end(),
                             [&](const Candidate &c) {
                               return c.config == heuristic.config;
                             }),
              space.end());
  if (options.seed) {
    std::mt19937_64 random(*options.seed * 0x9E3779B97F4A7C15ull +
                           problemIndex);
    for (size_t i = space.size(); i > 1; --i)
      std::swap(space[i - 1], space[random() % i]);
  }
  if (space.size() > options.maxCandidates)
    space.resize(options.maxCandidates);
  heuristic.heuristic = true;
  std::vector<Candidate> queue = {std::move(heuristic)};
  queue.insert(queue.end(), space.begin(), space.end());
  return queue;
}
