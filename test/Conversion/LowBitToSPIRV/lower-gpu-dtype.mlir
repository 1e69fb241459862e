// RUN: lowbit-opt %s --lowbit-select-config="target=spirv-vulkan" --lowbit-lower-gpu="dtype=f16" | FileCheck %s --check-prefix=F16
// RUN: lowbit-opt %s --lowbit-select-config="target=spirv-vulkan" --lowbit-lower-gpu="dtype=bf16" | FileCheck %s --check-prefix=BF16
// RUN: not lowbit-opt %s --lowbit-select-config="target=spirv-vulkan" --lowbit-lower-gpu="dtype=f64" 2>&1 | FileCheck %s --check-prefix=BAD

// 16-bit I/O: X and Y are memrefs of i16 bits; X widened to f32 in integer
// ops (f16: exponent rebias, subnormals through uitofp * 2^-24; bf16: a
// shift), Y rounded to nearest even in integer ops and truncated to i16.
// F16:       gpu.func @mpgemm(%{{.*}}: memref<?xi16>, %{{.*}}: memref<60xi32>, %{{.*}}: memref<?xi16>, %{{.*}}: memref<2xi32>
// F16:         memref.load %{{.*}} : memref<?xi16>
// F16:         arith.extui %{{.*}} : i16 to i32
// F16:         arith.uitofp
// F16:         arith.select
// F16:         arith.bitcast %{{.*}} : i32 to f32
// F16:         arith.sitofp
// F16:         arith.bitcast %{{.*}} : f32 to i32
// F16:         arith.minui
// F16:         math.roundeven
// F16:         arith.trunci %{{.*}} : i32 to i16
// F16-NEXT:    memref.store %{{.*}} : memref<?xi16>
// BF16:      gpu.func @mpgemm(%{{.*}}: memref<?xi16>, %{{.*}}: memref<60xi32>, %{{.*}}: memref<?xi16>
// BF16:        arith.extui %{{.*}} : i16 to i32
// BF16:        arith.shli
// BF16-NEXT:   arith.bitcast %{{.*}} : i32 to f32
// BF16:        arith.sitofp
// BF16:        arith.addi %{{.*}}, %c32767_i32
// BF16:        arith.trunci %{{.*}} : i32 to i16
// BAD: error: 'lowbit.mpgemm' op lowbit-lower-gpu: unknown dtype 'f64' (expected f32, f16, bf16)
func.func @gemv(%x: tensor<?x40xf32>, %w: tensor<20x10xi8>,
                %s: tensor<1xf32>) -> tensor<?x20xf32> {
  %y = lowbit.mpgemm %x, %w, %s
      {weight = #lowbit.weight<bits = 2, encoding = ternary>,
       layout = #lowbit.layout<i2s>}
      : (tensor<?x40xf32>, tensor<20x10xi8>, tensor<1xf32>) -> tensor<?x20xf32>
  return %y : tensor<?x20xf32>
}
