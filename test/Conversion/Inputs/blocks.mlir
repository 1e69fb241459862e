// llama.cpp's block formats that the up-convert kernels read (q8_0: 8-bit
// codes; q4_k: 6-bit sub-scales of a super-block; iq4_nl: 4-bit codes looked
// up in a codebook), the input of the upconvert pipeline as generateKernel
// builds it.

func.func @q8_0(%x: tensor<?x64xf32>, %w: tensor<33x68xi8>) -> tensor<?x33xf32> {
  %y = lowbit.mpgemm %x, %w {
         weight = #lowbit.weight<bits = 8, encoding = offset, group = 32, scale = per_block, code_offset = 128>,
         layout = #lowbit.layout<gguf>}
       : (tensor<?x64xf32>, tensor<33x68xi8>) -> tensor<?x33xf32>
  return %y : tensor<?x33xf32>
}

func.func @q4_k(%x: tensor<?x256xf32>, %w: tensor<33x144xi8>) -> tensor<?x33xf32> {
  %y = lowbit.mpgemm %x, %w {
         weight = #lowbit.weight<bits = 4, encoding = min, group = 32, scale = per_block, super_block = 256, scale_bits = 6>,
         layout = #lowbit.layout<gguf>}
       : (tensor<?x256xf32>, tensor<33x144xi8>) -> tensor<?x33xf32>
  return %y : tensor<?x33xf32>
}

func.func @iq4_nl(%x: tensor<?x64xf32>, %w: tensor<33x36xi8>) -> tensor<?x33xf32> {
  %y = lowbit.mpgemm %x, %w {
         weight = #lowbit.weight<bits = 4, encoding = codebook, group = 32, scale = per_block, codebook = [-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113]>,
         layout = #lowbit.layout<gguf>}
       : (tensor<?x64xf32>, tensor<33x36xi8>) -> tensor<?x33xf32>
  return %y : tensor<?x33xf32>
}
