// RUN: lowbit-opt %s | lowbit-opt | FileCheck %s
// RUN: lowbit-opt %s --mlir-print-op-generic | lowbit-opt | FileCheck %s
// RUN: lowbit-opt %s --emit-bytecode | lowbit-opt | FileCheck %s
// RUN: lowbit-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// Every attribute in every form, then lowbit.mpgemm in every form. Parameters
// at their default value are omitted when printing.

//===----------------------------------------------------------------------===//
// #lowbit.weight
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func private @weight_ternary()
// CHECK-SAME: a = #lowbit.weight<bits = 2, encoding = ternary>
// CHECK-SAME: b = #lowbit.weight<bits = 2, encoding = ternary>
func.func private @weight_ternary() attributes {
  a = #lowbit.weight<bits = 2, encoding = ternary, group = 0, scale = per_tensor>,
  b = #lowbit.weight<bits = 2, encoding = ternary>}

// CHECK-LABEL: func.func private @weight_binary()
// CHECK-SAME: a = #lowbit.weight<bits = 1, encoding = binary, group = 32, scale = per_group>
// CHECK-SAME: b = #lowbit.weight<bits = 1, encoding = binary, group = 128, scale = per_group>
func.func private @weight_binary() attributes {
  a = #lowbit.weight<bits = 1, encoding = binary, group = 32, scale = per_group>,
  b = #lowbit.weight<scale = per_group, group = 128, encoding = binary, bits = 1>}

// CHECK-LABEL: func.func private @weight_unsigned()
// CHECK-SAME: a = #lowbit.weight<bits = 2, encoding = unsigned, group = 64, scale = per_group>
// CHECK-SAME: b = #lowbit.weight<bits = 3, encoding = unsigned, group = 32, scale = per_group>
// CHECK-SAME: c = #lowbit.weight<bits = 4, encoding = unsigned, group = 128, scale = per_group>
func.func private @weight_unsigned() attributes {
  a = #lowbit.weight<bits = 2, encoding = unsigned, group = 64, scale = per_group>,
  b = #lowbit.weight<bits = 3, encoding = unsigned, group = 32, scale = per_group>,
  c = #lowbit.weight<bits = 4, encoding = unsigned, group = 128, scale = per_group>}

// CHECK-LABEL: func.func private @weight_gguf_q4_0()
// CHECK-SAME: a = #lowbit.weight<bits = 4, encoding = gguf_q4_0, group = 32, scale = per_block>
func.func private @weight_gguf_q4_0() attributes {
  a = #lowbit.weight<bits = 4, encoding = gguf_q4_0, group = 32, scale = per_block>}

// llama.cpp's block formats, described by what they are (the runtime's
// names in LowBitFormats.cpp): q8_0, q5_0, q4_1, q5_1, iq4_nl, q2_k, q3_k,
// q4_k, q5_k, q6_k.
// CHECK-LABEL: func.func private @weight_ggml_blocks()
// CHECK-SAME: a = #lowbit.weight<bits = 8, encoding = offset, group = 32, scale = per_block, code_offset = 128>
// CHECK-SAME: b = #lowbit.weight<bits = 5, encoding = offset, group = 32, scale = per_block, code_offset = 16>
// CHECK-SAME: c = #lowbit.weight<bits = 4, encoding = min, group = 32, scale = per_block>
// CHECK-SAME: d = #lowbit.weight<bits = 5, encoding = min, group = 32, scale = per_block>
// CHECK-SAME: e = #lowbit.weight<bits = 4, encoding = codebook, group = 32, scale = per_block, codebook = [-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113]>
// CHECK-SAME: f = #lowbit.weight<bits = 2, encoding = min, group = 16, scale = per_block, super_block = 256, scale_bits = 4>
// CHECK-SAME: g = #lowbit.weight<bits = 3, encoding = offset, group = 16, scale = per_block, code_offset = 4, super_block = 256, scale_bits = 6>
// CHECK-SAME: h = #lowbit.weight<bits = 4, encoding = min, group = 32, scale = per_block, super_block = 256, scale_bits = 6>
// CHECK-SAME: i = #lowbit.weight<bits = 5, encoding = min, group = 32, scale = per_block, super_block = 256, scale_bits = 6>
// CHECK-SAME: j = #lowbit.weight<bits = 6, encoding = offset, group = 16, scale = per_block, code_offset = 32, super_block = 256, scale_bits = 8>
func.func private @weight_ggml_blocks() attributes {
  a = #lowbit.weight<bits = 8, encoding = offset, group = 32, scale = per_block, code_offset = 128>,
  b = #lowbit.weight<bits = 5, encoding = offset, group = 32, scale = per_block, code_offset = 16, super_block = 0, scale_bits = 0>,
  c = #lowbit.weight<bits = 4, encoding = min, group = 32, scale = per_block>,
  d = #lowbit.weight<bits = 5, encoding = min, group = 32, scale = per_block>,
  e = #lowbit.weight<bits = 4, encoding = codebook, group = 32, scale = per_block, codebook = [-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113]>,
  f = #lowbit.weight<bits = 2, encoding = min, group = 16, scale = per_block, super_block = 256, scale_bits = 4>,
  g = #lowbit.weight<bits = 3, encoding = offset, group = 16, scale = per_block, code_offset = 4, super_block = 256, scale_bits = 6>,
  h = #lowbit.weight<scale_bits = 6, super_block = 256, bits = 4, encoding = min, group = 32, scale = per_block>,
  i = #lowbit.weight<bits = 5, encoding = min, group = 32, scale = per_block, super_block = 256, scale_bits = 6>,
  j = #lowbit.weight<bits = 6, encoding = offset, group = 16, scale = per_block, code_offset = 32, super_block = 256, scale_bits = 8>}

//===----------------------------------------------------------------------===//
// #lowbit.layout
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func private @layout_untiled()
// CHECK-SAME: a = #lowbit.layout<canonical>
// CHECK-SAME: b = #lowbit.layout<i2s>
// CHECK-SAME: c = #lowbit.layout<tl1>
// CHECK-SAME: d = #lowbit.layout<tl2>
// CHECK-SAME: e = #lowbit.layout<gguf>
// CHECK-SAME: f = #lowbit.layout<vnni4>
// CHECK-SAME: g = #lowbit.layout<bitplanes>
// CHECK-SAME: h = #lowbit.layout<i2s>
func.func private @layout_untiled() attributes {
  a = #lowbit.layout<canonical>,
  b = #lowbit.layout<i2s>,
  c = #lowbit.layout<tl1>,
  d = #lowbit.layout<tl2>,
  e = #lowbit.layout<gguf>,
  f = #lowbit.layout<vnni4>,
  g = #lowbit.layout<bitplanes>,
  h = #lowbit.layout<i2s, tile_m = 0, tile_k = 0, interleave = 1>}

// The lane order of the interleaved tl1/tl2 layout (lut_abi.h): printed only
// when it is not the default, rows.
// CHECK-LABEL: func.func private @layout_lane_order()
// CHECK-SAME: a = #lowbit.layout<tl2, tile_m = 16, tile_k = 96, interleave = 16, lane_order = lanes>
// CHECK-SAME: b = #lowbit.layout<tl1, tile_m = 16, tile_k = 16, interleave = 16>
// CHECK-SAME: c = #lowbit.layout<bitplanes, tile_m = 16, tile_k = 32, interleave = 16, lane_order = lanes>
func.func private @layout_lane_order() attributes {
  a = #lowbit.layout<tl2, tile_m = 16, tile_k = 96, interleave = 16, lane_order = lanes>,
  b = #lowbit.layout<tl1, tile_m = 16, tile_k = 16, interleave = 16, lane_order = rows>,
  c = #lowbit.layout<bitplanes, tile_m = 16, tile_k = 32, interleave = 16, lane_order = lanes>}

// CHECK-LABEL: func.func private @layout_tiled()
// CHECK-SAME: a = #lowbit.layout<i2s, tile_m = 4, tile_k = 128, interleave = 4>
// CHECK-SAME: b = #lowbit.layout<tl1, tile_m = 256, tile_k = 128>
// CHECK-SAME: c = #lowbit.layout<tl2, tile_m = 256, tile_k = 96>
// CHECK-SAME: d = #lowbit.layout<vnni4, tile_m = 32, tile_k = 64, interleave = 4>
// CHECK-SAME: e = #lowbit.layout<bitplanes, tile_m = 512>
// CHECK-SAME: f = #lowbit.layout<bitplanes, tile_k = 64>
func.func private @layout_tiled() attributes {
  a = #lowbit.layout<i2s, tile_m = 4, tile_k = 128, interleave = 4>,
  b = #lowbit.layout<tl1, tile_k = 128, tile_m = 256>,
  c = #lowbit.layout<tl2, tile_m = 256, tile_k = 96, interleave = 1>,
  d = #lowbit.layout<vnni4, tile_m = 32, tile_k = 64, interleave = 4>,
  e = #lowbit.layout<bitplanes, tile_m = 512>,
  f = #lowbit.layout<bitplanes, tile_k = 64>}

//===----------------------------------------------------------------------===//
// Strategy configs
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func private @config_reference()
// CHECK-SAME: a = #lowbit.reference
func.func private @config_reference() attributes {a = #lowbit.reference}

// CHECK-LABEL: func.func private @config_upconvert()
// CHECK-SAME: a = #lowbit.upconvert<tile_m = 32, tile_k = 256, tile_n = 4>
// CHECK-SAME: b = #lowbit.upconvert<tile_m = 32, tile_k = 256, tile_n = 4>
// CHECK-SAME: c = #lowbit.upconvert<tile_m = 16, tile_k = 128, tile_n = 1, unroll = 4, prefetch = 2>
func.func private @config_upconvert() attributes {
  a = #lowbit.upconvert<tile_m = 32, tile_k = 256, tile_n = 4>,
  b = #lowbit.upconvert<tile_m = 32, tile_k = 256, tile_n = 4, unroll = 1, prefetch = 0>,
  c = #lowbit.upconvert<prefetch = 2, unroll = 4, tile_n = 1, tile_k = 128, tile_m = 16>}

// CHECK-LABEL: func.func private @config_lut_elementwise()
// CHECK-SAME: a = #lowbit.lut_elementwise<bm = 256, bk = 96>
// CHECK-SAME: b = #lowbit.lut_elementwise<bm = 256, bk = 96>
// CHECK-SAME: c = #lowbit.lut_elementwise<bm = 128, bk = 64, sub_m = 64>
func.func private @config_lut_elementwise() attributes {
  a = #lowbit.lut_elementwise<bm = 256, bk = 96>,
  b = #lowbit.lut_elementwise<bm = 256, bk = 96, sub_m = 32>,
  c = #lowbit.lut_elementwise<bm = 128, bk = 64, sub_m = 64>}

// CHECK-LABEL: func.func private @config_lut_bitserial()
// CHECK-SAME: a = #lowbit.lut_bitserial<bm = 512, kfactor = 16>
// CHECK-SAME: b = #lowbit.lut_bitserial<bm = 512, kfactor = 16>
// CHECK-SAME: c = #lowbit.lut_bitserial<bm = 256, bn = 4, kfactor = 8, act_group = 64, table_bits = 8>
func.func private @config_lut_bitserial() attributes {
  a = #lowbit.lut_bitserial<bm = 512, kfactor = 16>,
  b = #lowbit.lut_bitserial<bm = 512, bn = 1, kfactor = 16, act_group = 32, table_bits = 16>,
  c = #lowbit.lut_bitserial<bm = 256, bn = 4, kfactor = 8, act_group = 64, table_bits = 8>}

//===----------------------------------------------------------------------===//
// lowbit.mpgemm
//===----------------------------------------------------------------------===//

// Ternary i2s: ceil(256 / 4) = 64 bytes per row, per-tensor scale.
// CHECK-LABEL: func.func @mpgemm_i2s_dynamic_n(
// CHECK: %[[Y:.*]] = lowbit.mpgemm %{{.*}}, %{{.*}}, %{{.*}} {config = #lowbit.reference, layout = #lowbit.layout<i2s>, weight = #lowbit.weight<bits = 2, encoding = ternary>} : (tensor<?x256xf32>, tensor<64x64xi8>, tensor<1xf32>) -> tensor<?x64xf32>
// CHECK: return %[[Y]]
// GENERIC-LABEL: sym_name = "mpgemm_i2s_dynamic_n"
// GENERIC: "lowbit.mpgemm"(%{{.*}}, %{{.*}}, %{{.*}}) <{config = #lowbit.reference, layout = #lowbit.layout<i2s>, weight = #lowbit.weight<bits = 2, encoding = ternary>}> : (tensor<?x256xf32>, tensor<64x64xi8>, tensor<1xf32>) -> tensor<?x64xf32>
func.func @mpgemm_i2s_dynamic_n(%x: tensor<?x256xf32>, %w: tensor<64x64xi8>,
                                %s: tensor<1xf32>) -> tensor<?x64xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary, group = 0, scale = per_tensor>,
         layout = #lowbit.layout<i2s>,
         config = #lowbit.reference}
       : (tensor<?x256xf32>, tensor<64x64xi8>, tensor<1xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// CHECK-LABEL: func.func @mpgemm_i2s_static_n(
// CHECK: lowbit.mpgemm {{.*}} {config = #lowbit.upconvert<tile_m = 32, tile_k = 256, tile_n = 4>, layout = #lowbit.layout<i2s>, weight = #lowbit.weight<bits = 2, encoding = ternary>} : (tensor<1x255xf32>, tensor<64x64xui8>, tensor<1xf32>) -> tensor<1x64xf32>
func.func @mpgemm_i2s_static_n(%x: tensor<1x255xf32>, %w: tensor<64x64xui8>,
                               %s: tensor<1xf32>) -> tensor<1x64xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<i2s>,
         config = #lowbit.upconvert<tile_m = 32, tile_k = 256, tile_n = 4>}
       : (tensor<1x255xf32>, tensor<64x64xui8>, tensor<1xf32>) -> tensor<1x64xf32>
  return %y : tensor<1x64xf32>
}

// Ternary tl1: ceil(256 / 4) = 64 bytes per row.
// CHECK-LABEL: func.func @mpgemm_tl1(
// CHECK: lowbit.mpgemm {{.*}} {config = #lowbit.lut_elementwise<bm = 256, bk = 128>, layout = #lowbit.layout<tl1, tile_m = 256, tile_k = 128>, weight = #lowbit.weight<bits = 2, encoding = ternary>} : (tensor<?x256xf32>, tensor<64x64xi8>, tensor<1xf32>) -> tensor<?x64xf32>
func.func @mpgemm_tl1(%x: tensor<?x256xf32>, %w: tensor<64x64xi8>,
                      %s: tensor<1xf32>) -> tensor<?x64xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<tl1, tile_m = 256, tile_k = 128>,
         config = #lowbit.lut_elementwise<bm = 256, bk = 128>}
       : (tensor<?x256xf32>, tensor<64x64xi8>, tensor<1xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// Ternary tl2, K = 256: K3 = 252 (84 triples) and a remainder of 4 in tl1
// form: 42 + 11 + 1 = 54 bytes per row.
// CHECK-LABEL: func.func @mpgemm_tl2_remainder(
// CHECK: lowbit.mpgemm {{.*}} {config = #lowbit.lut_elementwise<bm = 256, bk = 96>, layout = #lowbit.layout<tl2>, weight = #lowbit.weight<bits = 2, encoding = ternary>} : (tensor<?x256xf32>, tensor<64x54xi8>, tensor<1xf32>) -> tensor<?x64xf32>
func.func @mpgemm_tl2_remainder(%x: tensor<?x256xf32>, %w: tensor<64x54xi8>,
                                %s: tensor<1xf32>) -> tensor<?x64xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<tl2>,
         config = #lowbit.lut_elementwise<bm = 256, bk = 96>}
       : (tensor<?x256xf32>, tensor<64x54xi8>, tensor<1xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// Ternary tl2, K = 192 = 3 * 64: 32 + 8 + 0 = 40 bytes per row.
// CHECK-LABEL: func.func @mpgemm_tl2_exact(
// CHECK: lowbit.mpgemm {{.*}} : (tensor<8x192xf32>, tensor<32x40xi8>, tensor<1xf32>) -> tensor<8x32xf32>
func.func @mpgemm_tl2_exact(%x: tensor<8x192xf32>, %w: tensor<32x40xi8>,
                            %s: tensor<1xf32>) -> tensor<8x32xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<tl2, tile_m = 32, tile_k = 96>,
         config = #lowbit.lut_elementwise<bm = 32, bk = 96>}
       : (tensor<8x192xf32>, tensor<32x40xi8>, tensor<1xf32>) -> tensor<8x32xf32>
  return %y : tensor<8x32xf32>
}

// Ternary as two bit planes for the bit-serial strategy.
// CHECK-LABEL: func.func @mpgemm_ternary_bitplanes(
// CHECK: lowbit.mpgemm {{.*}} {config = #lowbit.lut_bitserial<bm = 512, kfactor = 16>, layout = #lowbit.layout<bitplanes>, weight = #lowbit.weight<bits = 2, encoding = ternary>} : (tensor<?x256xf32>, tensor<2x64x32xi8>, tensor<1xf32>) -> tensor<?x64xf32>
func.func @mpgemm_ternary_bitplanes(%x: tensor<?x256xf32>, %w: tensor<2x64x32xi8>,
                                    %s: tensor<1xf32>) -> tensor<?x64xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<bitplanes>,
         config = #lowbit.lut_bitserial<bm = 512, kfactor = 16>}
       : (tensor<?x256xf32>, tensor<2x64x32xi8>, tensor<1xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// Binary, groups of 128: 256 / 8 = 32 bytes per row, scales [M][K/G] f16.
// CHECK-LABEL: func.func @mpgemm_binary(
// CHECK: lowbit.mpgemm {{.*}} {config = #lowbit.upconvert<tile_m = 32, tile_k = 128, tile_n = 1>, layout = #lowbit.layout<canonical>, weight = #lowbit.weight<bits = 1, encoding = binary, group = 128, scale = per_group>} : (tensor<?x256xf32>, tensor<64x32xi8>, tensor<64x2xf16>) -> tensor<?x64xf32>
func.func @mpgemm_binary(%x: tensor<?x256xf32>, %w: tensor<64x32xi8>,
                         %s: tensor<64x2xf16>) -> tensor<?x64xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 1, encoding = binary, group = 128, scale = per_group>,
         layout = #lowbit.layout<canonical>,
         config = #lowbit.upconvert<tile_m = 32, tile_k = 128, tile_n = 1>}
       : (tensor<?x256xf32>, tensor<64x32xi8>, tensor<64x2xf16>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// Unsigned 3-bit, groups of 64: 256 * 3 / 8 = 96 bytes per row, scales
// [M][K/G][2] f16 holding (scale, zero point).
// CHECK-LABEL: func.func @mpgemm_unsigned3(
// CHECK: lowbit.mpgemm {{.*}} {config = #lowbit.lut_bitserial<bm = 256, bn = 4, kfactor = 8, act_group = 64, table_bits = 8>, layout = #lowbit.layout<canonical>, weight = #lowbit.weight<bits = 3, encoding = unsigned, group = 64, scale = per_group>} : (tensor<4x256xf32>, tensor<64x96xi8>, tensor<64x4x2xf16>) -> tensor<4x64xf32>
func.func @mpgemm_unsigned3(%x: tensor<4x256xf32>, %w: tensor<64x96xi8>,
                            %s: tensor<64x4x2xf16>) -> tensor<4x64xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 3, encoding = unsigned, group = 64, scale = per_group>,
         layout = #lowbit.layout<canonical>,
         config = #lowbit.lut_bitserial<bm = 256, bn = 4, kfactor = 8, act_group = 64, table_bits = 8>}
       : (tensor<4x256xf32>, tensor<64x96xi8>, tensor<64x4x2xf16>) -> tensor<4x64xf32>
  return %y : tensor<4x64xf32>
}

// Unsigned 4-bit repacked for VNNI: 2 tiles of 32 rows, 256 * 4 / 32 = 32
// vectors of 4 * 32 bytes per tile.
// CHECK-LABEL: func.func @mpgemm_unsigned4_vnni4(
// CHECK: lowbit.mpgemm {{.*}} {config = #lowbit.upconvert<tile_m = 32, tile_k = 64, tile_n = 4, unroll = 2, prefetch = 1>, layout = #lowbit.layout<vnni4, tile_m = 32, tile_k = 8>, weight = #lowbit.weight<bits = 4, encoding = unsigned, group = 32, scale = per_group>} : (tensor<?x256xf32>, tensor<2x32x128xui8>, tensor<64x8x2xf16>) -> tensor<?x64xf32>
func.func @mpgemm_unsigned4_vnni4(%x: tensor<?x256xf32>, %w: tensor<2x32x128xui8>,
                                  %s: tensor<64x8x2xf16>) -> tensor<?x64xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 4, encoding = unsigned, group = 32, scale = per_group>,
         layout = #lowbit.layout<vnni4, tile_m = 32, tile_k = 8>,
         config = #lowbit.upconvert<tile_m = 32, tile_k = 64, tile_n = 4, unroll = 2, prefetch = 1>}
       : (tensor<?x256xf32>, tensor<2x32x128xui8>, tensor<64x8x2xf16>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// The kernel_abi.h layout of ragged ternary weights: M = 33 rows in 3 tiles
// of 16, K = 100 padded to 128, 2-bit codes: 8 vectors of 64 bytes per tile.
// CHECK-LABEL: func.func @mpgemm_i2s_vnni4_ragged(
// CHECK: layout = #lowbit.layout<vnni4, tile_m = 16, tile_k = 16>
// CHECK-SAME: (tensor<?x100xf32>, tensor<3x8x64xi8>, tensor<1xf32>) -> tensor<?x33xf32>
func.func @mpgemm_i2s_vnni4_ragged(%x: tensor<?x100xf32>, %w: tensor<3x8x64xi8>,
                                   %s: tensor<1xf32>) -> tensor<?x33xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<vnni4, tile_m = 16, tile_k = 16>,
         config = #lowbit.upconvert<tile_m = 32, tile_k = 64, tile_n = 1>}
       : (tensor<?x100xf32>, tensor<3x8x64xi8>, tensor<1xf32>) -> tensor<?x33xf32>
  return %y : tensor<?x33xf32>
}

// Before lowbit-select-config runs, the config is absent.
// CHECK-LABEL: func.func @mpgemm_no_config(
// CHECK: lowbit.mpgemm {{.*}} {layout = #lowbit.layout<i2s>, weight = #lowbit.weight<bits = 2, encoding = ternary>}
func.func @mpgemm_no_config(%x: tensor<?x256xf32>, %w: tensor<64x64xi8>,
                            %s: tensor<1xf32>) -> tensor<?x64xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<i2s>}
       : (tensor<?x256xf32>, tensor<64x64xi8>, tensor<1xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// GGUF Q4_0: 256 / 32 * 18 = 144 bytes per row, no scales operand.
// CHECK-LABEL: func.func @mpgemm_q4_0(
// CHECK: lowbit.mpgemm %{{.*}}, %{{.*}} {config = #lowbit.upconvert<tile_m = 32, tile_k = 256, tile_n = 4>, layout = #lowbit.layout<gguf>, weight = #lowbit.weight<bits = 4, encoding = gguf_q4_0, group = 32, scale = per_block>} : (tensor<?x256xf32>, tensor<64x144xi8>) -> tensor<?x64xf32>
// GENERIC-LABEL: sym_name = "mpgemm_q4_0"
// GENERIC: "lowbit.mpgemm"(%{{.*}}, %{{.*}}) <{config = #lowbit.upconvert<tile_m = 32, tile_k = 256, tile_n = 4>, layout = #lowbit.layout<gguf>, weight = #lowbit.weight<bits = 4, encoding = gguf_q4_0, group = 32, scale = per_block>}> : (tensor<?x256xf32>, tensor<64x144xi8>) -> tensor<?x64xf32>
func.func @mpgemm_q4_0(%x: tensor<?x256xf32>, %w: tensor<64x144xi8>) -> tensor<?x64xf32> {
  %y = lowbit.mpgemm %x, %w {
         weight = #lowbit.weight<bits = 4, encoding = gguf_q4_0, group = 32, scale = per_block>,
         layout = #lowbit.layout<gguf>,
         config = #lowbit.upconvert<tile_m = 32, tile_k = 256, tile_n = 4>}
       : (tensor<?x256xf32>, tensor<64x144xi8>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// The reference strategy takes every format, here Q4_0 with N static.
// CHECK-LABEL: func.func @mpgemm_q4_0_reference(
// CHECK: lowbit.mpgemm {{.*}} {config = #lowbit.reference, layout = #lowbit.layout<gguf>, {{.*}}} : (tensor<3x64xf32>, tensor<5x36xi8>) -> tensor<3x5xf32>
func.func @mpgemm_q4_0_reference(%x: tensor<3x64xf32>, %w: tensor<5x36xi8>) -> tensor<3x5xf32> {
  %y = lowbit.mpgemm %x, %w {
         weight = #lowbit.weight<bits = 4, encoding = gguf_q4_0, group = 32, scale = per_block>,
         layout = #lowbit.layout<gguf>,
         config = #lowbit.reference}
       : (tensor<3x64xf32>, tensor<5x36xi8>) -> tensor<3x5xf32>
  return %y : tensor<3x5xf32>
}

// ggml's row bytes from the description: Q8_0 34, Q5_1 24 per 32; Q2_K 84,
// Q3_K 110, Q4_K 144, Q5_K 176, Q6_K 210 per 256 (ggml-common.h).
// CHECK-LABEL: func.func @mpgemm_ggml_blocks(
// CHECK-COUNT-7: lowbit.mpgemm {{.*}}layout = #lowbit.layout<gguf>
func.func @mpgemm_ggml_blocks(%x: tensor<?x512xf32>, %q8: tensor<5x544xi8>, %q51: tensor<5x384xi8>,
                              %q2: tensor<5x168xi8>, %q3: tensor<5x220xi8>, %q4: tensor<5x288xi8>,
                              %q5: tensor<5x352xi8>, %q6: tensor<5x420xi8>) -> tensor<?x5xf32> {
  %a = lowbit.mpgemm %x, %q8 {weight = #lowbit.weight<bits = 8, encoding = offset, group = 32, scale = per_block, code_offset = 128>,
         layout = #lowbit.layout<gguf>, config = #lowbit.reference} : (tensor<?x512xf32>, tensor<5x544xi8>) -> tensor<?x5xf32>
  %b = lowbit.mpgemm %x, %q51 {weight = #lowbit.weight<bits = 5, encoding = min, group = 32, scale = per_block>,
         layout = #lowbit.layout<gguf>} : (tensor<?x512xf32>, tensor<5x384xi8>) -> tensor<?x5xf32>
  %c = lowbit.mpgemm %x, %q2 {weight = #lowbit.weight<bits = 2, encoding = min, group = 16, scale = per_block, super_block = 256, scale_bits = 4>,
         layout = #lowbit.layout<gguf>} : (tensor<?x512xf32>, tensor<5x168xi8>) -> tensor<?x5xf32>
  %d = lowbit.mpgemm %x, %q3 {weight = #lowbit.weight<bits = 3, encoding = offset, group = 16, scale = per_block, code_offset = 4, super_block = 256, scale_bits = 6>,
         layout = #lowbit.layout<gguf>} : (tensor<?x512xf32>, tensor<5x220xi8>) -> tensor<?x5xf32>
  %e = lowbit.mpgemm %x, %q4 {weight = #lowbit.weight<bits = 4, encoding = min, group = 32, scale = per_block, super_block = 256, scale_bits = 6>,
         layout = #lowbit.layout<gguf>} : (tensor<?x512xf32>, tensor<5x288xi8>) -> tensor<?x5xf32>
  %f = lowbit.mpgemm %x, %q5 {weight = #lowbit.weight<bits = 5, encoding = min, group = 32, scale = per_block, super_block = 256, scale_bits = 6>,
         layout = #lowbit.layout<gguf>} : (tensor<?x512xf32>, tensor<5x352xi8>) -> tensor<?x5xf32>
  %g = lowbit.mpgemm %x, %q6 {weight = #lowbit.weight<bits = 6, encoding = offset, group = 16, scale = per_block, code_offset = 32, super_block = 256, scale_bits = 8>,
         layout = #lowbit.layout<gguf>} : (tensor<?x512xf32>, tensor<5x420xi8>) -> tensor<?x5xf32>
  return %g : tensor<?x5xf32>
}

// CHECK-LABEL: func.func private @config_gpu()
// CHECK-SAME: a = #lowbit.gpu<wg_tile_m = 64, wg_tile_n = 1, sg_tile_m = 4, sg_tile_n = 1, subgroup_size = 16>
// CHECK-SAME: b = #lowbit.gpu<wg_tile_m = 64, wg_tile_n = 16, sg_tile_m = 8, sg_tile_n = 8, k_split = 2, fuse_act_quant = false, int_dot = true, subgroup_size = 16>
func.func private @config_gpu() attributes {
  a = #lowbit.gpu<wg_tile_m = 64, wg_tile_n = 1, sg_tile_m = 4, sg_tile_n = 1, k_split = 1, fuse_act_quant = true, subgroup_size = 16>,
  b = #lowbit.gpu<wg_tile_m = 64, wg_tile_n = 16, sg_tile_m = 8, sg_tile_n = 8, k_split = 2, fuse_act_quant = false, int_dot = true, subgroup_size = 16>}

// An i2s mpgemm with a GPU config.
// CHECK-LABEL: func.func @mpgemm_i2s_gpu
// CHECK: config = #lowbit.gpu<wg_tile_m = 16, wg_tile_n = 1, sg_tile_m = 4, sg_tile_n = 1, subgroup_size = 16>
func.func @mpgemm_i2s_gpu(%x: tensor<?x40xf32>, %w: tensor<20x10xi8>, %s: tensor<1xf32>) -> tensor<?x20xf32> {
  %y = lowbit.mpgemm %x, %w, %s {weight = #lowbit.weight<bits = 2, encoding = ternary>, layout = #lowbit.layout<i2s>,
                                 config = #lowbit.gpu<wg_tile_m = 16, wg_tile_n = 1, sg_tile_m = 4, sg_tile_n = 1, subgroup_size = 16>}
       : (tensor<?x40xf32>, tensor<20x10xi8>, tensor<1xf32>) -> tensor<?x20xf32>
  return %y : tensor<?x20xf32>
}

// The any-shape form: M and K dynamic (kernel_abi.h's lowbit_any_kernel_fn).
// CHECK-LABEL: func.func @mpgemm_any_shape
// CHECK: lowbit.mpgemm %{{.*}}, %{{.*}}, %{{.*}} {config = #lowbit.upconvert<tile_m = 16, tile_k = 64, tile_n = 1>, layout = #lowbit.layout<vnni4, tile_m = 16, tile_k = 16>, weight = #lowbit.weight<bits = 2, encoding = unsigned, group = 64, scale = per_group>} : (tensor<?x?xf32>, tensor<?x?x64xi8>, tensor<?x?x2xf16>) -> tensor<?x?xf32>
func.func @mpgemm_any_shape(%x: tensor<?x?xf32>, %w: tensor<?x?x64xi8>, %s: tensor<?x?x2xf16>) -> tensor<?x?xf32> {
  %y = lowbit.mpgemm %x, %w, %s {weight = #lowbit.weight<bits = 2, encoding = unsigned, group = 64, scale = per_group>,
                                 layout = #lowbit.layout<vnni4, tile_m = 16, tile_k = 16>,
                                 config = #lowbit.upconvert<tile_m = 16, tile_k = 64, tile_n = 1>}
       : (tensor<?x?xf32>, tensor<?x?x64xi8>, tensor<?x?x2xf16>) -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}
