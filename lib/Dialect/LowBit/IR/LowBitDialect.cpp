//===- LowBitDialect.cpp - lowbit dialect -----------------------*- C++ -*-===//
//
// Registers the lowbit attributes and operations, and verifies the
// discardable `lowbit.target` attribute.
//
//===----------------------------------------------------------------------===//

#include "lowbit/Dialect/LowBit/IR/LowBitDialect.h"
#include "lowbit/Dialect/LowBit/IR/LowBitAttrs.h"
#include "lowbit/Dialect/LowBit/IR/LowBitOps.h"

#include "mlir/IR/BuiltinOps.h"

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

/// `lowbit.target` names the target of a module: a string on a
/// builtin.module. Which names exist is the target registry's
/// (lib/Target/TargetInfo.cpp), which the dialect does not link; its
/// lookup (lookupTargetInfo) rejects an unknown name.
LogicalResult LowBitDialect::verifyOperationAttribute(Operation *op,
                                                      NamedAttribute attr) {
  if (attr.getName() != "lowbit.target")
    return success();
  if (!isa<ModuleOp>(op))
    return op->emitError() << "'lowbit.target' belongs on a builtin.module";
  auto name = dyn_cast<StringAttr>(attr.getValue());
  if (!name || name.getValue().empty())
    return op->emitError()
           << "'lowbit.target' must be a non-empty string naming a target "
              "(e.g. \"x86-avx2\"), got "
           << attr.getValue();
  return success();
}
