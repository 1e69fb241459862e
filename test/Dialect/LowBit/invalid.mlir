// RUN: lowbit-opt %s -split-input-file -verify-diagnostics

// One case per diagnostic of the lowbit attributes and of lowbit.mpgemm.

//===----------------------------------------------------------------------===//
// #lowbit.weight
//===----------------------------------------------------------------------===//

// expected-error@+2 {{expected one of [ternary, binary, unsigned, gguf_q4_0, offset, min, codebook] for weight encoding, got: int2}}
// expected-error@+1 {{failed to parse LowBit_WeightAttr parameter 'encoding' which is to be a `::mlir::lowbit::Encoding`}}
func.func private @f() attributes {a = #lowbit.weight<bits = 2, encoding = int2>}

// -----

// expected-error@+1 {{struct is missing required parameter: bits}}
func.func private @f() attributes {a = #lowbit.weight<encoding = ternary>}

// -----

// expected-error@+1 {{duplicate or unknown struct parameter name: bits}}
func.func private @f() attributes {a = #lowbit.weight<bits = 2, encoding = ternary, bits = 2>}

// -----

// expected-error@+1 {{unsigned encoding requires bits in [2, 4], got bits = 5}}
func.func private @f() attributes {a = #lowbit.weight<bits = 5, encoding = unsigned, group = 32, scale = per_group>}

// -----

// expected-error@+1 {{bits must be in [1, 8], got 9}}
func.func private @f() attributes {a = #lowbit.weight<bits = 9, encoding = offset, group = 32, scale = per_block, code_offset = 128>}

// -----

// expected-error@+1 {{unsigned encoding takes no code_offset, super_block, scale_bits or codebook (they describe the block encodings offset, min and codebook)}}
func.func private @f() attributes {a = #lowbit.weight<bits = 4, encoding = unsigned, group = 32, scale = per_group, code_offset = 8>}

// -----

// expected-error@+1 {{offset encoding requires scale = per_block, got scale = per_group}}
func.func private @f() attributes {a = #lowbit.weight<bits = 8, encoding = offset, group = 32, scale = per_group, code_offset = 128>}

// -----

// expected-error@+1 {{offset encoding requires code_offset in [1, 31] for 5-bit codes, got 32}}
func.func private @f() attributes {a = #lowbit.weight<bits = 5, encoding = offset, group = 32, scale = per_block, code_offset = 32>}

// -----

// expected-error@+1 {{offset encoding requires code_offset in [1, 255] for 8-bit codes, got 0}}
func.func private @f() attributes {a = #lowbit.weight<bits = 8, encoding = offset, group = 32, scale = per_block>}

// -----

// expected-error@+1 {{min encoding stores its minimum; code_offset must be 0, got 8}}
func.func private @f() attributes {a = #lowbit.weight<bits = 4, encoding = min, group = 32, scale = per_block, code_offset = 8>}

// -----

// expected-error@+1 {{min encoding without a super-block requires group = 32, got group = 16}}
func.func private @f() attributes {a = #lowbit.weight<bits = 4, encoding = min, group = 16, scale = per_block>}

// -----

// expected-error@+1 {{min encoding without a super-block stores fp16 scales; scale_bits must be 0, got 6}}
func.func private @f() attributes {a = #lowbit.weight<bits = 4, encoding = min, group = 32, scale = per_block, scale_bits = 6>}

// -----

// expected-error@+1 {{min encoding requires super_block = 0 or 256 (ggml's QK_K), got super_block = 128}}
func.func private @f() attributes {a = #lowbit.weight<bits = 4, encoding = min, group = 32, scale = per_block, super_block = 128, scale_bits = 6>}

// -----

// expected-error@+1 {{min encoding with a super-block requires group = 16 or 32, got group = 64}}
func.func private @f() attributes {a = #lowbit.weight<bits = 4, encoding = min, group = 64, scale = per_block, super_block = 256, scale_bits = 6>}

// -----

// expected-error@+1 {{offset encoding with a super-block requires scale_bits in [4, 8], got 3}}
func.func private @f() attributes {a = #lowbit.weight<bits = 6, encoding = offset, group = 16, scale = per_block, code_offset = 32, super_block = 256, scale_bits = 3>}

// -----

// expected-error@+1 {{codebook encoding requires a codebook of 2^bits = 16 values, got 2}}
func.func private @f() attributes {a = #lowbit.weight<bits = 4, encoding = codebook, group = 32, scale = per_block, codebook = [-1, 1]>}

// -----

// expected-error@+1 {{codebook encoding requires a codebook of 2^bits = 4 values, got 0}}
func.func private @f() attributes {a = #lowbit.weight<bits = 2, encoding = codebook, group = 32, scale = per_block>}

// -----

// expected-error@+1 {{codebook encoding requires bits in [1, 4] (a table of 2^bits int8 values), got bits = 5}}
func.func private @f() attributes {a = #lowbit.weight<bits = 5, encoding = codebook, group = 32, scale = per_block>}

// -----

// expected-error@+1 {{codebook encoding takes no super-block, got super_block = 256}}
func.func private @f() attributes {a = #lowbit.weight<bits = 2, encoding = codebook, group = 16, scale = per_block, super_block = 256, scale_bits = 4, codebook = [-3, -1, 1, 3]>}

// -----

// expected-error@+1 {{codebook encoding requires code_offset = 0, got 2}}
func.func private @f() attributes {a = #lowbit.weight<bits = 2, encoding = codebook, group = 32, scale = per_block, code_offset = 2, codebook = [-3, -1, 1, 3]>}

// -----

// expected-error@+1 {{offset encoding takes no codebook}}
func.func private @f() attributes {a = #lowbit.weight<bits = 2, encoding = offset, group = 32, scale = per_block, code_offset = 2, codebook = [-3, -1, 1, 3]>}

// -----

// expected-error@+1 {{group size must be non-negative, got -32}}
func.func private @f() attributes {a = #lowbit.weight<bits = 2, encoding = unsigned, group = -32, scale = per_group>}

// -----

// expected-error@+1 {{ternary encoding requires bits = 2, got bits = 3}}
func.func private @f() attributes {a = #lowbit.weight<bits = 3, encoding = ternary>}

// -----

// expected-error@+1 {{ternary encoding requires group = 0, got group = 64}}
func.func private @f() attributes {a = #lowbit.weight<bits = 2, encoding = ternary, group = 64>}

// -----

// expected-error@+1 {{ternary encoding requires scale = per_tensor, got scale = per_group}}
func.func private @f() attributes {a = #lowbit.weight<bits = 2, encoding = ternary, scale = per_group>}

// -----

// expected-error@+1 {{binary encoding requires bits = 1, got bits = 2}}
func.func private @f() attributes {a = #lowbit.weight<bits = 2, encoding = binary, group = 32, scale = per_group>}

// -----

// expected-error@+1 {{binary encoding requires a group size that is a positive multiple of 32, got group = 48}}
func.func private @f() attributes {a = #lowbit.weight<bits = 1, encoding = binary, group = 48, scale = per_group>}

// -----

// expected-error@+1 {{binary encoding requires a group size that is a positive multiple of 32, got group = 0}}
func.func private @f() attributes {a = #lowbit.weight<bits = 1, encoding = binary, scale = per_group>}

// -----

// expected-error@+1 {{binary encoding requires scale = per_group, got scale = per_tensor}}
func.func private @f() attributes {a = #lowbit.weight<bits = 1, encoding = binary, group = 32>}

// -----

// expected-error@+1 {{unsigned encoding requires bits in [2, 4], got bits = 1}}
func.func private @f() attributes {a = #lowbit.weight<bits = 1, encoding = unsigned, group = 32, scale = per_group>}

// -----

// expected-error@+1 {{unsigned encoding requires a group size that is a positive multiple of 32, got group = 100}}
func.func private @f() attributes {a = #lowbit.weight<bits = 4, encoding = unsigned, group = 100, scale = per_group>}

// -----

// expected-error@+1 {{unsigned encoding requires scale = per_group, got scale = per_block}}
func.func private @f() attributes {a = #lowbit.weight<bits = 4, encoding = unsigned, group = 32, scale = per_block>}

// -----

// expected-error@+1 {{gguf_q4_0 encoding requires bits = 4, got bits = 3}}
func.func private @f() attributes {a = #lowbit.weight<bits = 3, encoding = gguf_q4_0, group = 32, scale = per_block>}

// -----

// expected-error@+1 {{gguf_q4_0 encoding requires group = 32, got group = 64}}
func.func private @f() attributes {a = #lowbit.weight<bits = 4, encoding = gguf_q4_0, group = 64, scale = per_block>}

// -----

// expected-error@+1 {{gguf_q4_0 encoding requires scale = per_block, got scale = per_group}}
func.func private @f() attributes {a = #lowbit.weight<bits = 4, encoding = gguf_q4_0, group = 32, scale = per_group>}

// -----

// expected-error@+2 {{expected one of [per_tensor, per_group, per_block] for scale granularity, got: per_row}}
// expected-error@+1 {{failed to parse LowBit_WeightAttr parameter 'scale' which is to be a `::mlir::lowbit::ScaleGranularity`}}
func.func private @f() attributes {a = #lowbit.weight<bits = 2, encoding = ternary, scale = per_row>}

// -----

//===----------------------------------------------------------------------===//
// #lowbit.layout
//===----------------------------------------------------------------------===//

// expected-error@+2 {{expected one of [canonical, i2s, tl1, tl2, gguf, vnni4, bitplanes] for layout kind, got: i3s}}
// expected-error@+1 {{failed to parse LowBit_LayoutAttr parameter 'kind' which is to be a `::mlir::lowbit::LayoutKind`}}
func.func private @f() attributes {a = #lowbit.layout<i3s>}

// -----

// expected-error@+1 {{duplicate or unknown struct parameter name: tile_n}}
func.func private @f() attributes {a = #lowbit.layout<vnni4, tile_n = 4>}

// -----

// expected-error@+1 {{layout tile_m must be non-negative, got -1}}
func.func private @f() attributes {a = #lowbit.layout<i2s, tile_m = -1>}

// -----

// expected-error@+1 {{layout tile_k must be non-negative, got -4}}
func.func private @f() attributes {a = #lowbit.layout<i2s, tile_k = -4>}

// -----

// expected-error@+1 {{layout interleave must be positive, got 0}}
func.func private @f() attributes {a = #lowbit.layout<vnni4, interleave = 0>}

// -----

// expected-error@+1 {{canonical layout takes no tile or interleave parameters}}
func.func private @f() attributes {a = #lowbit.layout<canonical, tile_m = 32>}

// -----

// expected-error@+1 {{gguf layout takes no tile or interleave parameters}}
func.func private @f() attributes {a = #lowbit.layout<gguf, interleave = 4>}

// -----

// expected-error@+1 {{i2s layout requires tile_k to be a multiple of 4, got 6}}
func.func private @f() attributes {a = #lowbit.layout<i2s, tile_k = 6>}

// -----

// expected-error@+1 {{tl1 layout requires tile_k to be a multiple of 2, got 63}}
func.func private @f() attributes {a = #lowbit.layout<tl1, tile_k = 63>}

// -----

// expected-error@+1 {{tl2 layout requires tile_k to be a multiple of 3, got 64}}
func.func private @f() attributes {a = #lowbit.layout<tl2, tile_k = 64>}

// -----

// expected-error@+1 {{vnni4 layout requires tile_k to be a multiple of 4, got 30}}
func.func private @f() attributes {a = #lowbit.layout<vnni4, tile_k = 30>}

// -----

// expected-error@+1 {{bitplanes layout requires tile_k to be a multiple of 8, got 12}}
func.func private @f() attributes {a = #lowbit.layout<bitplanes, tile_k = 12>}

// -----

// expected-error@+1 {{layout lane_order lanes needs an interleaved tl1/tl2 or bitplanes layout (interleave = 16)}}
func.func private @f() attributes {a = #lowbit.layout<vnni4, tile_m = 16, tile_k = 16, lane_order = lanes>}

// -----

// expected-error@+1 {{layout lane_order lanes needs an interleaved tl1/tl2 or bitplanes layout (interleave = 16)}}
func.func private @f() attributes {a = #lowbit.layout<tl2, tile_m = 256, tile_k = 96, lane_order = lanes>}

// -----

// expected-error@+1 {{layout interleave 3 does not divide tile_m = 32}}
func.func private @f() attributes {a = #lowbit.layout<vnni4, tile_m = 32, interleave = 3>}

// -----

// expected-error@+1 {{layout interleave 4 does not divide tile_m = 0}}
func.func private @f() attributes {a = #lowbit.layout<vnni4, interleave = 4>}

// -----

//===----------------------------------------------------------------------===//
// Strategy configs
//===----------------------------------------------------------------------===//

// expected-error@+1 {{unknown attribute `mystery` in dialect `lowbit`}}
func.func private @f() attributes {a = #lowbit.mystery}

// -----

// expected-error@+1 {{struct is missing required parameter: tile_n}}
func.func private @f() attributes {a = #lowbit.upconvert<tile_m = 32, tile_k = 256>}

// -----

// expected-error@+1 {{upconvert tile_m must be positive, got 0}}
func.func private @f() attributes {a = #lowbit.upconvert<tile_m = 0, tile_k = 256, tile_n = 4>}

// -----

// expected-error@+1 {{upconvert tile_k must be positive, got -4}}
func.func private @f() attributes {a = #lowbit.upconvert<tile_m = 32, tile_k = -4, tile_n = 4>}

// -----

// expected-error@+1 {{upconvert tile_n must be positive, got 0}}
func.func private @f() attributes {a = #lowbit.upconvert<tile_m = 32, tile_k = 256, tile_n = 0>}

// -----

// expected-error@+1 {{upconvert unroll must be positive, got 0}}
func.func private @f() attributes {a = #lowbit.upconvert<tile_m = 32, tile_k = 256, tile_n = 4, unroll = 0>}

// -----

// expected-error@+1 {{upconvert tile_k must be a multiple of 4, got 30}}
func.func private @f() attributes {a = #lowbit.upconvert<tile_m = 32, tile_k = 30, tile_n = 4>}

// -----

// expected-error@+1 {{upconvert prefetch must be non-negative, got -1}}
func.func private @f() attributes {a = #lowbit.upconvert<tile_m = 32, tile_k = 256, tile_n = 4, prefetch = -1>}

// -----

// expected-error@+1 {{lut_elementwise bm must be positive, got 0}}
func.func private @f() attributes {a = #lowbit.lut_elementwise<bm = 0, bk = 96>}

// -----

// expected-error@+1 {{lut_elementwise bk must be positive, got 0}}
func.func private @f() attributes {a = #lowbit.lut_elementwise<bm = 256, bk = 0>}

// -----

// expected-error@+1 {{lut_elementwise sub_m must be positive, got -32}}
func.func private @f() attributes {a = #lowbit.lut_elementwise<bm = 256, bk = 96, sub_m = -32>}

// -----

// expected-error@+1 {{lut_elementwise bm = 100 is not a multiple of sub_m = 32}}
func.func private @f() attributes {a = #lowbit.lut_elementwise<bm = 100, bk = 96>}

// -----

// expected-error@+1 {{lut_bitserial bm must be positive, got 0}}
func.func private @f() attributes {a = #lowbit.lut_bitserial<bm = 0, kfactor = 16>}

// -----

// expected-error@+1 {{lut_bitserial bn must be positive, got 0}}
func.func private @f() attributes {a = #lowbit.lut_bitserial<bm = 512, bn = 0, kfactor = 16>}

// -----

// expected-error@+1 {{lut_bitserial kfactor must be positive, got 0}}
func.func private @f() attributes {a = #lowbit.lut_bitserial<bm = 512, kfactor = 0>}

// -----

// expected-error@+1 {{lut_bitserial act_group must be a positive multiple of 4, got 30}}
func.func private @f() attributes {a = #lowbit.lut_bitserial<bm = 512, kfactor = 16, act_group = 30>}

// -----

// expected-error@+1 {{lut_bitserial act_group must be a positive multiple of 4, got 0}}
func.func private @f() attributes {a = #lowbit.lut_bitserial<bm = 512, kfactor = 16, act_group = 0>}

// -----

// expected-error@+1 {{lut_bitserial table_bits must be 16 (lossless) or 8 (int8 tables), got 4}}
func.func private @f() attributes {a = #lowbit.lut_bitserial<bm = 512, kfactor = 16, table_bits = 4>}

// -----

// T-MAC's fast aggregation was removed: it was never faster on x86
// (docs/perf/lut-bitserial.md) and missed the 1e-2 of lossy modes.
// expected-error@+1 {{duplicate or unknown struct parameter name: fast_aggregation}}
func.func private @f() attributes {a = #lowbit.lut_bitserial<bm = 512, kfactor = 16, table_bits = 8, fast_aggregation = true>}

// -----

//===----------------------------------------------------------------------===//
// lowbit.mpgemm: operand and attribute types (ODS)
//===----------------------------------------------------------------------===//

func.func @x_rank(%x: tensor<4x256x1xf32>, %w: tensor<64x64xi8>, %s: tensor<1xf32>) -> tensor<4x64xf32> {
  // expected-error@+1 {{'lowbit.mpgemm' op operand #0 must be 2D tensor of 32-bit float values, but got 'tensor<4x256x1xf32>'}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<i2s>,
         config = #lowbit.reference}
       : (tensor<4x256x1xf32>, tensor<64x64xi8>, tensor<1xf32>) -> tensor<4x64xf32>
  return %y : tensor<4x64xf32>
}

// -----

func.func @packed_element_type(%x: tensor<?x256xf32>, %w: tensor<64x64xf32>, %s: tensor<1xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{'lowbit.mpgemm' op operand #1 must be ranked tensor of 8-bit signless integer or 8-bit unsigned integer values, but got 'tensor<64x64xf32>'}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<i2s>,
         config = #lowbit.reference}
       : (tensor<?x256xf32>, tensor<64x64xf32>, tensor<1xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @config_not_a_strategy(%x: tensor<?x256xf32>, %w: tensor<64x64xi8>, %s: tensor<1xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{'lowbit.mpgemm' op attribute 'config' failed to satisfy constraint: StrategyConfigAttrInterface instance}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<i2s>,
         config = #lowbit.layout<i2s>}
       : (tensor<?x256xf32>, tensor<64x64xi8>, tensor<1xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

//===----------------------------------------------------------------------===//
// lowbit.mpgemm: shapes
//===----------------------------------------------------------------------===//

func.func @dynamic_k(%x: tensor<?x?xf32>, %w: tensor<64x64xi8>, %s: tensor<1xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{activation K dimension must be static}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<i2s>,
         config = #lowbit.reference}
       : (tensor<?x?xf32>, tensor<64x64xi8>, tensor<1xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @zero_k(%x: tensor<?x0xf32>, %w: tensor<64x0xi8>, %s: tensor<1xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{K must be positive, got K = 0}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<i2s>,
         config = #lowbit.reference}
       : (tensor<?x0xf32>, tensor<64x0xi8>, tensor<1xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @dynamic_m(%x: tensor<?x256xf32>, %w: tensor<64x64xi8>, %s: tensor<1xf32>) -> tensor<?x?xf32> {
  // expected-error@+1 {{result M dimension must be static}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<i2s>,
         config = #lowbit.reference}
       : (tensor<?x256xf32>, tensor<64x64xi8>, tensor<1xf32>) -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}

// -----

// The any-shape form (M and K dynamic): packed weights and scales take ?
// for every size that depends on M or K, and only for those.
func.func @any_shape_packed(%x: tensor<?x?xf32>, %w: tensor<?x64xi8>, %s: tensor<1xf32>) -> tensor<?x?xf32> {
  // expected-error@+1 {{with dynamic M and K needs packed weights of shape ?x?, got 'tensor<?x64xi8>'}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<i2s>}
       : (tensor<?x?xf32>, tensor<?x64xi8>, tensor<1xf32>) -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}

// -----

func.func @any_shape_vnni4(%x: tensor<?x?xf32>, %w: tensor<?x?x32xi8>, %s: tensor<1xf32>) -> tensor<?x?xf32> {
  // expected-error@+1 {{with dynamic M and K needs packed weights of shape ?x?x64, got 'tensor<?x?x32xi8>'}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<vnni4, tile_m = 16, tile_k = 16>}
       : (tensor<?x?xf32>, tensor<?x?x32xi8>, tensor<1xf32>) -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}

// -----

func.func @any_shape_scales(%x: tensor<?x?xf32>, %w: tensor<?x?xi8>, %s: tensor<?x4x2xf16>) -> tensor<?x?xf32> {
  // expected-error@+1 {{with dynamic M and K needs a scales operand of type 'tensor<?x?x2xf16>', got 'tensor<?x4x2xf16>'}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = unsigned, group = 64, scale = per_group>,
         layout = #lowbit.layout<canonical>}
       : (tensor<?x?xf32>, tensor<?x?xi8>, tensor<?x4x2xf16>) -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}

// -----

func.func @n_mismatch(%x: tensor<4x256xf32>, %w: tensor<64x64xi8>, %s: tensor<1xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{result N dimension (?) does not match activation N dimension (4)}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<i2s>,
         config = #lowbit.reference}
       : (tensor<4x256xf32>, tensor<64x64xi8>, tensor<1xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @n_mismatch_static(%x: tensor<4x256xf32>, %w: tensor<64x64xi8>, %s: tensor<1xf32>) -> tensor<2x64xf32> {
  // expected-error@+1 {{result N dimension (2) does not match activation N dimension (4)}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<i2s>,
         config = #lowbit.reference}
       : (tensor<4x256xf32>, tensor<64x64xi8>, tensor<1xf32>) -> tensor<2x64xf32>
  return %y : tensor<2x64xf32>
}

// -----

//===----------------------------------------------------------------------===//
// lowbit.mpgemm: weight encoding and layout
//===----------------------------------------------------------------------===//

func.func @tl2_bits(%x: tensor<?x256xf32>, %w: tensor<64x64xi8>, %s: tensor<64x8x2xf16>) -> tensor<?x64xf32> {
  // expected-error@+1 {{tl2 layout requires 2-bit ternary weights, got bits = 3}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 3, encoding = unsigned, group = 32, scale = per_group>,
         layout = #lowbit.layout<tl2>,
         config = #lowbit.reference}
       : (tensor<?x256xf32>, tensor<64x64xi8>, tensor<64x8x2xf16>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @i2s_binary(%x: tensor<?x256xf32>, %w: tensor<64x64xi8>, %s: tensor<64x2xf16>) -> tensor<?x64xf32> {
  // expected-error@+1 {{i2s layout requires 2-bit ternary weights, got bits = 1}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 1, encoding = binary, group = 128, scale = per_group>,
         layout = #lowbit.layout<i2s>,
         config = #lowbit.reference}
       : (tensor<?x256xf32>, tensor<64x64xi8>, tensor<64x2xf16>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @tl1_unsigned(%x: tensor<?x256xf32>, %w: tensor<64x64xi8>, %s: tensor<64x4x2xf16>) -> tensor<?x64xf32> {
  // expected-error@+1 {{tl1 layout requires 2-bit ternary weights, got unsigned encoding}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = unsigned, group = 64, scale = per_group>,
         layout = #lowbit.layout<tl1>,
         config = #lowbit.reference}
       : (tensor<?x256xf32>, tensor<64x64xi8>, tensor<64x4x2xf16>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @gguf_unsigned(%x: tensor<?x256xf32>, %w: tensor<64x144xi8>, %s: tensor<64x8x2xf16>) -> tensor<?x64xf32> {
  // expected-error@+1 {{gguf layout requires ggml block weights (gguf_q4_0, offset, min or codebook), got unsigned encoding}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 4, encoding = unsigned, group = 32, scale = per_group>,
         layout = #lowbit.layout<gguf>,
         config = #lowbit.reference}
       : (tensor<?x256xf32>, tensor<64x144xi8>, tensor<64x8x2xf16>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @canonical_ternary(%x: tensor<?x256xf32>, %w: tensor<64x64xi8>, %s: tensor<1xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{canonical layout requires binary or unsigned weights, got ternary encoding}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<canonical>,
         config = #lowbit.reference}
       : (tensor<?x256xf32>, tensor<64x64xi8>, tensor<1xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @bitplanes_q4_0(%x: tensor<?x256xf32>, %w: tensor<4x64x32xi8>) -> tensor<?x64xf32> {
  // expected-error@+1 {{bitplanes layout does not support gguf_q4_0 weights}}
  %y = lowbit.mpgemm %x, %w {
         weight = #lowbit.weight<bits = 4, encoding = gguf_q4_0, group = 32, scale = per_block>,
         layout = #lowbit.layout<bitplanes>,
         config = #lowbit.reference}
       : (tensor<?x256xf32>, tensor<4x64x32xi8>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @ternary_huge_k(%x: tensor<?x16777216xf32>, %w: tensor<1x4194304xi8>, %s: tensor<1xf32>) -> tensor<?x1xf32> {
  // expected-error@+1 {{ternary weights require K <= 16777215 so that the int32 accumulation cannot overflow, got K = 16777216}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<i2s>,
         config = #lowbit.reference}
       : (tensor<?x16777216xf32>, tensor<1x4194304xi8>, tensor<1xf32>) -> tensor<?x1xf32>
  return %y : tensor<?x1xf32>
}

// -----

func.func @q4_0_k(%x: tensor<?x100xf32>, %w: tensor<64x54xi8>) -> tensor<?x64xf32> {
  // expected-error@+1 {{gguf_q4_0 weights require K to be a multiple of 32, got K = 100}}
  %y = lowbit.mpgemm %x, %w {
         weight = #lowbit.weight<bits = 4, encoding = gguf_q4_0, group = 32, scale = per_block>,
         layout = #lowbit.layout<gguf>,
         config = #lowbit.reference}
       : (tensor<?x100xf32>, tensor<64x54xi8>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @group_k(%x: tensor<?x100xf32>, %w: tensor<64x25xi8>, %s: tensor<64x1x2xf16>) -> tensor<?x64xf32> {
  // expected-error@+1 {{group size 64 does not divide K = 100}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = unsigned, group = 64, scale = per_group>,
         layout = #lowbit.layout<canonical>,
         config = #lowbit.reference}
       : (tensor<?x100xf32>, tensor<64x25xi8>, tensor<64x1x2xf16>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @tl1_odd_k(%x: tensor<?x255xf32>, %w: tensor<64x64xi8>, %s: tensor<1xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{tl1 layout requires an even K, got K = 255}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<tl1>,
         config = #lowbit.reference}
       : (tensor<?x255xf32>, tensor<64x64xi8>, tensor<1xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @tl2_odd_k(%x: tensor<?x255xf32>, %w: tensor<64x54xi8>, %s: tensor<1xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{tl2 layout requires an even K, got K = 255}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<tl2>,
         config = #lowbit.reference}
       : (tensor<?x255xf32>, tensor<64x54xi8>, tensor<1xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

//===----------------------------------------------------------------------===//
// lowbit.mpgemm: packed weights
//===----------------------------------------------------------------------===//

func.func @packed_dynamic(%x: tensor<?x256xf32>, %w: tensor<?x64xi8>, %s: tensor<1xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{packed weights must have a static shape, got 'tensor<?x64xi8>'}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<i2s>,
         config = #lowbit.reference}
       : (tensor<?x256xf32>, tensor<?x64xi8>, tensor<1xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @packed_rank(%x: tensor<?x256xf32>, %w: tensor<4096xi8>, %s: tensor<1xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{packed weights for i2s layout must be a 2-D tensor<M x R x i8>, got rank 1}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<i2s>,
         config = #lowbit.reference}
       : (tensor<?x256xf32>, tensor<4096xi8>, tensor<1xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @packed_rows(%x: tensor<?x256xf32>, %w: tensor<32x64xi8>, %s: tensor<1xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{packed weights have 32 rows but the result has M = 64}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<i2s>,
         config = #lowbit.reference}
       : (tensor<?x256xf32>, tensor<32x64xi8>, tensor<1xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @i2s_row_bytes(%x: tensor<?x256xf32>, %w: tensor<64x60xi8>, %s: tensor<1xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{i2s layout needs 64 bytes per row for K = 256, got 60}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<i2s>,
         config = #lowbit.reference}
       : (tensor<?x256xf32>, tensor<64x60xi8>, tensor<1xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @tl1_row_bytes(%x: tensor<?x256xf32>, %w: tensor<64x54xi8>, %s: tensor<1xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{tl1 layout needs 64 bytes per row for K = 256, got 54}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<tl1>,
         config = #lowbit.reference}
       : (tensor<?x256xf32>, tensor<64x54xi8>, tensor<1xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

// K3 = 252 (84 triples), remainder 4: 42 + 11 + 1 bytes.
func.func @tl2_row_bytes(%x: tensor<?x256xf32>, %w: tensor<64x64xi8>, %s: tensor<1xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{tl2 layout needs 54 bytes per row for K = 256, got 64}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<tl2>,
         config = #lowbit.reference}
       : (tensor<?x256xf32>, tensor<64x64xi8>, tensor<1xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @canonical_row_bytes(%x: tensor<?x256xf32>, %w: tensor<64x128xi8>, %s: tensor<64x8x2xf16>) -> tensor<?x64xf32> {
  // expected-error@+1 {{canonical layout needs 96 bytes per row for K = 256, got 128}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 3, encoding = unsigned, group = 32, scale = per_group>,
         layout = #lowbit.layout<canonical>,
         config = #lowbit.reference}
       : (tensor<?x256xf32>, tensor<64x128xi8>, tensor<64x8x2xf16>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @gguf_row_bytes(%x: tensor<?x256xf32>, %w: tensor<64x128xi8>) -> tensor<?x64xf32> {
  // expected-error@+1 {{gguf layout needs 144 bytes per row for K = 256, got 128}}
  %y = lowbit.mpgemm %x, %w {
         weight = #lowbit.weight<bits = 4, encoding = gguf_q4_0, group = 32, scale = per_block>,
         layout = #lowbit.layout<gguf>,
         config = #lowbit.reference}
       : (tensor<?x256xf32>, tensor<64x128xi8>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @vnni4_dynamic(%x: tensor<?x256xf32>, %w: tensor<2x?x32xi8>, %s: tensor<64x8x2xf16>) -> tensor<?x64xf32> {
  // expected-error@+1 {{packed weights must have a static shape, got 'tensor<2x?x32xi8>'}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 4, encoding = unsigned, group = 32, scale = per_group>,
         layout = #lowbit.layout<vnni4>,
         config = #lowbit.reference}
       : (tensor<?x256xf32>, tensor<2x?x32xi8>, tensor<64x8x2xf16>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

//===----------------------------------------------------------------------===//
// lowbit.mpgemm: scales
//===----------------------------------------------------------------------===//

func.func @ternary_missing_scales(%x: tensor<?x256xf32>, %w: tensor<64x64xi8>) -> tensor<?x64xf32> {
  // expected-error@+1 {{ternary weights need a scales operand of type 'tensor<1xf32>'}}
  %y = lowbit.mpgemm %x, %w {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<i2s>,
         config = #lowbit.reference}
       : (tensor<?x256xf32>, tensor<64x64xi8>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @ternary_wrong_scales(%x: tensor<?x256xf32>, %w: tensor<64x64xi8>, %s: tensor<64xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{scales operand must be 'tensor<1xf32>' for ternary weights, got 'tensor<64xf32>'}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<i2s>,
         config = #lowbit.reference}
       : (tensor<?x256xf32>, tensor<64x64xi8>, tensor<64xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @binary_missing_scales(%x: tensor<?x256xf32>, %w: tensor<64x32xi8>) -> tensor<?x64xf32> {
  // expected-error@+1 {{binary weights need a scales operand of type 'tensor<64x2xf16>'}}
  %y = lowbit.mpgemm %x, %w {
         weight = #lowbit.weight<bits = 1, encoding = binary, group = 128, scale = per_group>,
         layout = #lowbit.layout<canonical>,
         config = #lowbit.reference}
       : (tensor<?x256xf32>, tensor<64x32xi8>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @binary_wrong_scales(%x: tensor<?x256xf32>, %w: tensor<64x32xi8>, %s: tensor<64x2xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{scales operand must be 'tensor<64x2xf16>' for binary weights, got 'tensor<64x2xf32>'}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 1, encoding = binary, group = 128, scale = per_group>,
         layout = #lowbit.layout<canonical>,
         config = #lowbit.reference}
       : (tensor<?x256xf32>, tensor<64x32xi8>, tensor<64x2xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @unsigned_wrong_scales(%x: tensor<?x256xf32>, %w: tensor<64x64xi8>, %s: tensor<64x4xf16>) -> tensor<?x64xf32> {
  // expected-error@+1 {{scales operand must be 'tensor<64x4x2xf16>' for unsigned weights, got 'tensor<64x4xf16>'}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = unsigned, group = 64, scale = per_group>,
         layout = #lowbit.layout<canonical>,
         config = #lowbit.reference}
       : (tensor<?x256xf32>, tensor<64x64xi8>, tensor<64x4xf16>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @q4_0_extra_scales(%x: tensor<?x256xf32>, %w: tensor<64x144xi8>, %s: tensor<1xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{gguf_q4_0 weights carry their scales in the packed blocks; unexpected scales operand of type 'tensor<1xf32>'}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 4, encoding = gguf_q4_0, group = 32, scale = per_block>,
         layout = #lowbit.layout<gguf>,
         config = #lowbit.reference}
       : (tensor<?x256xf32>, tensor<64x144xi8>, tensor<1xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

//===----------------------------------------------------------------------===//
// lowbit.mpgemm: strategy support (StrategyConfigAttrInterface::verifyFor)
//===----------------------------------------------------------------------===//

func.func @upconvert_3bit(%x: tensor<?x256xf32>, %w: tensor<64x96xi8>, %s: tensor<64x8x2xf16>) -> tensor<?x64xf32> {
  // expected-error@+1 {{upconvert strategy does not support 3-bit unsigned weights}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 3, encoding = unsigned, group = 32, scale = per_group>,
         layout = #lowbit.layout<canonical>,
         config = #lowbit.upconvert<tile_m = 32, tile_k = 256, tile_n = 4>}
       : (tensor<?x256xf32>, tensor<64x96xi8>, tensor<64x8x2xf16>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @upconvert_tl1(%x: tensor<?x256xf32>, %w: tensor<64x64xi8>, %s: tensor<1xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{upconvert strategy does not support tl1 layout}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<tl1>,
         config = #lowbit.upconvert<tile_m = 32, tile_k = 256, tile_n = 4>}
       : (tensor<?x256xf32>, tensor<64x64xi8>, tensor<1xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @upconvert_bitplanes(%x: tensor<?x256xf32>, %w: tensor<2x64x32xi8>, %s: tensor<1xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{upconvert strategy does not support bitplanes layout}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<bitplanes>,
         config = #lowbit.upconvert<tile_m = 32, tile_k = 256, tile_n = 4>}
       : (tensor<?x256xf32>, tensor<2x64x32xi8>, tensor<1xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @upconvert_q4_0_tile_k(%x: tensor<?x256xf32>, %w: tensor<64x144xi8>) -> tensor<?x64xf32> {
  // expected-error@+1 {{upconvert tile_k must be a multiple of 32 for gguf_q4_0 weights, got 16}}
  %y = lowbit.mpgemm %x, %w {
         weight = #lowbit.weight<bits = 4, encoding = gguf_q4_0, group = 32, scale = per_block>,
         layout = #lowbit.layout<gguf>,
         config = #lowbit.upconvert<tile_m = 32, tile_k = 16, tile_n = 4>}
       : (tensor<?x256xf32>, tensor<64x144xi8>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @upconvert_group(%x: tensor<?x256xf32>, %w: tensor<64x128xi8>, %s: tensor<64x8x2xf16>) -> tensor<?x64xf32> {
  // expected-error@+1 {{upconvert tile_k = 48 and weight group size 32 must divide one another}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 4, encoding = unsigned, group = 32, scale = per_group>,
         layout = #lowbit.layout<canonical>,
         config = #lowbit.upconvert<tile_m = 32, tile_k = 48, tile_n = 4>}
       : (tensor<?x256xf32>, tensor<64x128xi8>, tensor<64x8x2xf16>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @upconvert_layout_tile_m(%x: tensor<?x256xf32>, %w: tensor<2x32x128xi8>, %s: tensor<64x8x2xf16>) -> tensor<?x64xf32> {
  // expected-error@+1 {{upconvert tile_m = 16 is not a multiple of layout tile_m = 32}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 4, encoding = unsigned, group = 32, scale = per_group>,
         layout = #lowbit.layout<vnni4, tile_m = 32, tile_k = 8>,
         config = #lowbit.upconvert<tile_m = 16, tile_k = 128, tile_n = 4>}
       : (tensor<?x256xf32>, tensor<2x32x128xi8>, tensor<64x8x2xf16>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @upconvert_layout_tile_k(%x: tensor<?x256xf32>, %w: tensor<2x32x128xi8>, %s: tensor<64x8x2xf16>) -> tensor<?x64xf32> {
  // expected-error@+1 {{upconvert tile_k = 4 is not a multiple of layout tile_k = 8}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 4, encoding = unsigned, group = 32, scale = per_group>,
         layout = #lowbit.layout<vnni4, tile_m = 32, tile_k = 8>,
         config = #lowbit.upconvert<tile_m = 32, tile_k = 4, tile_n = 4>}
       : (tensor<?x256xf32>, tensor<2x32x128xi8>, tensor<64x8x2xf16>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @upconvert_tile_m_16(%x: tensor<?x256xf32>, %w: tensor<64x64xi8>, %s: tensor<1xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{upconvert tile_m must be a multiple of 16 (rows per packed tile), got 24}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<i2s>,
         config = #lowbit.upconvert<tile_m = 24, tile_k = 64, tile_n = 1>}
       : (tensor<?x256xf32>, tensor<64x64xi8>, tensor<1xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @upconvert_tile_k_32(%x: tensor<?x256xf32>, %w: tensor<64x64xi8>, %s: tensor<1xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{upconvert tile_k must be a multiple of 32 (the activation block), got 48}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<i2s>,
         config = #lowbit.upconvert<tile_m = 16, tile_k = 48, tile_n = 1>}
       : (tensor<?x256xf32>, tensor<64x64xi8>, tensor<1xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

//===----------------------------------------------------------------------===//
// lowbit.mpgemm: the vnni4 layout of kernel_abi.h
//===----------------------------------------------------------------------===//

func.func @vnni4_tile_k(%x: tensor<?x256xf32>, %w: tensor<4x16x64xi8>, %s: tensor<1xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{vnni4 layout requires tile_k = 16 for 2-bit weights (32 / bits, or 32 for codes in two planes), got 32}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<vnni4, tile_m = 16, tile_k = 32>}
       : (tensor<?x256xf32>, tensor<4x16x64xi8>, tensor<1xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @vnni4_tile_m(%x: tensor<?x256xf32>, %w: tensor<4x16x64xi8>, %s: tensor<1xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{tiled vnni4 layout requires a positive tile_m, got 0}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<vnni4, tile_k = 16>}
       : (tensor<?x256xf32>, tensor<4x16x64xi8>, tensor<1xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @vnni4_interleave(%x: tensor<?x256xf32>, %w: tensor<4x16x64xi8>, %s: tensor<1xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{vnni4 layout keeps the 4 k of a row together; interleave must be 1, got 4}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<vnni4, tile_m = 16, tile_k = 16, interleave = 4>}
       : (tensor<?x256xf32>, tensor<4x16x64xi8>, tensor<1xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @vnni4_3bit(%x: tensor<?x256xf32>, %w: tensor<4x24x64xi8>, %s: tensor<64x8x2xf16>) -> tensor<?x64xf32> {
  // expected-error@+1 {{vnni4 layout requires tile_k = 32 for 3-bit weights (32 / bits, or 32 for codes in two planes), got 8}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 3, encoding = unsigned, group = 32, scale = per_group>,
         layout = #lowbit.layout<vnni4, tile_m = 16, tile_k = 8>}
       : (tensor<?x256xf32>, tensor<4x24x64xi8>, tensor<64x8x2xf16>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @vnni4_shape(%x: tensor<?x100xf32>, %w: tensor<3x7x64xi8>, %s: tensor<1xf32>) -> tensor<?x33xf32> {
  // expected-error@+1 {{vnni4 layout with tile_m = 16 needs packed weights of shape 3x8x64 for M = 33, K = 100, bits = 2, got 'tensor<3x7x64xi8>'}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<vnni4, tile_m = 16, tile_k = 16>}
       : (tensor<?x100xf32>, tensor<3x7x64xi8>, tensor<1xf32>) -> tensor<?x33xf32>
  return %y : tensor<?x33xf32>
}

// -----

func.func @lut_elementwise_i2s(%x: tensor<?x256xf32>, %w: tensor<64x64xi8>, %s: tensor<1xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{lut_elementwise strategy requires tl1 or tl2 layout, got i2s}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<i2s>,
         config = #lowbit.lut_elementwise<bm = 256, bk = 96>}
       : (tensor<?x256xf32>, tensor<64x64xi8>, tensor<1xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @lut_elementwise_tl1_bk(%x: tensor<?x256xf32>, %w: tensor<64x64xi8>, %s: tensor<1xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{lut_elementwise bk must be a multiple of 2 for tl1 layout, got 63}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<tl1>,
         config = #lowbit.lut_elementwise<bm = 256, bk = 63>}
       : (tensor<?x256xf32>, tensor<64x64xi8>, tensor<1xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @lut_elementwise_tl2_bk(%x: tensor<?x256xf32>, %w: tensor<64x54xi8>, %s: tensor<1xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{lut_elementwise bk must be a multiple of 3 for tl2 layout, got 64}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<tl2>,
         config = #lowbit.lut_elementwise<bm = 256, bk = 64>}
       : (tensor<?x256xf32>, tensor<64x54xi8>, tensor<1xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @lut_elementwise_layout_tile_m(%x: tensor<?x256xf32>, %w: tensor<64x54xi8>, %s: tensor<1xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{lut_elementwise bm = 256 does not match layout tile_m = 128}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<tl2, tile_m = 128, tile_k = 96>,
         config = #lowbit.lut_elementwise<bm = 256, bk = 96>}
       : (tensor<?x256xf32>, tensor<64x54xi8>, tensor<1xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @lut_elementwise_layout_tile_k(%x: tensor<?x256xf32>, %w: tensor<64x54xi8>, %s: tensor<1xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{lut_elementwise bk = 192 does not match layout tile_k = 96}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<tl2, tile_m = 256, tile_k = 96>,
         config = #lowbit.lut_elementwise<bm = 256, bk = 192>}
       : (tensor<?x256xf32>, tensor<64x54xi8>, tensor<1xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @lut_bitserial_q4_0(%x: tensor<?x256xf32>, %w: tensor<64x144xi8>) -> tensor<?x64xf32> {
  // expected-error@+1 {{lut_bitserial strategy does not support gguf_q4_0 weights}}
  %y = lowbit.mpgemm %x, %w {
         weight = #lowbit.weight<bits = 4, encoding = gguf_q4_0, group = 32, scale = per_block>,
         layout = #lowbit.layout<gguf>,
         config = #lowbit.lut_bitserial<bm = 512, kfactor = 16>}
       : (tensor<?x256xf32>, tensor<64x144xi8>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @lut_bitserial_tl2(%x: tensor<?x256xf32>, %w: tensor<64x54xi8>, %s: tensor<1xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{lut_bitserial strategy does not support tl2 layout}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<tl2>,
         config = #lowbit.lut_bitserial<bm = 512, kfactor = 16>}
       : (tensor<?x256xf32>, tensor<64x54xi8>, tensor<1xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @lut_bitserial_vnni4(%x: tensor<?x256xf32>, %w: tensor<64x64xi8>, %s: tensor<1xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{lut_bitserial strategy does not support vnni4 layout}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<vnni4>,
         config = #lowbit.lut_bitserial<bm = 512, kfactor = 16>}
       : (tensor<?x256xf32>, tensor<64x64xi8>, tensor<1xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @lut_bitserial_act_group(%x: tensor<?x256xf32>, %w: tensor<64x128xi8>, %s: tensor<64x8x2xf16>) -> tensor<?x64xf32> {
  // expected-error@+1 {{lut_bitserial act_group = 64 does not divide weight group size 32}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 4, encoding = unsigned, group = 32, scale = per_group>,
         layout = #lowbit.layout<canonical>,
         config = #lowbit.lut_bitserial<bm = 512, kfactor = 16, act_group = 64>}
       : (tensor<?x256xf32>, tensor<64x128xi8>, tensor<64x8x2xf16>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @lut_bitserial_layout_tile_m(%x: tensor<?x256xf32>, %w: tensor<2x64x32xi8>, %s: tensor<64x4x2xf16>) -> tensor<?x64xf32> {
  // expected-error@+1 {{lut_bitserial bm = 512 does not match layout tile_m = 256}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = unsigned, group = 64, scale = per_group>,
         layout = #lowbit.layout<bitplanes, tile_m = 256>,
         config = #lowbit.lut_bitserial<bm = 512, kfactor = 16>}
       : (tensor<?x256xf32>, tensor<2x64x32xi8>, tensor<64x4x2xf16>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

// expected-error@+1 {{lut_elementwise bn must be positive, got 0}}
func.func private @f() attributes {a = #lowbit.lut_elementwise<bm = 16, bk = 96, sub_m = 16, bn = 0>}

// -----

func.func @lut_elementwise_interleaved_tiles(%x: tensor<?x200xf32>, %w: tensor<3x768xi8>, %s: tensor<1xf32>) -> tensor<?x33xf32> {
  // expected-error@+1 {{interleaved tl2 layout needs tile_m = 16 and tile_k = 96 (lut_abi.h), got tile_m = 32, tile_k = 96}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<tl2, tile_m = 32, tile_k = 96, interleave = 16>,
         config = #lowbit.lut_elementwise<bm = 32, bk = 96, sub_m = 16>}
       : (tensor<?x200xf32>, tensor<3x768xi8>, tensor<1xf32>) -> tensor<?x33xf32>
  return %y : tensor<?x33xf32>
}

// -----

func.func @lut_elementwise_sub_m(%x: tensor<?x200xf32>, %w: tensor<3x768xi8>, %s: tensor<1xf32>) -> tensor<?x33xf32> {
  // expected-error@+1 {{lut_elementwise sub_m must be 16 (rows per lookup lane) for the interleaved layout, got 32}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<tl2, tile_m = 16, tile_k = 96, interleave = 16>,
         config = #lowbit.lut_elementwise<bm = 32, bk = 96>}
       : (tensor<?x200xf32>, tensor<3x768xi8>, tensor<1xf32>) -> tensor<?x33xf32>
  return %y : tensor<?x33xf32>
}

// -----

func.func @lut_elementwise_int16_bound(%x: tensor<?x200xf32>, %w: tensor<3x768xi8>, %s: tensor<1xf32>) -> tensor<?x33xf32> {
  // expected-error@+1 {{lut_elementwise bk = 1056 must be a multiple of 96 and at most 960 for tl2 (the weights of one unrolled loop iteration)}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<tl2, tile_m = 16, tile_k = 96, interleave = 16>,
         config = #lowbit.lut_elementwise<bm = 16, bk = 1056, sub_m = 16>}
       : (tensor<?x200xf32>, tensor<3x768xi8>, tensor<1xf32>) -> tensor<?x33xf32>
  return %y : tensor<?x33xf32>
}

// -----

func.func @lut_elementwise_interleaved_shape(%x: tensor<?x200xf32>, %w: tensor<3x700xi8>, %s: tensor<1xf32>) -> tensor<?x33xf32> {
  // expected-error@+1 {{interleaved tl2 layout needs packed weights of shape 3x768 for M = 33, K = 200, got 'tensor<3x700xi8>'}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<tl2, tile_m = 16, tile_k = 96, interleave = 16>,
         config = #lowbit.lut_elementwise<bm = 16, bk = 96, sub_m = 16>}
       : (tensor<?x200xf32>, tensor<3x700xi8>, tensor<1xf32>) -> tensor<?x33xf32>
  return %y : tensor<?x33xf32>
}

// -----

// expected-error@+1 {{gpu sg_tile_n must be positive, got 0}}
func.func private @f() attributes {a = #lowbit.gpu<wg_tile_m = 64, wg_tile_n = 1, sg_tile_m = 4, sg_tile_n = 0, subgroup_size = 16>}

// -----

// expected-error@+1 {{gpu subgroup_size must be a power of two up to 128, got 12}}
func.func private @f() attributes {a = #lowbit.gpu<wg_tile_m = 64, wg_tile_n = 1, sg_tile_m = 4, sg_tile_n = 1, subgroup_size = 12>}

// -----

// expected-error@+1 {{gpu wg_tile_m x wg_tile_n = 64 x 2 is not a multiple of sg_tile_m x sg_tile_n = 6 x 1}}
func.func private @f() attributes {a = #lowbit.gpu<wg_tile_m = 64, wg_tile_n = 2, sg_tile_m = 6, sg_tile_n = 1, subgroup_size = 16>}

// -----

// expected-error@+1 {{gpu sg_tile_m * sg_tile_n must be at most 64 accumulators, got 128}}
func.func private @f() attributes {a = #lowbit.gpu<wg_tile_m = 64, wg_tile_n = 2, sg_tile_m = 64, sg_tile_n = 2, subgroup_size = 16>}

// -----

// expected-error@+1 {{gpu workgroup has 2048 invocations, more than 1024}}
func.func private @f() attributes {a = #lowbit.gpu<wg_tile_m = 512, wg_tile_n = 1, sg_tile_m = 4, sg_tile_n = 1, subgroup_size = 16>}

// -----

// Cooperative matrices multiply i2s weights only; w1gG has the
// up-convert-and-dot kernel.
func.func @gpu_matrix_on_w1(%x: tensor<?x64xf32>, %w: tensor<4x8xi8>, %s: tensor<4x1xf16>) -> tensor<?x4xf32> {
  // expected-error@+1 {{gpu matrix = true supports ternary (i2s) weights only}}
  %y = lowbit.mpgemm %x, %w, %s {weight = #lowbit.weight<bits = 1, encoding = binary, group = 64, scale = per_group>, layout = #lowbit.layout<canonical>,
                                 config = #lowbit.gpu<wg_tile_m = 32, wg_tile_n = 16, sg_tile_m = 8, sg_tile_n = 16, matrix = true, subgroup_size = 16>}
       : (tensor<?x64xf32>, tensor<4x8xi8>, tensor<4x1xf16>) -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// -----

// bitserial_abi.h: ceil(33/16) = 3 tiles of ceil(100/32) = 4 blocks x 2
// planes x 64 bytes.
func.func @lut_bitserial_bitplanes_shape(%x: tensor<?x100xf32>, %w: tensor<3x500xi8>, %s: tensor<1xf32>) -> tensor<?x33xf32> {
  // expected-error@+1 {{bit-plane layout of bitserial_abi.h needs packed weights of shape 3x512 for M = 33, K = 100, bits = 2, got 'tensor<3x500xi8>'}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<bitplanes, tile_m = 16, tile_k = 32, interleave = 16>,
         config = #lowbit.lut_bitserial<bm = 16, kfactor = 64>}
       : (tensor<?x100xf32>, tensor<3x500xi8>, tensor<1xf32>) -> tensor<?x33xf32>
  return %y : tensor<?x33xf32>
}

// -----

func.func @gpu_on_tl1(%x: tensor<?x8xf32>, %w: tensor<4x2xi8>, %s: tensor<1xf32>) -> tensor<?x4xf32> {
  // expected-error@+1 {{gpu strategy does not support tl1 layout}}
  %y = lowbit.mpgemm %x, %w, %s {weight = #lowbit.weight<bits = 2, encoding = ternary>, layout = #lowbit.layout<tl1>,
                                 config = #lowbit.gpu<wg_tile_m = 16, wg_tile_n = 1, sg_tile_m = 4, sg_tile_n = 1, subgroup_size = 16>}
       : (tensor<?x8xf32>, tensor<4x2xi8>, tensor<1xf32>) -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// -----

func.func @lut_bitserial_bm_tiles(%x: tensor<?x100xf32>, %w: tensor<3x512xi8>, %s: tensor<1xf32>) -> tensor<?x33xf32> {
  // expected-error@+1 {{lut_bitserial bm = 24 must be a multiple of the layout's 16-row tiles}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<bitplanes, tile_m = 16, tile_k = 32, interleave = 16>,
         config = #lowbit.lut_bitserial<bm = 24, kfactor = 64>}
       : (tensor<?x100xf32>, tensor<3x512xi8>, tensor<1xf32>) -> tensor<?x33xf32>
  return %y : tensor<?x33xf32>
}

// -----

// ggml's Q6_K rows are 210 bytes per super-block of 256.
func.func @q6_k_row_bytes(%x: tensor<?x512xf32>, %w: tensor<8x400xi8>) -> tensor<?x8xf32> {
  // expected-error@+1 {{gguf layout needs 420 bytes per row for K = 512, got 400}}
  %y = lowbit.mpgemm %x, %w {
         weight = #lowbit.weight<bits = 6, encoding = offset, group = 16, scale = per_block, code_offset = 32, super_block = 256, scale_bits = 8>,
         layout = #lowbit.layout<gguf>}
       : (tensor<?x512xf32>, tensor<8x400xi8>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

func.func @q4_k_k(%x: tensor<?x288xf32>, %w: tensor<8x144xi8>) -> tensor<?x8xf32> {
  // expected-error@+1 {{min weights require K to be a multiple of their block of 256, got K = 288}}
  %y = lowbit.mpgemm %x, %w {
         weight = #lowbit.weight<bits = 4, encoding = min, group = 32, scale = per_block, super_block = 256, scale_bits = 6>,
         layout = #lowbit.layout<gguf>}
       : (tensor<?x288xf32>, tensor<8x144xi8>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

func.func @q8_0_scales(%x: tensor<?x64xf32>, %w: tensor<8x68xi8>, %s: tensor<8x2xf16>) -> tensor<?x8xf32> {
  // expected-error@+1 {{offset weights carry their scales in the packed blocks; unexpected scales operand of type 'tensor<8x2xf16>'}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 8, encoding = offset, group = 32, scale = per_block, code_offset = 128>,
         layout = #lowbit.layout<gguf>}
       : (tensor<?x64xf32>, tensor<8x68xi8>, tensor<8x2xf16>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

func.func @q8_0_canonical(%x: tensor<?x64xf32>, %w: tensor<8x64xi8>) -> tensor<?x8xf32> {
  // expected-error@+1 {{canonical layout requires binary or unsigned weights, got offset encoding}}
  %y = lowbit.mpgemm %x, %w {
         weight = #lowbit.weight<bits = 8, encoding = offset, group = 32, scale = per_block, code_offset = 128>,
         layout = #lowbit.layout<canonical>}
       : (tensor<?x64xf32>, tensor<8x64xi8>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

func.func @q4_1_bitplanes(%x: tensor<?x64xf32>, %w: tensor<1x512xi8>) -> tensor<?x8xf32> {
  // expected-error@+1 {{bitplanes layout does not support min weights}}
  %y = lowbit.mpgemm %x, %w {
         weight = #lowbit.weight<bits = 4, encoding = min, group = 32, scale = per_block>,
         layout = #lowbit.layout<bitplanes, tile_m = 16, tile_k = 32, interleave = 16>}
       : (tensor<?x64xf32>, tensor<1x512xi8>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

func.func @vnni4_7bit(%x: tensor<?x64xf32>, %w: tensor<1x14x64xi8>) -> tensor<?x8xf32> {
  // expected-error@+1 {{vnni4 layout packs codes of 1 to 6 or 8 bits (whole codes, or two planes of 2 + 1, 4 + 1, 4 + 2 bits), got 7}}
  %y = lowbit.mpgemm %x, %w {
         weight = #lowbit.weight<bits = 7, encoding = offset, group = 32, scale = per_block, code_offset = 64>,
         layout = #lowbit.layout<vnni4, tile_m = 16, tile_k = 32>}
       : (tensor<?x64xf32>, tensor<1x14x64xi8>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

func.func @vnni4_5bit_tile_k(%x: tensor<?x64xf32>, %w: tensor<1x10x64xi8>) -> tensor<?x8xf32> {
  // expected-error@+1 {{vnni4 layout requires tile_k = 32 for 5-bit weights (32 / bits, or 32 for codes in two planes), got 8}}
  %y = lowbit.mpgemm %x, %w {
         weight = #lowbit.weight<bits = 5, encoding = offset, group = 32, scale = per_block, code_offset = 16>,
         layout = #lowbit.layout<vnni4, tile_m = 16, tile_k = 8>}
       : (tensor<?x64xf32>, tensor<1x10x64xi8>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

func.func @lut_bitserial_q8_0(%x: tensor<?x64xf32>, %w: tensor<8x68xi8>) -> tensor<?x8xf32> {
  // expected-error@+1 {{lut_bitserial strategy does not support offset weights}}
  %y = lowbit.mpgemm %x, %w {
         weight = #lowbit.weight<bits = 8, encoding = offset, group = 32, scale = per_block, code_offset = 128>,
         layout = #lowbit.layout<gguf>,
         config = #lowbit.lut_bitserial<bm = 16, kfactor = 64>}
       : (tensor<?x64xf32>, tensor<8x68xi8>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}


// -----

// expected-error@+1 {{gguf layout takes no parameters, or tile_m = 1, tile_k = 256 (ternary TQ2_0 or TQ1_0 rows), got tile_m = 2, tile_k = 256}}
func.func private @f() attributes {a = #lowbit.layout<gguf, tile_m = 2, tile_k = 256>}

// -----

// expected-error@+1 {{gguf layout block_bytes is 0 (TQ2_0's 66) or 54 (TQ1_0), got 66}}
func.func private @f() attributes {a = #lowbit.layout<gguf, tile_m = 1, tile_k = 256, block_bytes = 66>}

// -----

// expected-error@+1 {{layout block_bytes is for the tiled gguf layout only, got vnni4}}
func.func private @f() attributes {a = #lowbit.layout<vnni4, tile_m = 16, tile_k = 16, block_bytes = 54>}

// -----

func.func @ggml_rows_not_ternary(%x: tensor<?x256xf32>, %w: tensor<64x32xi8>, %s: tensor<64x2xf16>) -> tensor<?x64xf32> {
  // expected-error@+1 {{upconvert tile_m = 4 (below 16: the ggml rows layout) needs ternary weights and tile_k = 256}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 1, encoding = binary, group = 128, scale = per_group>,
         layout = #lowbit.layout<canonical>,
         config = #lowbit.upconvert<tile_m = 4, tile_k = 256, tile_n = 1>}
       : (tensor<?x256xf32>, tensor<64x32xi8>, tensor<64x2xf16>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @ggml_rows_k(%x: tensor<?x384xf32>, %w: tensor<64x96xi8>, %s: tensor<1xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{upconvert tile_m = 2 (the ggml rows layout) needs K to be a multiple of 256, got K = 384}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<i2s>,
         config = #lowbit.upconvert<tile_m = 2, tile_k = 256, tile_n = 1>}
       : (tensor<?x384xf32>, tensor<64x96xi8>, tensor<1xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @ggml_rows_bytes(%x: tensor<?x512xf32>, %w: tensor<5x128xi8>, %s: tensor<1xf32>) -> tensor<?x5xf32> {
  // expected-error@+1 {{gguf layout needs 132 bytes per row for K = 512, got 128}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<gguf, tile_m = 1, tile_k = 256>}
       : (tensor<?x512xf32>, tensor<5x128xi8>, tensor<1xf32>) -> tensor<?x5xf32>
  return %y : tensor<?x5xf32>
}

// -----

// TQ1_0 rows: 54 bytes per block of 256.
func.func @ggml_rows_tq1_bytes(%x: tensor<?x512xf32>, %w: tensor<5x132xi8>, %s: tensor<1xf32>) -> tensor<?x5xf32> {
  // expected-error@+1 {{gguf layout needs 108 bytes per row for K = 512, got 132}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<gguf, tile_m = 1, tile_k = 256, block_bytes = 54>}
       : (tensor<?x512xf32>, tensor<5x132xi8>, tensor<1xf32>) -> tensor<?x5xf32>
  return %y : tensor<?x5xf32>
}
