//===- TargetAttr.cpp - the module's lowbit.target attribute --------------===//
//
// Reading and writing the attribute alone, without the registry: the CPU
// conversion passes (lib/Conversion), which the registry links, read it too.
//
//===----------------------------------------------------------------------===//

#include "lowbit/Target/TargetInfo.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"

using namespace mlir;
using namespace mlir::lowbit;

void mlir::lowbit::setTargetAttr(Operation *op, StringRef name) {
  op->setAttr(kTargetAttrName, StringAttr::get(op->getContext(), name));
}

FailureOr<StringRef> mlir::lowbit::lookupTargetName(Operation *op) {
  for (Operation *at = op; at; at = at->getParentOp())
    if (auto name = at->getAttrOfType<StringAttr>(kTargetAttrName))
      return name.getValue();
  op->emitError() << "no target: expected a '" << kTargetAttrName
                  << "' string attribute on the module (lowbit-select-config "
                     "sets it)";
  return failure();
}
