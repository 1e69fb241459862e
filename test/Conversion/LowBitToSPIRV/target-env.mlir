// RUN: not lowbit-opt %s --split-input-file --lowbit-select-config=target=spirv-vulkan --lowbit-spirv-target-env 2>%t.err | FileCheck %s --check-prefix=VULKAN
// RUN: FileCheck %s --check-prefix=MATRIX < %t.err
// RUN: lowbit-opt %s --split-input-file --lowbit-select-config=target=spirv-xe2 --lowbit-spirv-target-env | FileCheck %s --check-prefix=XE2

// lowbit-spirv-target-env puts the spirv.target_env of the module's target
// (its lowbit.target, which select-config sets) on the module: SPIR-V 1.3,
// or 1.6 once a module has OpSDot / OpSUDot or cooperative matrices;
// spirv-xe2 adds Intel's vendor, 16-bit storage, a subgroup size of 16 and
// the 8 x 16 x 32 int8 matrices. A missing or unknown target:
// module-target-errors.mlir.

// VULKAN-LABEL: module attributes {lowbit.target = "spirv-vulkan", spirv.target_env = #spirv.target_env<#spirv.vce<v1.3, [Shader, Int64, GroupNonUniform, DotProduct, DotProductInput4x8BitPacked], [SPV_KHR_storage_buffer_storage_class, SPV_KHR_integer_dot_product]>, api=Vulkan, #spirv.resource_limits<max_compute_workgroup_invocations = 1024, max_compute_workgroup_size = [1024, 1024, 64]>>}
// XE2-LABEL: module attributes {lowbit.target = "spirv-xe2", spirv.target_env = #spirv.target_env<#spirv.vce<v1.3, [Shader, Int64, Int16, Int8, StorageBuffer16BitAccess, CooperativeMatrixKHR, GroupNonUniform, DotProduct, DotProductInput4x8BitPacked], [SPV_KHR_storage_buffer_storage_class, SPV_KHR_16bit_storage, SPV_KHR_integer_dot_product, SPV_KHR_cooperative_matrix]>, api=Vulkan, Intel:DiscreteGPU, #spirv.resource_limits<max_compute_workgroup_invocations = 1024, max_compute_workgroup_size = [1024, 1024, 64], subgroup_size = 16, cooperative_matrix_properties_khr = [#spirv.coop_matrix_props_khr<m_size = 8, n_size = 16, k_size = 32, a_type = i8, b_type = i8, c_type = i32, result_type = i32, acc_sat = false, scope = <Subgroup>>]>>}
module {
  func.func @plain(%a: i32) -> i32 {
    return %a : i32
  }
}

// -----

// VULKAN-LABEL: module attributes {lowbit.target = "spirv-vulkan", spirv.target_env = #spirv.target_env<#spirv.vce<v1.6,
// XE2-LABEL: module attributes {lowbit.target = "spirv-xe2", spirv.target_env = #spirv.target_env<#spirv.vce<v1.6,
module {
  func.func @dot(%a: i32, %b: i32) -> i32 {
    %d = spirv.SDot %a, %b, <PackedVectorFormat4x8Bit> : i32 -> i32
    return %d : i32
  }
}

// -----

// XE2-LABEL: module attributes {lowbit.target = "spirv-xe2", spirv.target_env = #spirv.target_env<#spirv.vce<v1.6,
// MATRIX: error: the cooperative-matrix path (#lowbit.gpu matrix = true) is for target spirv-xe2, not 'spirv-vulkan'
module {
  func.func @matrix(%a: !gpu.mma_matrix<8x32xsi8, "AOp">, %b: !gpu.mma_matrix<32x16xsi8, "BOp">,
                    %c: !gpu.mma_matrix<8x16xi32, "COp">) -> !gpu.mma_matrix<8x16xi32, "COp"> {
    %d = gpu.subgroup_mma_compute %a, %b, %c : !gpu.mma_matrix<8x32xsi8, "AOp">, !gpu.mma_matrix<32x16xsi8, "BOp"> -> !gpu.mma_matrix<8x16xi32, "COp">
    return %d : !gpu.mma_matrix<8x16xi32, "COp">
  }
}

