// RUN: lowbit-opt %s --split-input-file --lowbit-select-config="target=spirv-vulkan" --lowbit-lower-gpu --cse | FileCheck %s
// RUN: lowbit-opt %s --split-input-file --lowbit-select-config="target=spirv-xe2" --lowbit-lower-gpu --cse | FileCheck %s --check-prefix=XE2

// llama.cpp's block formats through lowbit-lower-gpu: the weight words hold
// the runtime's repacked b-bit codes (K b / 32 words per row), the blocks
// buffer (%arg5, i32 words) their scales at ggml's bits (GGML SCALES of
// runtime/include/lowbit/vulkan.h): K-quants' sub-scales (and sub-minimums)
// as bit strings, then the fp16 d (and m / dmin) of every block, which the
// kernel widens to f32 in integer ops.

// Q6_K: 6-bit codes (48 words per row of 256), two scale blocks of 16 per
// 32-block, each s (float)(D - 32 S) with s = d * (float)sc, sc the int8
// sub-scale (8-bit field, sign-extended by shifts) of a 4-word record; d
// the fp16 at half 56 + record (7 rows x 4 words of sub-scales first).
// CHECK-LABEL: gpu.module @q6_k
// CHECK:       gpu.func @mpgemm(%{{.*}}: memref<?xf32>, %{{.*}}: memref<336xi32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<2xi32>, %{{.*}}: memref<?xf32>, %[[BLOCKS:.*]]: memref<?xi32>) kernel
// CHECK:         scf.for
// CHECK:           %[[HALVES:.*]] = arith.constant 56 : index
// CHECK-NEXT:      %[[ONCE:.*]] = arith.muli %[[REC:.*]], %c1 : index
// CHECK-NEXT:      %[[DAT:.*]] = arith.addi %[[HALVES]], %[[ONCE]] : index
// CHECK-NEXT:      %[[DWORD:.*]] = arith.divui %[[DAT]], %c2 : index
// CHECK-NEXT:      memref.load %[[BLOCKS]][%[[DWORD]]] : memref<?xi32>
// CHECK:           %[[D:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK-NEXT:      %[[FIRST:.*]] = arith.muli %[[REC]], %c4 : index
// CHECK:           %[[BIT0:.*]] = arith.muli %{{.*}}, %c8 : index
// CHECK:           %[[SC0:.*]] = memref.load %[[BLOCKS]][%{{.*}}] : memref<?xi32>
// CHECK-NEXT:      %[[LOW0:.*]] = arith.shrui %[[SC0]], %{{.*}} : i32
// CHECK-NEXT:      %[[C24:.*]] = arith.constant 24 : i32
// CHECK-NEXT:      %[[UP0:.*]] = arith.shli %[[LOW0]], %[[C24]] : i32
// CHECK-NEXT:      %[[I0:.*]] = arith.shrsi %[[UP0]], %[[C24]] : i32
// CHECK-NEXT:      %[[F0:.*]] = arith.sitofp %[[I0]] : i32 to f32
// CHECK-NEXT:      %[[S0:.*]] = arith.mulf %[[D]], %[[F0]] : f32
// CHECK:           arith.shrsi
// CHECK:           %[[S1:.*]] = arith.mulf %[[D]], %{{.*}} : f32
// CHECK:           arith.andi %{{.*}}, %c63_i32 : i32
// CHECK:           %[[Z:.*]] = arith.constant 32 : i32
// CHECK-NEXT:      %[[ZS0:.*]] = arith.muli %[[Z]], %{{.*}} : i32
// CHECK-NEXT:      %[[DD0:.*]] = arith.subi %{{.*}}, %[[ZS0]] : i32
// CHECK-NEXT:      %[[G0:.*]] = arith.sitofp %[[DD0]] : i32 to f32
// CHECK-NEXT:      %[[T0:.*]] = arith.mulf %[[G0]], %[[S0]] : f32
// CHECK-NEXT:      %[[ZS1:.*]] = arith.muli %[[Z]], %{{.*}} : i32
// CHECK-NEXT:      %[[DD1:.*]] = arith.subi %{{.*}}, %[[ZS1]] : i32
// CHECK-NEXT:      %[[G1:.*]] = arith.sitofp %[[DD1]] : i32 to f32
// CHECK-NEXT:      %[[T1:.*]] = arith.mulf %[[G1]], %[[S1]] : f32
// CHECK-NEXT:      %[[T:.*]] = arith.addf %[[T0]], %[[T1]] : f32
// CHECK-NEXT:      arith.divf %[[T]], %{{.*}} : f32
// CHECK:         gpu.return
// XE2-LABEL: gpu.module @q6_k
// XE2:         lowbit.uk.packed_dot
func.func @q6_k(%x: tensor<?x256xf32>, %w: tensor<7x210xi8>) -> tensor<?x7xf32> {
  %y = lowbit.mpgemm %x, %w {weight = #lowbit.weight<bits = 6, encoding = offset, group = 16, scale = per_block, code_offset = 32, super_block = 256, scale_bits = 8>, layout = #lowbit.layout<gguf>}
       : (tensor<?x256xf32>, tensor<7x210xi8>) -> tensor<?x7xf32>
  return %y : tensor<?x7xf32>
}

// -----

// Q4_K: 4-bit codes (32 words per row of 256), one scale block per
// 32-block: d and dmin at halves 42 + 2 record and + 1 (7 records of 3
// words of sub-scales first), the 6-bit sub-scale sc and sub-minimum m of
// sub-block j at bits 6 j and 6 (8 + j) of the record's words, a field
// that may straddle two words ((next << 1) << (31 - shift)); s = d *
// (float)sc, o = -(dmin * (float)m), the term s (float)D + o (float)S.
// CHECK-LABEL: gpu.module @q4_k
// CHECK:       gpu.func @mpgemm(%{{.*}}: memref<?xf32>, %{{.*}}: memref<224xi32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<2xi32>, %{{.*}}: memref<?xf32>, %[[BLOCKS:.*]]: memref<?xi32>) kernel
// CHECK:         scf.for
// CHECK:           %[[HALVES:.*]] = arith.constant 42 : index
// CHECK-NEXT:      %[[TWICE:.*]] = arith.muli %[[REC:.*]], %c2 : index
// CHECK-NEXT:      %[[DAT:.*]] = arith.addi %[[HALVES]], %[[TWICE]] : index
// CHECK:           %[[D:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK-NEXT:      %[[MAT:.*]] = arith.addi %[[DAT]], %c1 : index
// CHECK:           %[[DMIN:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK-NEXT:      %[[FIRST:.*]] = arith.muli %[[REC]], %c3 : index
// CHECK:           %[[BIT:.*]] = arith.muli %[[J:.*]], %c6 : index
// CHECK:           %[[LOW:.*]] = arith.shrui %{{.*}}, %[[SHIFT:.*]] : i32
// CHECK:           %[[NEXT:.*]] = memref.load %[[BLOCKS]][%{{.*}}] : memref<?xi32>
// CHECK-NEXT:      %[[C1:.*]] = arith.constant 1 : i32
// CHECK-NEXT:      %[[N1:.*]] = arith.shli %[[NEXT]], %[[C1]] : i32
// CHECK-NEXT:      %[[C31:.*]] = arith.constant 31 : i32
// CHECK-NEXT:      %[[LEFT:.*]] = arith.subi %[[C31]], %[[SHIFT]] : i32
// CHECK-NEXT:      %[[HIGH:.*]] = arith.shli %[[N1]], %[[LEFT]] : i32
// CHECK-NEXT:      %[[BOTH:.*]] = arith.ori %[[LOW]], %[[HIGH]] : i32
// CHECK-NEXT:      %[[C63:.*]] = arith.constant 63 : i32
// CHECK-NEXT:      %[[SC:.*]] = arith.andi %[[BOTH]], %[[C63]] : i32
// CHECK-NEXT:      %[[SCF:.*]] = arith.sitofp %[[SC]] : i32 to f32
// CHECK-NEXT:      %[[S:.*]] = arith.mulf %[[D]], %[[SCF]] : f32
// CHECK-NEXT:      %[[JM:.*]] = arith.addi %[[J]], %c8 : index
// CHECK-NEXT:      arith.muli %[[JM]], %c6 : index
// CHECK:           %[[M:.*]] = arith.andi %{{.*}}, %[[C63]] : i32
// CHECK-NEXT:      %[[MF:.*]] = arith.sitofp %[[M]] : i32 to f32
// CHECK-NEXT:      %[[DM:.*]] = arith.mulf %[[DMIN]], %[[MF]] : f32
// CHECK-NEXT:      %[[O:.*]] = arith.negf %[[DM]] : f32
// CHECK:           %[[DF:.*]] = arith.sitofp %{{.*}} : i32 to f32
// CHECK-NEXT:      %[[SD:.*]] = arith.mulf %[[S]], %[[DF]] : f32
// CHECK-NEXT:      %[[XS:.*]] = arith.sitofp %{{.*}} : i32 to f32
// CHECK-NEXT:      %[[OS:.*]] = arith.mulf %[[O]], %[[XS]] : f32
// CHECK-NEXT:      %[[T:.*]] = arith.addf %[[SD]], %[[OS]] : f32
// CHECK-NEXT:      arith.divf %[[T]], %{{.*}} : f32
// CHECK:         gpu.return
// XE2-LABEL: gpu.module @q4_k
// XE2:         lowbit.uk.packed_dot
func.func @q4_k(%x: tensor<?x256xf32>, %w: tensor<7x144xi8>) -> tensor<?x7xf32> {
  %y = lowbit.mpgemm %x, %w {weight = #lowbit.weight<bits = 4, encoding = min, group = 32, scale = per_block, super_block = 256, scale_bits = 6>, layout = #lowbit.layout<gguf>}
       : (tensor<?x256xf32>, tensor<7x144xi8>) -> tensor<?x7xf32>
  return %y : tensor<?x7xf32>
}

// -----

// Q8_0: 8-bit codes q = c + 128 (a word per 4), the fp16 d of each 32-block
// (half row * 3 + block, no sub-scales) and the constant offset 128. On
// spirv-xe2 the integer dot product takes the unsigned codes a word at a
// time (mask 0xffffffff = -1).
// CHECK-LABEL: gpu.module @q8_0
// CHECK:       gpu.func @mpgemm(%{{.*}}: memref<?xf32>, %{{.*}}: memref<168xi32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<2xi32>, %{{.*}}: memref<?xf32>, %[[BLOCKS:.*]]: memref<?xi32>)
// CHECK:         %[[ROW:.*]] = arith.muli %{{.*}}, %c3 : index
// CHECK-NEXT:    %[[REC:.*]] = arith.addi %[[ROW]], %{{.*}} : index
// CHECK:         %[[WORD:.*]] = arith.divui %{{.*}}, %c2 : index
// CHECK-NEXT:    memref.load %[[BLOCKS]][%[[WORD]]] : memref<?xi32>
// CHECK:         arith.constant 128 : i32
// CHECK:         arith.andi %{{.*}}, %c255_i32 : i32
// XE2-LABEL: gpu.module @q8_0
// XE2:         %[[ALL:.*]] = arith.constant -1 : i32
// XE2:         %[[CODES:.*]] = arith.andi %{{.*}}, %[[ALL]] : i32
// XE2-NEXT:    lowbit.uk.packed_dot %{{.*}}, %[[CODES]] {unsigned_rhs}
func.func @q8_0(%x: tensor<?x96xf32>, %w: tensor<7x102xi8>) -> tensor<?x7xf32> {
  %y = lowbit.mpgemm %x, %w {weight = #lowbit.weight<bits = 8, encoding = offset, group = 32, scale = per_block, code_offset = 128>, layout = #lowbit.layout<gguf>}
       : (tensor<?x96xf32>, tensor<7x102xi8>) -> tensor<?x7xf32>
  return %y : tensor<?x7xf32>
}

// -----

// IQ4_NL: 4-bit codebook indices q (8 words per row of 64), each looked up
// in the codebook of the weight attribute as the byte codebook[q] + 128 of
// four i32 constants (bytes [1, 24, 45, 63], [79, 93, 106, 118], [129, 141,
// 153, 166], [181, 197, 217, 241]: 0x3F2D1801 ...), the word picked by bits
// 2 and 3 of q, the byte by q & 3; then the term of an offset format with z
// = 128. On spirv-xe2 four looked-up bytes go to one unsigned dot product
// (never the byte planes, mask 0x0F0F0F0F = 252645135, of the stored
// nibbles).
// CHECK-LABEL: gpu.module @iq4_nl
// CHECK:       gpu.func @mpgemm(%{{.*}}: memref<?xf32>, %{{.*}}: memref<40xi32>,
// CHECK:         %[[SECOND:.*]] = arith.shrui %{{.*}}, %c4_i32 : i32
// CHECK-NEXT:    %[[Q:.*]] = arith.andi %[[SECOND]], %c15_i32 : i32
// CHECK-NEXT:    %[[B2:.*]] = arith.andi %[[Q]], %c4_i32 : i32
// CHECK-NEXT:    %[[SET2:.*]] = arith.cmpi ne, %[[B2]], %c0_i32 : i32
// CHECK-NEXT:    %[[HI:.*]] = arith.select %[[SET2]], %c-237386315_i32, %c-1499886207_i32 : i32
// CHECK-NEXT:    %[[LO:.*]] = arith.select %[[SET2]], %c1986682191_i32, %c1059919873_i32 : i32
// CHECK-NEXT:    %[[B3:.*]] = arith.andi %[[Q]], %c8_i32 : i32
// CHECK-NEXT:    %[[SET3:.*]] = arith.cmpi ne, %[[B3]], %c0_i32 : i32
// CHECK-NEXT:    %[[WORD:.*]] = arith.select %[[SET3]], %[[HI]], %[[LO]] : i32
// CHECK-NEXT:    %[[BYTE:.*]] = arith.andi %[[Q]], %c3_i32 : i32
// CHECK-NEXT:    %[[SHIFT:.*]] = arith.shli %[[BYTE]], %c3_i32 : i32
// CHECK-NEXT:    %[[SHIFTED:.*]] = arith.shrui %[[WORD]], %[[SHIFT]] : i32
// CHECK-NEXT:    arith.andi %[[SHIFTED]], %c255_i32 : i32
// CHECK:         arith.constant 128 : i32
// CHECK:         gpu.return
// XE2-LABEL: gpu.module @iq4_nl
// XE2-NOT:     252645135
// XE2:         arith.select %{{.*}}, %c-237386315_i32, %c-1499886207_i32 : i32
// XE2:         lowbit.uk.packed_dot %{{.*}}, %{{.*}} {unsigned_rhs}
// XE2-NOT:     252645135
func.func @iq4_nl(%x: tensor<?x64xf32>, %w: tensor<5x36xi8>) -> tensor<?x5xf32> {
  %y = lowbit.mpgemm %x, %w {weight = #lowbit.weight<bits = 4, encoding = codebook, group = 32, scale = per_block, codebook = [-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113]>, layout = #lowbit.layout<gguf>}
       : (tensor<?x64xf32>, tensor<5x36xi8>) -> tensor<?x5xf32>
  return %y : tensor<?x5xf32>
}
