//===- SpirvTargetInfo.cpp - the SPIR-V GPU targets -----------------------===//
//
// The GpuTargetInfo of spirv-vulkan and spirv-xe2 and the spirv.target_env
// each is converted for. A library of its own (LowBitSpirvTarget) below the
// target registry, which the SPIR-V passes (LowBitToSPIRV) look targets up
// in.
//
//===----------------------------------------------------------------------===//

#include "lowbit/Conversion/LowBitToSPIRV/LowBitToSPIRV.h"

#include "llvm/Support/FormatVariadic.h"

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

std::unique_ptr<GpuTargetInfo> mlir::lowbit::createSpirvVulkanTargetInfo() {
  return std::make_unique<SpirvVulkanTargetInfo>();
}

std::unique_ptr<GpuTargetInfo> mlir::lowbit::createSpirvXe2TargetInfo() {
  return std::make_unique<SpirvXe2TargetInfo>();
}
