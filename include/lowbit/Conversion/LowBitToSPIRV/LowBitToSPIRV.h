//===- LowBitToSPIRV.h - gpu kernels to an embedded SPIR-V binary -*- C++ -*-=//
//
// The last step of a GPU target: the gpu.module of lowbit-lower-gpu becomes
// a spirv.module (MLIR's convert-gpu-to-spirv with the target's
// spirv.target_env), is serialized to a SPIR-V binary, and the binary is
// embedded in C++ (EmitC globals, translated by mlir::emitc::translateToCpp)
// that runtime/src/vulkan.cpp launches. The buffers and the metadata words
// are described in runtime/include/lowbit/vulkan.h.
//
//===----------------------------------------------------------------------===//

#ifndef LOWBIT_CONVERSION_LOWBITTOSPIRV_LOWBITTOSPIRV_H
#define LOWBIT_CONVERSION_LOWBITTOSPIRV_LOWBITTOSPIRV_H

#include "lowbit/Target/TargetInfo.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

#include <string>

namespace mlir::lowbit {

/// A GPU target whose kernels become SPIR-V for Vulkan: the GpuTargetInfo
/// facts and the spirv.target_env the conversion converts for.
class SpirvTargetInfo : public GpuTargetInfo {
public:
  SpirvTargetInfo() : GpuTargetInfo(Kind::Spirv) {}
  static bool classof(const GpuTargetInfo *info) {
    return info->getKind() == Kind::Spirv;
  }

  /// The text of the target's #spirv.target_env: SPIR-V 1.6 with
  /// `version16` (OpSDot / OpSUDot, cooperative matrices), else 1.3.
  virtual std::string getTargetEnv(bool version16) const = 0;
};

/// The SpirvTargetInfo of `spirv-vulkan` (SpirvTargetInfo.cpp; the
/// registry's factories).
std::unique_ptr<GpuTargetInfo> createSpirvVulkanTargetInfo();
/// The SpirvTargetInfo of `spirv-xe2`.
std::unique_ptr<GpuTargetInfo> createSpirvXe2TargetInfo();

/// Adds lowbit-spirv-kernel-abi, lowbit-spirv-target-env (for the module's
/// lowbit.target),
/// convert-math-to-spirv, convert-gpu-to-spirv and, on the spirv.module,
/// lowbit-spirv-coop-matrix-signs, spirv-lower-abi-attrs and
/// spirv-update-vce to `pm`.
void addGpuToSpirvPasses(OpPassManager &pm);

/// Whether the spirv.module inside `module` requires SPIR-V capability
/// `capability` (its name, e.g. "StorageBuffer16BitAccess"), by the
/// module's VCE triple (set by spirv-update-vce).
bool spirvModuleRequires(ModuleOp module, StringRef capability);

/// Serializes the one spirv.module inside `module` into `words`.
LogicalResult serializeSpirvModule(ModuleOp module,
                                   SmallVectorImpl<uint32_t> &words);

/// C++ source of the bundle of one GPU kernel: globals `<name>_spirv`
/// (uint32_t[], the binary) and `<name>_info` (int64_t[], lowbit/vulkan.h).
FailureOr<std::string> embedSpirvKernel(MLIRContext *ctx, StringRef name,
                                        ArrayRef<uint32_t> words,
                                        ArrayRef<int64_t> info);

} // namespace mlir::lowbit

#endif // LOWBIT_CONVERSION_LOWBITTOSPIRV_LOWBITTOSPIRV_H
