//===- LowBitToNEON.h - lowbit microkernels to AArch64 NEON -----*- C++ -*-===//
//
// The AArch64 TargetInfo implementations: each lowbit.uk.* op becomes a few
// <arm_neon.h> intrinsics in EmitC, on 128-bit registers (4 weight rows x
// 4 k per byte register).
//
//===----------------------------------------------------------------------===//

#ifndef LOWBIT_CONVERSION_LOWBITTONEON_LOWBITTONEON_H
#define LOWBIT_CONVERSION_LOWBITTONEON_LOWBITTONEON_H

#include "lowbit/Target/TargetInfo.h"

namespace mlir::lowbit {

/// `aarch64-neon` (Armv8.2-A + dotprod: sdot) when `dotprod`, else
/// `aarch64-neon-nodot` (Armv8.0-A Advanced SIMD: smull + addp + sadalp).
std::unique_ptr<TargetInfo> createNeonTargetInfo(bool dotprod);

} // namespace mlir::lowbit

#endif // LOWBIT_CONVERSION_LOWBITTONEON_LOWBITTONEON_H
