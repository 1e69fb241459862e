// tl1 and tl2 mpgemms as generateKernel builds them (row-major canonical
// layouts, no config), input of the lut-elementwise pipeline tests.
func.func @tl1(%x: tensor<?x200xf32>, %w: tensor<33x50xi8>, %s: tensor<1xf32>) -> tensor<?x33xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<tl1>}
       : (tensor<?x200xf32>, tensor<33x50xi8>, tensor<1xf32>) -> tensor<?x33xf32>
  return %y : tensor<?x33xf32>
}

func.func @tl2(%x: tensor<?x200xf32>, %w: tensor<33x43xi8>, %s: tensor<1xf32>) -> tensor<?x33xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<tl2>}
       : (tensor<?x200xf32>, tensor<33x43xi8>, tensor<1xf32>) -> tensor<?x33xf32>
  return %y : tensor<?x33xf32>
}
