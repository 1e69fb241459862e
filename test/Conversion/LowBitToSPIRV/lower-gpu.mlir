// RUN: lowbit-opt %s --split-input-file --lowbit-select-config="target=spirv-vulkan" --lowbit-lower-gpu | FileCheck %s
// RUN: lowbit-opt %s --split-input-file --lowbit-select-config="target=spirv-vulkan n-hint=16" --lowbit-lower-gpu | FileCheck %s --check-prefix=GEMM
// RUN: lowbit-opt %s --split-input-file --lowbit-select-config="target=spirv-xe2" --lowbit-lower-gpu | FileCheck %s --check-prefix=XE2

// The default spirv-vulkan GEMV config: 4 subgroups of 16 lanes, 4 rows
// each, the activation scale fused; ragged K = 40 (2.5 words of 16 codes).
// CHECK-LABEL: gpu.module @gemv attributes {lowbit.config = #lowbit.gpu<wg_tile_m = 16, wg_tile_n = 1, sg_tile_m = 4, sg_tile_n = 1, subgroup_size = 16>}
// CHECK-NOT:   gpu.func @act_scales
// CHECK:       gpu.func @mpgemm(%{{.*}}: memref<?xf32>, %{{.*}}: memref<60xi32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<2xi32>, %{{.*}}: memref<?xf32>) kernel
// CHECK-SAME:    known_block_size = array<i32: 64, 1, 1>
// CHECK:         memref.alloc() : memref<64xf32, 3>
// CHECK:         math.absf
// CHECK:         arith.maxnumf
// CHECK:         gpu.barrier
// CHECK:         arith.divf %{{.*}}, %{{.*}} : f32
// CHECK:         scf.for
// CHECK:           math.roundeven
// CHECK:           arith.select
// CHECK:           arith.shrui
// CHECK:           arith.muli %{{.*}}, %{{.*}} : i32
// CHECK:         gpu.barrier
// CHECK:         arith.sitofp
// CHECK-NEXT:    arith.mulf
// CHECK-NEXT:    arith.divf
// CHECK:         gpu.return
// CHECK-NOT:   func.func @gemv

// With n-hint > 1, the GEMM default: 4 x 4 subgroup tiles, the scales from
// the act_scales pre-kernel.
// GEMM-LABEL: gpu.module @gemv attributes {lowbit.config = #lowbit.gpu<wg_tile_m = 16, wg_tile_n = 4, sg_tile_m = 4, sg_tile_n = 4, fuse_act_quant = false, subgroup_size = 16>}
// GEMM:       gpu.func @act_scales
// GEMM:         memref.store %{{.*}}, %arg4[%{{.*}}] : memref<?xf32>
// GEMM:       gpu.func @mpgemm
// GEMM-NOT:     math.absf
// GEMM:         memref.load %arg4[%{{.*}}] : memref<?xf32>

// spirv-xe2's GpuTargetInfo: 32-row subgroup tiles and the integer dot
// product, as the target-neutral lowbit.uk.packed_dot (SPIR-V comes later).
// XE2-LABEL: gpu.module @gemv attributes {lowbit.config = #lowbit.gpu<wg_tile_m = 128, wg_tile_n = 1, sg_tile_m = 32, sg_tile_n = 1, int_dot = true, subgroup_size = 16>}
// XE2:       gpu.func @mpgemm
// XE2-SAME:    known_block_size = array<i32: 64, 1, 1>
// XE2:         lowbit.uk.packed_dot %{{.*}}, %{{.*}}{{$}}
// XE2:         lowbit.uk.packed_dot %{{.*}}, %{{.*}} {unsigned_rhs}
// XE2-NOT:     spirv.
func.func @gemv(%x: tensor<?x40xf32>, %w: tensor<20x10xi8>, %s: tensor<1xf32>) -> tensor<?x20xf32> {
  %y = lowbit.mpgemm %x, %w, %s {weight = #lowbit.weight<bits = 2, encoding = ternary>, layout = #lowbit.layout<i2s>}
       : (tensor<?x40xf32>, tensor<20x10xi8>, tensor<1xf32>) -> tensor<?x20xf32>
  return %y : tensor<?x20xf32>
}

// -----

// A config on the op wins over the defaults (select-config keeps it); K a multiple of 16 needs no
// select on the last word.
// CHECK-LABEL: gpu.module @given attributes {lowbit.config = #lowbit.gpu<wg_tile_m = 8, wg_tile_n = 2, sg_tile_m = 2, sg_tile_n = 2, k_split = 2, subgroup_size = 8>}
// CHECK:       gpu.func @mpgemm
// CHECK-SAME:    known_block_size = array<i32: 64, 1, 1>
// CHECK-NOT:     arith.select
// CHECK:         gpu.return
// GEMM-LABEL: gpu.module @given attributes {lowbit.config = #lowbit.gpu<wg_tile_m = 8, wg_tile_n = 2
func.func @given(%x: tensor<?x32xf32>, %w: tensor<8x8xi8>, %s: tensor<1xf32>) -> tensor<?x8xf32> {
  %y = lowbit.mpgemm %x, %w, %s {weight = #lowbit.weight<bits = 2, encoding = ternary>, layout = #lowbit.layout<i2s>,
                                 config = #lowbit.gpu<wg_tile_m = 8, wg_tile_n = 2, sg_tile_m = 2, sg_tile_n = 2, k_split = 2, subgroup_size = 8>}
       : (tensor<?x32xf32>, tensor<8x8xi8>, tensor<1xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

// w2gG: K walked in 32-blocks of two words, each block's activations
// scaled in registers, (D - z S) * s_w / s_x added in f32; no pre-kernel.
// CHECK-LABEL: gpu.module @w2
// CHECK-NOT:   gpu.func @act_scales
// CHECK:       gpu.func @mpgemm({{.*}}, %{{.*}}: memref<?xf32>) kernel
// CHECK:         scf.for {{.*}} -> (f32
// CHECK:           arith.divf
// CHECK:           math.roundeven
// CHECK:           arith.fptosi
// CHECK:           arith.subi
// CHECK:           arith.sitofp
// CHECK:           arith.mulf
// CHECK:           arith.divf
// CHECK:           arith.addf
// CHECK:         memref.alloc() : memref<{{[0-9]+}}xf32, 3>
// GEMM-LABEL: gpu.module @w2
// GEMM-NOT:   gpu.func @act_scales
func.func @w2(%x: tensor<?x64xf32>, %w: tensor<20x16xi8>, %s: tensor<20x1x2xf16>) -> tensor<?x20xf32> {
  %y = lowbit.mpgemm %x, %w, %s {weight = #lowbit.weight<bits = 2, encoding = unsigned, group = 64, scale = per_group>, layout = #lowbit.layout<canonical>}
       : (tensor<?x64xf32>, tensor<20x16xi8>, tensor<20x1x2xf16>) -> tensor<?x20xf32>
  return %y : tensor<?x20xf32>
}
