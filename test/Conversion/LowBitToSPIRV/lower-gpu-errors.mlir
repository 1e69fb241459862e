// RUN: lowbit-opt %s --split-input-file --verify-diagnostics --lowbit-select-config=target=spirv-vulkan --lowbit-lower-gpu
// RUN: not lowbit-opt %s --split-input-file --lowbit-select-config=target=x86-avx2 --lowbit-lower-gpu 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: not lowbit-opt %s --split-input-file --lowbit-select-config="target=spirv-vulkan config={#lowbit.upconvert<tile_m = 16, tile_k = 64, tile_n = 1>}" 2>&1 | FileCheck %s --check-prefix=SELECT
// RUN: not lowbit-opt %s --split-input-file --lowbit-select-config="target=spirv-vulkan strategy=lut-bitserial" 2>&1 | FileCheck %s --check-prefix=STRATEGY
// RUN: not lowbit-opt %s --split-input-file --lowbit-select-config="target=generic config={#lowbit.gpu<wg_tile_m = 16, wg_tile_n = 1, sg_tile_m = 4, sg_tile_n = 1, subgroup_size = 16>}" 2>&1 | FileCheck %s --check-prefix=CPU

// A CPU config cannot be lowered to a GPU kernel, nor chosen for a GPU
// target; a #lowbit.gpu config is not for a CPU target (the op without a
// config below takes the config option).
// SELECT: error: 'lowbit.mpgemm' op config option: config #lowbit.upconvert<tile_m = 16, tile_k = 64, tile_n = 1> is not a #lowbit.gpu config, which GPU target 'spirv-vulkan' needs
// STRATEGY: error: lowbit-select-config: GPU target 'spirv-vulkan' has one strategy (#lowbit.gpu), not 'lut-bitserial'
// CPU: error: 'lowbit.mpgemm' op config option: config #lowbit.gpu<{{.*}}> is a #lowbit.gpu config, which CPU target 'generic' cannot run
func.func @cpu_config(%x: tensor<?x40xf32>, %w: tensor<20x10xi8>, %s: tensor<1xf32>) -> tensor<?x20xf32> {
  // expected-error@+1 {{lowbit-lower-gpu needs a #lowbit.gpu config (from lowbit-select-config with a GPU target), got #lowbit.upconvert<tile_m = 16, tile_k = 64, tile_n = 1>}}
  %y = lowbit.mpgemm %x, %w, %s {weight = #lowbit.weight<bits = 2, encoding = ternary>, layout = #lowbit.layout<i2s>,
                                 config = #lowbit.upconvert<tile_m = 16, tile_k = 64, tile_n = 1>}
       : (tensor<?x40xf32>, tensor<20x10xi8>, tensor<1xf32>) -> tensor<?x20xf32>
  return %y : tensor<?x20xf32>
}

// -----

// tl2 (a LUT layout) has no GPU kernel.
func.func @tl2(%x: tensor<?x96xf32>, %w: tensor<16x20xi8>, %s: tensor<1xf32>) -> tensor<?x16xf32> {
  // expected-error@+1 {{gpu strategy does not support tl2 layout}}
  %y = lowbit.mpgemm %x, %w, %s {weight = #lowbit.weight<bits = 2, encoding = ternary>, layout = #lowbit.layout<tl2>,
                                 config = #lowbit.gpu<wg_tile_m = 16, wg_tile_n = 1, sg_tile_m = 4, sg_tile_n = 1, subgroup_size = 16>}
       : (tensor<?x96xf32>, tensor<16x20xi8>, tensor<1xf32>) -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// TARGET: error: 'lowbit.target' = "x86-avx2" is a CPU target; expected a GPU one (spirv-vulkan, spirv-xe2)

// -----

// An op without a config: select-config chooses one (the config option
// above; lower-gpu of an op without one: module-target-errors.mlir).
func.func @none(%x: tensor<?x40xf32>, %w: tensor<20x10xi8>, %s: tensor<1xf32>) -> tensor<?x20xf32> {
  %y = lowbit.mpgemm %x, %w, %s {weight = #lowbit.weight<bits = 2, encoding = ternary>, layout = #lowbit.layout<i2s>}
       : (tensor<?x40xf32>, tensor<20x10xi8>, tensor<1xf32>) -> tensor<?x20xf32>
  return %y : tensor<?x20xf32>
}

// -----

// 512 invocations x 64 accumulators do not fit 32 KiB of workgroup memory.
func.func @too_much_shared(%x: tensor<?x40xf32>, %w: tensor<20x10xi8>, %s: tensor<1xf32>) -> tensor<?x20xf32> {
  // expected-error@+1 {{needs 147488 bytes of workgroup memory, more than 32768 (spirv-vulkan)}}
  %y = lowbit.mpgemm %x, %w, %s {weight = #lowbit.weight<bits = 2, encoding = ternary>, layout = #lowbit.layout<i2s>,
                                 config = #lowbit.gpu<wg_tile_m = 64, wg_tile_n = 8, sg_tile_m = 8, sg_tile_n = 8, subgroup_size = 64>}
       : (tensor<?x40xf32>, tensor<20x10xi8>, tensor<1xf32>) -> tensor<?x20xf32>
  return %y : tensor<?x20xf32>
}
