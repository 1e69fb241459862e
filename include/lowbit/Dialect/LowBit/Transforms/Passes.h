//===- Passes.h - lowbit transformation passes ------------------*- C++ -*-===//
#ifndef LOWBIT_DIALECT_LOWBIT_TRANSFORMS_PASSES_H
#define LOWBIT_DIALECT_LOWBIT_TRANSFORMS_PASSES_H

#include "lowbit/Dialect/LowBit/IR/LowBitOps.h"
#include "lowbit/Target/TargetInfo.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::lowbit {

#define GEN_PASS_DECL
#include "lowbit/Dialect/LowBit/Transforms/Passes.h.inc"

class Schedule;

/// lowbit-select-config that looks configs up in `schedule`, a schedule
/// already read (a command reads its --schedule file once for all its
/// kernels: generateKernel), instead of reading options.schedule.
std::unique_ptr<Pass>
createLowBitSelectConfig(LowBitSelectConfigOptions options,
                         std::shared_ptr<const Schedule> schedule);

/// The heuristic up-convert config of lowbit-select-config for an M x K
/// product with `weight`, for GEMV (`gemv`) or GEMM, on `target` with
/// `threads` threads.
UpconvertAttr selectUpconvertConfig(MLIRContext *ctx, const TargetInfo &target,
                                    WeightAttr weight, int64_t m, int64_t k,
                                    bool gemv, int64_t threads);

/// The heuristic lut-elementwise config of lowbit-select-config for tl1 or
/// tl2 weights (`kind`), for GEMV (`gemv`) or GEMM, on `target`.
LutElementwiseAttr selectLutElementwiseConfig(MLIRContext *ctx,
                                              const TargetInfo &target,
                                              LayoutKind kind, bool gemv);

/// The heuristic lut-bitserial config of lowbit-select-config, for GEMV
/// (`gemv`) or GEMM, on `target`.
LutBitserialAttr selectLutBitserialConfig(MLIRContext *ctx,
                                          const TargetInfo &target, bool gemv);

/// Register slices of a 16-row tile (64 / register bytes of them) that one
/// K loop accumulates at once: the largest divisor of the slice count whose
/// accumulators (tilesPerGroup x slices x tileN, twice for group formats,
/// which also carry f32 outputs), tileN broadcasts and 3 working registers
/// fit the target's register file; at least 1.
int64_t getSlicesPerLoop(const TargetInfo &target, int64_t tilesPerGroup,
                         int64_t tileN, bool ternary);

/// The heuristic #lowbit.gpu config of lowbit-select-config for a GPU
/// target: its default tiles and subgroup size, the activation scale fused
/// for GEMV (`gemv`), the integer dot product where the target has it.
GpuAttr selectGpuConfig(MLIRContext *ctx, const GpuTargetInfo &target,
                        bool gemv);

#define GEN_PASS_REGISTRATION
#include "lowbit/Dialect/LowBit/Transforms/Passes.h.inc"

} // namespace mlir::lowbit

#endif // LOWBIT_DIALECT_LOWBIT_TRANSFORMS_PASSES_H
