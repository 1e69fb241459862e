//===- PackLayout.cpp - record the packed layout a strategy reads ---------===//
//
// Up-convert kernels read the vnni4 layout of kernel_abi.h: tiles of 16
// rows, 64-byte vectors of 16 rows x 4 k per bit plane. This pass writes
// that layout on the op and the packed shape on the weights argument.
//
//===----------------------------------------------------------------------===//

#include "lowbit/Dialect/LowBit/Transforms/Passes.h"

namespace mlir::lowbit {
#define GEN_PASS_DEF_LOWBITPACKLAYOUT
#include "lowbit/Dialect/LowBit/Transforms/Passes.h.inc"
} // namespace mlir::lowbit

using namespace mlir;
using namespace mlir::lowbit;

namespace {

class PackLayoutPass
    : public lowbit::impl::LowBitPackLayoutBase<PackLayoutPass> {
public:
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    WalkResult result =
        func.walk([&](MpGemmOp op) { return WalkResult(pack(func, op)); });
    if (result.wasInterrupted())
      signalPassFailure();
  }

private:
  LogicalResult pack(func::FuncOp func, MpGemmOp op) {
    StrategyConfigAttrInterface config = op.getConfigAttr();
    if (!config)
      return op.emitOpError()
             << "has no config; run lowbit-select-config first";
    if (isa<ReferenceAttr>(config))
      return success();
    if (!isa<UpconvertAttr>(config))
      return op.emitOpError() << "the " << config.getStrategyName()
                              << " strategy has no packed layout yet";

    MLIRContext *ctx = op.getContext();
    WeightAttr weight = op.getWeight();
    int64_t bits = weight.getBits();
    auto layout = LayoutAttr::get(ctx, LayoutKind::VNNI4, /*tileM=*/16,
                                  /*tileK=*/32 / bits, /*interleave=*/1);
    if (op.getLayout() == layout)
      return success();
    LayoutKind from = op.getLayout().getKind();
    if (from != LayoutKind::I2S && from != LayoutKind::Canonical &&
        from != LayoutKind::Gguf)
      return op.emitOpError() << "cannot repack a " << stringifyLayoutKind(from)
                              << " layout for the upconvert strategy";

    auto arg = dyn_cast<BlockArgument>(op.getPacked());
    if (!arg || arg.getOwner() != &func.getBody().front() || !arg.hasOneUse())
      return op.emitOpError() << "packed weights must be an argument of the "
                                 "function used by this op alone to be "
                                 "repacked";
    int64_t m = op.getM(), k = op.getK();
    auto packedType = RankedTensorType::get(
        {llvm::divideCeilSigned(m, int64_t(16)),
         llvm::divideCeilSigned(k, int64_t(32)) * bits, 64},
        IntegerType::get(ctx, 8));
    arg.setType(packedType);
    SmallVector<Type> inputs(func.getArgumentTypes());
    inputs[arg.getArgNumber()] = packedType;
    func.setFunctionType(
        FunctionType::get(ctx, inputs, func.getFunctionType().getResults()));
    op.setLayoutAttr(layout);
    return success();
  }
};

} // namespace
