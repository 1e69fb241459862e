//===- TargetInfo.cpp - TargetInfo by target name -------------------------===//

#include "lowbit/Target/TargetInfo.h"
#include "lowbit/Conversion/LowBitToGeneric/LowBitToGeneric.h"
#include "lowbit/Conversion/LowBitToNEON/LowBitToNEON.h"
#include "lowbit/Conversion/LowBitToSPIRV/LowBitToSPIRV.h"
#include "lowbit/Conversion/LowBitToX86/LowBitToX86.h"

using namespace mlir;
using namespace mlir::lowbit;

ArrayRef<StringRef> mlir::lowbit::getTargetNames() {
  static const StringRef names[] = {"x86-avx512vnni", "x86-avxvnni", "x86-avx2",
                                    "aarch64-neon", "aarch64-neon-nodot",
                                    "generic"};
  return names;
}

std::unique_ptr<TargetInfo> mlir::lowbit::createTargetInfo(StringRef name) {
  if (name == "x86-avx512vnni")
    return createX86TargetInfo(X86Isa::Avx512Vnni);
  if (name == "x86-avxvnni")
    return createX86TargetInfo(X86Isa::AvxVnni);
  if (name == "x86-avx2")
    return createX86TargetInfo(X86Isa::Avx2);
  if (name == "aarch64-neon")
    return createNeonTargetInfo(/*dotprod=*/true);
  if (name == "aarch64-neon-nodot")
    return createNeonTargetInfo(/*dotprod=*/false);
  if (name == "generic")
    return createGenericTargetInfo();
  return nullptr;
}

ArrayRef<StringRef> mlir::lowbit::getGpuTargetNames() {
  static const StringRef names[] = {"spirv-vulkan", "spirv-xe2"};
  return names;
}

bool mlir::lowbit::isGpuTarget(StringRef name) {
  return llvm::is_contained(getGpuTargetNames(), name);
}

std::unique_ptr<GpuTargetInfo>
mlir::lowbit::createGpuTargetInfo(StringRef name) {
  return createSpirvTargetInfo(name);
}
