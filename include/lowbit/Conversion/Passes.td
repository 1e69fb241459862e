//===- Passes.td - lowbit conversion passes ----------------*- tablegen -*-===//
//
// The per-target last step of the pipeline: lowered kernels to EmitC, from
// which mlir::emitc::translateToCpp writes the C++.
//
//===----------------------------------------------------------------------===//

#ifndef LOWBIT_CONVERSION_PASSES_TD
#define LOWBIT_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def LowBitConvertToX86 : Pass<"lowbit-convert-to-x86", "ModuleOp"> {
  let summary = "Converts lowered up-convert kernels to EmitC with x86 intrinsics";
  let description = [{
    Converts every kernel written by `lowbit-lower-upconvert` (func, scf,
    arith, memref and `lowbit.uk.*` ops) to EmitC: the generic ops through
    the upstream ArithToEmitC, SCFToEmitC and FuncToEmitC patterns, pointers
    and the microkernel ops through the hooks of the x86 TargetInfo of the
    module's `lowbit.target` (lowbit-select-config sets it; a missing
    attribute or a target that is not x86 is an error). The module gets
    `#include <immintrin.h>` and the kernels C linkage and kernel_abi.h's
    exact parameter types.

    | target           | register | dot4                                   |
    | ---------------- | -------- | -------------------------------------- |
    | `x86-amx`        | `__m512i`| as avx512vnni; GEMM: `_tile_dpbsud`    |
    | `x86-avx512vnni` | `__m512i`| `_mm512_dpbusd_epi32`                  |
    | `x86-avxvnni`    | `__m256i`| `_mm256_dpbusd_avx_epi32`              |
    | `x86-avx2`       | `__m256i`| `_mm256_maddubs_epi16` + `_mm256_madd_epi16` |

    ```mlir
    %d = lowbit.uk.dot4 %acc, %w, %x : vector<64xi8> -> vector<16xi32>
    // becomes
    %d = emitc.call_opaque "_mm512_dpbusd_epi32"(%acc, %w, %x)
         : (!emitc.opaque<"__m512i">, !emitc.opaque<"__m512i">, !emitc.opaque<"__m512i">)
         -> !emitc.opaque<"__m512i">
    ```
  }];
  let dependentDialects = ["::mlir::emitc::EmitCDialect"];
}

def LowBitConvertToGeneric : Pass<"lowbit-convert-to-generic", "ModuleOp"> {
  let summary = "Converts lowered up-convert kernels to portable scalar C++ in EmitC";
  let description = [{
    The same conversion as `lowbit-convert-to-x86` with the generic
    TargetInfo (the module's `lowbit.target` must be `generic`): a register is one weight row x 4 k in a `uint32_t`, unpacked
    with shifts and masks (SWAR) and multiplied byte by byte; fp16 scales
    are widened with `ldexpf`. No intrinsics: any C++17 compiler, any CPU.

    ```mlir
    %w = lowbit.uk.unpack %r {bits = 2, plane = 1} : vector<4xi8>
    // becomes
    %s = emitc.bitwise_right_shift %r, %c2 : (ui32, ui32) -> ui32
    %w = emitc.bitwise_and %s, %c0x03030303 : (ui32, ui32) -> ui32
    ```
  }];
  let dependentDialects = ["::mlir::emitc::EmitCDialect"];
}

def LowBitSpirvTargetEnv : Pass<"lowbit-spirv-target-env", "ModuleOp"> {
  let summary = "Sets the spirv.target_env of a GPU target on the module";
  let description = [{
    Attaches the `spirv.target_env` that `convert-gpu-to-spirv` converts
    for, of the module's `lowbit.target` (a SPIR-V GPU target). Both
    targets are Vulkan 1.3 compute (`Shader`, storage buffers); `spirv-xe2`
    also names the Intel GPU vendor, a subgroup size of 16,
    16-bit storage buffers (`Int16`) and cooperative matrices (`Int8`, the
    8 x 16 x 32 int8 -> int32 subgroup shape); a module with cooperative
    matrices on `spirv-vulkan` is an error. SPIR-V 1.6 where a module has
    OpSDot / OpSUDot or cooperative matrices, else 1.3.
    `spirv-update-vce` later keeps only the capabilities a module uses.

    ```mlir
    module attributes {spirv.target_env = #spirv.target_env<
        #spirv.vce<v1.3, [Shader, Int64, GroupNonUniform],
                   [SPV_KHR_storage_buffer_storage_class]>, api=Vulkan, ...>}
    ```
  }];
}

def LowBitSpirvKernelAbi
    : Pass<"lowbit-spirv-kernel-abi", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Gives lowbit-lower-gpu's kernels their SPIR-V forms";
  let description = [{
    The SPIR-V specifics of the target-neutral kernels of
    `lowbit-lower-gpu`, before `convert-gpu-to-spirv`: each kernel's
    `known_block_size` becomes its `spirv.entry_point_abi` (the workgroup
    size of OpExecutionMode LocalSize), and `lowbit.uk.packed_dot` becomes
    `spirv.SDot` (signed operands) or `spirv.SUDot` (`unsigned_rhs`) with
    the 4 x 8-bit packed vector format.

    ```mlir
    gpu.func @mpgemm(...) kernel attributes {known_block_size = array<i32: 64, 1, 1>}
    // becomes
    gpu.func @mpgemm(...) kernel attributes {spirv.entry_point_abi = #spirv.entry_point_abi<workgroup_size = [64, 1, 1]>}
    ```
  }];
  let dependentDialects = ["::mlir::spirv::SPIRVDialect"];
}

def LowBitSpirvCoopMatrixSigns
    : Pass<"lowbit-spirv-coop-matrix-signs", "spirv::ModuleOp"> {
  let summary = "Marks the signed operands of cooperative-matrix muladds";
  let description = [{
    Sets the MatrixASigned / MatrixBSigned (and, then, CSigned /
    ResultSigned) operands of every `spirv.KHR.CooperativeMatrixMulAdd`
    whose A / B elements are signed integers (`si8`). MLIR 22's
    `convert-gpu-to-spirv` leaves them out, and SPV_KHR_cooperative_matrix
    reads integer components without them as unsigned.
  }];
}

def LowBitConvertToNEON : Pass<"lowbit-convert-to-neon", "ModuleOp"> {
  let summary = "Converts lowered kernels to EmitC with AArch64 NEON intrinsics";
  let description = [{
    The same conversion as `lowbit-convert-to-x86` with the AArch64
    TargetInfo of the module's `lowbit.target` (`aarch64-neon` or
    `aarch64-neon-nodot`): registers are 128-bit (`uint8x16_t` of 4 rows x 4 k,
    `int32x4_t`, `float32x4_t`), the module includes `<arm_neon.h>`.

    | target               | dot4                                      |
    | -------------------- | ----------------------------------------- |
    | `aarch64-neon`       | `vdotq_s32` (sdot; codes < 128 are exact) |
    | `aarch64-neon-nodot` | `vmull_s8` + `vmull_high_s8` + `vpaddq_s16` + `vpadalq_s16` |

    ```mlir
    %d = lowbit.uk.dot4 %acc, %w, %x : vector<16xi8> -> vector<4xi32>
    // becomes
    %d = emitc.call_opaque "vdotq_s32"(%acc, %ws, %xs)
         : (!emitc.opaque<"int32x4_t">, !emitc.opaque<"int8x16_t">,
            !emitc.opaque<"int8x16_t">) -> !emitc.opaque<"int32x4_t">
    ```
  }];
  let dependentDialects = ["::mlir::emitc::EmitCDialect"];
}

#endif // LOWBIT_CONVERSION_PASSES_TD
