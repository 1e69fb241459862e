//===- TargetInfo.cpp - the target registry -------------------------------===//
//
// Every target lowbit compiles for, one line each: its name as the CLI
// spells it and the factory of its TargetInfo (CPU) or GpuTargetInfo (GPU).
// Nothing else in the compiler switches on a target's name.
//
//===----------------------------------------------------------------------===//

#include "lowbit/Target/TargetInfo.h"
#include "lowbit/Conversion/LowBitToGeneric/LowBitToGeneric.h"
#include "lowbit/Conversion/LowBitToNEON/LowBitToNEON.h"
#include "lowbit/Conversion/LowBitToSPIRV/LowBitToSPIRV.h"
#include "lowbit/Conversion/LowBitToX86/LowBitToX86.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::lowbit;

namespace {

/// One target of the registry: exactly one of the factories is set.
struct TargetEntry {
  StringLiteral name;
  std::unique_ptr<TargetInfo> (*create)() = nullptr;
  std::unique_ptr<GpuTargetInfo> (*createGpu)() = nullptr;
};

/// The registry. CPU targets in order of preference (getTargetNames), then
/// the GPU targets.
const TargetEntry kTargets[] = {
    {"x86-amx", [] { return createX86TargetInfo(X86Isa::Amx); }},
    {"x86-avx512vnni", [] { return createX86TargetInfo(X86Isa::Avx512Vnni); }},
    {"x86-avxvnni", [] { return createX86TargetInfo(X86Isa::AvxVnni); }},
    {"x86-avx2", [] { return createX86TargetInfo(X86Isa::Avx2); }},
    {"aarch64-neon", [] { return createNeonTargetInfo(/*dotprod=*/true); }},
    {"aarch64-neon-nodot", [] { return createNeonTargetInfo(false); }},
    {"generic", createGenericTargetInfo},
    {"spirv-vulkan", nullptr, createSpirvVulkanTargetInfo},
    {"spirv-xe2", nullptr, createSpirvXe2TargetInfo},
};

const TargetEntry *findTarget(StringRef name) {
  for (const TargetEntry &entry : kTargets)
    if (entry.name == name)
      return &entry;
  return nullptr;
}

/// The names of the registry's CPU (`gpu` false) or GPU targets.
SmallVector<StringRef> collectNames(bool gpu) {
  SmallVector<StringRef> names;
  for (const TargetEntry &entry : kTargets)
    if (bool(entry.createGpu) == gpu)
      names.push_back(entry.name);
  return names;
}

} // namespace

ArrayRef<StringRef> mlir::lowbit::getTargetNames() {
  static const SmallVector<StringRef> names = collectNames(/*gpu=*/false);
  return names;
}

std::unique_ptr<TargetInfo> mlir::lowbit::createTargetInfo(StringRef name) {
  const TargetEntry *entry = findTarget(name);
  return entry && entry->create ? entry->create() : nullptr;
}

ArrayRef<StringRef> mlir::lowbit::getGpuTargetNames() {
  static const SmallVector<StringRef> names = collectNames(/*gpu=*/true);
  return names;
}

bool mlir::lowbit::isGpuTarget(StringRef name) {
  const TargetEntry *entry = findTarget(name);
  return entry && entry->createGpu;
}

std::unique_ptr<GpuTargetInfo>
mlir::lowbit::createGpuTargetInfo(StringRef name) {
  const TargetEntry *entry = findTarget(name);
  return entry && entry->createGpu ? entry->createGpu() : nullptr;
}

//===----------------------------------------------------------------------===//
// The module's target
//===----------------------------------------------------------------------===//

/// The TargetInfo (`create`: createTargetInfo) or GpuTargetInfo
/// (createGpuTargetInfo) of `op`'s module target; an error at `op` when the
/// target is missing, unknown or of the other kind (`gpu`: the kind asked
/// for).
template <typename Info>
static FailureOr<std::unique_ptr<Info>>
lookup(Operation *op, std::unique_ptr<Info> (*create)(StringRef), bool gpu) {
  FailureOr<StringRef> name = lookupTargetName(op);
  if (failed(name))
    return failure();
  if (std::unique_ptr<Info> info = create(*name))
    return info;
  InFlightDiagnostic diag = op->emitError();
  if (findTarget(*name)) // a registered target of the other kind
    diag << "'" << kTargetAttrName << "' = \"" << *name << "\" is a "
         << (gpu ? "CPU" : "GPU") << " target; expected a "
         << (gpu ? "GPU" : "CPU") << " one (";
  else
    diag << "unknown target '" << *name << "' in '" << kTargetAttrName
         << "'; expected " << (gpu ? "a GPU" : "a CPU") << " target (";
  diag << llvm::join(gpu ? getGpuTargetNames() : getTargetNames(), ", ") << ")";
  return failure();
}

FailureOr<std::unique_ptr<TargetInfo>>
mlir::lowbit::lookupTargetInfo(Operation *op) {
  return lookup(op, createTargetInfo, /*gpu=*/false);
}

FailureOr<std::unique_ptr<GpuTargetInfo>>
mlir::lowbit::lookupGpuTargetInfo(Operation *op) {
  return lookup(op, createGpuTargetInfo, /*gpu=*/true);
}
