// One function per lut-bitserial format, with ragged shapes (M not a
// multiple of 16, K of the ternary format not a multiple of 32) and dynamic
// N: the input of lowbit-lut-bitserial-pipeline as generateKernel builds it.

func.func @i2s(%x: tensor<?x100xf32>, %w: tensor<33x25xi8>, %s: tensor<1xf32>) -> tensor<?x33xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<i2s>}
       : (tensor<?x100xf32>, tensor<33x25xi8>, tensor<1xf32>) -> tensor<?x33xf32>
  return %y : tensor<?x33xf32>
}

func.func @w1g128(%x: tensor<?x256xf32>, %w: tensor<31x32xi8>, %s: tensor<31x2xf16>) -> tensor<?x31xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 1, encoding = binary, group = 128, scale = per_group>,
         layout = #lowbit.layout<canonical>}
       : (tensor<?x256xf32>, tensor<31x32xi8>, tensor<31x2xf16>) -> tensor<?x31xf32>
  return %y : tensor<?x31xf32>
}

func.func @w3g32(%x: tensor<?x96xf32>, %w: tensor<17x36xi8>, %s: tensor<17x3x2xf16>) -> tensor<?x17xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 3, encoding = unsigned, group = 32, scale = per_group>,
         layout = #lowbit.layout<canonical>}
       : (tensor<?x96xf32>, tensor<17x36xi8>, tensor<17x3x2xf16>) -> tensor<?x17xf32>
  return %y : tensor<?x17xf32>
}

// K = 2112: 66 blocks in two K panels of bitserial_abi.h, so the f32
// outputs are spilled between them.
func.func @w2g64_panels(%x: tensor<?x2112xf32>, %w: tensor<20x528xi8>, %s: tensor<20x33x2xf16>) -> tensor<?x20xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = unsigned, group = 64, scale = per_group>,
         layout = #lowbit.layout<canonical>}
       : (tensor<?x2112xf32>, tensor<20x528xi8>, tensor<20x33x2xf16>) -> tensor<?x20xf32>
  return %y : tensor<?x20xf32>
}
