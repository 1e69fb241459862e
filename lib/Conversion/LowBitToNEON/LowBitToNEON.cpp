//===- LowBitToNEON.cpp - the lowbit-convert-to-neon pass -----------------===//

#include "lowbit/Conversion/LowBitToNEON/LowBitToNEON.h"
#include "lowbit/Conversion/LowBitToEmitC/LowBitToEmitC.h"
#include "lowbit/Conversion/Passes.h"

namespace mlir::lowbit {
#define GEN_PASS_DEF_LOWBITCONVERTTONEON
#include "lowbit/Conversion/Passes.h.inc"
} // namespace mlir::lowbit

using namespace mlir;
using namespace mlir::lowbit;

namespace {
class ConvertToNeonPass
    : public lowbit::impl::LowBitConvertToNEONBase<ConvertToNeonPass> {
public:
  void runOnOperation() override {
    SmallVector<std::unique_ptr<TargetInfo>> targets;
    for (bool dotprod : {true, false})
      targets.push_back(createNeonTargetInfo(dotprod));
    if (failed(convertLowBitToEmitC(getOperation(), getArgument(), targets)))
      signalPassFailure();
  }
};
} // namespace
