// RUN: lowbit-opt %s --pass-pipeline="builtin.module(gpu.module(lowbit-spirv-kernel-abi))" | FileCheck %s

// lowbit-spirv-kernel-abi: a kernel's known_block_size becomes its
// spirv.entry_point_abi, lowbit.uk.packed_dot becomes spirv.SDot (both
// operands signed) or spirv.SUDot (unsigned_rhs); a function without a
// known block size keeps its attributes.
// CHECK-LABEL: gpu.module @k
// CHECK:       gpu.func @mpgemm(%[[A:.*]]: i32, %[[B:.*]]: i32, %{{.*}}: memref<2xi32>) kernel attributes {spirv.entry_point_abi = #spirv.entry_point_abi<workgroup_size = [96, 1, 1]>}
// CHECK-NEXT:    %[[S:.*]] = spirv.SDot %[[A]], %[[B]], <PackedVectorFormat4x8Bit> : i32 -> i32
// CHECK-NEXT:    %[[U:.*]] = spirv.SUDot %[[A]], %[[B]], <PackedVectorFormat4x8Bit> : i32 -> i32
// CHECK-NOT:     lowbit.uk.packed_dot
// CHECK:       gpu.func @plain() kernel {
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @mpgemm(%a: i32, %b: i32, %out: memref<2xi32>) kernel attributes {known_block_size = array<i32: 96, 1, 1>} {
      %s = lowbit.uk.packed_dot %a, %b
      %u = lowbit.uk.packed_dot %a, %b {unsigned_rhs}
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      memref.store %s, %out[%c0] : memref<2xi32>
      memref.store %u, %out[%c1] : memref<2xi32>
      gpu.return
    }
    gpu.func @plain() kernel {
      gpu.return
    }
  }
}
