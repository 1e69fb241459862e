// RUN: lowbit-opt %s --lowbit-select-config=target=x86-avx512vnni --lowbit-pack-layout --lowbit-lower-upconvert --cse | FileCheck %s --check-prefix=VNNI
// RUN: lowbit-opt %s --lowbit-select-config=target=x86-avx2 --lowbit-pack-layout --lowbit-lower-upconvert --cse | FileCheck %s --check-prefix=AVX2
// RUN: lowbit-opt %s --lowbit-select-config=target=aarch64-neon --lowbit-pack-layout --lowbit-lower-upconvert --cse | FileCheck %s --check-prefix=AVX2

// llama.cpp's block formats with one scale per 32 through the up-convert
// kernel: the same K loop as q4_0, its codes in the vnni4 layout of
// kernel_abi.h (8-bit codes a byte each, 5-bit codes a nibble plane and a
// high-bit plane), the code offset through the activations' block sums.

// Q8_0: codes u = c + 128. With vpdpbusd (codes up to 255) the block starts
// at -128 S; where the dot product takes codes below 128 only (AVX2's
// vpmaddubsw, NEON's sdot), dot4 {centred} reads u - 128 and the block
// starts at 0. Eight 64-byte vectors per 32-k block, no unpacking.
// VNNI-LABEL: func.func @q8_0(
// VNNI: %[[S:.*]] = memref.load %{{.*}} : memref<?xi32>
// VNNI: %[[OFF:.*]] = arith.muli %[[S]], %c-128_i32 : i32
// VNNI: %[[START:.*]] = vector.broadcast %[[OFF]] : i32 to vector<16xi32>
// VNNI: %[[W:.*]] = lowbit.uk.load %{{.*}} -> vector<64xi8>
// VNNI: %[[X:.*]] = lowbit.uk.broadcast4
// VNNI-NEXT: lowbit.uk.dot4 %[[START]], %[[W]], %[[X]] : vector<64xi8> -> vector<16xi32>
// VNNI-NOT: lowbit.uk.unpack
// VNNI-NOT: centred
// VNNI-COUNT-7: lowbit.uk.dot4
// VNNI: lowbit.uk.block_combine
// AVX2-LABEL: func.func @q8_0(
// AVX2-NOT: arith.muli %{{.*}}, %c-128_i32
// AVX2: lowbit.uk.dot4 %{{.*}} {centred}
// AVX2-NOT: lowbit.uk.unpack
// AVX2: lowbit.uk.block_combine
func.func @q8_0(%x: tensor<?x64xf32>, %w: tensor<33x68xi8>) -> tensor<?x33xf32> {
  %y = lowbit.mpgemm %x, %w {
         weight = #lowbit.weight<bits = 8, encoding = offset, group = 32, scale = per_block, code_offset = 128>,
         layout = #lowbit.layout<gguf>}
       : (tensor<?x64xf32>, tensor<33x68xi8>) -> tensor<?x33xf32>
  return %y : tensor<?x33xf32>
}

// Q5_0: per 32-k block 4 vectors of the low nibbles (two 4-k planes each)
// and one of the high bits (eight planes), each high plane ORed into its
// low nibbles as 16 (unpack ... into) before one dot4 per 4 k; the
// accumulator starts at -16 S.
// VNNI-LABEL: func.func @q5_0(
// VNNI: arith.muli %{{.*}}, %c-16_i32 : i32
// VNNI: %[[LOW:.*]] = lowbit.uk.load
// VNNI: %[[HIGH:.*]] = lowbit.uk.load
// VNNI: %[[L0:.*]] = lowbit.uk.unpack %[[LOW]] {bits = 4 : i64, plane = 0 : i64} : vector<64xi8>
// VNNI-NEXT: %[[C0:.*]] = lowbit.uk.unpack %[[HIGH]] into %[[L0]] : vector<64xi8> {bits = 1 : i64, plane = 0 : i64, scale = 4 : i64} : vector<64xi8>
// VNNI-NEXT: lowbit.uk.dot4 %{{.*}}, %[[C0]], %{{.*}} : vector<64xi8> -> vector<16xi32>
// VNNI: lowbit.uk.unpack %[[HIGH]] into %{{.*}} {bits = 1 : i64, plane = 7 : i64, scale = 4 : i64}
// VNNI-COUNT-1: lowbit.uk.dot4
// VNNI-NOT: lowbit.uk.dot4
// VNNI-NOT: centred
// VNNI: lowbit.uk.block_combine
func.func @q5_0(%x: tensor<?x64xf32>, %w: tensor<33x44xi8>) -> tensor<?x33xf32> {
  %y = lowbit.mpgemm %x, %w {
         weight = #lowbit.weight<bits = 5, encoding = offset, group = 32, scale = per_block, code_offset = 16>,
         layout = #lowbit.layout<gguf>}
       : (tensor<?x64xf32>, tensor<33x44xi8>) -> tensor<?x33xf32>
  return %y : tensor<?x33xf32>
}

// IQ4_NL: per 32-k block 4 vectors of 4-bit codebook indices (two 4-k
// planes each), each plane looked up (lowbit.uk.codebook) into
// codebook[q] + 128, then read as q8_0's codes: the block starts at -128 S
// with vpdpbusd, at 0 with dot4 {centred} elsewhere.
// VNNI-LABEL: func.func @iq4_nl(
// VNNI: arith.muli %{{.*}}, %c-128_i32 : i32
// VNNI: %[[W:.*]] = lowbit.uk.load
// VNNI: %[[Q:.*]] = lowbit.uk.unpack %[[W]] {bits = 4 : i64, plane = 0 : i64} : vector<64xi8>
// VNNI-NEXT: %[[U:.*]] = lowbit.uk.codebook %[[Q]] {table = array<i8: 1, 24, 45, 63, 79, 93, 106, 118, -127, -115, -103, -90, -75, -59, -39, -15>} : vector<64xi8>
// VNNI-NEXT: lowbit.uk.dot4 %{{.*}}, %[[U]], %{{.*}} : vector<64xi8> -> vector<16xi32>
// VNNI-COUNT-7: lowbit.uk.codebook
// VNNI-NOT: lowbit.uk.codebook
// VNNI-NOT: centred
// VNNI: lowbit.uk.block_combine
// AVX2-LABEL: func.func @iq4_nl(
// AVX2-NOT: arith.muli %{{.*}}, %c-128_i32
// AVX2: %[[U:.*]] = lowbit.uk.codebook
// AVX2-NEXT: lowbit.uk.dot4 %{{.*}}, %[[U]], %{{.*}} {centred}
// AVX2: lowbit.uk.block_combine
func.func @iq4_nl(%x: tensor<?x64xf32>, %w: tensor<33x36xi8>) -> tensor<?x33xf32> {
  %y = lowbit.mpgemm %x, %w {
         weight = #lowbit.weight<bits = 4, encoding = codebook, group = 32, scale = per_block, codebook = [-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113]>,
         layout = #lowbit.layout<gguf>}
       : (tensor<?x64xf32>, tensor<33x36xi8>) -> tensor<?x33xf32>
  return %y : tensor<?x33xf32>
}

// Q4_1: a stored minimum o per block (the zeros array of kernel_abi.h):
// y += s (D / s_b) + o (S / s_b), two group_combine per block, no offset.
// VNNI-LABEL: func.func @q4_1(
// VNNI: %[[O:.*]] = lowbit.uk.load_half %arg2
// VNNI: %[[S:.*]] = memref.load %arg5
// VNNI: %[[XS:.*]] = memref.load %arg4
// VNNI: %[[INV:.*]] = arith.divf %{{.*}}, %[[XS]] : f32
// VNNI: %[[SF:.*]] = arith.sitofp %[[S]] : i32 to f32
// VNNI: %[[T:.*]] = arith.mulf %[[SF]], %[[INV]] : f32
// VNNI: %[[TV:.*]] = vector.broadcast %[[T]] : f32 to vector<16xf32>
// VNNI-NOT: arith.muli %{{.*}}, %c-{{[0-9]+}}_i32
// VNNI: %[[G:.*]] = lowbit.uk.block_combine %{{.*}}, %{{.*}}, %[[INV]] : vector<16xi32> -> vector<16xf32>
// VNNI: %[[SC:.*]] = lowbit.uk.load_half %arg1
// VNNI: %[[Y:.*]] = lowbit.uk.group_combine %{{.*}}, %[[G]], %[[SC]] : vector<16xf32>
// VNNI: lowbit.uk.group_combine %[[Y]], %[[TV]], %[[O]] : vector<16xf32>
func.func @q4_1(%x: tensor<?x32xf32>, %w: tensor<33x20xi8>) -> tensor<?x33xf32> {
  %y = lowbit.mpgemm %x, %w {
         weight = #lowbit.weight<bits = 4, encoding = min, group = 32, scale = per_block>,
         layout = #lowbit.layout<gguf>}
       : (tensor<?x32xf32>, tensor<33x20xi8>) -> tensor<?x33xf32>
  return %y : tensor<?x33xf32>
}

// Q4_K: super-blocks of 256 (kernel_abi.h, K-QUANT SCALES). Per 32-k block
// g += sc (D / s_b) and h += m (S / s_b) with the rows' 6-bit sub-scales
// and sub-minimums (lowbit.uk.load_scales; the minimums 8 sub-blocks of 12
// bytes later); per super-block y += d g and y += -dmin h, d after the
// 192 bytes of sub-scales and sub-minimums.
// VNNI-LABEL: func.func @q4_k(
// VNNI: %[[SUMS:.*]]:2 = scf.for {{.*}} iter_args(%[[G0:.*]] = %{{.*}}, %[[H0:.*]] = %{{.*}}) -> (vector<16xf32>, vector<16xf32>)
// VNNI: %[[INV:.*]] = arith.divf
// VNNI: %[[ST:.*]] = vector.broadcast %{{.*}} : f32 to vector<16xf32>
// VNNI-NOT: arith.muli %{{.*}}, %c-{{[0-9]+}}_i32
// VNNI: %[[SC:.*]] = lowbit.uk.load_scales %arg1[%[[AT:.*]], %c0] {bits = 6 : i64} : memref<?xui16> -> vector<16xf32>
// VNNI: %[[MAT:.*]] = arith.addi %[[AT]], %c96{{.*}} : index
// VNNI: %[[M:.*]] = lowbit.uk.load_scales %arg1[%[[MAT]], %c0] {bits = 6 : i64} : memref<?xui16> -> vector<16xf32>
// VNNI: %[[T:.*]] = lowbit.uk.block_combine %{{.*}}, %{{.*}}, %[[INV]] : vector<16xi32> -> vector<16xf32>
// VNNI: %[[G1:.*]] = lowbit.uk.group_combine %[[G0]], %[[T]], %[[SC]] : vector<16xf32>
// VNNI: %[[H1:.*]] = lowbit.uk.group_combine %[[H0]], %[[ST]], %[[M]] : vector<16xf32>
// VNNI: scf.yield
// VNNI: %[[DAT:.*]] = arith.addi %{{.*}}, %c96 : index
// VNNI: %[[D:.*]] = lowbit.uk.load_half %arg1[%[[DAT]]] : memref<?xui16> -> vector<16xf32>
// VNNI: %[[NAT:.*]] = arith.addi %[[DAT]], %c16{{.*}} : index
// VNNI: %[[MN:.*]] = lowbit.uk.load_half %arg1[%[[NAT]]] : memref<?xui16> -> vector<16xf32>
// VNNI: %[[Y1:.*]] = lowbit.uk.group_combine %{{.*}}, %[[SUMS]]#0, %[[D]] : vector<16xf32>
// VNNI: lowbit.uk.group_combine %[[Y1]], %[[SUMS]]#1, %[[MN]] : vector<16xf32>
func.func @q4_k(%x: tensor<?x512xf32>, %w: tensor<33x288xi8>) -> tensor<?x33xf32> {
  %y = lowbit.mpgemm %x, %w {
         weight = #lowbit.weight<bits = 4, encoding = min, group = 32, scale = per_block, super_block = 256, scale_bits = 6>,
         layout = #lowbit.layout<gguf>}
       : (tensor<?x512xf32>, tensor<33x288xi8>) -> tensor<?x33xf32>
  return %y : tensor<?x33xf32>
}

// Q6_K: sub-blocks of 16. Activation sums per 16 (two per block), two
// accumulators per output (one per half of the block, starting at -32 S_h),
// each with its int8 sub-scale (8 bits, two's complement); d alone per
// super-block (no minimum).
// VNNI-LABEL: func.func @q6_k(
// VNNI: %[[S0:.*]] = memref.load %arg5[%{{.*}}] : memref<?xi32>
// VNNI: %[[S1:.*]] = memref.load %arg5[%{{.*}}] : memref<?xi32>
// VNNI: %[[O0:.*]] = arith.muli %[[S0]], %c-32_i32 : i32
// VNNI: %[[A0:.*]] = vector.broadcast %[[O0]] : i32 to vector<16xi32>
// VNNI: %[[O1:.*]] = arith.muli %[[S1]], %c-32_i32 : i32
// VNNI: %[[A1:.*]] = vector.broadcast %[[O1]] : i32 to vector<16xi32>
// VNNI: lowbit.uk.dot4 %[[A0]],
// VNNI: lowbit.uk.dot4 %[[A1]],
// VNNI: lowbit.uk.unpack %{{.*}} {bits = 2 : i64, plane = 3 : i64, scale = 4 : i64}
// VNNI: %[[SC0:.*]] = lowbit.uk.load_scales %arg1[%{{.*}}, %c0] {bits = 8 : i64, sign_extend}
// VNNI: %[[T0:.*]] = lowbit.uk.block_combine
// VNNI: %[[G0:.*]] = lowbit.uk.group_combine %{{.*}}, %[[T0]], %[[SC0]]
// VNNI: %[[SC1:.*]] = lowbit.uk.load_scales %arg1[%{{.*}}, %c0] {bits = 8 : i64, sign_extend}
// VNNI: %[[T1:.*]] = lowbit.uk.block_combine
// VNNI: lowbit.uk.group_combine %[[G0]], %[[T1]], %[[SC1]]
// VNNI: scf.yield
// VNNI: %[[D:.*]] = lowbit.uk.load_half %arg1
// VNNI-NEXT: lowbit.uk.group_combine %{{.*}}, %{{.*}}, %[[D]] : vector<16xf32>
// VNNI-NOT: lowbit.uk.load_half
func.func @q6_k(%x: tensor<?x256xf32>, %w: tensor<33x210xi8>) -> tensor<?x33xf32> {
  %y = lowbit.mpgemm %x, %w {
         weight = #lowbit.weight<bits = 6, encoding = offset, group = 16, scale = per_block, code_offset = 32, super_block = 256, scale_bits = 8>,
         layout = #lowbit.layout<gguf>}
       : (tensor<?x256xf32>, tensor<33x210xi8>) -> tensor<?x33xf32>
  return %y : tensor<?x33xf32>
}
