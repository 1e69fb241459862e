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
  using LowBitConvertToX86Base::LowBitConvertToX86Base;

  void runOnOperation() override {
    std::optional<X86Isa> parsed = parseX86Isa(isa);
    if (!parsed) {
      getOperation().emitError()
          << "lowbit-convert-to-x86: unknown isa '" << isa
          << "'; expected avx2, avxvnni or avx512vnni";
      return signalPassFailure();
    }
    if (failed(convertLowBitToEmitC(getOperation(),
                                    *createX86TargetInfo(*parsed))))
      signalPassFailure();
  }
};
} // namespace
