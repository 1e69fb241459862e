//===- LowBitDialect.h - lowbit dialect -------------------------*- C++ -*-===//
//
// Declares the lowbit dialect class.
//
//===----------------------------------------------------------------------===//

#ifndef LOWBIT_DIALECT_LOWBIT_IR_LOWBITDIALECT_H
#define LOWBIT_DIALECT_LOWBIT_IR_LOWBITDIALECT_H

#include "mlir/IR/Dialect.h"

#include "lowbit/Dialect/LowBit/IR/LowBitDialect.h.inc"

#endif // LOWBIT_DIALECT_LOWBIT_IR_LOWBITDIALECT_H
