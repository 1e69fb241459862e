//===- LowBitToGeneric.h - lowbit microkernels as portable C++ --*- C++ -*-===//
//
// The generic TargetInfo: a register is 4 bytes (one weight row x 4 k) held
// in a uint32_t, and every microkernel op is plain scalar C++ (SWAR unpack,
// explicit byte products), for any C++17 compiler and CPU.
//
//===----------------------------------------------------------------------===//

#ifndef LOWBIT_CONVERSION_LOWBITTOGENERIC_LOWBITTOGENERIC_H
#define LOWBIT_CONVERSION_LOWBITTOGENERIC_LOWBITTOGENERIC_H

#include "lowbit/Target/TargetInfo.h"

namespace mlir::lowbit {

std::unique_ptr<TargetInfo> createGenericTargetInfo();

} // namespace mlir::lowbit

#endif // LOWBIT_CONVERSION_LOWBITTOGENERIC_LOWBITTOGENERIC_H
