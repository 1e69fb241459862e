// RUN: lowbit-opt %s --split-input-file --verify-diagnostics --lowbit-lower-upconvert --lowbit-lower-gpu --lowbit-spirv-target-env
// RUN: not lowbit-opt %s --split-input-file --lowbit-select-config=target=generic 2>&1 | FileCheck %s --check-prefix=SELECT

// The lowerings and lowbit-spirv-target-env take their target from the
// module's lowbit.target attribute (lowbit-select-config sets it): a
// missing attribute, an unknown name or a target of the other kind is an
// error; the dialect verifier wants a string on a builtin.module.

// expected-error@+1 {{no target: expected a 'lowbit.target' string attribute on the module (lowbit-select-config sets it)}}
func.func @no_target(%x: tensor<?x256xf32>, %w: tensor<4x16x64xi8>, %s: tensor<1xf32>) -> tensor<?x64xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<vnni4, tile_m = 16, tile_k = 16>,
         config = #lowbit.upconvert<tile_m = 16, tile_k = 64, tile_n = 1>}
       : (tensor<?x256xf32>, tensor<4x16x64xi8>, tensor<1xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

// SELECT: error: lowbit-select-config: the module is for target 'x86-sse2' (its lowbit.target), not 'generic'
module attributes {lowbit.target = "x86-sse2"} {
  // expected-error@+1 {{unknown target 'x86-sse2' in 'lowbit.target'; expected a CPU target (x86-amx, x86-avx512vnni, x86-avxvnni, x86-avx2, aarch64-neon, aarch64-neon-nodot, generic)}}
  func.func @unknown(%x: tensor<?x256xf32>, %w: tensor<4x16x64xi8>, %s: tensor<1xf32>) -> tensor<?x64xf32> {
    %y = lowbit.mpgemm %x, %w, %s {
           weight = #lowbit.weight<bits = 2, encoding = ternary>,
           layout = #lowbit.layout<vnni4, tile_m = 16, tile_k = 16>,
           config = #lowbit.upconvert<tile_m = 16, tile_k = 64, tile_n = 1>}
         : (tensor<?x256xf32>, tensor<4x16x64xi8>, tensor<1xf32>) -> tensor<?x64xf32>
    return %y : tensor<?x64xf32>
  }
}

// -----

module attributes {lowbit.target = "spirv-vulkan"} {
  // expected-error@+1 {{'lowbit.target' = "spirv-vulkan" is a GPU target; expected a CPU one (x86-amx, x86-avx512vnni, x86-avxvnni, x86-avx2, aarch64-neon, aarch64-neon-nodot, generic)}}
  func.func @gpu_target(%x: tensor<?x256xf32>, %w: tensor<4x16x64xi8>, %s: tensor<1xf32>) -> tensor<?x64xf32> {
    %y = lowbit.mpgemm %x, %w, %s {
           weight = #lowbit.weight<bits = 2, encoding = ternary>,
           layout = #lowbit.layout<vnni4, tile_m = 16, tile_k = 16>,
           config = #lowbit.upconvert<tile_m = 16, tile_k = 64, tile_n = 1>}
         : (tensor<?x256xf32>, tensor<4x16x64xi8>, tensor<1xf32>) -> tensor<?x64xf32>
    return %y : tensor<?x64xf32>
  }
}

// -----

// expected-error@+1 {{no target: expected a 'lowbit.target' string attribute on the module (lowbit-select-config sets it)}}
module {
  func.func @gpu_no_target(%x: tensor<?x40xf32>, %w: tensor<20x10xi8>, %s: tensor<1xf32>) -> tensor<?x20xf32> {
    %y = lowbit.mpgemm %x, %w, %s {weight = #lowbit.weight<bits = 2, encoding = ternary>, layout = #lowbit.layout<i2s>,
                                   config = #lowbit.gpu<wg_tile_m = 16, wg_tile_n = 1, sg_tile_m = 4, sg_tile_n = 1, subgroup_size = 16>}
         : (tensor<?x40xf32>, tensor<20x10xi8>, tensor<1xf32>) -> tensor<?x20xf32>
    return %y : tensor<?x20xf32>
  }
}

// -----

// An op without a config on a GPU target.
module attributes {lowbit.target = "spirv-vulkan"} {
  func.func @gpu_none(%x: tensor<?x40xf32>, %w: tensor<20x10xi8>, %s: tensor<1xf32>) -> tensor<?x20xf32> {
    // expected-error@+1 {{lowbit-lower-gpu needs a #lowbit.gpu config (from lowbit-select-config with a GPU target), got none}}
    %y = lowbit.mpgemm %x, %w, %s {weight = #lowbit.weight<bits = 2, encoding = ternary>, layout = #lowbit.layout<i2s>}
         : (tensor<?x40xf32>, tensor<20x10xi8>, tensor<1xf32>) -> tensor<?x20xf32>
    return %y : tensor<?x20xf32>
  }
}

// -----

// expected-error@+1 {{unknown target 'spirv-nope' in 'lowbit.target'; expected a GPU target (spirv-vulkan, spirv-xe2)}}
module attributes {lowbit.target = "spirv-nope"} {
  func.func @plain(%a: i32) -> i32 {
    return %a : i32
  }
}

// -----

// expected-error@+1 {{'lowbit.target' must be a non-empty string naming a target (e.g. "x86-avx2"), got 3 : i64}}
module attributes {lowbit.target = 3} {
}

// -----

// expected-error@+1 {{'lowbit.target' belongs on a builtin.module}}
func.func private @f() attributes {lowbit.target = "generic"}
