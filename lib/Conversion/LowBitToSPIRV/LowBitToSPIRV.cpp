//===- LowBitToSPIRV.cpp - gpu kernels to an embedded SPIR-V binary -------===//
//
// The SPIR-V forms of lowbit-lower-gpu's target-neutral kernels, the
// spirv.target_env of the module's target (SpirvTargetInfo.cpp), and the
// gpu -> spirv pipeline up to the C++ that embeds the binary.
//
//===----------------------------------------------------------------------===//

#include "lowbit/Conversion/LowBitToSPIRV/LowBitToSPIRV.h"
#include "lowbit/Conversion/Passes.h"
#include "lowbit/Dialect/LowBit/IR/LowBitOps.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Conversion/GPUToSPIRV/GPUToSPIRVPass.h"
#include "mlir/Conversion/MathToSPIRV/MathToSPIRVPass.h"
#include "mlir/Dialect/EmitC/IR/EmitC.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVDialect.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVOps.h"
#include "mlir/Dialect/SPIRV/IR/TargetAndABI.h"
#include "mlir/Dialect/SPIRV/Transforms/Passes.h"
#include "mlir/Target/Cpp/CppEmitter.h"
#include "mlir/Target/SPIRV/Serialization.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::lowbit {
#define GEN_PASS_DEF_LOWBITSPIRVKERNELABI
#define GEN_PASS_DEF_LOWBITSPIRVTARGETENV
#include "lowbit/Conversion/Passes.h.inc"
} // namespace mlir::lowbit

using namespace mlir;
using namespace mlir::lowbit;

namespace {
class SpirvKernelAbiPass
    : public lowbit::impl::LowBitSpirvKernelAbiBase<SpirvKernelAbiPass> {
public:
  void runOnOperation() override {
    getOperation().walk([](gpu::GPUFuncOp kernel) {
      std::optional<ArrayRef<int32_t>> size = kernel.getKnownBlockSize();
      if (!size)
        return;
      kernel->setAttr(spirv::getEntryPointABIAttrName(),
                      spirv::getEntryPointABIAttr(kernel.getContext(), *size));
      kernel.setKnownBlockSizeAttr(nullptr);
    });
    getOperation().walk([](UkPackedDotOp op) {
      OpBuilder b(op);
      auto format = spirv::PackedVectorFormatAttr::get(
          b.getContext(), spirv::PackedVectorFormat::PackedVectorFormat4x8Bit);
      Value dot =
          op.getUnsignedRhs()
              ? spirv::SUDotOp::create(b, op.getLoc(), b.getI32Type(),
                                       op.getLhs(), op.getRhs(), format)
                    .getResult()
              : spirv::SDotOp::create(b, op.getLoc(), b.getI32Type(),
                                      op.getLhs(), op.getRhs(), format)
                    .getResult();
      op.replaceAllUsesWith(dot);
      op.erase();
    });
  }
};

class SpirvTargetEnvPass
    : public lowbit::impl::LowBitSpirvTargetEnvBase<SpirvTargetEnvPass> {
public:
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // OpSDot / OpSUDot and the KHR cooperative-matrix ops need SPIR-V 1.6.
    bool dotProduct = false, matrix = false;
    module.walk([&](Operation *op) {
      dotProduct |= isa<spirv::SDotOp, spirv::SUDotOp>(op);
      matrix |= isa<gpu::SubgroupMmaComputeOp>(op);
    });
    FailureOr<std::unique_ptr<GpuTargetInfo>> gpuInfo =
        lookupGpuTargetInfo(module);
    if (failed(gpuInfo))
      return signalPassFailure();
    auto *info = dyn_cast<SpirvTargetInfo>(gpuInfo->get());
    if (!info) {
      module.emitError() << "GPU target '" << (*gpuInfo)->getName()
                         << "' does not compile to SPIR-V";
      return signalPassFailure();
    }
    if (matrix && !info->hasCooperativeMatrix()) {
      module.emitError() << "the cooperative-matrix path (#lowbit.gpu "
                            "matrix = true) is for target spirv-xe2, not '"
                         << info->getName() << "'";
      return signalPassFailure();
    }
    Attribute attr = parseAttribute(info->getTargetEnv(dotProduct || matrix),
                                    module.getContext());
    if (!attr)
      return signalPassFailure();
    module->setAttr(spirv::getTargetEnvAttrName(), attr);
  }
};
} // namespace

void mlir::lowbit::addGpuToSpirvPasses(OpPassManager &pm) {
  pm.addNestedPass<gpu::GPUModuleOp>(createLowBitSpirvKernelAbi());
  pm.addPass(createLowBitSpirvTargetEnv());
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertMathToSPIRVPass());
  pm.addPass(createConvertGPUToSPIRVPass(/*mapMemorySpace=*/true));
  OpPassManager &spirvPm = pm.nest<spirv::ModuleOp>();
  spirvPm.addPass(createLowBitSpirvCoopMatrixSigns());
  spirvPm.addPass(spirv::createSPIRVLowerABIAttributesPass());
  spirvPm.addPass(spirv::createSPIRVUpdateVCEPass());
}

bool mlir::lowbit::spirvModuleRequires(ModuleOp module, StringRef capability) {
  std::optional<spirv::Capability> wanted =
      spirv::symbolizeCapability(capability);
  bool found = false;
  module.walk([&](spirv::ModuleOp op) {
    if (std::optional<spirv::VerCapExtAttr> vce = op.getVceTriple())
      found |= wanted && llvm::is_contained(vce->getCapabilities(), *wanted);
  });
  return found;
}

LogicalResult
mlir::lowbit::serializeSpirvModule(ModuleOp module,
                                   SmallVectorImpl<uint32_t> &words) {
  SmallVector<spirv::ModuleOp> spirvModules(module.getOps<spirv::ModuleOp>());
  if (spirvModules.size() != 1)
    return module.emitError() << "expected one spirv.module, found "
                              << spirvModules.size();
  return spirv::serialize(spirvModules.front(), words);
}

FailureOr<std::string>
mlir::lowbit::embedSpirvKernel(MLIRContext *ctx, StringRef name,
                               ArrayRef<uint32_t> words,
                               ArrayRef<int64_t> info) {
  ctx->getOrLoadDialect<emitc::EmitCDialect>();
  OpBuilder b(ctx);
  Location loc = NameLoc::get(b.getStringAttr(name));
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  emitc::IncludeOp::create(b, loc, "stdint.h", /*is_standard_include=*/true);
  auto addGlobal = [&](StringRef suffix, Type element,
                       DenseElementsAttr values) {
    auto type = emitc::ArrayType::get({values.getNumElements()}, element);
    emitc::GlobalOp::create(b, loc, (name + suffix).str(), type, values,
                            /*extern_specifier=*/false,
                            /*static_specifier=*/false,
                            /*const_specifier=*/false);
  };
  Type u32 = b.getIntegerType(32, /*isSigned=*/false);
  Type i64 = b.getI64Type();
  addGlobal("_spirv", u32,
            DenseElementsAttr::get(
                RankedTensorType::get({int64_t(words.size())}, u32), words));
  addGlobal("_info", i64,
            DenseElementsAttr::get(
                RankedTensorType::get({int64_t(info.size())}, i64), info));
  std::string cpp;
  llvm::raw_string_ostream os(cpp);
  if (failed(emitc::translateToCpp(*module, os)))
    return failure();
  return cpp;
}
