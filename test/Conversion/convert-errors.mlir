// RUN: not lowbit-opt %s --lowbit-convert-to-x86=isa=sse2 2>&1 | FileCheck %s --check-prefix=ISA
// RUN: not lowbit-opt %s --lowbit-convert-to-generic 2>&1 | FileCheck %s --check-prefix=WIDTH

// ISA: error: lowbit-convert-to-x86: unknown isa 'sse2'; expected avx2, avxvnni or avx512vnni

// A kernel lowered for 64-byte registers has no generic form.
// WIDTH: error: 'lowbit.uk.load' op uses 'vector<64xi8>', which is not a register of target generic (4-byte registers); lower it with lowbit-lower-upconvert for that target
func.func @zmm(%codes: memref<?xui8>, %off: index) -> vector<64xi8> {
  %w = lowbit.uk.load %codes[%off] : memref<?xui8> -> vector<64xi8>
  return %w : vector<64xi8>
}
