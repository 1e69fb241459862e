//===- LowBitToX86.h - lowbit microkernels to x86 intrinsics ----*- C++ -*-===//
//
// The x86 TargetInfo implementations (AVX2, AVX-VNNI, AVX512-VNNI, AMX): each
// lowbit.uk.* op becomes a few <immintrin.h> intrinsics in EmitC.
//
//===----------------------------------------------------------------------===//

#ifndef LOWBIT_CONVERSION_LOWBITTOX86_LOWBITTOX86_H
#define LOWBIT_CONVERSION_LOWBITTOX86_LOWBITTOX86_H

#include "lowbit/Target/TargetInfo.h"

namespace mlir::lowbit {

/// The x86 instruction-set levels lowbit generates code for.
enum class X86Isa {
  Avx2,       // ymm; vpmaddubsw + vpmaddwd, no dot-product instruction
  AvxVnni,    // ymm; vpdpbusd (VEX encoding)
  Avx512Vnni, // zmm; vpdpbusd (EVEX), opmask stores
  Amx,        // Avx512Vnni plus AMX-TILE, AMX-INT8 (tdpbsud: GEMM)
};

std::unique_ptr<TargetInfo> createX86TargetInfo(X86Isa isa);

/// The TargetInfo of every X86Isa: the targets lowbit-convert-to-x86
/// converts for (the module's lowbit.target picks one).
SmallVector<std::unique_ptr<TargetInfo>> createX86TargetInfos();

} // namespace mlir::lowbit

#endif // LOWBIT_CONVERSION_LOWBITTOX86_LOWBITTOX86_H
