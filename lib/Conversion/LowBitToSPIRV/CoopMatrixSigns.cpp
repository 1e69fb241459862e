//===- CoopMatrixSigns.cpp - signed operands of cooperative-matrix muladds ===//
//
// MLIR 22's convert-gpu-to-spirv turns gpu.subgroup_mma_compute of si8
// matrices into spirv.KHR.CooperativeMatrixMulAdd without the
// MatrixASignedComponents / MatrixBSignedComponents operands, and
// SPV_KHR_cooperative_matrix reads integer components without them as
// unsigned: -1 would multiply as 255. This pass marks the signed operands.
//
//===----------------------------------------------------------------------===//

#include "lowbit/Conversion/Passes.h"

#include "mlir/Dialect/SPIRV/IR/SPIRVOps.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVTypes.h"

namespace mlir::lowbit {
#define GEN_PASS_DEF_LOWBITSPIRVCOOPMATRIXSIGNS
#include "lowbit/Conversion/Passes.h.inc"
} // namespace mlir::lowbit

using namespace mlir;

namespace {

bool isSigned(Value v) {
  auto type = cast<spirv::CooperativeMatrixType>(v.getType());
  return type.getElementType().isSignedInteger();
}

class CoopMatrixSignsPass
    : public lowbit::impl::LowBitSpirvCoopMatrixSignsBase<CoopMatrixSignsPass> {
public:
  void runOnOperation() override {
    getOperation().walk([](spirv::KHRCooperativeMatrixMulAddOp op) {
      using Operands = spirv::CooperativeMatrixOperandsKHR;
      Operands operands = Operands::None;
      if (isSigned(op.getA()))
        operands = operands | Operands::ASigned;
      if (isSigned(op.getB()))
        operands = operands | Operands::BSigned;
      // Signed products are summed as signed int32.
      if (operands != Operands::None &&
          isa<IntegerType>(
              cast<spirv::CooperativeMatrixType>(op.getC().getType())
                  .getElementType()))
        operands = operands | Operands::CSigned | Operands::ResultSigned;
      if (operands != Operands::None)
        op.setMatrixOperandsAttr(spirv::CooperativeMatrixOperandsKHRAttr::get(
            op.getContext(), operands));
    });
  }
};

} // namespace
