//===- Passes.h - lowbit conversion passes ----------------------*- C++ -*-===//
#ifndef LOWBIT_CONVERSION_PASSES_H
#define LOWBIT_CONVERSION_PASSES_H

#include "mlir/Dialect/EmitC/IR/EmitC.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::lowbit {

#define GEN_PASS_DECL
#include "lowbit/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "lowbit/Conversion/Passes.h.inc"

} // namespace mlir::lowbit

#endif // LOWBIT_CONVERSION_PASSES_H
