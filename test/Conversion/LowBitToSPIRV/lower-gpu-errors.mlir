// RUN: lowbit-opt %s --split-input-file --verify-diagnostics --lowbit-lower-gpu
// RUN: not lowbit-opt %s --split-input-file --lowbit-lower-gpu="target=x86-avx2" 2>&1 | FileCheck %s --check-prefix=TARGET

// A CPU config cannot be lowered to a GPU kernel.
func.func @cpu_config(%x: tensor<?x40xf32>, %w: tensor<20x10xi8>, %s: tensor<1xf32>) -> tensor<?x20xf32> {
  // expected-error@+1 {{has config #lowbit.upconvert<tile_m = 16, tile_k = 64, tile_n = 1>; lowbit-lower-gpu needs a #lowbit.gpu one}}
  %y = lowbit.mpgemm %x, %w, %s {weight = #lowbit.weight<bits = 2, encoding = ternary>, layout = #lowbit.layout<i2s>,
                                 config = #lowbit.upconvert<tile_m = 16, tile_k = 64, tile_n = 1>}
       : (tensor<?x40xf32>, tensor<20x10xi8>, tensor<1xf32>) -> tensor<?x20xf32>
  return %y : tensor<?x20xf32>
}

// -----

// q4_0 has no GPU kernel.
func.func @q4_0(%x: tensor<?x64xf32>, %w: tensor<4x36xi8>) -> tensor<?x4xf32> {
  // expected-error@+1 {{gpu strategy supports ternary and unsigned 2- and 4-bit weights, got 4-bit gguf_q4_0}}
  %y = lowbit.mpgemm %x, %w {weight = #lowbit.weight<bits = 4, encoding = gguf_q4_0, group = 32, scale = per_block>, layout = #lowbit.layout<gguf>}
       : (tensor<?x64xf32>, tensor<4x36xi8>) -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// TARGET: unknown GPU target 'x86-avx2' (expected spirv-vulkan, spirv-xe2)

// -----

// 512 invocations x 64 accumulators do not fit 32 KiB of workgroup memory.
func.func @too_much_shared(%x: tensor<?x40xf32>, %w: tensor<20x10xi8>, %s: tensor<1xf32>) -> tensor<?x20xf32> {
  // expected-error@+1 {{needs 147488 bytes of workgroup memory, more than 32768}}
  %y = lowbit.mpgemm %x, %w, %s {weight = #lowbit.weight<bits = 2, encoding = ternary>, layout = #lowbit.layout<i2s>,
                                 config = #lowbit.gpu<wg_tile_m = 64, wg_tile_n = 8, sg_tile_m = 8, sg_tile_n = 8, subgroup_size = 64>}
       : (tensor<?x40xf32>, tensor<20x10xi8>, tensor<1xf32>) -> tensor<?x20xf32>
  return %y : tensor<?x20xf32>
}
