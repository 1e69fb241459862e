// RUN: lowbit-opt %s --lowbit-select-config=target=x86-avx512vnni --lowbit-pack-layout --lowbit-lower-upconvert --cse | FileCheck %s --check-prefix=VNNI
// RUN: lowbit-opt %s --lowbit-select-config=target=generic --lowbit-pack-layout --lowbit-lower-upconvert --cse | FileCheck %s --check-prefix=GENERIC

// K-quant GEMM (tile_n > 1): each tile group widens its packed sub-scales
// and sub-minimums to f32 and multiplies them by the super-block's d and
// -dmin once, into a stack buffer of [32-k block][half][tile][s_j, o_j]
// [slice] registers (16 blocks x 2 tiles x 2 x 64 bytes for K = 512),
// before its column loops; their K loops read the buffer (lowbit.uk.load)
// and add each block straight into the outputs: no per-super-block sums,
// no fp16 d in the K loop. The buffer is aligned to a 64-byte vector.
// VNNI-LABEL: func.func @q4_k_gemm(
// VNNI: %[[BUF:.*]] = lowbit.uk.stack_buffer {alignment = 64 : i64, bytes = 4096 : i64} : memref<?xi8>
// VNNI: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c2 {
// VNNI: scf.for %{{.*}} = %c0 to %c2 step %c1{{.*}} {
// VNNI: %[[D:.*]] = lowbit.uk.load_half %arg1[%{{.*}}] : memref<?xui16> -> vector<16xf32>
// VNNI: %[[DMIN:.*]] = lowbit.uk.load_half %arg1[%{{.*}}] : memref<?xui16> -> vector<16xf32>
// VNNI: %[[SC:.*]] = lowbit.uk.load_scales %arg1[%{{.*}}, %c0] {bits = 6 : i64} : memref<?xui16> -> vector<16xf32>
// VNNI: %[[S:.*]] = lowbit.uk.group_combine %{{.*}}, %[[SC]], %[[D]] : vector<16xf32>
// VNNI: lowbit.uk.spill %[[S]], %[[BUF]][%{{.*}}] : vector<16xf32>, memref<?xi8>
// VNNI: %[[M:.*]] = lowbit.uk.load_scales %arg1[%{{.*}}, %c0] {bits = 6 : i64} : memref<?xui16> -> vector<16xf32>
// VNNI: %[[O:.*]] = lowbit.uk.group_combine %{{.*}}, %[[M]], %[[DMIN]] : vector<16xf32>
// VNNI: lowbit.uk.spill %[[O]], %[[BUF]][%{{.*}}] : vector<16xf32>, memref<?xi8>
// VNNI: scf.for %{{.*}} = %c0 to %{{.*}} step %c2 {
// VNNI-NOT: lowbit.uk.load_scales
// VNNI-NOT: lowbit.uk.load_half
// VNNI: %[[BSC:.*]] = lowbit.uk.load %[[BUF]][%{{.*}}] : memref<?xi8> -> vector<16xf32>
// VNNI: %[[BM:.*]] = lowbit.uk.load %[[BUF]][%{{.*}}] : memref<?xi8> -> vector<16xf32>
// VNNI: %[[Y:.*]] = lowbit.uk.group_combine %{{.*}}, %{{.*}}, %[[BSC]] : vector<16xf32>
// VNNI: lowbit.uk.group_combine %[[Y]], %{{.*}}, %[[BM]] : vector<16xf32>
// VNNI-NOT: lowbit.uk.load_half
// VNNI: lowbit.uk.store
// VNNI-LABEL: func.func @q4_k_gemv(
// Generic C has one row per register: its sub-scales take two bytes,
// shifted and masked, in the K loop.
// GENERIC-LABEL: func.func @q4_k_gemm(
// GENERIC-NOT: lowbit.uk.stack_buffer
// GENERIC: lowbit.uk.load_scales
func.func @q4_k_gemm(%x: tensor<?x512xf32>, %w: tensor<33x288xi8>) -> tensor<?x33xf32> {
  %y = lowbit.mpgemm %x, %w {
         weight = #lowbit.weight<bits = 4, encoding = min, group = 32, scale = per_block, super_block = 256, scale_bits = 6>,
         layout = #lowbit.layout<gguf>,
         config = #lowbit.upconvert<tile_m = 32, tile_k = 64, tile_n = 2>}
       : (tensor<?x512xf32>, tensor<33x288xi8>) -> tensor<?x33xf32>
  return %y : tensor<?x33xf32>
}

// GEMV (tile_n = 1): one block of columns, no buffer; the K loop unpacks
// the sub-scales itself.
// VNNI-NOT: lowbit.uk.stack_buffer
// VNNI: lowbit.uk.load_scales %arg1[%{{.*}}, %c0] {bits = 6 : i64}
// VNNI-NOT: lowbit.uk.spill
func.func @q4_k_gemv(%x: tensor<?x512xf32>, %w: tensor<33x288xi8>) -> tensor<?x33xf32> {
  %y = lowbit.mpgemm %x, %w {
         weight = #lowbit.weight<bits = 4, encoding = min, group = 32, scale = per_block, super_block = 256, scale_bits = 6>,
         layout = #lowbit.layout<gguf>,
         config = #lowbit.upconvert<tile_m = 16, tile_k = 64, tile_n = 1>}
       : (tensor<?x512xf32>, tensor<33x288xi8>) -> tensor<?x33xf32>
  return %y : tensor<?x33xf32>
}

// Q6_K's 8-bit sub-scales too: d times the sign-extended byte, once per
// tile group, into the buffer (8 blocks x 2 halves x 2 tiles x 64 bytes
// for K = 256). Its sub-blocks of 16: per output the two halves' dots
// times their s_j first (block_combine scale), then one multiply by the
// block's 1 / s_b into the output.
// VNNI-LABEL: func.func @q6_k_gemm(
// VNNI: %[[BUF6:.*]] = lowbit.uk.stack_buffer {alignment = 64 : i64, bytes = 2048 : i64} : memref<?xi8>
// VNNI: lowbit.uk.load_scales %arg1[%{{.*}}, %c0] {bits = 8 : i64, sign_extend}
// VNNI: lowbit.uk.spill %{{.*}}, %[[BUF6]][%{{.*}}] : vector<16xf32>, memref<?xi8>
// VNNI: scf.for %{{.*}} = %c0 to %{{.*}} step %c2 {
// VNNI-NOT: lowbit.uk.load_scales
// VNNI: %[[INV:.*]] = vector.broadcast %{{.*}} : f32 to vector<16xf32>
// VNNI: %[[S0:.*]] = lowbit.uk.load %[[BUF6]][%{{.*}}] : memref<?xi8> -> vector<16xf32>
// VNNI: %[[S1:.*]] = lowbit.uk.load %[[BUF6]][%{{.*}}] : memref<?xi8> -> vector<16xf32>
// VNNI: %[[T0:.*]] = lowbit.uk.block_combine %cst, %{{.*}} scale(%[[S0]] : vector<16xf32>)
// VNNI-NEXT: %[[T:.*]] = lowbit.uk.block_combine %[[T0]], %{{.*}} scale(%[[S1]] : vector<16xf32>)
// VNNI-NEXT: lowbit.uk.group_combine %{{.*}}, %[[T]], %[[INV]] : vector<16xf32>
func.func @q6_k_gemm(%x: tensor<?x256xf32>, %w: tensor<33x210xi8>) -> tensor<?x33xf32> {
  %y = lowbit.mpgemm %x, %w {
         weight = #lowbit.weight<bits = 6, encoding = offset, group = 16, scale = per_block, code_offset = 32, super_block = 256, scale_bits = 8>,
         layout = #lowbit.layout<gguf>,
         config = #lowbit.upconvert<tile_m = 32, tile_k = 64, tile_n = 2>}
       : (tensor<?x256xf32>, tensor<33x210xi8>) -> tensor<?x33xf32>
  return %y : tensor<?x33xf32>
}

// K panels: where a tile group's codes and s_j / o_j over the whole K
// outgrow a core's L2 (here 4 tiles of q6_k at K = 14336: 917 KiB, over
// the 512 KiB limit), the K loop runs in panels of 4 super-blocks (32
// blocks) per chunk of 32 activation rows, whose outputs wait in a second
// stack buffer (32 rows x 4 tiles x 64 bytes): zeroed per chunk, loaded
// and spilled around each panel's K loop, stored to y after the last.
// VNNI-LABEL: func.func @q6_k_panels(
// VNNI: lowbit.uk.stack_buffer {alignment = 64 : i64, bytes = 229376 : i64}
// VNNI: %[[OUT:.*]] = lowbit.uk.stack_buffer {alignment = 64 : i64, bytes = 8192 : i64} : memref<?xi8>
// VNNI: scf.for %{{.*}} = %c0 to %{{.*}} step %c32 {
// VNNI: lowbit.uk.spill %cst, %[[OUT]][%{{.*}}] : vector<16xf32>, memref<?xi8>
// VNNI: scf.for %{{.*}} = %c0 to %c14 step %c1{{.*}} {
// VNNI: %[[Y0:.*]] = lowbit.uk.load %[[OUT]][%{{.*}}] : memref<?xi8> -> vector<16xf32>
// VNNI: scf.for %{{.*}} = %c0 to %c16 step %c1{{.*}} iter_args(%{{.*}} = %[[Y0]],
// VNNI: lowbit.uk.spill %{{.*}}, %[[OUT]][%{{.*}}] : vector<16xf32>, memref<?xi8>
// VNNI: %[[Y:.*]] = lowbit.uk.load %[[OUT]][%{{.*}}] : memref<?xi8> -> vector<16xf32>
// VNNI: lowbit.uk.store %[[Y]]
func.func @q6_k_panels(%x: tensor<?x14336xf32>, %w: tensor<129x11760xi8>) -> tensor<?x129xf32> {
  %y = lowbit.mpgemm %x, %w {
         weight = #lowbit.weight<bits = 6, encoding = offset, group = 16, scale = per_block, code_offset = 32, super_block = 256, scale_bits = 8>,
         layout = #lowbit.layout<gguf>,
         config = #lowbit.upconvert<tile_m = 64, tile_k = 64, tile_n = 2>}
       : (tensor<?x14336xf32>, tensor<129x11760xi8>) -> tensor<?x129xf32>
  return %y : tensor<?x129xf32>
}

// Q2_K: sub-blocks of 16 with minimums. The block's term per output is
// s_0 D_0 + o_0 S_0 + s_1 D_1 + o_1 S_1 with the halves' activation sums
// S_h as they are (no 1 / s_b per half), then one multiply by 1 / s_b.
// VNNI-LABEL: func.func @q2_k_gemm(
// VNNI: scf.for %{{.*}} = %c0 to %{{.*}} step %c2 {
// VNNI: %[[S0:.*]] = arith.sitofp %{{.*}} : i32 to f32
// VNNI-NEXT: %[[B0:.*]] = vector.broadcast %[[S0]] : f32 to vector<16xf32>
// VNNI: %[[T0:.*]] = lowbit.uk.block_combine %cst, %{{.*}} scale(%{{.*}} : vector<16xf32>)
// VNNI-NEXT: %[[T1:.*]] = lowbit.uk.group_combine %[[T0]], %[[B0]], %{{.*}} : vector<16xf32>
// VNNI-NEXT: %[[T2:.*]] = lowbit.uk.block_combine %[[T1]], %{{.*}} scale(%{{.*}} : vector<16xf32>)
// VNNI-NEXT: %[[T3:.*]] = lowbit.uk.group_combine %[[T2]], %{{.*}}, %{{.*}} : vector<16xf32>
// VNNI-NEXT: lowbit.uk.group_combine %{{.*}}, %[[T3]], %{{.*}} : vector<16xf32>
func.func @q2_k_gemm(%x: tensor<?x256xf32>, %w: tensor<33x84xi8>) -> tensor<?x33xf32> {
  %y = lowbit.mpgemm %x, %w {
         weight = #lowbit.weight<bits = 2, encoding = min, group = 16, scale = per_block, super_block = 256, scale_bits = 4>,
         layout = #lowbit.layout<gguf>,
         config = #lowbit.upconvert<tile_m = 32, tile_k = 64, tile_n = 2>}
       : (tensor<?x256xf32>, tensor<33x84xi8>) -> tensor<?x33xf32>
  return %y : tensor<?x33xf32>
}
