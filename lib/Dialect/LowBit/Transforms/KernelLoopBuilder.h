//===- KernelLoopBuilder.h - index arithmetic for kernel lowerings -*- C++ -*-//
//
// What lowbit-lower-upconvert and lowbit-lower-lut-elementwise share when
// they write a kernel body: scf.for loops and index arithmetic that folds
// constants as it goes (so that offsets of fully unrolled code are
// constants and no unused constants are left).
//
//===----------------------------------------------------------------------===//

#ifndef LOWBIT_LIB_DIALECT_LOWBIT_TRANSFORMS_KERNELLOOPBUILDER_H
#define LOWBIT_LIB_DIALECT_LOWBIT_TRANSFORMS_KERNELLOOPBUILDER_H

#include "lowbit/Dialect/LowBit/IR/LowBitOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"

namespace mlir::lowbit {

/// Empties `func` and gives it the signature of lowbit_kernel_fn
/// (runtime/include/lowbit/kernel_abi.h): codes, scales, zeros, xq,
/// x_scales, x_sums (read-only), y, n, tile_begin, tile_end, w_scale.
/// Returns the empty entry block, whose arguments are those parameters.
inline Block &resetToKernelAbi(func::FuncOp func) {
  MLIRContext *ctx = func.getContext();
  auto memref = [&](Type element) {
    return MemRefType::get({ShapedType::kDynamic}, element);
  };
  Type u8 = IntegerType::get(ctx, 8, IntegerType::Unsigned);
  Type u16 = IntegerType::get(ctx, 16, IntegerType::Unsigned);
  Type i64 = IntegerType::get(ctx, 64);
  Type f32 = Float32Type::get(ctx);
  SmallVector<Type> inputs = {memref(u8),  memref(u16),
                              memref(u16), memref(IntegerType::get(ctx, 8)),
                              memref(f32), memref(IntegerType::get(ctx, 32)),
                              memref(f32), i64,
                              i64,         i64,
                              f32};
  Block &entry = func.getBody().front();
  entry.clear();
  entry.eraseArguments(0, entry.getNumArguments());
  for (Type type : inputs)
    entry.addArgument(type, func.getLoc());
  func.setFunctionType(FunctionType::get(ctx, inputs, {}));
  func.setAllArgAttrs(ArrayRef<DictionaryAttr>{});
  func.setAllResultAttrs(ArrayRef<DictionaryAttr>{});
  for (unsigned i = 0; i < 6; ++i)
    func.setArgAttr(i, kReadOnlyArgAttrName, UnitAttr::get(ctx));
  return entry;
}

class KernelLoopBuilder {
public:
  KernelLoopBuilder(OpBuilder &b, Location loc) : b(b), loc(loc) {}

protected:
  /// `scf.for %i = lower to upper step step { body(%i) }`.
  void forLoop(Value lower, Value upper, int64_t step,
               function_ref<void(Value)> body) {
    auto loop = scf::ForOp::create(b, loc, lower, upper, constant(step));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    body(loop.getInductionVar());
  }

  Value toIndex(Value v) {
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
  }
  Value constant(int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  }
  Value add(Value lhs, Value rhs) {
    std::optional<int64_t> l = getConstantIntValue(lhs),
                           r = getConstantIntValue(rhs);
    if (l && r)
      return constant(*l + *r);
    if (r && *r == 0)
      return lhs;
    if (l && *l == 0)
      return rhs;
    return arith::AddIOp::create(b, loc, lhs, rhs);
  }
  Value add(Value lhs, int64_t rhs) {
    if (rhs == 0)
      return lhs;
    if (std::optional<int64_t> l = getConstantIntValue(lhs))
      return constant(*l + rhs);
    return arith::AddIOp::create(b, loc, lhs, constant(rhs));
  }
  Value sub(Value lhs, Value rhs) {
    return arith::SubIOp::create(b, loc, lhs, rhs);
  }
  Value mul(Value lhs, int64_t rhs) {
    if (rhs == 1)
      return lhs;
    if (std::optional<int64_t> l = getConstantIntValue(lhs))
      return constant(*l * rhs);
    return arith::MulIOp::create(b, loc, lhs, constant(rhs));
  }
  Value div(Value lhs, int64_t rhs) {
    if (rhs == 1)
      return lhs;
    if (std::optional<int64_t> l = getConstantIntValue(lhs))
      return constant(*l / rhs);
    return arith::DivSIOp::create(b, loc, lhs, constant(rhs));
  }

  OpBuilder &b;
  Location loc;
};

} // namespace mlir::lowbit

#endif // LOWBIT_LIB_DIALECT_LOWBIT_TRANSFORMS_KERNELLOOPBUILDER_H
