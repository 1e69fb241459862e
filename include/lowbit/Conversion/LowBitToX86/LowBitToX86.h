//===- LowBitToX86.h - lowbit microkernels to x86 intrinsics ----*- C++ -*-===//
//
// The x86 TargetInfo implementations (AVX2, AVX-VNNI, AVX512-VNNI): each
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
};

/// Parses `avx2`, `avxvnni` or `avx512vnni`.
std::optional<X86Isa> parseX86Isa(StringRef name);

std::unique_ptr<TargetInfo> createX86TargetInfo(X86Isa isa);

} // namespace mlir::lowbit

#endif // LOWBIT_CONVERSION_LOWBITTOX86_LOWBITTOX86_H
