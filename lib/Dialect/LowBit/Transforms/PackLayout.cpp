//===- PackLayout.cpp - record the packed layout a strategy reads ---------===//
//
// Up-convert kernels read the vnni4 layout of kernel_abi.h: tiles of 16
// rows, 64-byte vectors of 16 rows x 4 k per bit plane; lut-elementwise
// kernels the interleaved tl1/tl2 layout of lut_abi.h; lut-bitserial
// kernels the bit-plane layout of bitserial_abi.h; up-convert configs of
// fewer than 16 rows (ternary only) the TQ2_0 rows of kernel_abi.h's GGML
// ROWS LAYOUT. This pass writes
// that layout on the op and the packed shape on the weights argument.
//
//===----------------------------------------------------------------------===//

#include "lowbit/Dialect/LowBit/Transforms/Passes.h"
#include "lowbit/Target/TargetInfo.h"
#include "lowbit/bitserial_abi.h"
#include "lowbit/lut_abi.h"

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
    if (isa<LutElementwiseAttr>(config))
      return packLut(func, op);
    if (isa<LutBitserialAttr>(config))
      return packBitserial(func, op);
    if (!isa<UpconvertAttr>(config))
      return op.emitOpError() << "the " << config.getStrategyName()
                              << " strategy has no packed layout yet";

    MLIRContext *ctx = op.getContext();
    WeightAttr weight = op.getWeight();
    // Weights in the GGML ROWS LAYOUT stay as they are for every tile_m
    // (lower-upconvert repacks TQ2_0 rows per tile group for tile_m >= 16).
    if (cast<UpconvertAttr>(config).getTileM() < LOWBIT_TILE_ROWS ||
        (op.getLayout().getKind() == LayoutKind::Gguf &&
         op.getLayout().isTiled()))
      return packGgmlRows(func, op);
    int64_t bits = weight.getBits();
    auto layout =
        LayoutAttr::get(ctx, LayoutKind::VNNI4, /*tileM=*/LOWBIT_TILE_ROWS,
                        /*tileK=*/lowbit_vnni4_tile_k(int(bits)), /*interleave=*/1,
                        LaneOrder::Rows);
    if (op.getLayout() == layout)
      return success();
    LayoutKind from = op.getLayout().getKind();
    if (from != LayoutKind::I2S && from != LayoutKind::Canonical &&
        from != LayoutKind::Gguf)
      return op.emitOpError() << "cannot repack a " << stringifyLayoutKind(from)
                              << " layout for the upconvert strategy";

    int64_t m = op.getM(), k = op.getK();
    // Any shape (dynamic M and K): tiles and vectors per tile are run-time
    // values, the 64 bytes of a vector are not.
    bool anyShape = ShapedType::isDynamic(m) || ShapedType::isDynamic(k);
    return repack(
        func, op, layout,
        {anyShape ? ShapedType::kDynamic
                  : llvm::divideCeilSigned(m, int64_t(LOWBIT_TILE_ROWS)),
         anyShape ? ShapedType::kDynamic
                  : llvm::divideCeilSigned(k, int64_t(LOWBIT_K_BLOCK)) * bits,
         LOWBIT_VECTOR_BYTES});
  }

  /// Ternary weights of an upconvert config with tile_m below 16 -> the
  /// GGML ROWS LAYOUT of kernel_abi.h (TQ2_0 rows, as a GGUF file stores
  /// them): tensor<M x (K / 256 * 66) x i8>. Weights in that layout already
  /// (TQ2_0 or TQ1_0 rows: the kernel request's layout) stay as they are.
  LogicalResult packGgmlRows(func::FuncOp func, MpGemmOp op) {
    MLIRContext *ctx = op.getContext();
    auto layout = LayoutAttr::get(ctx, LayoutKind::Gguf, /*tileM=*/1,
                                  /*tileK=*/LOWBIT_GGML_ROWS_BLOCK,
                                  /*interleave=*/1, LaneOrder::Rows);
    if (op.getLayout().getKind() == LayoutKind::Gguf &&
        op.getLayout().isTiled())
      return success();
    LayoutKind from = op.getLayout().getKind();
    if (from != LayoutKind::I2S && from != LayoutKind::Canonical)
      return op.emitOpError() << "cannot repack a " << stringifyLayoutKind(from)
                              << " layout into ggml rows";
    return repackTiles(func, op, layout, /*tileRows=*/1, [&] {
      return op.getK() / LOWBIT_GGML_ROWS_BLOCK * LOWBIT_GGML_ROWS_TQ2_0_BYTES;
    });
  }

  /// tl1/tl2 -> the interleaved layout of lut_abi.h: 16-row tiles of
  /// getLutTileBytes bytes, tile_k 96 (TL2 block) or 16 (TL1 vector), in
  /// the lane order of the module's target (TargetInfo::hasLutLaneOrder).
  LogicalResult packLut(func::FuncOp func, MpGemmOp op) {
    MLIRContext *ctx = op.getContext();
    LayoutKind kind = op.getLayout().getKind();
    FailureOr<std::unique_ptr<TargetInfo>> target = lookupTargetInfo(op);
    if (failed(target))
      return failure();
    auto layout = LayoutAttr::get(
        ctx, kind, /*tileM=*/LOWBIT_TILE_ROWS,
        /*tileK=*/kind == LayoutKind::TL2 ? LOWBIT_LUT_TL2_BLOCK
                                          : LOWBIT_LUT_TL1_VECTOR,
        /*interleave=*/LOWBIT_TILE_ROWS,
        (*target)->hasLutLaneOrder() ? LaneOrder::Lanes : LaneOrder::Rows);
    if (op.getLayout() == layout)
      return success();
    if (op.getLayout().isTiled())
      return op.emitOpError()
             << "cannot repack a tiled " << stringifyLayoutKind(kind)
             << " layout for the lut-elementwise strategy";
    return repackTiles(func, op, layout, LOWBIT_TILE_ROWS,
                       [&] { return getLutTileBytes(kind, op.getK()); });
  }

  /// i2s / canonical -> the bit-plane layout of bitserial_abi.h: 16-row
  /// tiles of Kp / 32 blocks x `bits` plane vectors of 64 bytes, in its
  /// lane order on the targets whose TargetInfo::hasLutLaneOrder (each
  /// register one pshufb per nibble and table byte; two planes of a row
  /// side by side for vpmaddubsw), else in row order.
  LogicalResult packBitserial(func::FuncOp func, MpGemmOp op) {
    MLIRContext *ctx = op.getContext();
    FailureOr<std::unique_ptr<TargetInfo>> target = lookupTargetInfo(op);
    if (failed(target))
      return failure();
    bool lanes = (*target)->hasLutLaneOrder();
    auto layout = LayoutAttr::get(ctx, LayoutKind::BitPlanes,
                                  /*tileM=*/LOWBIT_TILE_ROWS,
                                  /*tileK=*/LOWBIT_BITSERIAL_BLOCK,
                                  /*interleave=*/LOWBIT_TILE_ROWS,
                                  lanes ? LaneOrder::Lanes : LaneOrder::Rows);
    if (op.getLayout() == layout)
      return success();
    LayoutKind from = op.getLayout().getKind();
    if (from != LayoutKind::I2S && from != LayoutKind::Canonical)
      return op.emitOpError() << "cannot repack a " << stringifyLayoutKind(from)
                              << " layout for the lut-bitserial strategy";
    return repackTiles(func, op, layout, LOWBIT_TILE_ROWS, [&] {
      return llvm::divideCeilSigned(op.getK(),
                                    int64_t(LOWBIT_BITSERIAL_BLOCK)) *
             op.getWeight().getBits() * LOWBIT_BITSERIAL_VECTOR_BYTES;
    });
  }

  /// Gives `op` the packed `layout` and its weights the packed type
  /// tensor<shape x i8>: they must be an argument of `func` (its entry
  /// block's) that `op` alone uses, else an error on `op`.
  static LogicalResult repack(func::FuncOp func, MpGemmOp op,
                              LayoutAttr layout, ArrayRef<int64_t> shape) {
    auto arg = dyn_cast<BlockArgument>(op.getPacked());
    if (!arg || arg.getOwner() != &func.getBody().front() || !arg.hasOneUse())
      return op.emitOpError() << "packed weights must be an argument of the "
                                 "function used by this op alone to be "
                                 "repacked";
    auto packedType =
        RankedTensorType::get(shape, IntegerType::get(func.getContext(), 8));
    arg.setType(packedType);
    SmallVector<Type> inputs(func.getArgumentTypes());
    inputs[arg.getArgNumber()] = packedType;
    func.setFunctionType(FunctionType::get(
        func.getContext(), inputs, func.getFunctionType().getResults()));
    op.setLayoutAttr(layout);
    return success();
  }

  /// repack into rows of tiles: ceil(M / tileRows) rows of tileBytes()
  /// bytes, or tensor<? x ? x i8> for an any-shape op (dynamic M).
  static LogicalResult repackTiles(func::FuncOp func, MpGemmOp op,
                                   LayoutAttr layout, int64_t tileRows,
                                   llvm::function_ref<int64_t()> tileBytes) {
    if (ShapedType::isDynamic(op.getM()))
      return repack(func, op, layout,
                    {ShapedType::kDynamic, ShapedType::kDynamic});
    return repack(func, op, layout,
                  {llvm::divideCeilSigned(op.getM(), tileRows), tileBytes()});
  }
};

} // namespace
