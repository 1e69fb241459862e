//===- SearchSpace.cpp - a problem's candidates from the dialect ----------===//

#include "lowbit/Tuning/Search.h"

#include "lowbit/Dialect/LowBit/IR/LowBitAttrs.h"
#include "lowbit/Dialect/LowBit/IR/LowBitDialect.h"
#include "lowbit/Dialect/LowBit/IR/LowBitFormats.h"
#include "lowbit/Target/TargetInfo.h"

#include "mlir/IR/MLIRContext.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::lowbit;

llvm::Expected<std::vector<Candidate>>
mlir::lowbit::getSearchSpace(MLIRContext *context, const ScheduleKey &key,
                             const std::vector<std::string> &strategies,
                             bool allowLossy) {
  context->loadDialect<LowBitDialect>();
  std::optional<WeightFormat> format = parseFormatName(context, key.format);
  if (!format)
    return llvm::createStringError("format '" + key.format +
                                   "' has no dialect form");
  SearchSpaceQuery query;
  query.weight = format->weight;
  query.layout =
      LayoutAttr::get(context, format->layout, 0, 0, 1, LaneOrder::Rows);
  query.m = key.m;
  query.k = key.k;
  query.gemv = key.nClass == "gemv";
  if (std::unique_ptr<GpuTargetInfo> gpu = createGpuTargetInfo(key.target)) {
    query.subgroupSize = gpu->getSubgroupSize();
  } else if (std::unique_ptr<TargetInfo> target =
                 createTargetInfo(key.target)) {
    query.registerBytes = target->getRegisterBytes();
    query.numRegisters = target->getNumRegisters();
    query.prefetchBytes = target->getPrefetchBytes();
  } else {
    return llvm::createStringError("target '" + key.target +
                                   "' has no compiler target");
  }
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
