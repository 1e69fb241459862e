//===- LowBitToX86.cpp - the lowbit-convert-to-x86 pass -------------------===//

#include "lowbit/Conversion/LowBitToX86/LowBitToX86.h"
#include "lowbit/Conversion/LowBitToEmitC/LowBitToEmitC.h"
#include "lowbit/Conversion/Passes.h"

namespace mlir::lowbit {
#define GEN_PASS_DEF_LOWBITCONVERTTOX86
#include "lowbit/Conversion/Passes.h.inc"
} // namespace mlir::lowbit

using namespace mlir;
using namespace mlir::lowbit;

namespace {
class ConvertToX86Pass
    : public lowbit::impl::LowBitConvertToX86Base<ConvertToX86Pass> {
public:
  void runOnOperation() override {
    if (failed(convertLowBitToEmitC(getOperation(), getArgument(),
                                    createX86TargetInfos())))
      signalPassFailure();
  }
};
} // namespace
