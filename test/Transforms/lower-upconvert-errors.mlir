// RUN: lowbit-opt %s --split-input-file --lowbit-select-config=target=x86-avx512vnni --lowbit-lower-upconvert --verify-diagnostics

func.func @not_packed(%x: tensor<?x256xf32>, %w: tensor<64x64xi8>, %s: tensor<1xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{'lowbit.mpgemm' op needs the vnni4 layout with tile_m = 16 of kernel_abi.h, got #lowbit.layout<i2s>; run lowbit-pack-layout first}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<i2s>,
         config = #lowbit.upconvert<tile_m = 16, tile_k = 64, tile_n = 1>}
       : (tensor<?x256xf32>, tensor<64x64xi8>, tensor<1xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @not_the_whole_body(%x: tensor<?x256xf32>, %w: tensor<4x16x64xi8>, %s: tensor<1xf32>) -> (tensor<?x64xf32>, tensor<?x64xf32>) {
  // expected-error@+1 {{'lowbit.mpgemm' op can only be lowered as the whole body of its function (one lowbit.mpgemm whose result is returned)}}
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<vnni4, tile_m = 16, tile_k = 16>,
         config = #lowbit.upconvert<tile_m = 16, tile_k = 64, tile_n = 1>}
       : (tensor<?x256xf32>, tensor<4x16x64xi8>, tensor<1xf32>) -> tensor<?x64xf32>
  return %y, %y : tensor<?x64xf32>, tensor<?x64xf32>
}
