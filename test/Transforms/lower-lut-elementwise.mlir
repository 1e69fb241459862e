// RUN: lowbit-opt %s --lowbit-select-config=target=x86-avx512vnni --lowbit-lower-lut-elementwise --cse | FileCheck %s --check-prefix=AVX512
// The AVX2 kernels read lut_abi.h's lane order, which the layout records
// (lane_order = lanes, as pack-layout writes it for x86-avx2).
// RUN: sed 's/interleave = 16>/interleave = 16, lane_order = lanes>/' %s | lowbit-opt --lowbit-select-config=target=x86-avx2 --lowbit-lower-lut-elementwise --cse | FileCheck %s --check-prefix=AVX2

// tl2 GEMV, M = 33 (a partial last tile), K = 200: the block-fitting split
// puts 2 TL2 blocks of 96 in the tiles and the 8 remaining weights in one
// TL1 vector (2 * 320 + 64 + a 64-byte header = 768 bytes per 16-row tile). bk = 96 is
// one block per iteration of an scf.for over the 2 blocks, which carries
// the int32 sums of the low and high table bytes for the low and the high
// nibbles, in 2 sets that consecutive index vectors take turns on (8
// accumulators: 4 dot chains per set, 2 sets for the AVX512 latency). Per
// index vector: one load, per nibble its 64-bit sign word and one lut_dot
// against 128 bytes of tables.
// AVX512-LABEL: func.func @tl2_gemv(
// AVX512-SAME: %[[CODES:.*]]: memref<?xui8> {lowbit.readonly}, %{{.*}}: memref<?xui16> {lowbit.readonly}, %{{.*}}: memref<?xui16> {lowbit.readonly}, %[[XQ:.*]]: memref<?xi8> {lowbit.readonly}, %[[XS:.*]]: memref<?xf32> {lowbit.readonly}, %{{.*}}: memref<?xi32> {lowbit.readonly}, %[[Y:.*]]: memref<?xf32>, %[[N:.*]]: i64, %[[TB:.*]]: i64, %[[TE:.*]]: i64, %[[WS:.*]]: f32) {
// 9 table vectors (8 TL2, 1 TL1) of 256 bytes for one activation row.
// AVX512: %[[T:.*]] = lowbit.uk.stack_buffer {alignment = 64 : i64, bytes = 2304 : i64} : memref<?xi8>
// AVX512: scf.for %[[COL:.*]] = %c0 to %{{.*}} step %c1 {
// AVX512: scf.for %{{.*}} = %c0 to %c8 step %c1 {
// AVX512: lowbit.uk.lut_tables %[[XQ]][%{{.*}}], %[[T]][%{{.*}}] {width = 3 : i64} : memref<?xi8>, memref<?xi8>
// AVX512: scf.for %{{.*}} = %c0 to %c1 step %c1 {
// AVX512: lowbit.uk.lut_tables %[[XQ]][%{{.*}}], %[[T]][%{{.*}}] {width = 2 : i64} : memref<?xi8>, memref<?xi8>
// AVX512: scf.for %[[TILE:.*]] = %{{.*}} to %{{.*}} step %c1 {
// AVX512: %[[BASE:.*]] = arith.muli %[[TILE]], %c768 : index
// AVX512: %[[ACC:.*]]:8 = scf.for %{{.*}} = %c0 to %c2 step %c1 iter_args(%[[A0:.*]] = %{{.*}}, %[[A1:.*]] = %{{.*}}, %[[A2:.*]] = %{{.*}}, %[[A3:.*]] = %{{.*}}, %[[A4:.*]] = %{{.*}}, %[[A5:.*]] = %{{.*}}, %[[A6:.*]] = %{{.*}}, %[[A7:.*]] = %{{.*}}) -> (vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>) {
// AVX512: lowbit.uk.prefetch %[[CODES]]
// AVX512: %[[W0:.*]] = lowbit.uk.load %[[CODES]][%{{.*}}] : memref<?xui8> -> vector<64xi8>
// AVX512: %[[S0:.*]] = lowbit.uk.lut_signs %[[CODES]][%{{.*}}] : memref<?xui8> -> vector<64xi8>
// AVX512: %[[L0:.*]], %[[H0:.*]] = lowbit.uk.lut_dot %[[A0]], %[[A1]], %[[W0]], %[[T]][%{{.*}}] signs(%[[S0]] : vector<64xi8>) {high = false} : vector<64xi8>, memref<?xi8>, vector<16xi32>
// AVX512: %[[S1:.*]] = lowbit.uk.lut_signs %[[CODES]][%{{.*}}] : memref<?xui8> -> vector<64xi8>
// AVX512: %[[L1:.*]], %[[H1:.*]] = lowbit.uk.lut_dot %[[A2]], %[[A3]], %[[W0]], %[[T]][%{{.*}}] signs(%[[S1]] : vector<64xi8>) {high = true}
// AVX512: lowbit.uk.lut_dot %[[A4]], %[[A5]], %{{.*}} {high = false}
// AVX512: lowbit.uk.lut_dot %[[A6]], %[[A7]], %{{.*}} {high = true}
// AVX512: lowbit.uk.lut_dot %[[L0]], %[[H0]], %{{.*}} {high = false}
// AVX512: lowbit.uk.lut_dot %[[L1]], %[[H1]], %{{.*}} {high = true}
// AVX512: scf.yield %{{.*}} : vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>
// The TL1 remainder: one vector without signs, tables at 8 * 256, on set 0
// (after 8 TL2 vectors); then the header, which ends the tile (at 2 * 320 +
// 64), plus the 4 recombined pairs.
// AVX512: %[[TL0:.*]], %[[TH0:.*]] = lowbit.uk.lut_dot %[[ACC]]#0, %[[ACC]]#1, %{{.*}}, %[[T]][%c2048] {high = false} : vector<64xi8>, memref<?xi8>, vector<16xi32>
// AVX512: %[[TL1:.*]], %[[TH1:.*]] = lowbit.uk.lut_dot %[[ACC]]#2, %[[ACC]]#3, %{{.*}}, %[[T]][%c2176] {high = true} : vector<64xi8>, memref<?xi8>, vector<16xi32>
// AVX512: %[[HEADERAT:.*]] = arith.addi %[[BASE]], %c704 : index
// AVX512: %[[HEADER:.*]] = lowbit.uk.load %[[CODES]][%[[HEADERAT]]] : memref<?xui8> -> vector<16xi32>
// AVX512: %[[R0:.*]] = lowbit.uk.lut_combine %[[TL0]], %[[TH0]] : vector<16xi32>
// AVX512: %[[E0:.*]] = arith.addi %[[HEADER]], %[[R0]] : vector<16xi32>
// AVX512: %[[R1:.*]] = lowbit.uk.lut_combine %[[TL1]], %[[TH1]] : vector<16xi32>
// AVX512: %[[E1:.*]] = arith.addi %[[E0]], %[[R1]] : vector<16xi32>
// AVX512: lowbit.uk.lut_combine %[[ACC]]#4, %[[ACC]]#5 : vector<16xi32>
// AVX512: lowbit.uk.lut_combine %[[ACC]]#6, %[[ACC]]#7 : vector<16xi32>
// AVX512: %[[EXACT:.*]] = arith.addi %{{.*}}, %{{.*}} : vector<16xi32>
// AVX512: %[[SX:.*]] = memref.load %[[XS]][%[[COL]]] : memref<?xf32>
// AVX512: %[[OUT:.*]] = lowbit.uk.ternary_scale %[[EXACT]], %c0_i32, %[[WS]], %[[SX]] : vector<16xi32> -> vector<16xf32>
// AVX512: lowbit.uk.store %[[OUT]], %[[Y]][%{{.*}}], %{{.*}} : vector<16xf32>, memref<?xf32>

// On AVX2 the vectors are in lut_abi.h's lane order: register h of a
// vector (at +32h) holds slots 2h, 2h + 1 in its lanes. Per vector the sign
// words of (register h, half of the rows) (by_dword, 4 bytes at
// +4 (2h + half)); per table byte (low at +0, high at +64 of each nibble's
// 128 bytes) the lookups of register h, nibble p (at 128p + 32h), the two
// nibbles zipped by bytes (a row's two groups per int16 lane) and dot2
// with their signs; the two registers' pair sums added into the block's
// int16 sums, which are widened (low + 256 high) into the 4 int32
// accumulators (one per quarter of the rows) after the block's 4 vectors.
// At the end per half of the rows the two quarters' lanes are folded.
// AVX2-LABEL: func.func @tl2_gemv(
// AVX2: %[[T:.*]] = lowbit.uk.stack_buffer {alignment = 64 : i64, bytes = 2304 : i64} : memref<?xi8>
// AVX2: scf.for %{{.*}} = %c0 to %c2 step %c1 iter_args(%[[A0:[a-z0-9_]+]] = %{{[a-z0-9_]+}}, %[[A1:[a-z0-9_]+]] = %{{[a-z0-9_]+}}, %[[A2:[a-z0-9_]+]] = %{{[a-z0-9_]+}}, %[[A3:[a-z0-9_]+]] = %{{[a-z0-9_]+}}) -> (vector<8xi32>, vector<8xi32>, vector<8xi32>, vector<8xi32>) {
// AVX2: %[[W0:.*]] = lowbit.uk.load %{{.*}}[%[[W0AT:.*]]] : memref<?xui8> -> vector<32xi8>
// AVX2: %[[W1AT:.*]] = arith.addi %[[W0AT]], %c32{{(_[0-9]+)?}} : index
// AVX2: %[[W1:.*]] = lowbit.uk.load %{{.*}}[%[[W1AT]]] : memref<?xui8> -> vector<32xi8>
// AVX2: %[[S00:.*]] = lowbit.uk.lut_signs %{{.*}}[%[[SAT:.*]]] {by_dword} : memref<?xui8> -> vector<32xi8>
// AVX2: arith.addi %[[SAT]], %c4 : index
// AVX2: %[[S01:.*]] = lowbit.uk.lut_signs {{.*}} {by_dword}
// AVX2: arith.addi %[[SAT]], %c8 : index
// AVX2: %[[S10:.*]] = lowbit.uk.lut_signs {{.*}} {by_dword}
// AVX2: arith.addi %[[SAT]], %c12 : index
// AVX2: %[[S11:.*]] = lowbit.uk.lut_signs {{.*}} {by_dword}
// AVX2: %[[L00:.*]] = lowbit.uk.lut_lookup %[[W0]], %[[T]][%[[TAT:.*]]] {high = false} : vector<32xi8>, memref<?xi8>
// AVX2: arith.addi %[[TAT]], %c128 : index
// AVX2: %[[L01:.*]] = lowbit.uk.lut_lookup %[[W0]], %[[T]][%{{.*}}] {high = true}
// AVX2: arith.addi %[[TAT]], %c32{{(_[0-9]+)?}} : index
// AVX2: %[[L10:.*]] = lowbit.uk.lut_lookup %[[W1]], %[[T]][%{{.*}}] {high = false}
// AVX2: arith.addi %[[TAT]], %c160 : index
// AVX2: %[[L11:.*]] = lowbit.uk.lut_lookup %[[W1]], %[[T]][%{{.*}}] {high = true}
// AVX2: %[[Z0:.*]] = lowbit.uk.zip %[[L00]], %[[L01]] {high = false} : vector<32xi8>
// AVX2: %[[P0:.*]] = lowbit.uk.dot2 %[[Z0]], %[[S00]] : vector<32xi8> -> vector<16xi16>
// AVX2: %[[Z1:.*]] = lowbit.uk.zip %[[L10]], %[[L11]] {high = false} : vector<32xi8>
// AVX2: %[[P1:.*]] = lowbit.uk.dot2 %[[Z1]], %[[S10]] : vector<32xi8> -> vector<16xi16>
// AVX2: arith.addi %[[P0]], %[[P1]] : vector<16xi16>
// AVX2: lowbit.uk.zip %[[L00]], %[[L01]] {high = true}
// AVX2: lowbit.uk.dot2 %{{.*}}, %[[S01]]
// AVX2: lowbit.uk.dot2 %{{.*}}, %[[S11]]
// AVX2: arith.addi %[[TAT]], %c64 : index
// AVX2: lowbit.uk.dot2 %{{.*}}, %[[S00]]
// After the 4 vectors: per half of the rows its low and high int16 sums
// widened into its two quarters (the low half of each lane: the first).
// AVX2: %[[E0:.*]] = lowbit.uk.extend %[[LO0:.*]], %[[HI0:.*]] {high_half = false} : vector<16xi16> -> vector<8xi32>
// AVX2: arith.addi %[[A0]], %[[E0]] : vector<8xi32>
// AVX2: %[[E1:.*]] = lowbit.uk.extend %[[LO0]], %[[HI0]] {high_half = true} : vector<16xi16> -> vector<8xi32>
// AVX2: arith.addi %[[A1]], %[[E1]] : vector<8xi32>
// AVX2: arith.addi %[[A2]], %{{.*}} : vector<8xi32>
// AVX2: arith.addi %[[A3]], %{{.*}} : vector<8xi32>
// AVX2: scf.yield
// The TL1 vector: no signs (+1 bytes), widened on its own; then per half of
// the rows the header plus the two quarters' lanes folded.
// AVX2: lowbit.uk.dot2 %{{.*}}, %[[ONES:cst(_[0-9]+)?]] : vector<32xi8> -> vector<16xi16>
// AVX2: lowbit.uk.extend
// AVX2: %[[HEADER:.*]] = lowbit.uk.load %{{.*}} : memref<?xui8> -> vector<8xi32>
// AVX2: %[[ROWS:.*]] = lowbit.uk.lane_fold %{{.*}}, %{{.*}} : vector<8xi32>
// AVX2: %[[EXACT:.*]] = arith.addi %[[HEADER]], %[[ROWS]] : vector<8xi32>
// AVX2: lowbit.uk.ternary_scale %[[EXACT]]
// AVX2: lowbit.uk.store {{.*}} : vector<8xf32>, memref<?xf32>
// AVX2: lowbit.uk.lane_fold
// AVX2: lowbit.uk.store {{.*}} : vector<8xf32>, memref<?xf32>
func.func @tl2_gemv(%x: tensor<?x200xf32>, %w: tensor<3x768xi8>, %s: tensor<1xf32>) -> tensor<?x33xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<tl2, tile_m = 16, tile_k = 96, interleave = 16>,
         config = #lowbit.lut_elementwise<bm = 16, bk = 96, sub_m = 16>}
       : (tensor<?x200xf32>, tensor<3x768xi8>, tensor<1xf32>) -> tensor<?x33xf32>
  return %y : tensor<?x33xf32>
}

// tl1 GEMM config: 2 tiles x 2 activation rows share each weight register
// (bn = 2, then the odd row alone); K = 34 is 3 TL1 vectors (the last one
// padded with index 4), 2 per loop iteration (bk = 32), without signs.
// AVX512-LABEL: func.func @tl1_gemm(
// AVX512: lowbit.uk.stack_buffer {alignment = 64 : i64, bytes = 1536 : i64} : memref<?xi8>
// AVX512: %[[NB:.*]] = arith.divsi %{{.*}}, %c2 : index
// AVX512: scf.for %{{.*}} = %c0 to %{{.*}} step %c2 {
// AVX512-COUNT-2: lowbit.uk.lut_tables %{{.*}} {width = 2 : i64}
// AVX512: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c2 {
// AVX512: %[[W:.*]] = lowbit.uk.load %{{.*}} : memref<?xui8> -> vector<64xi8>
// Column 1's tables start at 768 (3 table vectors of 256 bytes).
// AVX512-NEXT: lowbit.uk.lut_dot %{{.*}}, %{{.*}}, %[[W]], %{{.*}}[%c0] {high = false}
// AVX512: lowbit.uk.lut_dot %{{.*}}, %{{.*}}, %[[W]], %{{.*}}[%c768] {high = false}
// AVX512: lowbit.uk.lut_dot %{{.*}}, %{{.*}}, %[[W]], %{{.*}}[%c128] {high = true}
// AVX512: lowbit.uk.lut_dot %{{.*}}, %{{.*}}, %[[W]], %{{.*}}[%c896] {high = true}
// AVX512-NOT: signs
// AVX512: lowbit.uk.lut_combine
// AVX512-LABEL: return
func.func @tl1_gemm(%x: tensor<?x34xf32>, %w: tensor<2x256xi8>, %s: tensor<1xf32>) -> tensor<?x32xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<tl1, tile_m = 16, tile_k = 16, interleave = 16>,
         config = #lowbit.lut_elementwise<bm = 32, bk = 32, sub_m = 16, bn = 2>}
       : (tensor<?x34xf32>, tensor<2x256xi8>, tensor<1xf32>) -> tensor<?x32xf32>
  return %y : tensor<?x32xf32>
}

// tl2, K = 3168: 33 TL2 blocks, 33 KiB of tables per activation row, more
// than a K panel of lut_abi.h (the count nearest 16 blocks: two, of 17 and
// 16 blocks), which are the kernel's K chunks. Panel 0 holds every tile's
// first 17 blocks (5440 bytes per tile), panel 1 the other 16 and the
// header (5184 bytes per tile, from 5440 * tiles = 5440 on). Every
// tile of the range runs chunk 0 and spills its int32 sums to a second stack
// buffer, its 8 registers (2 sets x 2 nibbles of low and high sums)
// combined into one (low + 256 high), which chunk 1 reloads as the first
// pair's low sums, its other sums starting at 0.
// While in panel 0 the prefetches jump from the end of the thread's run there
// (tile_end * 5440) to its run of panel 1 (5440 + tile_begin * 5184).
// AVX512-LABEL: func.func @tl2_chunks(
// AVX512: %[[T:.*]] = lowbit.uk.stack_buffer {alignment = 64 : i64, bytes = 33792 : i64} : memref<?xi8>
// AVX512: %[[P:.*]] = lowbit.uk.stack_buffer {alignment = 64 : i64, bytes = 64 : i64} : memref<?xi8>
// Before the tables are built: the first 4096 bytes of the thread's run
// (from tile_begin * 5440), which the loops' prefetches skip.
// AVX512: %[[BEGIN:.*]] = arith.index_cast %{{.*}} : i64 to index
// AVX512: %[[START:.*]] = arith.muli %[[BEGIN]], %c5440 : index
// AVX512: %[[AHEAD:.*]] = arith.addi %[[START]], %c4096 : index
// AVX512: %[[IN:.*]] = arith.cmpi ult, %[[AHEAD]], %c10624 : index
// AVX512: %[[STOP:.*]] = arith.select %[[IN]], %[[AHEAD]], %c10624 : index
// AVX512: scf.for %[[LINE:.*]] = %[[START]] to %[[STOP]] step %c64 {
// AVX512-NEXT: lowbit.uk.prefetch %{{.*}}[%[[LINE]]] : memref<?xui8>
// AVX512: lowbit.uk.lut_tables
// AVX512: %[[END:.*]] = arith.index_cast %{{.*}} : i64 to index
// AVX512: %[[RUNEND:.*]] = arith.muli %[[END]], %c5440 : index
// AVX512: %[[NEXT0:.*]] = arith.muli %[[BEGIN]], %c5184 : index
// AVX512: %[[NEXT:.*]] = arith.addi %[[NEXT0]], %c5440 : index
// AVX512: %[[JUMP:.*]] = arith.subi %[[NEXT]], %[[RUNEND]] : index
// AVX512: scf.for %[[T0:.*]] = %[[BEGIN]] to %[[END]] step %c1 {
// AVX512: %[[BASE0:.*]] = arith.muli %[[T0]], %c5440 : index
// AVX512: scf.for %{{.*}} = %c0 to %c17 step %c1 iter_args
// AVX512: %[[NEAR:.*]] = arith.addi %{{.*}}, %c4096 : index
// AVX512: %[[PAST:.*]] = arith.cmpi uge, %[[NEAR]], %[[RUNEND]] : index
// AVX512: %[[JUMPED:.*]] = arith.addi %[[NEAR]], %[[JUMP]] : index
// AVX512: arith.select %[[PAST]], %[[JUMPED]], %[[NEAR]] : index
// AVX512-COUNT-4: lowbit.uk.lut_combine
// AVX512: lowbit.uk.spill %{{.*}}, %[[P]][%{{.*}}] : vector<16xi32>, memref<?xi8>
// AVX512-NOT: lowbit.uk.spill
// AVX512: scf.for %[[T1:.*]] = %[[BEGIN]] to %[[END]] step %c1 {
// AVX512: %[[PIECE1:.*]] = arith.muli %[[T1]], %c5184 : index
// AVX512: %[[BASE1:.*]] = arith.addi %[[PIECE1]], %c5440 : index
// AVX512: %[[SUMS:.*]] = lowbit.uk.load %[[P]][%{{.*}}] : memref<?xi8> -> vector<16xi32>
// AVX512-NOT: lowbit.uk.load %[[P]]
// Block 17 + i of the chunk's loop is block i of the tile's piece; no
// jump past panel 1, the last.
// AVX512: scf.for %{{.*}} = %c0 to %c16 step %c1 iter_args(%{{[a-z0-9]+}} = %[[SUMS]], %{{[a-z0-9]+}} = %cst,
// AVX512: %[[B:.*]] = arith.addi %{{.*}}, %c17 : index
// AVX512: %[[OFF:.*]] = arith.muli %[[B]], %c320 : index
// AVX512: %[[REL:.*]] = arith.addi %[[OFF]], %c-5440 : index
// AVX512: %[[S1:.*]] = arith.addi %[[BASE1]], %[[REL]] : index
// AVX512-NOT: arith.cmpi uge
// Its sign words first, then the index vectors from byte 64 on.
// AVX512: %[[V1:.*]] = arith.addi %[[REL]], %c64 : index
// AVX512: %[[W1:.*]] = arith.addi %[[BASE1]], %[[V1]] : index
// AVX512: lowbit.uk.load %{{.*}}[%[[W1]]] : memref<?xui8> -> vector<64xi8>
// AVX512: lowbit.uk.lut_signs %{{.*}}[%[[S1]]] : memref<?xui8> -> vector<64xi8>
// AVX512: scf.yield
// The headers end the tiles' pieces of panel 1 (after its 16 blocks).
// AVX512: %[[HEADER:.*]] = arith.addi %[[BASE1]], %c5120 : index
// AVX512: lowbit.uk.load %{{.*}}[%[[HEADER]]] : memref<?xui8> -> vector<16xi32>
// AVX512: lowbit.uk.lut_combine
// AVX512: lowbit.uk.store
// AVX512-LABEL: return
func.func @tl2_chunks(%x: tensor<?x3168xf32>, %w: tensor<1x10624xi8>, %s: tensor<1xf32>) -> tensor<?x16xf32> {
  %y = lowbit.mpgemm %x, %w, %s {
         weight = #lowbit.weight<bits = 2, encoding = ternary>,
         layout = #lowbit.layout<tl2, tile_m = 16, tile_k = 96, interleave = 16>,
         config = #lowbit.lut_elementwise<bm = 16, bk = 96, sub_m = 16>}
       : (tensor<?x3168xf32>, tensor<1x10624xi8>, tensor<1xf32>) -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}
