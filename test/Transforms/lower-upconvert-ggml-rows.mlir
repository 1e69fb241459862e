// RUN: lowbit-opt %s --lowbit-select-config=target=x86-avx512vnni --lowbit-pack-layout --lowbit-lower-upconvert --cse | FileCheck %s --check-prefix=AVX512
// RUN: lowbit-opt %s --lowbit-select-config=target=x86-avx2 --lowbit-pack-layout --lowbit-lower-upconvert --cse | FileCheck %s --check-prefix=AVX2
// RUN: not lowbit-opt %s --lowbit-select-config=target=generic --lowbit-pack-layout --lowbit-lower-upconvert 2>&1 | FileCheck %s --check-prefix=GENERIC

// The kernel of kernel_abi.h's GGML ROWS LAYOUT (TQ2_0 rows read in place):
// per 256-weight block and row one 64-byte register of codes (two of 32
// bytes on AVX2), 4 bit pairs unpacked, each dotted with its activations;
// with 64-byte registers the activations are first gathered into a stack
// buffer in register order (K = 768 bytes per activation row).

// AVX512-LABEL: func.func @rows(
// AVX512: lowbit.uk.stack_buffer {bytes = 768 : i64}
// AVX512: lowbit.uk.prefetch
// AVX512-COUNT-4: lowbit.uk.unpack %{{.*}} {bits = 2 : i64, plane = {{[0-3]}} : i64} : vector<64xi8>
// AVX512: lowbit.uk.dot4 {{.*}} : vector<64xi8> -> vector<16xi32>
// AVX512: lowbit.uk.spill
// AVX512: arith.sitofp
// AVX512: arith.divf

// AVX2-LABEL: func.func @rows(
// AVX2-NOT: lowbit.uk.stack_buffer {bytes = 768
// AVX2: lowbit.uk.unpack %{{.*}} {bits = 2 : i64, plane = 0 : i64} : vector<32xi8>
// AVX2: lowbit.uk.dot4 {{.*}} : vector<32xi8> -> vector<8xi32>

// GENERIC: error: 'lowbit.mpgemm' op target generic has registers of 4 bytes; the ggml rows kernel needs a divisor of 64 that is at least 16

func.func @rows(%x: tensor<?x768xf32>, %w: tensor<5x192xi8>, %s: tensor<1xf32>) -> tensor<?x5xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<i2s>,
         config = #lowbit.upconvert<tile_m = 2, tile_k = 256, tile_n = 1, prefetch = 2>}
       : (tensor<?x768xf32>, tensor<5x192xi8>, tensor<1xf32>) -> tensor<?x5xf32>
  return %y : tensor<?x5xf32>
}

// One output per group (tile_m = 1, tile_n = 1): one chain per bit pair,
// pair i masked in place (codes x 4^i; at most x 2^5 on AVX2, whose
// maddubs sums byte pairs into int16) and its chain divided back once.

// AVX512-LABEL: func.func @gemv(
// AVX512: lowbit.uk.unpack %{{.*}} {bits = 2 : i64, plane = 0 : i64} : vector<64xi8>
// AVX512: lowbit.uk.unpack %{{.*}} {bits = 2 : i64, plane = 1 : i64, scale = 2 : i64} : vector<64xi8>
// AVX512: lowbit.uk.unpack %{{.*}} {bits = 2 : i64, plane = 2 : i64, scale = 4 : i64} : vector<64xi8>
// AVX512: lowbit.uk.unpack %{{.*}} {bits = 2 : i64, plane = 3 : i64, scale = 6 : i64} : vector<64xi8>
// AVX512: lowbit.uk.shr_exact %{{.*}} {shift = 2 : i64} : vector<16xi32>
// AVX512: lowbit.uk.shr_exact %{{.*}} {shift = 4 : i64} : vector<16xi32>
// AVX512: lowbit.uk.shr_exact %{{.*}} {shift = 6 : i64} : vector<16xi32>

// AVX2-LABEL: func.func @gemv(
// AVX2: lowbit.uk.unpack %{{.*}} {bits = 2 : i64, plane = 3 : i64, scale = 5 : i64} : vector<32xi8>
// AVX2: lowbit.uk.shr_exact %{{.*}} {shift = 5 : i64} : vector<8xi32>

func.func @gemv(%x: tensor<?x768xf32>, %w: tensor<5x192xi8>, %s: tensor<1xf32>) -> tensor<?x5xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<i2s>,
         config = #lowbit.upconvert<tile_m = 1, tile_k = 256, tile_n = 1>}
       : (tensor<?x768xf32>, tensor<5x192xi8>, tensor<1xf32>) -> tensor<?x5xf32>
  return %y : tensor<?x5xf32>
}

// A GEMM tile of one shape (tile_n > 1): each group of 2 rows decoded once
// into 2 x 768 int8 codes in weight order, each block's 4 bit pairs (two
// registers of each on AVX2) spilled to a scratch buffer and copied from
// there (then the lane sums' buffer of 2 rows); the activations read in
// place (no gather buffer) against
// the decoded codes, one dot product per register and activation row.

// AVX512-LABEL: func.func @decoded(
// AVX512: %[[CODES:.*]] = lowbit.uk.stack_buffer {bytes = 1536 : i64}
// AVX512: lowbit.uk.stack_buffer {bytes = 256 : i64}
// AVX512: lowbit.uk.stack_buffer {bytes = 128 : i64}
// AVX512-NOT: lowbit.uk.stack_buffer
// AVX512-COUNT-4: lowbit.uk.spill %{{.*}} : vector<64xi8>, memref<?xi8>
// AVX512: %[[X:.*]] = lowbit.uk.load %arg3[%{{.*}}] : memref<?xi8> -> vector<64xi8>
// AVX512: %[[W:.*]] = lowbit.uk.load %[[CODES]][%{{.*}}] : memref<?xi8> -> vector<64xi8>
// AVX512-NEXT: lowbit.uk.dot4 %{{.*}}, %[[W]], %[[X]] : vector<64xi8> -> vector<16xi32>

// AVX2-LABEL: func.func @decoded(
// AVX2: lowbit.uk.stack_buffer {bytes = 1536 : i64}
// AVX2: lowbit.uk.stack_buffer {bytes = 256 : i64}
// AVX2-COUNT-8: lowbit.uk.spill %{{.*}} : vector<32xi8>, memref<?xi8>

func.func @decoded(%x: tensor<?x768xf32>, %w: tensor<5x192xi8>, %s: tensor<1xf32>) -> tensor<?x5xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<i2s>,
         config = #lowbit.upconvert<tile_m = 2, tile_k = 256, tile_n = 2>}
       : (tensor<?x768xf32>, tensor<5x192xi8>, tensor<1xf32>) -> tensor<?x5xf32>
  return %y : tensor<?x5xf32>
}

// TQ1_0 rows (54-byte blocks), GEMM tile of one shape: each register of
// base-3 digits decoded digit by digit (lowbit.uk.trit, no fractions) and
// spilled, 5 registers of 64 bytes of scratch (on AVX2 2 x 5 of 32).

// AVX512-LABEL: func.func @decoded_tq1(
// AVX512: lowbit.uk.stack_buffer {bytes = 1536 : i64}
// AVX512: lowbit.uk.stack_buffer {bytes = 320 : i64}
// AVX512: lowbit.uk.load %{{.*}} {bytes = 52 : i64}
// AVX512-NEXT: lowbit.uk.trit %{{.*}} {digit = 0 : i64} : vector<64xi8>
// AVX512-NEXT: lowbit.uk.spill %{{.*}} : vector<64xi8>, memref<?xi8>
// AVX512-NOT: lowbit.uk.triple

// AVX2-LABEL: func.func @decoded_tq1(
// AVX2: lowbit.uk.stack_buffer {bytes = 320 : i64}
// AVX2-COUNT-10: lowbit.uk.spill %{{.*}} : vector<32xi8>, memref<?xi8>

func.func @decoded_tq1(%x: tensor<?x768xf32>, %w: tensor<2x162xi8>, %s: tensor<1xf32>) -> tensor<?x2xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<gguf, tile_m = 1, tile_k = 256, block_bytes = 54>,
         config = #lowbit.upconvert<tile_m = 2, tile_k = 256, tile_n = 2>}
       : (tensor<?x768xf32>, tensor<2x162xi8>, tensor<1xf32>) -> tensor<?x2xf32>
  return %y : tensor<?x2xf32>
}
