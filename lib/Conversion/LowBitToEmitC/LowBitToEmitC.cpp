//===- LowBitToEmitC.cpp - the shared half of lowbit -> EmitC -------------===//
//
// One dialect conversion for the whole kernel module (so that the casts the
// upstream patterns leave between them cancel out), then a clean-up of the
// signature: C linkage and const pointers, exactly as kernel_abi.h declares.
//
//===----------------------------------------------------------------------===//

#include "lowbit/Conversion/LowBitToEmitC/LowBitToEmitC.h"
#include "lowbit/Dialect/LowBit/IR/LowBitOps.h"

#include "mlir/Conversion/ArithToEmitC/ArithToEmitC.h"
#include "mlir/Conversion/FuncToEmitC/FuncToEmitC.h"
#include "mlir/Conversion/SCFToEmitC/SCFToEmitC.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/EmitC/IR/EmitC.h"
#include "mlir/Dialect/EmitC/Transforms/TypeConversions.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <type_traits>

using namespace mlir;
using namespace mlir::lowbit;

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

void mlir::lowbit::populateLowBitToEmitCTypeConversions(
    TypeConverter &converter, const TargetInfo &target) {
  converter.addConversion([](Type type) { return type; });
  populateEmitCSizeTTypeConversions(converter);
  converter.addConversion([&converter](MemRefType type) -> std::optional<Type> {
    if (type.getRank() != 1 || !type.isDynamicDim(0) ||
        !type.getLayout().isIdentity())
      return std::nullopt;
    Type element = converter.convertType(type.getElementType());
    if (!element)
      return Type();
    return emitc::PointerType::get(element);
  });
  converter.addConversion([&target](VectorType type) -> Type {
    return target.convertRegisterType(type);
  });
  auto cast = [](OpBuilder &b, Type type, ValueRange inputs,
                 Location loc) -> Value {
    if (inputs.size() != 1)
      return Value();
    return UnrealizedConversionCastOp::create(b, loc, type, inputs)
        .getResult(0);
  };
  converter.addSourceMaterialization(cast);
  converter.addTargetMaterialization(cast);
}

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

namespace {

/// `&ptr[index]`.
Value getElementAddress(OpBuilder &b, Location loc, Value ptr, Value index) {
  auto lvalue = emitc::SubscriptOp::create(
      b, loc, cast<TypedValue<emitc::PointerType>>(ptr), index);
  return emitc::AddressOfOp::create(
      b, loc, emitc::PointerType::get(lvalue.getType().getValueType()), lvalue);
}

template <typename OpTy>
class TargetPattern : public OpConversionPattern<OpTy> {
public:
  TargetPattern(const TypeConverter &converter, MLIRContext *ctx,
                const TargetInfo &target, PatternBenefit benefit = 1)
      : OpConversionPattern<OpTy>(converter, ctx, benefit), target(target) {}

protected:
  /// The converted register type of `value`'s vector type, or failure with
  /// a match-failure note naming it.
  FailureOr<VectorType> getRegisterType(ConversionPatternRewriter &rewriter,
                                        OpTy op, Type type) const {
    auto vector = dyn_cast<VectorType>(type);
    if (!vector || !target.convertRegisterType(vector))
      return rewriter.notifyMatchFailure(op, [&](Diagnostic &d) {
        d << type << " is not a register of target " << target.getName();
      });
    return vector;
  }

  const TargetInfo &target;
};

/// A microkernel op whose register results (all of the first one's type) a
/// TargetInfo hook writes: `Emit(target, rewriter, op, adaptor, type)`
/// returns the result (a pair of them for a two-result op), null where the
/// target has no such op.
template <typename OpTy, auto Emit>
struct HookPattern : TargetPattern<OpTy> {
  using TargetPattern<OpTy>::TargetPattern;
  using OpAdaptor = typename TargetPattern<OpTy>::OpAdaptor;
  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FailureOr<VectorType> type =
        this->getRegisterType(rewriter, op, op->getResult(0).getType());
    if (failed(type))
      return failure();
    auto emitted = Emit(this->target, rewriter, op, adaptor, *type);
    SmallVector<Value, 2> results;
    if constexpr (std::is_same_v<decltype(emitted), Value>)
      results = {emitted};
    else
      results = {emitted.first, emitted.second};
    if (llvm::is_contained(results, Value()))
      return rewriter.notifyMatchFailure(op, [&](Diagnostic &d) {
        d << "target " << this->target.getName() << " has no "
          << op->getName();
      });
    rewriter.replaceOp(op, results);
    return success();
  }
};

Value emitLutLookup(const TargetInfo &target, ConversionPatternRewriter &b,
                    UkLutLookupOp op, UkLutLookupOp::Adaptor a,
                    VectorType type) {
  Value tables = getElementAddress(b, op.getLoc(), a.getTables(),
                                   a.getTableOffset());
  return target.emitLutLookup(b, op.getLoc(), a.getIndices(), tables,
                              op.getHigh(), type);
}
Value emitCodebook(const TargetInfo &target, ConversionPatternRewriter &b,
                   UkCodebookOp op, UkCodebookOp::Adaptor a, VectorType type) {
  return target.emitCodebook(b, op.getLoc(), a.getCodes(), op.getTable(),
                             type);
}
Value emitTrit(const TargetInfo &target, ConversionPatternRewriter &b,
               UkTritOp op, UkTritOp::Adaptor a, VectorType type) {
  return target.emitTrit(b, op.getLoc(), a.getPacked(), int64_t(op.getDigit()),
                         type);
}
Value emitTriple(const TargetInfo &target, ConversionPatternRewriter &b,
                 UkTripleOp op, UkTripleOp::Adaptor a, VectorType type) {
  return target.emitTriple(b, op.getLoc(), a.getPacked(), type);
}
Value emitGroupCombine(const TargetInfo &target, ConversionPatternRewriter &b,
                       UkGroupCombineOp op, UkGroupCombineOp::Adaptor a,
                       VectorType type) {
  return target.emitGroupCombine(b, op.getLoc(), a.getY(), a.getSums(),
                                 a.getScale(), type);
}
Value emitZip(const TargetInfo &target, ConversionPatternRewriter &b,
              UkZipOp op, UkZipOp::Adaptor a, VectorType type) {
  return target.emitZip(b, op.getLoc(), a.getLhs(), a.getRhs(), op.getHigh(),
                        type);
}
Value emitDot2(const TargetInfo &target, ConversionPatternRewriter &b,
               UkDot2Op op, UkDot2Op::Adaptor a, VectorType type) {
  return target.emitDot2(b, op.getLoc(), a.getCodes(), a.getX(), type);
}
Value emitExtend(const TargetInfo &target, ConversionPatternRewriter &b,
                 UkExtendOp op, UkExtendOp::Adaptor a, VectorType type) {
  return target.emitExtend(b, op.getLoc(), a.getLow(), a.getHigh(),
                           a.getMultipliers(), op.getHighHalf(), type);
}
Value emitLaneFold(const TargetInfo &target, ConversionPatternRewriter &b,
                   UkLaneFoldOp op, UkLaneFoldOp::Adaptor a, VectorType type) {
  return target.emitLaneFold(b, op.getLoc(), a.getLhs(), a.getRhs(), type);
}
Value emitWiden(const TargetInfo &target, ConversionPatternRewriter &b,
                UkWidenOp op, UkWidenOp::Adaptor a, VectorType type) {
  return target.emitWiden(b, op.getLoc(), a.getWords(), a.getMultipliers(),
                          op.getLane(), type);
}
Value emitLutSigns(const TargetInfo &target, ConversionPatternRewriter &b,
                   UkLutSignsOp op, UkLutSignsOp::Adaptor a, VectorType type) {
  Value ptr = getElementAddress(b, op.getLoc(), a.getBase(), a.getOffset());
  return target.emitLutSigns(b, op.getLoc(), ptr, type, op.getByDword());
}
Value emitLutCombine(const TargetInfo &target, ConversionPatternRewriter &b,
                     UkLutCombineOp op, UkLutCombineOp::Adaptor a,
                     VectorType type) {
  return target.emitLutCombine(b, op.getLoc(), a.getLow(), a.getHigh(), type);
}

struct ConvertLoad : TargetPattern<UkLoadOp> {
  using TargetPattern::TargetPattern;
  LogicalResult
  matchAndRewrite(UkLoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FailureOr<VectorType> type = getRegisterType(rewriter, op, op.getType());
    if (failed(type))
      return failure();
    Value ptr = getElementAddress(rewriter, op.getLoc(), adaptor.getBase(),
                                  adaptor.getOffset());
    std::optional<uint64_t> bytes = op.getBytes();
    if (bytes && int64_t(*bytes) * 8 < type->getNumElements() *
                                           type->getElementTypeBitWidth()) {
      Value prefix = type->getElementType().isInteger(8)
                         ? target.emitLoadPrefix(rewriter, op.getLoc(), ptr,
                                                 int64_t(*bytes), *type)
                         : Value();
      if (!prefix)
        return rewriter.notifyMatchFailure(op, [&](Diagnostic &d) {
          d << "target " << target.getName() << " has no byte-register load "
            << "of " << *bytes << " bytes";
        });
      rewriter.replaceOp(op, prefix);
      return success();
    }
    rewriter.replaceOp(op, target.emitLoad(rewriter, op.getLoc(), ptr, *type));
    return success();
  }
};

struct ConvertBroadcast4 : TargetPattern<UkBroadcast4Op> {
  using TargetPattern::TargetPattern;
  LogicalResult
  matchAndRewrite(UkBroadcast4Op op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FailureOr<VectorType> type = getRegisterType(rewriter, op, op.getType());
    if (failed(type))
      return failure();
    Value ptr = getElementAddress(rewriter, op.getLoc(), adaptor.getBase(),
                                  adaptor.getOffset());
    rewriter.replaceOp(
        op, target.emitBroadcast4(rewriter, op.getLoc(), ptr, *type));
    return success();
  }
};

struct ConvertUnpack : TargetPattern<UkUnpackOp> {
  using TargetPattern::TargetPattern;
  LogicalResult
  matchAndRewrite(UkUnpackOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FailureOr<VectorType> type = getRegisterType(rewriter, op, op.getType());
    if (failed(type))
      return failure();
    Value codes =
        target.emitUnpack(rewriter, op.getLoc(), adaptor.getPacked(), *type,
                          int64_t(op.getBits()), int64_t(op.getPlane()),
                          int64_t(op.getScale()));
    if (adaptor.getLow())
      codes = target.emitOrBytes(rewriter, op.getLoc(), adaptor.getLow(),
                                 codes, *type);
    rewriter.replaceOp(op, codes);
    return success();
  }
};

struct ConvertShrExact : TargetPattern<UkShrExactOp> {
  using TargetPattern::TargetPattern;
  LogicalResult
  matchAndRewrite(UkShrExactOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FailureOr<VectorType> type = getRegisterType(rewriter, op, op.getType());
    if (failed(type))
      return failure();
    rewriter.replaceOp(op, target.emitShrExact(rewriter, op.getLoc(),
                                               adaptor.getValue(),
                                               int64_t(op.getShift()), *type));
    return success();
  }
};

struct ConvertDot4 : TargetPattern<UkDot4Op> {
  using TargetPattern::TargetPattern;
  LogicalResult
  matchAndRewrite(UkDot4Op op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FailureOr<VectorType> type = getRegisterType(rewriter, op, op.getType());
    if (failed(type))
      return failure();
    rewriter.replaceOp(
        op, op.getCentred()
                ? target.emitCentredDot4(rewriter, op.getLoc(),
                                         adaptor.getAcc(), adaptor.getCodes(),
                                         adaptor.getX(), *type)
                : target.emitDot4(rewriter, op.getLoc(), adaptor.getAcc(),
                                  adaptor.getCodes(), adaptor.getX(), *type));
    return success();
  }
};

struct ConvertLoadHalf : TargetPattern<UkLoadHalfOp> {
  using TargetPattern::TargetPattern;
  LogicalResult
  matchAndRewrite(UkLoadHalfOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FailureOr<VectorType> type = getRegisterType(rewriter, op, op.getType());
    if (failed(type))
      return failure();
    Value ptr = getElementAddress(rewriter, op.getLoc(), adaptor.getBase(),
                                  adaptor.getOffset());
    rewriter.replaceOp(op,
                       target.emitLoadHalf(rewriter, op.getLoc(), ptr, *type));
    return success();
  }
};

struct ConvertLoadScales : TargetPattern<UkLoadScalesOp> {
  using TargetPattern::TargetPattern;
  LogicalResult
  matchAndRewrite(UkLoadScalesOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FailureOr<VectorType> type = getRegisterType(rewriter, op, op.getType());
    if (failed(type))
      return failure();
    // The offset counts bytes of the 16-bit array; the register's first
    // row starts at bit row * bits from there.
    Location loc = op.getLoc();
    Type size = emitc::SizeTType::get(rewriter.getContext());
    auto sizeConstant = [&](int64_t v) {
      return emitc::ConstantOp::create(rewriter, loc, size,
                                       rewriter.getIndexAttr(v));
    };
    int64_t bits = int64_t(op.getBits());
    Value bit = emitc::MulOp::create(rewriter, loc, size, adaptor.getRow(),
                                     sizeConstant(bits));
    Value byte = emitc::AddOp::create(
        rewriter, loc, size, adaptor.getOffset(),
        emitc::DivOp::create(rewriter, loc, size, bit, sizeConstant(8)));
    // Registers of several lanes start on a byte (the op's verifier).
    Value shift = type->getNumElements() == 1
                      ? emitc::RemOp::create(rewriter, loc, size, bit,
                                             sizeConstant(8))
                      : Value();
    Value bytes = emitc::CastOp::create(
        rewriter, loc,
        emitc::PointerType::get(
            emitc::OpaqueType::get(rewriter.getContext(), "const uint8_t")),
        adaptor.getBase());
    Value ptr = getElementAddress(rewriter, loc, bytes, byte);
    Value result = target.emitLoadScales(rewriter, loc, ptr, shift, bits,
                                         op.getSignExtend(), *type);
    if (!result)
      return rewriter.notifyMatchFailure(op, [&](Diagnostic &d) {
        d << "target " << target.getName() << " cannot load " << bits
          << "-bit sub-scales into " << *type;
      });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct ConvertBlockCombine : TargetPattern<UkBlockCombineOp> {
  using TargetPattern::TargetPattern;
  LogicalResult
  matchAndRewrite(UkBlockCombineOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FailureOr<VectorType> type = getRegisterType(rewriter, op, op.getType());
    if (failed(type))
      return failure();
    BlockCombineOperands operands;
    operands.sums = adaptor.getSums();
    operands.dot = adaptor.getDot();
    operands.inv = adaptor.getInv();
    operands.scale = adaptor.getScale();
    operands.zero = adaptor.getZero();
    operands.sum = adaptor.getSum();
    rewriter.replaceOp(
        op, target.emitBlockCombine(rewriter, op.getLoc(), operands, *type));
    return success();
  }
};

struct ConvertTernaryScale : TargetPattern<UkTernaryScaleOp> {
  using TargetPattern::TargetPattern;
  LogicalResult
  matchAndRewrite(UkTernaryScaleOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FailureOr<VectorType> type = getRegisterType(rewriter, op, op.getType());
    if (failed(type))
      return failure();
    rewriter.replaceOp(
        op, target.emitTernaryScale(rewriter, op.getLoc(), adaptor.getDot(),
                                    adaptor.getSum(), adaptor.getWScale(),
                                    adaptor.getXScale(), *type));
    return success();
  }
};

struct ConvertStore : TargetPattern<UkStoreOp> {
  using TargetPattern::TargetPattern;
  LogicalResult
  matchAndRewrite(UkStoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FailureOr<VectorType> type =
        getRegisterType(rewriter, op, op.getValue().getType());
    if (failed(type))
      return failure();
    Value ptr = getElementAddress(rewriter, op.getLoc(), adaptor.getBase(),
                                  adaptor.getOffset());
    target.emitStore(rewriter, op.getLoc(), adaptor.getValue(), ptr,
                     adaptor.getCount(), *type);
    rewriter.eraseOp(op);
    return success();
  }
};

struct ConvertPrefetch : TargetPattern<UkPrefetchOp> {
  using TargetPattern::TargetPattern;
  LogicalResult
  matchAndRewrite(UkPrefetchOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value ptr = getElementAddress(rewriter, op.getLoc(), adaptor.getBase(),
                                  adaptor.getOffset());
    target.emitPrefetch(rewriter, op.getLoc(), ptr);
    rewriter.eraseOp(op);
    return success();
  }
};

struct ConvertLutDot : TargetPattern<UkLutDotOp> {
  using TargetPattern::TargetPattern;
  LogicalResult
  matchAndRewrite(UkLutDotOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FailureOr<VectorType> type =
        getRegisterType(rewriter, op, op.getIndices().getType());
    if (failed(type))
      return failure();
    LutDotOperands operands;
    operands.accLow = adaptor.getAccLow();
    operands.accHigh = adaptor.getAccHigh();
    operands.indices = adaptor.getIndices();
    operands.tables = getElementAddress(
        rewriter, op.getLoc(), adaptor.getTables(), adaptor.getTableOffset());
    operands.signs = adaptor.getSigns();
    operands.high = op.getHigh();
    auto [low, high] =
        target.emitLutDot(rewriter, op.getLoc(), operands, *type);
    if (!low || !high)
      return rewriter.notifyMatchFailure(op, [&](Diagnostic &d) {
        d << "target " << target.getName() << " has no byte table lookup";
      });
    rewriter.replaceOp(op, {low, high});
    return success();
  }
};

struct ConvertLutDot8 : TargetPattern<UkLutDot8Op> {
  using TargetPattern::TargetPattern;
  LogicalResult
  matchAndRewrite(UkLutDot8Op op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FailureOr<VectorType> type =
        getRegisterType(rewriter, op, op.getIndices().getType());
    if (failed(type))
      return failure();
    LutDot8Operands operands;
    operands.acc = adaptor.getAcc();
    operands.indices = adaptor.getIndices();
    operands.tables = getElementAddress(
        rewriter, op.getLoc(), adaptor.getTables(), adaptor.getTableOffset());
    operands.multipliers = adaptor.getMultipliers();
    operands.high = op.getHigh();
    Value sum = target.emitLutDot8(rewriter, op.getLoc(), operands, *type);
    if (!sum)
      return rewriter.notifyMatchFailure(op, [&](Diagnostic &d) {
        d << "target " << target.getName() << " has no byte table lookup";
      });
    rewriter.replaceOp(op, sum);
    return success();
  }
};

struct ConvertLutTables : TargetPattern<UkLutTablesOp> {
  using TargetPattern::TargetPattern;
  LogicalResult
  matchAndRewrite(UkLutTablesOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value x = getElementAddress(rewriter, op.getLoc(), adaptor.getX(),
                                adaptor.getXOffset());
    Value tables = getElementAddress(rewriter, op.getLoc(), adaptor.getTables(),
                                     adaptor.getTableOffset());
    if (!target.emitLutTables(rewriter, op.getLoc(), x, tables,
                              int64_t(op.getWidth())))
      return rewriter.notifyMatchFailure(op, [&](Diagnostic &d) {
        d << "target " << target.getName() << " has no lut_tables";
      });
    rewriter.eraseOp(op);
    return success();
  }
};

struct ConvertSpill : TargetPattern<UkSpillOp> {
  using TargetPattern::TargetPattern;
  LogicalResult
  matchAndRewrite(UkSpillOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FailureOr<VectorType> type =
        getRegisterType(rewriter, op, op.getValue().getType());
    if (failed(type))
      return failure();
    Value ptr = getElementAddress(rewriter, op.getLoc(), adaptor.getBase(),
                                  adaptor.getOffset());
    if (!target.emitSpill(rewriter, op.getLoc(), adaptor.getValue(), ptr,
                          *type))
      return rewriter.notifyMatchFailure(op, "no spill on target");
    rewriter.eraseOp(op);
    return success();
  }
};

/// lowbit.uk.tile_*: the target's emitTileOp with the op's tiles (and,
/// for a load or store, the first row's address and the stride).
template <typename OpTy, TileOpKind Kind>
struct ConvertTileOp : TargetPattern<OpTy> {
  using TargetPattern<OpTy>::TargetPattern;
  using OpAdaptor = typename TargetPattern<OpTy>::OpAdaptor;
  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    SmallVector<int64_t, 3> tiles;
    SmallVector<Value, 2> operands;
    if constexpr (std::is_same_v<OpTy, UkTileDotOp>)
      tiles = {int64_t(op.getAcc()), int64_t(op.getLhs()),
               int64_t(op.getRhs())};
    if constexpr (std::is_same_v<OpTy, UkTileZeroOp>)
      tiles = {int64_t(op.getTile())};
    if constexpr (std::is_same_v<OpTy, UkTileConfigOp>)
      tiles = {int64_t(op.getK())};
    if constexpr (std::is_same_v<OpTy, UkTileLoadOp> ||
                  std::is_same_v<OpTy, UkTileStoreOp>) {
      tiles = {int64_t(op.getTile())};
      operands = {getElementAddress(rewriter, op.getLoc(), adaptor.getBase(),
                                    adaptor.getOffset()),
                  adaptor.getStride()};
    }
    if (!this->target.emitTileOp(rewriter, op.getLoc(), Kind, tiles,
                                 operands))
      return rewriter.notifyMatchFailure(op, [&](Diagnostic &d) {
        d << "target " << this->target.getName() << " has no matrix tiles";
      });
    rewriter.eraseOp(op);
    return success();
  }
};

/// lowbit.uk.stack_buffer: `int8_t v[bytes];` and `&v[0]` (any target);
/// with an alignment a, `int8_t v[bytes + a - 1];` and `&v[0]` rounded up to
/// a multiple of a.
struct ConvertStackBuffer : OpConversionPattern<UkStackBufferOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(UkStackBufferOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type i8 = rewriter.getI8Type();
    auto ptr = emitc::PointerType::get(i8);
    auto sizeT = emitc::SizeTType::get(getContext());
    int64_t alignment = op.getAlignment().value_or(1);
    auto array =
        emitc::ArrayType::get({int64_t(op.getBytes()) + alignment - 1}, i8);
    auto variable = emitc::VariableOp::create(
        rewriter, loc, array, emitc::OpaqueAttr::get(getContext(), ""));
    Value zero = emitc::ConstantOp::create(rewriter, loc, sizeT,
                                           rewriter.getIndexAttr(0));
    auto element = emitc::SubscriptOp::create(
        rewriter, loc, cast<TypedValue<emitc::ArrayType>>(variable.getResult()),
        ValueRange{zero});
    Value start = emitc::AddressOfOp::create(rewriter, loc, ptr, element);
    if (alignment > 1) {
      auto constant = [&](int64_t v) {
        return emitc::ConstantOp::create(rewriter, loc, sizeT,
                                         rewriter.getIndexAttr(v));
      };
      Value address = emitc::CastOp::create(rewriter, loc, sizeT, start);
      Value up = emitc::AddOp::create(rewriter, loc, sizeT, address,
                                      constant(alignment - 1));
      Value rounded = emitc::BitwiseAndOp::create(rewriter, loc, sizeT, up,
                                                  constant(-alignment));
      start = emitc::CastOp::create(rewriter, loc, ptr, rounded);
    }
    rewriter.replaceOp(op, start);
    return success();
  }
};

/// arith.constant dense<c> : vector<...> -> the target's splat. Tried before
/// the upstream arith.constant pattern, which only knows scalar constants.
struct ConvertSplatConstant : TargetPattern<arith::ConstantOp> {
  using TargetPattern::TargetPattern;
  LogicalResult
  matchAndRewrite(arith::ConstantOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto splat = dyn_cast<SplatElementsAttr>(op.getValue());
    if (!splat)
      return rewriter.notifyMatchFailure(op, "not a splat vector constant");
    FailureOr<VectorType> type = getRegisterType(rewriter, op, op.getType());
    if (failed(type))
      return failure();
    auto value = cast<TypedAttr>(splat.getSplatValue<Attribute>());
    rewriter.replaceOp(op,
                       target.emitSplat(rewriter, op.getLoc(), *type, value));
    return success();
  }
};

/// vector.broadcast of a scalar: the target's splat of a value.
struct ConvertBroadcast : TargetPattern<vector::BroadcastOp> {
  using TargetPattern::TargetPattern;
  LogicalResult
  matchAndRewrite(vector::BroadcastOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (isa<VectorType>(op.getSourceType()))
      return rewriter.notifyMatchFailure(op, "not a broadcast of a scalar");
    FailureOr<VectorType> type = getRegisterType(rewriter, op, op.getType());
    if (failed(type))
      return failure();
    rewriter.replaceOp(op, target.emitBroadcast(rewriter, op.getLoc(),
                                                adaptor.getSource(), *type));
    return success();
  }
};

/// arith.addi of int32 registers (the sum of split accumulators) or int16
/// ones (lowbit.uk.dot2 sums).
struct ConvertRegisterAdd : TargetPattern<arith::AddIOp> {
  using TargetPattern::TargetPattern;
  LogicalResult
  matchAndRewrite(arith::AddIOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isa<VectorType>(op.getType()))
      return rewriter.notifyMatchFailure(op, "not a register addition");
    FailureOr<VectorType> type = getRegisterType(rewriter, op, op.getType());
    if (failed(type))
      return failure();
    rewriter.replaceOp(op, target.emitAddI(rewriter, op.getLoc(),
                                           adaptor.getLhs(), adaptor.getRhs(),
                                           *type));
    return success();
  }
};

/// memref.load of a memref<?xT> that became a T *: `ptr[i]`.
struct ConvertPointerLoad : OpConversionPattern<memref::LoadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(memref::LoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto ptr = dyn_cast<TypedValue<emitc::PointerType>>(adaptor.getMemref());
    if (!ptr || adaptor.getIndices().size() != 1)
      return rewriter.notifyMatchFailure(op, "not a load through a pointer");
    Type type = getTypeConverter()->convertType(op.getType());
    if (!type)
      return rewriter.notifyMatchFailure(op, "cannot convert element type");
    auto lvalue = emitc::SubscriptOp::create(rewriter, op.getLoc(), ptr,
                                             adaptor.getIndices()[0]);
    rewriter.replaceOpWithNewOp<emitc::LoadOp>(op, type, lvalue);
    return success();
  }
};

/// memref.store into a memref<?xT> that became a T *: `ptr[i] = v`.
struct ConvertPointerStore : OpConversionPattern<memref::StoreOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(memref::StoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto ptr = dyn_cast<TypedValue<emitc::PointerType>>(adaptor.getMemref());
    if (!ptr || adaptor.getIndices().size() != 1)
      return rewriter.notifyMatchFailure(op, "not a store through a pointer");
    auto lvalue = emitc::SubscriptOp::create(rewriter, op.getLoc(), ptr,
                                             adaptor.getIndices()[0]);
    rewriter.replaceOpWithNewOp<emitc::AssignOp>(op, lvalue,
                                                 adaptor.getValue());
    return success();
  }
};

} // namespace

void mlir::lowbit::populateLowBitToEmitCPatterns(const TypeConverter &converter,
                                                 RewritePatternSet &patterns,
                                                 const TargetInfo &target) {
  MLIRContext *ctx = patterns.getContext();
  patterns
      .add<ConvertLoad, ConvertBroadcast4, ConvertUnpack, ConvertShrExact,
           ConvertDot4, ConvertLoadHalf, ConvertLoadScales, ConvertBlockCombine,
           ConvertTernaryScale, ConvertStore, ConvertPrefetch, ConvertBroadcast,
           ConvertLutTables, ConvertLutDot, ConvertLutDot8, ConvertSpill,
           HookPattern<UkLutSignsOp, emitLutSigns>,
           HookPattern<UkLutCombineOp, emitLutCombine>,
           HookPattern<UkLutLookupOp, emitLutLookup>,
           HookPattern<UkCodebookOp, emitCodebook>,
           HookPattern<UkTritOp, emitTrit>,
           HookPattern<UkTripleOp, emitTriple>,
           HookPattern<UkGroupCombineOp, emitGroupCombine>,
           HookPattern<UkZipOp, emitZip>, HookPattern<UkDot2Op, emitDot2>,
           HookPattern<UkExtendOp, emitExtend>,
           HookPattern<UkLaneFoldOp, emitLaneFold>,
           HookPattern<UkWidenOp, emitWiden>,
           ConvertTileOp<UkTileConfigOp, TileOpKind::Config>,
           ConvertTileOp<UkTileReleaseOp, TileOpKind::Release>,
           ConvertTileOp<UkTileZeroOp, TileOpKind::Zero>,
           ConvertTileOp<UkTileLoadOp, TileOpKind::Load>,
           ConvertTileOp<UkTileStoreOp, TileOpKind::Store>,
           ConvertTileOp<UkTileDotOp, TileOpKind::Dot>>(converter, ctx,
                                                        target);
  patterns.add<ConvertStackBuffer>(converter, ctx);
  patterns.add<ConvertSplatConstant, ConvertRegisterAdd>(converter, ctx, target,
                                                         /*benefit=*/2);
  patterns.add<ConvertPointerLoad, ConvertPointerStore>(converter, ctx);
}

//===----------------------------------------------------------------------===//
// The whole conversion
//===----------------------------------------------------------------------===//

/// The C spelling of a scalar pointee type of a kernel parameter.
static std::optional<std::string> getCTypeName(Type type) {
  if (auto integer = dyn_cast<IntegerType>(type)) {
    unsigned width = integer.getWidth();
    if (width != 8 && width != 16 && width != 32 && width != 64)
      return std::nullopt;
    return (integer.isUnsigned() ? "uint" : "int") + std::to_string(width) +
           "_t";
  }
  if (type.isF32())
    return std::string("float");
  return std::nullopt;
}

/// Gives `func` C linkage and makes the parameters listed in `readOnly`
/// pointers to const: the parameter takes the const type and the body keeps
/// using a non-const copy, `T *v = (T *)param;`.
static void finalizeSignature(emitc::FuncOp func, ArrayRef<unsigned> readOnly) {
  MLIRContext *ctx = func.getContext();
  func.setSpecifiersAttr(
      ArrayAttr::get(ctx, {StringAttr::get(ctx, "extern \"C\"")}));
  func.removeArgAttrsAttr();
  if (func.isExternal())
    return;
  Block &entry = func.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  SmallVector<Type> inputs(func.getArgumentTypes());
  for (unsigned i : readOnly) {
    BlockArgument arg = entry.getArgument(i);
    auto ptr = dyn_cast<emitc::PointerType>(arg.getType());
    if (!ptr)
      continue;
    std::optional<std::string> pointee = getCTypeName(ptr.getPointee());
    if (!pointee)
      continue;
    auto constPtr = emitc::PointerType::get(
        emitc::OpaqueType::get(ctx, "const " + *pointee));
    arg.setType(constPtr);
    inputs[i] = constPtr;
    if (arg.use_empty())
      continue;
    auto copy = emitc::CastOp::create(b, func.getLoc(), ptr, arg);
    arg.replaceAllUsesExcept(copy, copy);
  }
  // A kernel ignores the ABI parameters its format has no use for (scales
  // of i2s, w_scale of group formats): `(void)v;` keeps -Wextra quiet.
  for (BlockArgument arg : entry.getArguments())
    if (arg.use_empty())
      emitc::VerbatimOp::create(b, func.getLoc(), b.getStringAttr("(void){};"),
                                ValueRange{arg});
  func.setFunctionType(
      FunctionType::get(ctx, inputs, func.getFunctionType().getResults()));
}

LogicalResult mlir::lowbit::convertLowBitToEmitC(ModuleOp module,
                                                 const TargetInfo &target) {
  MLIRContext *ctx = module.getContext();

  // Which parameters are read-only, by function (the attribute does not
  // survive the func conversion).
  llvm::StringMap<SmallVector<unsigned>> readOnly;
  for (auto func : module.getOps<func::FuncOp>())
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (func.getArgAttr(i, kReadOnlyArgAttrName))
        readOnly[func.getName()].push_back(i);

  // Registers of another width mean the kernel was lowered for another
  // target: say so rather than fail to legalize.
  WalkResult widths = module.walk([&](Operation *op) {
    for (Type type : llvm::concat<const Type>(op->getOperandTypes(),
                                              op->getResultTypes())) {
      auto vector = dyn_cast<VectorType>(type);
      if (vector && !target.convertRegisterType(vector)) {
        op->emitOpError() << "uses " << vector
                          << ", which is not a register of target "
                          << target.getName() << " ("
                          << target.getRegisterBytes()
                          << "-byte registers); lower it with "
                             "lowbit-lower-upconvert for that target";
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  if (widths.wasInterrupted())
    return failure();

  TypeConverter converter;
  populateLowBitToEmitCTypeConversions(converter, target);
  RewritePatternSet patterns(ctx);
  populateLowBitToEmitCPatterns(converter, patterns, target);
  populateArithToEmitCPatterns(converter, patterns);
  populateSCFToEmitCConversionPatterns(patterns, converter);
  populateFuncToEmitCPatterns(converter, patterns);

  ConversionTarget legal(*ctx);
  legal.addLegalDialect<emitc::EmitCDialect>();
  legal.addLegalOp<ModuleOp, UnrealizedConversionCastOp>();
  if (failed(applyFullConversion(module, legal, std::move(patterns))))
    return failure();

  SmallVector<UnrealizedConversionCastOp> casts, remaining;
  module.walk([&](UnrealizedConversionCastOp op) { casts.push_back(op); });
  reconcileUnrealizedCasts(casts, &remaining);
  if (!remaining.empty())
    return remaining.front().emitOpError()
           << "is left over by the conversion to EmitC";

  for (auto func : module.getOps<emitc::FuncOp>())
    finalizeSignature(func, readOnly.lookup(func.getName()));

  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  for (const std::string &header : target.getIncludes())
    emitc::IncludeOp::create(b, module.getLoc(), header,
                             /*is_standard_include=*/true);
  if (std::string prelude = target.getPrelude(); !prelude.empty())
    emitc::VerbatimOp::create(b, module.getLoc(), b.getStringAttr(prelude));
  return success();
}

LogicalResult mlir::lowbit::convertLowBitToEmitC(
    ModuleOp module, StringRef passName,
    ArrayRef<std::unique_ptr<TargetInfo>> targets) {
  FailureOr<StringRef> name = lookupTargetName(module);
  if (failed(name))
    return failure();
  for (const std::unique_ptr<TargetInfo> &target : targets)
    if (target->getName() == *name)
      return convertLowBitToEmitC(module, *target);
  InFlightDiagnostic diag = module.emitError();
  diag << passName << ": the module's target '" << *name << "' (its "
       << kTargetAttrName << ") is not one it converts for; expected ";
  llvm::interleave(
      targets, diag, [&](const auto &target) { diag << target->getName(); },
      ", ");
  return failure();
}
