// RUN: not lowbit-opt %s --split-input-file --lowbit-convert-to-x86 2>&1 | FileCheck %s --check-prefixes=ALL,X86 --implicit-check-not=error:
// RUN: not lowbit-opt %s --split-input-file --lowbit-convert-to-neon 2>&1 | FileCheck %s --check-prefixes=ALL,NEON --implicit-check-not=error:
// RUN: not lowbit-opt %s --split-input-file --lowbit-convert-to-generic 2>&1 | FileCheck %s --check-prefixes=ALL,GENERIC --implicit-check-not=error:

// The conversions to EmitC take their target from the module's
// lowbit.target attribute (lowbit-select-config sets it): a missing
// attribute, or a target that is not one of the pass's, is an error.

// ALL: error: no target: expected a 'lowbit.target' string attribute on the module (lowbit-select-config sets it)
module {
  func.func @no_target(%a: i32) -> i32 {
    return %a : i32
  }
}

// -----

// X86: error: lowbit-convert-to-x86: the module's target 'x86-sse2' (its lowbit.target) is not one it converts for; expected x86-amx, x86-avx512vnni, x86-avxvnni, x86-avx2
// NEON: error: lowbit-convert-to-neon: the module's target 'x86-sse2' (its lowbit.target) is not one it converts for; expected aarch64-neon, aarch64-neon-nodot
// GENERIC: error: lowbit-convert-to-generic: the module's target 'x86-sse2' (its lowbit.target) is not one it converts for; expected generic
module attributes {lowbit.target = "x86-sse2"} {
  func.func @unknown(%a: i32) -> i32 {
    return %a : i32
  }
}

// -----

// X86: error: lowbit-convert-to-x86: the module's target 'aarch64-neon' (its lowbit.target) is not one it converts for
// GENERIC: error: lowbit-convert-to-generic: the module's target 'aarch64-neon' (its lowbit.target) is not one it converts for
module attributes {lowbit.target = "aarch64-neon"} {
  func.func @neon(%a: i32) -> i32 {
    return %a : i32
  }
}

// -----

// NEON: error: lowbit-convert-to-neon: the module's target 'x86-avx2' (its lowbit.target) is not one it converts for
// GENERIC: error: lowbit-convert-to-generic: the module's target 'x86-avx2' (its lowbit.target) is not one it converts for
module attributes {lowbit.target = "x86-avx2"} {
  func.func @x86(%a: i32) -> i32 {
    return %a : i32
  }
}

// -----

// ALL: error: lowbit-convert-to-{{x86|neon|generic}}: the module's target 'spirv-vulkan' (its lowbit.target) is not one it converts for
module attributes {lowbit.target = "spirv-vulkan"} {
  func.func @gpu(%a: i32) -> i32 {
    return %a : i32
  }
}

// -----

// A kernel lowered for 64-byte registers has no generic form.
// X86: error: lowbit-convert-to-x86: the module's target 'generic' (its lowbit.target) is not one it converts for
// NEON: error: lowbit-convert-to-neon: the module's target 'generic' (its lowbit.target) is not one it converts for
// GENERIC: error: 'lowbit.uk.load' op uses 'vector<64xi8>', which is not a register of target generic (4-byte registers); lower it with lowbit-lower-upconvert for that target
module attributes {lowbit.target = "generic"} {
  func.func @zmm(%codes: memref<?xui8>, %off: index) -> vector<64xi8> {
    %w = lowbit.uk.load %codes[%off] : memref<?xui8> -> vector<64xi8>
    return %w : vector<64xi8>
  }
}
