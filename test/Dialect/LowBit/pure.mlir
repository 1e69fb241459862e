// RUN: lowbit-opt %s --cse --canonicalize | FileCheck %s

// lowbit.mpgemm has no side effects: identical ops are merged and unused ones
// are erased.

// CHECK-LABEL: func.func @cse_and_dce(
// CHECK: %[[Y:.*]] = lowbit.mpgemm {{.*}}config = #lowbit.upconvert
// CHECK-NOT: lowbit.mpgemm
// CHECK: return %[[Y]], %[[Y]] :
func.func @cse_and_dce(%x: tensor<?x256xf32>, %w: tensor<64x144xi8>)
    -> (tensor<?x64xf32>, tensor<?x64xf32>) {
  %unused = lowbit.mpgemm %x, %w {
              weight = #lowbit.weight<bits = 4, encoding = gguf_q4_0, group = 32, scale = per_block>,
              layout = #lowbit.layout<gguf>,
              config = #lowbit.reference}
            : (tensor<?x256xf32>, tensor<64x144xi8>) -> tensor<?x64xf32>
  %a = lowbit.mpgemm %x, %w {
         weight = #lowbit.weight<bits = 4, encoding = gguf_q4_0, group = 32, scale = per_block>,
         layout = #lowbit.layout<gguf>,
         config = #lowbit.upconvert<tile_m = 32, tile_k = 256, tile_n = 4>}
       : (tensor<?x256xf32>, tensor<64x144xi8>) -> tensor<?x64xf32>
  %b = lowbit.mpgemm %x, %w {
         weight = #lowbit.weight<bits = 4, encoding = gguf_q4_0, group = 32, scale = per_block>,
         layout = #lowbit.layout<gguf>,
         config = #lowbit.upconvert<tile_m = 32, tile_k = 256, tile_n = 4>}
       : (tensor<?x256xf32>, tensor<64x144xi8>) -> tensor<?x64xf32>
  return %a, %b : tensor<?x64xf32>, tensor<?x64xf32>
}
