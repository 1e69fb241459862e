//===- LowBitDialect.cpp - lowbit dialect -----------------------*- C++ -*-===//
//
// Registers the lowbit attributes and operations.
//
//===----------------------------------------------------------------------===//

#include "lowbit/Dialect/LowBit/IR/LowBitDialect.h"
#include "lowbit/Dialect/LowBit/IR/LowBitAttrs.h"
#include "lowbit/Dialect/LowBit/IR/LowBitOps.h"

using namespace mlir;
using namespace mlir::lowbit;

#include "lowbit/Dialect/LowBit/IR/LowBitDialect.cpp.inc"

void LowBitDialect::initialize() {
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "lowbit/Dialect/LowBit/IR/LowBitOps.cpp.inc"
      >();
}
