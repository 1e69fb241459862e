//===- LowBitOps.h - lowbit operations --------------------------*- C++ -*-===//
//
// Declares the lowbit operations.
//
//===----------------------------------------------------------------------===//

#ifndef LOWBIT_DIALECT_LOWBIT_IR_LOWBITOPS_H
#define LOWBIT_DIALECT_LOWBIT_IR_LOWBITOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "lowbit/Dialect/LowBit/IR/LowBitAttrs.h"
#include "lowbit/Dialect/LowBit/IR/LowBitDialect.h"

#define GET_OP_CLASSES
#include "lowbit/Dialect/LowBit/IR/LowBitOps.h.inc"

namespace mlir::lowbit {
/// Unit attribute on a memref argument of a lowered kernel that the kernel
/// only reads; its C parameter becomes a pointer to const.
constexpr StringLiteral kReadOnlyArgAttrName = "lowbit.readonly";
} // namespace mlir::lowbit

#endif // LOWBIT_DIALECT_LOWBIT_IR_LOWBITOPS_H
