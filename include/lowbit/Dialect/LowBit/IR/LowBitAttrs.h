//===- LowBitAttrs.h - lowbit attributes ------------------------*- C++ -*-===//
//
// Declares the lowbit enums, the strategy-config attribute interface and the
// attributes (#lowbit.weight, #lowbit.layout and one config per strategy).
//
//===----------------------------------------------------------------------===//

#ifndef LOWBIT_DIALECT_LOWBIT_IR_LOWBITATTRS_H
#define LOWBIT_DIALECT_LOWBIT_IR_LOWBITATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectImplementation.h"

#include "lowbit/Dialect/LowBit/IR/LowBitEnums.h.inc"

namespace mlir::lowbit {
class WeightAttr;
class LayoutAttr;
struct SearchSpaceQuery;
} // namespace mlir::lowbit

#include "lowbit/Dialect/LowBit/IR/LowBitAttrInterfaces.h.inc"

#define GET_ATTRDEF_CLASSES
#include "lowbit/Dialect/LowBit/IR/LowBitAttrs.h.inc"

namespace mlir::lowbit {

/// What a strategy's search space depends on (see
/// StrategyConfigAttrInterface::getSearchSpace): the problem as
/// lowbit-select-config sees it, before any repacking, and the target's
/// register facts (TargetInfo's numbers; the dialect does not link targets).
struct SearchSpaceQuery {
  WeightAttr weight;
  LayoutAttr layout;
  int64_t m = 0, k = 0;
  bool gemv = true;          // N class: N = 1, else GEMM
  int64_t registerBytes = 0; // SIMD register width (TargetInfo)
  int64_t numRegisters = 0;  // SIMD registers (TargetInfo)
  int64_t prefetchBytes = 0; // prefetch distance hint, 0: no prefetch
  bool allowLossy = false;   // admit lossy options (lut_bitserial int8
                             // tables, table_bits = 8)
  int64_t subgroupSize = 0;  // GPU targets: the subgroup size of their
                             // GpuTargetInfo (the upconvert strategy is then
                             // #lowbit.gpu); 0 for a CPU target
};

/// The search space of the strategy named `strategy` (the CLI spelling,
/// StrategyConfigAttrInterface::getStrategyName) for `query` (for a GPU
/// query, upconvert is #lowbit.gpu's); empty for an unknown name.
SmallVector<StrategyConfigAttrInterface>
getStrategySearchSpace(MLIRContext *context, StringRef strategy,
                       const SearchSpaceQuery &query);

/// Bytes per weight row for the layouts that store one row after another
/// (canonical, i2s, tl1, tl2, gguf), or std::nullopt for the tiled layouts
/// (vnni4, bitplanes). Assumes `k` is legal for the layout and `weight`.
std::optional<int64_t> getRowBytes(WeightAttr weight, LayoutAttr layout,
                                   int64_t k);

/// Whether `layout` is the interleaved tl1/tl2 layout of lut_abi.h
/// (`interleave = 16`: 16-row tiles, 4-bit indices in 16-byte lanes).
bool isLutInterleaved(LayoutAttr layout);

/// Bytes per 16-row tile of the lut_abi.h layout of kind tl1 or tl2 for K:
/// 64 (header) + 320 per TL2 block of 96 + 64 per TL1 vector of 16.
int64_t getLutTileBytes(LayoutKind kind, int64_t k);

/// Whether `layout` is the bit-plane layout of bitserial_abi.h (bitplanes,
/// tile_m = 16, tile_k = 32, interleave = 16).
bool isBitserialTiled(LayoutAttr layout);

} // namespace mlir::lowbit

#endif // LOWBIT_DIALECT_LOWBIT_IR_LOWBITATTRS_H
