//===- LowBitToSPIRV.cpp - gpu kernels to an embedded SPIR-V binary -------===//
//
// The SPIR-V GPU targets (SpirvTargetInfo), the SPIR-V forms of
// lowbit-lower-gpu's target-neutral kernels, and the gpu -> spirv pipeline
// up to the C++ that embeds the binary.
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

/// spirv-vulkan: Vulkan 1.3 compute as every device runs it. The
/// capabilities and extensions listed are what the conversion may use (the
/// integer dot product only where a config asks for it); spirv-update-vce
/// then keeps only those the module needs. 16-bit I/O (memref of i16):
/// spirv-vulkan does not assume 16-bit storage buffers, so
/// convert-gpu-to-spirv packs the i16 buffers in 32-bit words (shifts on
/// load, an atomic and / or pair on store, so neighbouring halves written
/// by different invocations never race). The SPIR-V version is 1.6, which
/// Vulkan 1.3 takes, where a kernel has OpSDot / OpSUDot (core in 1.6),
/// else 1.3: from 1.4 on, every global variable an entry point uses must be
/// in its interface, and spirv-lower-abi-attrs lists them by the
/// environment's version, before spirv-update-vce lowers the module's
/// version to what it needs.
class SpirvVulkanTargetInfo : public SpirvTargetInfo {
public:
  StringRef getName() const override { return "spirv-vulkan"; }
  int64_t getSubgroupSize() const override { return 16; }
  bool hasIntegerDot() const override { return false; }
  bool hasCooperativeMatrix() const override { return false; }
  /// GEMV: 4 subgroups of 4 rows, one activation row per workgroup with
  /// its scale fused (the Xe2 paper's finding for GEMV). GEMM: 4 x 4
  /// subgroup tiles that reuse every quantized activation 4 times, scales
  /// from the pre-kernel (the paper's GEMM finding).
  GpuTiles getDefaultTiles(bool gemv) const override {
    return gemv ? GpuTiles{16, 1, 4, 1} : GpuTiles{16, 4, 4, 4};
  }
  /// lavapipe's and most desktop GPUs' maxComputeSharedMemorySize (Vulkan
  /// only guarantees 16 KiB).
  int64_t getMaxWorkgroupBytes() const override { return 32768; }
  std::string getTargetEnv(bool version16) const override {
    return llvm::formatv(
        "#spirv.target_env<#spirv.vce<{0}, [Shader, Int64, "
        "GroupNonUniform, DotProduct, DotProductInput4x8BitPacked], "
        "[SPV_KHR_storage_buffer_storage_class, "
        "SPV_KHR_integer_dot_product]>, "
        "api=Vulkan, #spirv.resource_limits<max_compute_workgroup_"
        "invocations = 1024, max_compute_workgroup_size = [1024, 1024, "
        "64]>>",
        version16 ? "v1.6" : "v1.3");
  }
};

/// spirv-xe2: the same Vulkan compute with the Xe2 parameters of Intel's
/// AI-PC/Xe2 paper: subgroup 16, rectangular subgroup tiles (32 x 1 rows
/// for GEMV, 8 x 4 for GEMM), the integer dot product (Xe2 has DP4A),
/// 16-bit storage buffers (Int16) and the 8 x 16 x 32 int8 cooperative
/// matrices of DPAS (Int8), with the Intel vendor.
class SpirvXe2TargetInfo : public SpirvVulkanTargetInfo {
public:
  StringRef getName() const override { return "spirv-xe2"; }
  bool hasIntegerDot() const override { return true; }
  bool hasCooperativeMatrix() const override { return true; }
  GpuTiles getDefaultTiles(bool gemv) const override {
    return gemv ? GpuTiles{128, 1, 32, 1} : GpuTiles{32, 8, 8, 4};
  }
  std::string getTargetEnv(bool version16) const override {
    return llvm::formatv(
        "#spirv.target_env<#spirv.vce<{0}, [Shader, Int64, "
        "Int16, Int8, StorageBuffer16BitAccess, CooperativeMatrixKHR, "
        "GroupNonUniform, DotProduct, DotProductInput4x8BitPacked], "
        "[SPV_KHR_storage_buffer_storage_class, SPV_KHR_16bit_storage, "
        "SPV_KHR_integer_dot_product, SPV_KHR_cooperative_matrix]>, "
        "api=Vulkan, Intel:DiscreteGPU, #spirv.resource_limits<max_"
        "compute_workgroup_invocations = 1024, max_compute_workgroup_size "
        "= [1024, 1024, 64], subgroup_size = 16, "
        "cooperative_matrix_properties_khr = [#spirv.coop_matrix_props_khr<"
        "m_size = 8, n_size = 16, k_size = 32, a_type = i8, b_type = i8, "
        "c_type = i32, result_type = i32, acc_sat = false, "
        "scope = <Subgroup>>]>>",
        version16 ? "v1.6" : "v1.3");
  }
};

} // namespace

std::unique_ptr<SpirvTargetInfo>
mlir::lowbit::createSpirvTargetInfo(StringRef name) {
  if (name == "spirv-vulkan")
    return std::make_unique<SpirvVulkanTargetInfo>();
  if (name == "spirv-xe2")
    return std::make_unique<SpirvXe2TargetInfo>();
  return nullptr;
}

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
  using LowBitSpirvTargetEnvBase::LowBitSpirvTargetEnvBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // OpSDot / OpSUDot and the KHR cooperative-matrix ops need SPIR-V 1.6.
    bool dotProduct = false, matrix = false;
    module.walk([&](Operation *op) {
      dotProduct |= isa<spirv::SDotOp, spirv::SUDotOp>(op);
      matrix |= isa<gpu::SubgroupMmaComputeOp>(op);
    });
    std::unique_ptr<SpirvTargetInfo> info = createSpirvTargetInfo(target);
    if (!info) {
      module.emitError() << "unknown GPU target '" << target
                         << "' (expected "
                         << llvm::join(getGpuTargetNames(), ", ") << ")";
      return signalPassFailure();
    }
    if (matrix && !info->hasCooperativeMatrix()) {
      module.emitError() << "the cooperative-matrix path (#lowbit.gpu "
                            "matrix = true) is for target spirv-xe2, not '"
                         << target << "'";
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

void mlir::lowbit::addGpuToSpirvPasses(OpPassManager &pm, StringRef target) {
  pm.addNestedPass<gpu::GPUModuleOp>(createLowBitSpirvKernelAbi());
  LowBitSpirvTargetEnvOptions options;
  options.target = target.str();
  pm.addPass(createLowBitSpirvTargetEnv(options));
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
