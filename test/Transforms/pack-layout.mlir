// RUN: lowbit-opt %s --split-input-file --lowbit-pack-layout --verify-diagnostics | FileCheck %s

// Up-convert ops get the vnni4 layout of kernel_abi.h (tiles of 16 rows,
// 64-byte vectors holding 32 / bits k per row) and their packed weights the
// type tensor<ceil(M/16) x ceil(K/32) * bits x 64 x i8>, in the function
// signature too. Reference ops are left alone.

// Ternary, ragged: M = 33 -> 3 tiles, K = 100 -> 128 -> 8 vectors.
// CHECK-LABEL: func.func @i2s_ragged(
// CHECK-SAME: %{{.*}}: tensor<?x100xf32>, %[[W:.*]]: tensor<3x8x64xi8>, %{{.*}}: tensor<1xf32>) -> tensor<?x33xf32>
// CHECK: lowbit.mpgemm %{{.*}}, %[[W]], %{{.*}} {config = #lowbit.upconvert<tile_m = 32, tile_k = 64, tile_n = 1>, layout = #lowbit.layout<vnni4, tile_m = 16, tile_k = 16>, weight = #lowbit.weight<bits = 2, encoding = ternary>}
// CHECK-SAME: (tensor<?x100xf32>, tensor<3x8x64xi8>, tensor<1xf32>) -> tensor<?x33xf32>
func.func @i2s_ragged(%x: tensor<?x100xf32>, %w: tensor<33x25xi8>, %s: tensor<1xf32>) -> tensor<?x33xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<i2s>,
         config = #lowbit.upconvert<tile_m = 32, tile_k = 64, tile_n = 1>}
       : (tensor<?x100xf32>, tensor<33x25xi8>, tensor<1xf32>) -> tensor<?x33xf32>
  return %y : tensor<?x33xf32>
}

// -----

// Binary: 1 bit, 32 k per row and vector. M = 64, K = 256: 4 x 8 x 64.
// CHECK-LABEL: func.func @w1g128(
// CHECK-SAME: tensor<4x8x64xi8>
// CHECK: layout = #lowbit.layout<vnni4, tile_m = 16, tile_k = 32>
func.func @w1g128(%x: tensor<?x256xf32>, %w: tensor<64x32xi8>, %s: tensor<64x2xf16>) -> tensor<?x64xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 1, encoding = binary, group = 128, scale = per_group>,
         layout = #lowbit.layout<canonical>,
         config = #lowbit.upconvert<tile_m = 16, tile_k = 128, tile_n = 4>}
       : (tensor<?x256xf32>, tensor<64x32xi8>, tensor<64x2xf16>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

// GGUF Q4_0: 4 bits, 8 k per row and vector; the fp16 d move out of the
// blocks into the kernel's scales array. M = 40, K = 64: 3 x 8 x 64.
// CHECK-LABEL: func.func @q4_0(
// CHECK-SAME: tensor<3x8x64xi8>
// CHECK: layout = #lowbit.layout<vnni4, tile_m = 16, tile_k = 8>
func.func @q4_0(%x: tensor<?x64xf32>, %w: tensor<40x36xi8>) -> tensor<?x40xf32> {
  %y = lowbit.mpgemm %x, %w {
         weight = #lowbit.weight<bits = 4, encoding = gguf_q4_0, group = 32, scale = per_block>,
         layout = #lowbit.layout<gguf>,
         config = #lowbit.upconvert<tile_m = 16, tile_k = 64, tile_n = 1>}
       : (tensor<?x64xf32>, tensor<40x36xi8>) -> tensor<?x40xf32>
  return %y : tensor<?x40xf32>
}

// -----

// Already packed: unchanged.
// CHECK-LABEL: func.func @already_packed(
// CHECK-SAME: tensor<2x8x64xi8>
// CHECK: layout = #lowbit.layout<vnni4, tile_m = 16, tile_k = 16>
func.func @already_packed(%x: tensor<?x128xf32>, %w: tensor<2x8x64xi8>, %s: tensor<32x2x2xf16>) -> tensor<?x32xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = unsigned, group = 64, scale = per_group>,
         layout = #lowbit.layout<vnni4, tile_m = 16, tile_k = 16>,
         config = #lowbit.upconvert<tile_m = 16, tile_k = 64, tile_n = 1>}
       : (tensor<?x128xf32>, tensor<2x8x64xi8>, tensor<32x2x2xf16>) -> tensor<?x32xf32>
  return %y : tensor<?x32xf32>
}

// -----

// CHECK-LABEL: func.func @reference(
// CHECK-SAME: tensor<64x64xi8>
// CHECK: layout = #lowbit.layout<i2s>
func.func @reference(%x: tensor<?x256xf32>, %w: tensor<64x64xi8>, %s: tensor<1xf32>) -> tensor<?x64xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<i2s>,
         config = #lowbit.reference}
       : (tensor<?x256xf32>, tensor<64x64xi8>, tensor<1xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @no_config(%x: tensor<?x256xf32>, %w: tensor<64x64xi8>, %s: tensor<1xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{'lowbit.mpgemm' op has no config; run lowbit-select-config first}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<i2s>}
       : (tensor<?x256xf32>, tensor<64x64xi8>, tensor<1xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

module attributes {lowbit.target = "x86-avx512vnni"} {
func.func @bitserial_from_bitplanes(%x: tensor<?x256xf32>, %w: tensor<64x64xi8>, %s: tensor<1xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{'lowbit.mpgemm' op cannot repack a bitplanes layout for the lut-bitserial strategy}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<bitplanes, tile_m = 256, tile_k = 64>,
         config = #lowbit.lut_bitserial<bm = 256, kfactor = 16>}
       : (tensor<?x256xf32>, tensor<64x64xi8>, tensor<1xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}
}

// -----

// lut-bitserial: the bit-plane layout of bitserial_abi.h, in its lane order
// on x86-avx2 (pshufb per lane; two planes of a row side by side). M = 33, K = 100: 3 tiles x 4 blocks x 2 x 64.
// CHECK-LABEL: func.func @i2s_bitplanes_lanes(
// CHECK-SAME: tensor<3x512xi8>
// CHECK: layout = #lowbit.layout<bitplanes, tile_m = 16, tile_k = 32, interleave = 16, lane_order = lanes>
module attributes {lowbit.target = "x86-avx2"} {
func.func @i2s_bitplanes_lanes(%x: tensor<?x100xf32>, %w: tensor<33x25xi8>, %s: tensor<1xf32>) -> tensor<?x33xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<i2s>,
         config = #lowbit.lut_bitserial<bm = 16, kfactor = 16>}
       : (tensor<?x100xf32>, tensor<33x25xi8>, tensor<1xf32>) -> tensor<?x33xf32>
  return %y : tensor<?x33xf32>
}
}

// -----

// One plane: lane order too (each plane vector in lut_abi.h's), and for
// int8 tables; row order on targets without lane order (vpermb).
// CHECK-LABEL: func.func @w1_bitplanes_lanes(
// CHECK: layout = #lowbit.layout<bitplanes, tile_m = 16, tile_k = 32, interleave = 16, lane_order = lanes>
// CHECK-LABEL: func.func @w2_int8_bitplanes_lanes(
// CHECK: layout = #lowbit.layout<bitplanes, tile_m = 16, tile_k = 32, interleave = 16, lane_order = lanes>
module attributes {lowbit.target = "x86-avx2"} {
func.func @w1_bitplanes_lanes(%x: tensor<?x256xf32>, %w: tensor<64x32xi8>, %s: tensor<64x2xf16>) -> tensor<?x64xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 1, encoding = binary, group = 128, scale = per_group>,
         layout = #lowbit.layout<canonical>,
         config = #lowbit.lut_bitserial<bm = 16, kfactor = 16>}
       : (tensor<?x256xf32>, tensor<64x32xi8>, tensor<64x2xf16>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}
func.func @w2_int8_bitplanes_lanes(%x: tensor<?x256xf32>, %w: tensor<64x64xi8>, %s: tensor<64x4x2xf16>) -> tensor<?x64xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = unsigned, group = 64, scale = per_group>,
         layout = #lowbit.layout<canonical>,
         config = #lowbit.lut_bitserial<bm = 16, kfactor = 16, table_bits = 8>}
       : (tensor<?x256xf32>, tensor<64x64xi8>, tensor<64x4x2xf16>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}
}

// -----

// CHECK-LABEL: func.func @i2s_bitplanes_rows(
// CHECK: layout = #lowbit.layout<bitplanes, tile_m = 16, tile_k = 32, interleave = 16>,
module attributes {lowbit.target = "x86-avx512vnni"} {
func.func @i2s_bitplanes_rows(%x: tensor<?x100xf32>, %w: tensor<33x25xi8>, %s: tensor<1xf32>) -> tensor<?x33xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<i2s>,
         config = #lowbit.lut_bitserial<bm = 16, kfactor = 16>}
       : (tensor<?x100xf32>, tensor<33x25xi8>, tensor<1xf32>) -> tensor<?x33xf32>
  return %y : tensor<?x33xf32>
}
}

// -----

func.func @shared_weights(%x: tensor<?x256xf32>, %w: tensor<64x64xi8>, %s: tensor<1xf32>) -> (tensor<?x64xf32>, tensor<64x64xi8>) {
  // expected-error@+1 {{'lowbit.mpgemm' op packed weights must be an argument of the function used by this op alone to be repacked}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<i2s>,
         config = #lowbit.upconvert<tile_m = 16, tile_k = 64, tile_n = 1>}
       : (tensor<?x256xf32>, tensor<64x64xi8>, tensor<1xf32>) -> tensor<?x64xf32>
  return %y, %w : tensor<?x64xf32>, tensor<64x64xi8>
}

// -----

// tl2 for lut-elementwise: the interleaved layout of lut_abi.h, in the lane
// order of the module's target (TargetInfo::hasLutLaneOrder): lanes for
// x86-avx2. M = 33, K = 200: 3 tiles of 64 + 2 * 320 + 64 bytes.
// CHECK-LABEL: func.func @tl2_lanes(
// CHECK-SAME: tensor<3x768xi8>
// CHECK: layout = #lowbit.layout<tl2, tile_m = 16, tile_k = 96, interleave = 16, lane_order = lanes>
module attributes {lowbit.target = "x86-avx2"} {
func.func @tl2_lanes(%x: tensor<?x200xf32>, %w: tensor<33x43xi8>, %s: tensor<1xf32>) -> tensor<?x33xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<tl2>,
         config = #lowbit.lut_elementwise<bm = 16, bk = 96, sub_m = 16>}
       : (tensor<?x200xf32>, tensor<33x43xi8>, tensor<1xf32>) -> tensor<?x33xf32>
  return %y : tensor<?x33xf32>
}
}

// -----

// The same for x86-avx512vnni (vpermb reads the row order, the default).
// CHECK-LABEL: func.func @tl2_rows(
// CHECK: layout = #lowbit.layout<tl2, tile_m = 16, tile_k = 96, interleave = 16>,
module attributes {lowbit.target = "x86-avx512vnni"} {
func.func @tl2_rows(%x: tensor<?x200xf32>, %w: tensor<33x43xi8>, %s: tensor<1xf32>) -> tensor<?x33xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<tl2>,
         config = #lowbit.lut_elementwise<bm = 16, bk = 96, sub_m = 16>}
       : (tensor<?x200xf32>, tensor<33x43xi8>, tensor<1xf32>) -> tensor<?x33xf32>
  return %y : tensor<?x33xf32>
}
}

// -----

// Without a target the lane order is unknown.
func.func @tl2_no_target(%x: tensor<?x200xf32>, %w: tensor<33x43xi8>, %s: tensor<1xf32>) -> tensor<?x33xf32> {
  // expected-error@+1 {{lowbit.target}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<tl2>,
         config = #lowbit.lut_elementwise<bm = 16, bk = 96, sub_m = 16>}
       : (tensor<?x200xf32>, tensor<33x43xi8>, tensor<1xf32>) -> tensor<?x33xf32>
  return %y : tensor<?x33xf32>
}

// -----

// An upconvert config of fewer than 16 rows: ternary weights in the GGML
// ROWS LAYOUT of kernel_abi.h (TQ2_0 rows, 66 bytes per 256 weights), any
// M. M = 5, K = 768: 5 x 198.
// CHECK-LABEL: func.func @i2s_ggml_rows(
// CHECK-SAME: %{{.*}}: tensor<?x768xf32>, %[[W:.*]]: tensor<5x198xi8>, %{{.*}}: tensor<1xf32>) -> tensor<?x5xf32>
// CHECK: layout = #lowbit.layout<gguf, tile_m = 1, tile_k = 256>
func.func @i2s_ggml_rows(%x: tensor<?x768xf32>, %w: tensor<5x192xi8>, %s: tensor<1xf32>) -> tensor<?x5xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<i2s>,
         config = #lowbit.upconvert<tile_m = 2, tile_k = 256, tile_n = 1>}
       : (tensor<?x768xf32>, tensor<5x192xi8>, tensor<1xf32>) -> tensor<?x5xf32>
  return %y : tensor<?x5xf32>
}
