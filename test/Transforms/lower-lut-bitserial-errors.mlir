// RUN: lowbit-opt %s --split-input-file --lowbit-select-config=target=x86-avx512vnni --lowbit-lower-lut-bitserial --verify-diagnostics
// RUN: not lowbit-opt %S/lower-lut-bitserial.mlir --lowbit-select-config=target=generic --lowbit-lower-lut-bitserial 2>&1 | FileCheck %s --check-prefix=GENERIC
// The kernels of x86-avx2 read the lane order only (pack-layout writes it
// there): a row-order layout is the error above the other way round.
// RUN: not lowbit-opt %S/lower-lut-bitserial.mlir --lowbit-select-config=target=x86-avx2 --lowbit-lower-lut-bitserial 2>&1 | FileCheck %s --check-prefix=ROWS
// ROWS: error: 'lowbit.mpgemm' op has a bitplanes layout in lane_order rows, but the target's lut-bitserial kernels read lanes (bitserial_abi.h); run lowbit-pack-layout for this target

// GENERIC: error: 'lowbit.mpgemm' op target generic has no byte table lookup (vpermb/pshufb/tbl) on 4-byte registers; lowbit-lower-lut-bitserial needs one

func.func @not_packed(%x: tensor<?x128xf32>, %w: tensor<16x32xi8>, %s: tensor<1xf32>) -> tensor<?x16xf32> {
  // expected-error@+1 {{'lowbit.mpgemm' op needs the bit-plane layout of bitserial_abi.h (bitplanes, tile_m = 16, tile_k = 32, interleave = 16), got #lowbit.layout<i2s>; run lowbit-pack-layout first}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<i2s>,
         config = #lowbit.lut_bitserial<bm = 16, kfactor = 64>}
       : (tensor<?x128xf32>, tensor<16x32xi8>, tensor<1xf32>) -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// -----

func.func @act_group(%x: tensor<?x128xf32>, %w: tensor<1x512xi8>, %s: tensor<16x2x2xf16>) -> tensor<?x16xf32> {
  // expected-error@+1 {{'lowbit.mpgemm' op lut_bitserial act_group must be 32 (the activation block of kernel_abi.h that the lossless int16 tables follow), got 64}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = unsigned, group = 64, scale = per_group>,
         layout = #lowbit.layout<bitplanes, tile_m = 16, tile_k = 32, interleave = 16>,
         config = #lowbit.lut_bitserial<bm = 16, kfactor = 64, act_group = 64>}
       : (tensor<?x128xf32>, tensor<1x512xi8>, tensor<16x2x2xf16>) -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// -----

func.func @act_group_int8(%x: tensor<?x128xf32>, %w: tensor<1x512xi8>, %s: tensor<16x2x2xf16>) -> tensor<?x16xf32> {
  // expected-error@+1 {{'lowbit.mpgemm' op lut_bitserial act_group must be a multiple of 32 with table_bits = 8 (whole 32-k blocks share a table scale), got 16}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = unsigned, group = 64, scale = per_group>,
         layout = #lowbit.layout<bitplanes, tile_m = 16, tile_k = 32, interleave = 16>,
         config = #lowbit.lut_bitserial<bm = 16, kfactor = 64, act_group = 16, table_bits = 8>}
       : (tensor<?x128xf32>, tensor<1x512xi8>, tensor<16x2x2xf16>) -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// -----

func.func @kfactor_partial_block(%x: tensor<?x128xf32>, %w: tensor<1x512xi8>, %s: tensor<1xf32>) -> tensor<?x16xf32> {
  // expected-error@+1 {{'lowbit.mpgemm' op lut_bitserial kfactor (groups of 4 per loop iteration) must be a multiple of 8 (one 32-k block), got 12}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<bitplanes, tile_m = 16, tile_k = 32, interleave = 16>,
         config = #lowbit.lut_bitserial<bm = 16, kfactor = 12>}
       : (tensor<?x128xf32>, tensor<1x512xi8>, tensor<1xf32>) -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// -----

// The lane order is what the kernels of x86-avx2/avxvnni read; this module
// is lowered for x86-avx512vnni (vpermb, row order).
func.func @lanes_for_another_target(%x: tensor<?x128xf32>, %w: tensor<1x512xi8>, %s: tensor<1xf32>) -> tensor<?x16xf32> {
  // expected-error@+1 {{'lowbit.mpgemm' op has a bitplanes layout in lane_order lanes, but the target's lut-bitserial kernels read rows (bitserial_abi.h); run lowbit-pack-layout for this target}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<bitplanes, tile_m = 16, tile_k = 32, interleave = 16, lane_order = lanes>,
         config = #lowbit.lut_bitserial<bm = 16, kfactor = 16>}
       : (tensor<?x128xf32>, tensor<1x512xi8>, tensor<1xf32>) -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// -----

// K = 20480: 640 blocks of 256 bytes of tables per activation row.
func.func @tables_too_large(%x: tensor<?x20480xf32>, %w: tensor<1x81920xi8>, %s: tensor<1xf32>) -> tensor<?x16xf32> {
  // expected-error@+1 {{'lowbit.mpgemm' op the tables of bn = 16 activation rows take 2621440 bytes for K = 20480, more than the 2097152 a kernel keeps on its stack}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<bitplanes, tile_m = 16, tile_k = 32, interleave = 16>,
         config = #lowbit.lut_bitserial<bm = 16, bn = 16, kfactor = 64>}
       : (tensor<?x20480xf32>, tensor<1x81920xi8>, tensor<1xf32>) -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// -----

func.func @any_shape_int8(%x: tensor<?x?xf32>, %w: tensor<?x?xi8>, %s: tensor<?x?x2xf16>) -> tensor<?x?xf32> {
  // expected-error@+1 {{'lowbit.mpgemm' op with dynamic M and K (an any-shape kernel) needs int16 tables (table_bits = 16): int8 tables are not lowered for a run-time K}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = unsigned, group = 64, scale = per_group>,
         layout = #lowbit.layout<bitplanes, tile_m = 16, tile_k = 32, interleave = 16>,
         config = #lowbit.lut_bitserial<bm = 16, kfactor = 64, act_group = 64, table_bits = 8>}
       : (tensor<?x?xf32>, tensor<?x?xi8>, tensor<?x?x2xf16>) -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}
