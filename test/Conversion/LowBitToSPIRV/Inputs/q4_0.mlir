func.func @k(%x: tensor<?x64xf32>, %w: tensor<7x36xi8>) -> tensor<?x7xf32> {
  %y = lowbit.mpgemm %x, %w {weight = #lowbit.weight<bits = 4, encoding = gguf_q4_0, group = 32, scale = per_block>, layout = #lowbit.layout<gguf>}
       : (tensor<?x64xf32>, tensor<7x36xi8>) -> tensor<?x7xf32>
  return %y : tensor<?x7xf32>
}
