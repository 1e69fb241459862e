// RUN: lowbit-opt %s --split-input-file --lowbit-select-config="target=spirv-vulkan" --lowbit-lower-gpu --cse | FileCheck %s
// RUN: lowbit-opt %s --split-input-file --lowbit-select-config="target=spirv-xe2" --lowbit-lower-gpu --cse | FileCheck %s --check-prefix=XE2

// llama.cpp's block formats through lowbit-lower-gpu: the weight words hold
// the runtime's repacked b-bit codes (K b / 32 words per row), the blocks
// buffer (%arg5) per scale block s alone (code offset formats, the offset z
// a constant of the kernel) or (s, o) (formats with a min), as
// runtime/include/lowbit/vulkan.h says.

// Q6_K: 6-bit codes (48 words per row of 256), two scale blocks of 16 per
// 32-block, each s (float)(D - 32 S); their sum divided by the activation
// block's scale.
// CHECK-LABEL: gpu.module @q6_k
// CHECK:       gpu.func @mpgemm(%{{.*}}: memref<?xf32>, %{{.*}}: memref<336xi32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<2xi32>, %{{.*}}: memref<?xf32>, %[[BLOCKS:.*]]: memref<?xf32>) kernel
// CHECK:         scf.for
// CHECK:           %[[ROW:.*]] = arith.muli %{{.*}}, %c16 : index
// CHECK-NEXT:      %[[HALF:.*]] = arith.muli %{{.*}}, %c2 : index
// CHECK-NEXT:      %[[FIRST:.*]] = arith.addi %[[ROW]], %[[HALF]] : index
// CHECK:           memref.load %[[BLOCKS]][%{{.*}}] : memref<?xf32>
// CHECK:           %[[AT1:.*]] = arith.addi %[[FIRST]], %c1 : index
// CHECK:           memref.load %[[BLOCKS]][%{{.*}}] : memref<?xf32>
// CHECK:           arith.andi %{{.*}}, %c63_i32 : i32
// CHECK:           %[[Z:.*]] = arith.constant 32 : i32
// CHECK-NEXT:      %[[ZS0:.*]] = arith.muli %[[Z]], %{{.*}} : i32
// CHECK:           %[[ZS1:.*]] = arith.muli %[[Z]], %{{.*}} : i32
// CHECK:           %[[D0:.*]] = arith.subi %{{.*}}, %[[ZS0]] : i32
// CHECK-NEXT:      %[[F0:.*]] = arith.sitofp %[[D0]] : i32 to f32
// CHECK-NEXT:      %[[T0:.*]] = arith.mulf %[[F0]], %{{.*}} : f32
// CHECK-NEXT:      %[[D1:.*]] = arith.subi %{{.*}}, %[[ZS1]] : i32
// CHECK-NEXT:      %[[F1:.*]] = arith.sitofp %[[D1]] : i32 to f32
// CHECK-NEXT:      %[[T1:.*]] = arith.mulf %[[F1]], %{{.*}} : f32
// CHECK-NEXT:      %[[T:.*]] = arith.addf %[[T0]], %[[T1]] : f32
// CHECK-NEXT:      arith.divf %[[T]], %{{.*}} : f32
// CHECK:         gpu.return
// XE2-LABEL: gpu.module @q6_k
// XE2:         lowbit.uk.packed_dot
func.func @q6_k(%x: tensor<?x256xf32>, %w: tensor<7x210xi8>) -> tensor<?x7xf32> {
  %y = lowbit.mpgemm %x, %w {weight = #lowbit.weight<bits = 6, encoding = offset, group = 16, scale = per_block, code_offset = 32, super_block = 256, scale_bits = 8>, layout = #lowbit.layout<gguf>}
       : (tensor<?x256xf32>, tensor<7x210xi8>) -> tensor<?x7xf32>
  return %y : tensor<?x7xf32>
}

// -----

// Q4_K: 4-bit codes (32 words per row of 256), one scale block per
// 32-block with (s, o) at 2 (row * 8 + block) and 2 (...) + 1: the term
// s (float)D + o (float)S.
// CHECK-LABEL: gpu.module @q4_k
// CHECK:       gpu.func @mpgemm(%{{.*}}: memref<?xf32>, %{{.*}}: memref<224xi32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<2xi32>, %{{.*}}: memref<?xf32>, %[[BLOCKS:.*]]: memref<?xf32>) kernel
// CHECK:         scf.for
// CHECK:           %[[AT:.*]] = arith.muli %{{.*}}, %c2 : index
// CHECK-NEXT:      %[[S:.*]] = memref.load %[[BLOCKS]][%[[AT]]] : memref<?xf32>
// CHECK-NEXT:      %[[AT1:.*]] = arith.addi %[[AT]], %c1 : index
// CHECK-NEXT:      %[[O:.*]] = memref.load %[[BLOCKS]][%[[AT1]]] : memref<?xf32>
// CHECK:           %[[D:.*]] = arith.sitofp %{{.*}} : i32 to f32
// CHECK-NEXT:      %[[SD:.*]] = arith.mulf %[[S]], %[[D]] : f32
// CHECK-NEXT:      %[[XS:.*]] = arith.sitofp %{{.*}} : i32 to f32
// CHECK-NEXT:      %[[OS:.*]] = arith.mulf %[[O]], %[[XS]] : f32
// CHECK-NEXT:      %[[T:.*]] = arith.addf %[[SD]], %[[OS]] : f32
// CHECK-NEXT:      arith.divf %[[T]], %{{.*}} : f32
// CHECK:         gpu.return
// XE2-LABEL: gpu.module @q4_k
// XE2:         lowbit.uk.packed_dot
func.func @q4_k(%x: tensor<?x256xf32>, %w: tensor<7x144xi8>) -> tensor<?x7xf32> {
  %y = lowbit.mpgemm %x, %w {weight = #lowbit.weight<bits = 4, encoding = min, group = 32, scale = per_block, super_block = 256, scale_bits = 6>, layout = #lowbit.layout<gguf>}
       : (tensor<?x256xf32>, tensor<7x144xi8>) -> tensor<?x7xf32>
  return %y : tensor<?x7xf32>
}

// -----

// Q8_0: 8-bit codes q = c + 128 (a word per 4), s per 32-block and the
// constant offset 128. On spirv-xe2 the integer dot product takes the
// unsigned codes a word at a time (mask 0xffffffff = -1).
// CHECK-LABEL: gpu.module @q8_0
// CHECK:       gpu.func @mpgemm(%{{.*}}: memref<?xf32>, %{{.*}}: memref<168xi32>,
// CHECK:         arith.constant 128 : i32
// CHECK:         arith.andi %{{.*}}, %c255_i32 : i32
// XE2-LABEL: gpu.module @q8_0
// XE2:         %[[ALL:.*]] = arith.constant -1 : i32
// XE2:         %[[CODES:.*]] = arith.andi %{{.*}}, %[[ALL]] : i32
// XE2-NEXT:    lowbit.uk.packed_dot %{{.*}}, %[[CODES]] {unsigned_rhs}
func.func @q8_0(%x: tensor<?x96xf32>, %w: tensor<7x102xi8>) -> tensor<?x7xf32> {
  %y = lowbit.mpgemm %x, %w {weight = #lowbit.weight<bits = 8, encoding = offset, group = 32, scale = per_block, code_offset = 128>, layout = #lowbit.layout<gguf>}
       : (tensor<?x96xf32>, tensor<7x102xi8>) -> tensor<?x7xf32>
  return %y : tensor<?x7xf32>
}
