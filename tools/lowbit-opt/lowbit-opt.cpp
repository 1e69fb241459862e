//===- lowbit-opt.cpp - lowbit optimizer driver -----------------*- C++ -*-===//
//
// mlir-opt for lowbit IR: parses, verifies, runs passes and prints. Knows the
// lowbit dialect plus the upstream dialects that lowbit IR is written with
// (func, arith, tensor) and the generic upstream transforms.
//
//===----------------------------------------------------------------------===//

#include "lowbit/Dialect/LowBit/IR/LowBitDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerTransformsPasses();

  mlir::DialectRegistry registry;
  registry.insert<mlir::lowbit::LowBitDialect, mlir::arith::ArithDialect,
                  mlir::func::FuncDialect, mlir::tensor::TensorDialect>();

  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "lowbit optimizer driver\n", registry));
}
