//===- EmitCBuilder.h - small helpers to write EmitC ops --------*- C++ -*-===//
//
// Shorthands used by the TargetInfo hooks of every target to build the EmitC
// ops of one microkernel op: calls of C functions and intrinsics, constants,
// casts and element accesses through pointers.
//
//===----------------------------------------------------------------------===//

#ifndef LOWBIT_CONVERSION_LOWBITTOEMITC_EMITCBUILDER_H
#define LOWBIT_CONVERSION_LOWBITTOEMITC_EMITCBUILDER_H

#include "mlir/Dialect/EmitC/IR/EmitC.h"
#include "mlir/IR/Builders.h"

namespace mlir::lowbit::emitc_builder {

/// `!emitc.opaque<"name">`.
Type opaqueType(MLIRContext *ctx, StringRef name);
/// `!emitc.ptr<!emitc.opaque<"const name">>`.
Type constPointerType(MLIRContext *ctx, StringRef pointee);

/// `callee(operands..., literals...)` returning `result`; a literal is an
/// attribute printed as it is (an integer or an #emitc.opaque).
Value call(OpBuilder &b, Location loc, Type result, StringRef callee,
           ValueRange operands, ArrayRef<Attribute> literals = {});
/// `callee(operands..., literals...);` for its side effects.
void callVoid(OpBuilder &b, Location loc, StringRef callee, ValueRange operands,
              ArrayRef<Attribute> literals = {});

/// An integer constant of integer type `type`.
Value intConstant(OpBuilder &b, Location loc, Type type, int64_t value);
/// An f32 constant.
Value floatConstant(OpBuilder &b, Location loc, double value);
/// A C-style cast `(type) value`.
Value castTo(OpBuilder &b, Location loc, Type type, Value value);
/// `ptr[index]` read into a value (`ptr` is an !emitc.ptr).
Value loadElement(OpBuilder &b, Location loc, Value ptr, int64_t index);
/// `&ptr[index]` (`ptr` is an !emitc.ptr).
Value elementAddress(OpBuilder &b, Location loc, Value ptr, int64_t index);

} // namespace mlir::lowbit::emitc_builder

#endif // LOWBIT_CONVERSION_LOWBITTOEMITC_EMITCBUILDER_H
