func.func @k(%x: tensor<?x96xf32>, %w: tensor<33x12xi8>, %s: tensor<33x3xf16>) -> tensor<?x33xf32> {
  %y = lowbit.mpgemm %x, %w, %s {weight = #lowbit.weight<bits = 1, encoding = binary, group = 32, scale = per_group>, layout = #lowbit.layout<canonical>}
       : (tensor<?x96xf32>, tensor<33x12xi8>, tensor<33x3xf16>) -> tensor<?x33xf32>
  return %y : tensor<?x33xf32>
}
