// RUN: lowbit-opt %s --split-input-file --lowbit-select-config=target=x86-avx512vnni --lowbit-lower-lut-elementwise --verify-diagnostics
// RUN: not lowbit-opt %S/lower-lut-elementwise.mlir --lowbit-select-config=target=generic --lowbit-lower-lut-elementwise 2>&1 | FileCheck %s --check-prefix=GENERIC

// GENERIC: error: 'lowbit.mpgemm' op target generic has no byte table lookup (vpermb/pshufb/tbl) on 4-byte registers; lowbit-lower-lut-elementwise needs one

func.func @not_packed(%x: tensor<?x200xf32>, %w: tensor<33x43xi8>, %s: tensor<1xf32>) -> tensor<?x33xf32> {
  // expected-error@+1 {{'lowbit.mpgemm' op needs the interleaved tl1/tl2 layout of lut_abi.h (interleave = 16), got #lowbit.layout<tl2>; run lowbit-pack-layout first}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<tl2>,
         config = #lowbit.lut_elementwise<bm = 256, bk = 96>}
       : (tensor<?x200xf32>, tensor<33x43xi8>, tensor<1xf32>) -> tensor<?x33xf32>
  return %y : tensor<?x33xf32>
}

// -----

// K = 8640: 360 table vectors of 256 bytes per activation row.
func.func @tables_too_large(%x: tensor<?x8640xf32>, %w: tensor<1x28864xi8>, %s: tensor<1xf32>) -> tensor<?x16xf32> {
  // expected-error@+1 {{'lowbit.mpgemm' op the tables of bn = 32 activation rows take 2949120 bytes for K = 8640, more than the 2097152 a kernel keeps on its stack}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<tl2, tile_m = 16, tile_k = 96, interleave = 16>,
         config = #lowbit.lut_elementwise<bm = 16, bk = 768, sub_m = 16, bn = 32>}
       : (tensor<?x8640xf32>, tensor<1x28864xi8>, tensor<1xf32>) -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// -----

// A layout in the lane order of another target (x86-avx2's) than the one
// the kernel is lowered for.
func.func @other_lane_order(%x: tensor<?x200xf32>, %w: tensor<3x768xi8>, %s: tensor<1xf32>) -> tensor<?x33xf32> {
  // expected-error@+1 {{'lowbit.mpgemm' op has a layout in lane_order lanes, but the target's lut-elementwise kernels read rows (lut_abi.h); run lowbit-pack-layout for this target}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<tl2, tile_m = 16, tile_k = 96, interleave = 16, lane_order = lanes>,
         config = #lowbit.lut_elementwise<bm = 16, bk = 96, sub_m = 16>}
       : (tensor<?x200xf32>, tensor<3x768xi8>, tensor<1xf32>) -> tensor<?x33xf32>
  return %y : tensor<?x33xf32>
}

// -----

func.func @not_whole(%x: tensor<?x200xf32>, %w: tensor<3x768xi8>, %s: tensor<1xf32>) -> tensor<?x33xf32> {
  // expected-error@+1 {{'lowbit.mpgemm' op can only be lowered as the whole body of its function (one lowbit.mpgemm whose result is returned)}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<tl2, tile_m = 16, tile_k = 96, interleave = 16>,
         config = #lowbit.lut_elementwise<bm = 16, bk = 96, sub_m = 16>}
       : (tensor<?x200xf32>, tensor<3x768xi8>, tensor<1xf32>) -> tensor<?x33xf32>
  %z = arith.addf %y, %y : tensor<?x33xf32>
  return %z : tensor<?x33xf32>
}
