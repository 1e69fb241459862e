//===- lowbit-opt.cpp - lowbit optimizer driver -----------------*- C++ -*-===//
//
// mlir-opt for lowbit IR: parses, verifies, runs passes and prints. Knows the
// lowbit dialect, the upstream dialects lowbit IR is written and lowered
// with (func, arith, tensor, scf, memref, vector, emitc), the generic upstream
// transforms, every lowbit pass and the lowbit-upconvert-pipeline.
//
//   lowbit-opt in.mlir --lowbit-upconvert-pipeline="target=x86-avx512vnni" \
//     | mlir-translate --mlir-to-cpp
//
//===----------------------------------------------------------------------===//

#include "lowbit/Conversion/Passes.h"
#include "lowbit/Dialect/LowBit/IR/LowBitDialect.h"
#include "lowbit/Dialect/LowBit/Transforms/Passes.h"
#include "lowbit/Pipeline/Pipeline.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/EmitC/IR/EmitC.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerTransformsPasses();
  mlir::lowbit::registerLowBitTransformsPasses();
  mlir::lowbit::registerLowBitConversionPasses();
  mlir::lowbit::registerUpconvertPipeline();
  mlir::lowbit::registerGpuPipeline();

  mlir::DialectRegistry registry;
  registry.insert<mlir::lowbit::LowBitDialect, mlir::arith::ArithDialect,
                  mlir::emitc::EmitCDialect, mlir::func::FuncDialect,
                  mlir::memref::MemRefDialect, mlir::scf::SCFDialect,
                  mlir::tensor::TensorDialect, mlir::vector::VectorDialect,
                  mlir::gpu::GPUDialect, mlir::math::MathDialect,
                  mlir::spirv::SPIRVDialect>();

  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "lowbit optimizer driver\n", registry));
}
