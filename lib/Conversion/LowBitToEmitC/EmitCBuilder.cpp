//===- EmitCBuilder.cpp - small helpers to write EmitC ops ----------------===//

#include "lowbit/Conversion/LowBitToEmitC/EmitCBuilder.h"

using namespace mlir;
using namespace mlir::lowbit;

Type emitc_builder::opaqueType(MLIRContext *ctx, StringRef name) {
  return emitc::OpaqueType::get(ctx, name);
}

Type emitc_builder::constPointerType(MLIRContext *ctx, StringRef pointee) {
  return emitc::PointerType::get(
      emitc::OpaqueType::get(ctx, ("const " + pointee).str()));
}

/// The `args` attribute of emitc.call_opaque: every operand in order, then
/// the literals.
static ArrayAttr getCallArgs(OpBuilder &b, size_t numOperands,
                             ArrayRef<Attribute> literals) {
  if (literals.empty())
    return nullptr;
  SmallVector<Attribute> args;
  for (size_t i = 0; i < numOperands; ++i)
    args.push_back(b.getIndexAttr(int64_t(i)));
  llvm::append_range(args, literals);
  return b.getArrayAttr(args);
}

Value emitc_builder::call(OpBuilder &b, Location loc, Type result,
                          StringRef callee, ValueRange operands,
                          ArrayRef<Attribute> literals) {
  return emitc::CallOpaqueOp::create(b, loc, TypeRange{result}, callee,
                                     operands,
                                     getCallArgs(b, operands.size(), literals))
      .getResult(0);
}

void emitc_builder::callVoid(OpBuilder &b, Location loc, StringRef callee,
                             ValueRange operands,
                             ArrayRef<Attribute> literals) {
  emitc::CallOpaqueOp::create(b, loc, TypeRange{}, callee, operands,
                              getCallArgs(b, operands.size(), literals));
}

Value emitc_builder::intConstant(OpBuilder &b, Location loc, Type type,
                                 int64_t value) {
  return emitc::ConstantOp::create(b, loc, type, b.getIntegerAttr(type, value));
}

Value emitc_builder::floatConstant(OpBuilder &b, Location loc, double value) {
  return emitc::ConstantOp::create(b, loc, b.getF32Type(),
                                   b.getF32FloatAttr(float(value)));
}

Value emitc_builder::castTo(OpBuilder &b, Location loc, Type type,
                            Value value) {
  if (value.getType() == type)
    return value;
  return emitc::CastOp::create(b, loc, type, value);
}

Value emitc_builder::loadElement(OpBuilder &b, Location loc, Value ptr,
                                 int64_t index) {
  Value i = emitc::ConstantOp::create(
      b, loc, emitc::SizeTType::get(b.getContext()), b.getIndexAttr(index));
  auto lvalue = emitc::SubscriptOp::create(
      b, loc, cast<TypedValue<emitc::PointerType>>(ptr), i);
  return emitc::LoadOp::create(
      b, loc, cast<emitc::PointerType>(ptr.getType()).getPointee(), lvalue);
}

Value emitc_builder::elementAddress(OpBuilder &b, Location loc, Value ptr,
                                    int64_t index) {
  Value i = emitc::ConstantOp::create(
      b, loc, emitc::SizeTType::get(b.getContext()), b.getIndexAttr(index));
  auto lvalue = emitc::SubscriptOp::create(
      b, loc, cast<TypedValue<emitc::PointerType>>(ptr), i);
  return emitc::AddressOfOp::create(b, loc, ptr.getType(), lvalue);
}
