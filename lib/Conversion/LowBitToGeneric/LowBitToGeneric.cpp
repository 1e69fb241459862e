//===- LowBitToGeneric.cpp - the lowbit-convert-to-generic pass -----------===//

#include "lowbit/Conversion/LowBitToGeneric/LowBitToGeneric.h"
#include "lowbit/Conversion/LowBitToEmitC/LowBitToEmitC.h"
#include "lowbit/Conversion/Passes.h"

namespace mlir::lowbit {
#define GEN_PASS_DEF_LOWBITCONVERTTOGENERIC
#include "lowbit/Conversion/Passes.h.inc"
} // namespace mlir::lowbit

using namespace mlir;
using namespace mlir::lowbit;

namespace {
class ConvertToGenericPass
    : public lowbit::impl::LowBitConvertToGenericBase<ConvertToGenericPass> {
public:
  void runOnOperation() override {
    SmallVector<std::unique_ptr<TargetInfo>> targets;
    targets.push_back(createGenericTargetInfo());
    if (failed(convertLowBitToEmitC(getOperation(), getArgument(), targets)))
      signalPassFailure();
  }
};
} // namespace
