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
  using LowBitConvertToNEONBase::LowBitConvertToNEONBase;

  void runOnOperation() override {
    if (failed(convertLowBitToEmitC(getOperation(),
                                    *createNeonTargetInfo(dotprod))))
      signalPassFailure();
  }
};
} // namespace
