//===- LowBitToEmitC.h - the shared half of lowbit -> EmitC -----*- C++ -*-===//
//
// The conversion that every target's pass runs: lowered up-convert kernels
// (func + scf + arith + memref + lowbit.uk.*) to one EmitC translation unit.
// Generic ops go through the upstream populate*ToEmitC patterns; pointers
// (memref<?xT> arguments), the kernel ABI signature and every lowbit.uk.* op
// are handled here, the last by calling the target's TargetInfo hooks.
//
//===----------------------------------------------------------------------===//

#ifndef LOWBIT_CONVERSION_LOWBITTOEMITC_LOWBITTOEMITC_H
#define LOWBIT_CONVERSION_LOWBITTOEMITC_LOWBITTOEMITC_H

#include "lowbit/Target/TargetInfo.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::lowbit {

/// Adds the type conversions of lowered kernels: index -> size_t,
/// memref<?xT> -> T *, register vectors -> the target's register types.
void populateLowBitToEmitCTypeConversions(TypeConverter &converter,
                                          const TargetInfo &target);

/// Patterns for every lowbit.uk.* op (through `target`'s hooks), splat
/// vector constants, broadcasts and additions of registers, and
/// memref.load/store through pointers.
void populateLowBitToEmitCPatterns(const TypeConverter &converter,
                                   RewritePatternSet &patterns,
                                   const TargetInfo &target);

/// Converts every lowered kernel of `module` to EmitC for `target`: the
/// patterns above plus upstream arith/scf/func conversion, then the includes
/// the target needs, C linkage (`extern "C"`) and `const` pointer parameters
/// for the arguments marked `lowbit.readonly`. Leaves no unrealized casts.
LogicalResult convertLowBitToEmitC(ModuleOp module, const TargetInfo &target);

/// What each CPU conversion pass runs (lowbit-convert-to-x86, -neon,
/// -generic): convertLowBitToEmitC for the one of `targets`, the TargetInfos
/// the pass `passName` converts for, that the module's lowbit.target names.
/// An error when the attribute is missing (lookupTargetName) or names none
/// of them.
LogicalResult convertLowBitToEmitC(ModuleOp module, StringRef passName,
                                   ArrayRef<std::unique_ptr<TargetInfo>> targets);

} // namespace mlir::lowbit

#endif // LOWBIT_CONVERSION_LOWBITTOEMITC_LOWBITTOEMITC_H
