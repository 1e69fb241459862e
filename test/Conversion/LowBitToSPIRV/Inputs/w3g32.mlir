func.func @k(%x: tensor<?x96xf32>, %w: tensor<33x36xi8>, %s: tensor<33x3x2xf16>) -> tensor<?x33xf32> {
  %y = lowbit.mpgemm %x, %w, %s {weight = #lowbit.weight<bits = 3, encoding = unsigned, group = 32, scale = per_group>, layout = #lowbit.layout<canonical>}
       : (tensor<?x96xf32>, tensor<33x36xi8>, tensor<33x3x2xf16>) -> tensor<?x33xf32>
  return %y : tensor<?x33xf32>
}
