// RUN: lowbit-opt %s | lowbit-opt | FileCheck %s
// RUN: lowbit-opt %s --mlir-print-op-generic | lowbit-opt | FileCheck %s

// Every lowbit.uk.* op in every form, at AVX-512 (64-byte) and generic
// (4-byte) register widths.

// CHECK-LABEL: func.func @microkernel_zmm(
func.func @microkernel_zmm(%codes: memref<?xui8>, %xq: memref<?xi8>,
                           %scales: memref<?xui16>, %y: memref<?xf32>,
                           %off: index, %sum: i32, %inv: f32,
                           %acc: vector<16xi32>, %out: vector<16xf32>) {
  // CHECK: %[[W:.*]] = lowbit.uk.load %{{.*}}[%{{.*}}] : memref<?xui8> -> vector<64xi8>
  %w = lowbit.uk.load %codes[%off] : memref<?xui8> -> vector<64xi8>
  // CHECK: %[[X:.*]] = lowbit.uk.broadcast4 %{{.*}}[%{{.*}}] : memref<?xi8> -> vector<64xi8>
  %x = lowbit.uk.broadcast4 %xq[%off] : memref<?xi8> -> vector<64xi8>
  // CHECK: %[[C:.*]] = lowbit.uk.unpack %[[W]] {bits = 2 : i64, plane = 3 : i64} : vector<64xi8>
  %c = lowbit.uk.unpack %w {bits = 2, plane = 3} : vector<64xi8>
  // CHECK: lowbit.uk.unpack %[[W]] {bits = 1 : i64, plane = 0 : i64, scale = 1 : i64} : vector<64xi8>
  %c2 = lowbit.uk.unpack %w {bits = 1, plane = 0, scale = 1} : vector<64xi8>
  // CHECK: lowbit.uk.unpack %[[W]] into %[[C]] : vector<64xi8> {bits = 1 : i64, plane = 5 : i64, scale = 4 : i64} : vector<64xi8>
  %c3 = lowbit.uk.unpack %w into %c : vector<64xi8> {bits = 1, plane = 5, scale = 4} : vector<64xi8>
  // CHECK: lowbit.uk.shr_exact %{{.*}} {shift = 6 : i64} : vector<16xi32>
  %e = lowbit.uk.shr_exact %acc {shift = 6} : vector<16xi32>
  // CHECK: %[[D:.*]] = lowbit.uk.dot4 %{{.*}}, %[[C]], %[[X]] : vector<64xi8> -> vector<16xi32>
  %d = lowbit.uk.dot4 %acc, %c, %x : vector<64xi8> -> vector<16xi32>
  // CHECK: lowbit.uk.dot4 %{{.*}}, %[[W]], %[[X]] {centred} : vector<64xi8> -> vector<16xi32>
  %dc = lowbit.uk.dot4 %acc, %w, %x {centred} : vector<64xi8> -> vector<16xi32>
  // CHECK: lowbit.uk.codebook %[[C]] {table = array<i8: 1, 24, 45, 63, 79, 93, 106, 118, -127, -115, -103, -90, -75, -59, -39, -15>} : vector<64xi8>
  %cb = lowbit.uk.codebook %c {table = array<i8: 1, 24, 45, 63, 79, 93, 106, 118, -127, -115, -103, -90, -75, -59, -39, -15>} : vector<64xi8>
  // CHECK: lowbit.uk.load_scales %{{.*}}[%{{.*}}, %{{.*}}] {bits = 6 : i64} : memref<?xui16> -> vector<16xf32>
  %sc = lowbit.uk.load_scales %scales[%off, %off] {bits = 6} : memref<?xui16> -> vector<16xf32>
  // CHECK: lowbit.uk.load_scales %{{.*}}[%{{.*}}, %{{.*}}] {bits = 8 : i64, sign_extend} : memref<?xui16> -> vector<16xf32>
  %sc8 = lowbit.uk.load_scales %scales[%off, %off] {bits = 8, sign_extend} : memref<?xui16> -> vector<16xf32>
  // CHECK: %[[S:.*]] = lowbit.uk.load_half %{{.*}}[%{{.*}}] : memref<?xui16> -> vector<16xf32>
  %s = lowbit.uk.load_half %scales[%off] : memref<?xui16> -> vector<16xf32>
  // CHECK: %[[G1:.*]] = lowbit.uk.block_combine %{{.*}}, %[[D]], %{{.*}} zero(%[[S]], %{{.*}} : vector<16xf32>) : vector<16xi32> -> vector<16xf32>
  %g1 = lowbit.uk.block_combine %out, %d, %inv zero(%s, %sum : vector<16xf32>) : vector<16xi32> -> vector<16xf32>
  // CHECK: %[[G2:.*]] = lowbit.uk.block_combine %[[G1]], %[[D]], %{{.*}} : vector<16xi32> -> vector<16xf32>
  %g2 = lowbit.uk.block_combine %g1, %d, %inv : vector<16xi32> -> vector<16xf32>
  // CHECK: lowbit.uk.block_combine %[[G2]], %[[D]] scale(%[[S]] : vector<16xf32>) : vector<16xi32> -> vector<16xf32>
  %g3 = lowbit.uk.block_combine %g2, %d scale(%s : vector<16xf32>) : vector<16xi32> -> vector<16xf32>
  // CHECK: %[[Y2:.*]] = lowbit.uk.group_combine %{{.*}}, %[[G2]], %[[S]] : vector<16xf32>
  %y2 = lowbit.uk.group_combine %out, %g2, %s : vector<16xf32>
  // CHECK: %[[T:.*]] = lowbit.uk.ternary_scale %[[D]], %{{.*}}, %{{.*}}, %{{.*}} : vector<16xi32> -> vector<16xf32>
  %t = lowbit.uk.ternary_scale %d, %sum, %inv, %inv : vector<16xi32> -> vector<16xf32>
  // CHECK: lowbit.uk.store %[[Y2]], %{{.*}}[%{{.*}}] : vector<16xf32>, memref<?xf32>
  lowbit.uk.store %y2, %y[%off] : vector<16xf32>, memref<?xf32>
  // CHECK: lowbit.uk.store %[[T]], %{{.*}}[%{{.*}}], %{{.*}} : vector<16xf32>, memref<?xf32>
  lowbit.uk.store %t, %y[%off], %off : vector<16xf32>, memref<?xf32>
  // CHECK: lowbit.uk.prefetch %{{.*}}[%{{.*}}] : memref<?xui8>
  lowbit.uk.prefetch %codes[%off] : memref<?xui8>
  return
}

// CHECK-LABEL: func.func @microkernel_scalar(
func.func @microkernel_scalar(%codes: memref<?xui8>, %xq: memref<?xi8>,
                              %acc: vector<1xi32>, %off: index) -> vector<1xi32> {
  // CHECK: lowbit.uk.load {{.*}} -> vector<4xi8>
  %w = lowbit.uk.load %codes[%off] : memref<?xui8> -> vector<4xi8>
  // CHECK: lowbit.uk.broadcast4 {{.*}} -> vector<4xi8>
  %x = lowbit.uk.broadcast4 %xq[%off] : memref<?xi8> -> vector<4xi8>
  // CHECK: lowbit.uk.unpack {{.*}} {bits = 1 : i64, plane = 7 : i64} : vector<4xi8>
  %c = lowbit.uk.unpack %w {bits = 1, plane = 7} : vector<4xi8>
  // CHECK: lowbit.uk.dot4 {{.*}} : vector<4xi8> -> vector<1xi32>
  %d = lowbit.uk.dot4 %acc, %c, %x : vector<4xi8> -> vector<1xi32>
  return %d : vector<1xi32>
}

// The lut-elementwise ops at AVX-512 and AVX2 widths.
// CHECK-LABEL: func.func @microkernel_lut(
func.func @microkernel_lut(%codes: memref<?xui8>, %xq: memref<?xi8>,
                           %acc: vector<16xi32>, %acc8: vector<8xi32>,
                           %off: index) -> (vector<16xi32>, vector<8xi32>) {
  // CHECK: %[[T:.*]] = lowbit.uk.stack_buffer {bytes = 4096 : i64} : memref<?xi8>
  %t = lowbit.uk.stack_buffer {bytes = 4096} : memref<?xi8>
  // CHECK: lowbit.uk.lut_tables %{{.*}}[%{{.*}}], %[[T]][%{{.*}}] {width = 3 : i64} : memref<?xi8>, memref<?xi8>
  lowbit.uk.lut_tables %xq[%off], %t[%off] {width = 3} : memref<?xi8>, memref<?xi8>
  // CHECK: lowbit.uk.load %{{.*}}[%{{.*}}] : memref<?xui8> -> vector<16xi32>
  %h = lowbit.uk.load %codes[%off] : memref<?xui8> -> vector<16xi32>
  %w = lowbit.uk.load %codes[%off] : memref<?xui8> -> vector<64xi8>
  // CHECK: %[[S:.*]] = lowbit.uk.lut_signs %{{.*}}[%{{.*}}] : memref<?xui8> -> vector<64xi8>
  %s = lowbit.uk.lut_signs %codes[%off] : memref<?xui8> -> vector<64xi8>
  // CHECK: lowbit.uk.lut_dot %{{.*}}, %{{.*}}, %{{.*}}, %[[T]][%{{.*}}] {high = false} : vector<64xi8>, memref<?xi8>, vector<16xi32>
  %l0, %h0 = lowbit.uk.lut_dot %acc, %acc, %w, %t[%off] {high = false} : vector<64xi8>, memref<?xi8>, vector<16xi32>
  // CHECK: lowbit.uk.lut_dot {{.*}} signs(%[[S]] : vector<64xi8>) {high = true} : vector<64xi8>, memref<?xi8>, vector<16xi32>
  %l1, %h1 = lowbit.uk.lut_dot %l0, %h0, %w, %t[%off] signs(%s : vector<64xi8>) {high = true} : vector<64xi8>, memref<?xi8>, vector<16xi32>
  // CHECK: lowbit.uk.lut_combine %{{.*}}, %{{.*}} : vector<16xi32>
  %r = lowbit.uk.lut_combine %l1, %h1 : vector<16xi32>
  // CHECK: lowbit.uk.spill %{{.*}}, %[[T]][%{{.*}}] : vector<16xi32>, memref<?xi8>
  lowbit.uk.spill %r, %t[%off] : vector<16xi32>, memref<?xi8>
  // CHECK: %[[F:.*]] = lowbit.uk.load %[[T]][%{{.*}}] : memref<?xi8> -> vector<16xf32>
  %f = lowbit.uk.load %t[%off] : memref<?xi8> -> vector<16xf32>
  // CHECK: lowbit.uk.spill %[[F]], %[[T]][%{{.*}}] : vector<16xf32>, memref<?xi8>
  lowbit.uk.spill %f, %t[%off] : vector<16xf32>, memref<?xi8>
  %w8 = lowbit.uk.load %codes[%off] : memref<?xui8> -> vector<32xi8>
  // CHECK: lowbit.uk.lut_signs %{{.*}}[%{{.*}}] : memref<?xui8> -> vector<32xi8>
  %s8 = lowbit.uk.lut_signs %codes[%off] : memref<?xui8> -> vector<32xi8>
  // CHECK: lowbit.uk.lut_dot {{.*}} : vector<32xi8>, memref<?xi8>, vector<8xi32>
  %l8, %h8 = lowbit.uk.lut_dot %acc8, %acc8, %w8, %t[%off] signs(%s8 : vector<32xi8>) {high = false} : vector<32xi8>, memref<?xi8>, vector<8xi32>
  // CHECK: lowbit.uk.lut_combine %{{.*}}, %{{.*}} : vector<8xi32>
  %r8 = lowbit.uk.lut_combine %l8, %h8 : vector<8xi32>
  // The lane order's ops (lut_abi.h).
  // CHECK: %[[SD:.*]] = lowbit.uk.lut_signs %{{.*}}[%{{.*}}] {by_dword} : memref<?xui8> -> vector<32xi8>
  %sd = lowbit.uk.lut_signs %codes[%off] {by_dword} : memref<?xui8> -> vector<32xi8>
  // CHECK: %[[LK:.*]] = lowbit.uk.lut_lookup %{{.*}}, %[[T]][%{{.*}}] {high = true} : vector<32xi8>, memref<?xi8>
  %lk = lowbit.uk.lut_lookup %w8, %t[%off] {high = true} : vector<32xi8>, memref<?xi8>
  // CHECK: %[[Z:.*]] = lowbit.uk.zip %[[LK]], %[[LK]] {high = false} : vector<32xi8>
  %z = lowbit.uk.zip %lk, %lk {high = false} : vector<32xi8>
  // CHECK: %[[P:.*]] = lowbit.uk.dot2 %[[Z]], %[[SD]] : vector<32xi8> -> vector<16xi16>
  %p = lowbit.uk.dot2 %z, %sd : vector<32xi8> -> vector<16xi16>
  // CHECK: %[[E:.*]] = lowbit.uk.extend %[[P]], %[[P]] {high_half = true} : vector<16xi16> -> vector<8xi32>
  %e = lowbit.uk.extend %p, %p {high_half = true} : vector<16xi16> -> vector<8xi32>
  // With multiplier words (int8 tables: a, 0).
  // CHECK: %[[EM:.*]] = lowbit.uk.extend %[[P]], %[[P]], %[[SD]] {high_half = false} : vector<16xi16>, vector<32xi8> -> vector<8xi32>
  %em = lowbit.uk.extend %p, %p, %sd {high_half = false} : vector<16xi16>, vector<32xi8> -> vector<8xi32>
  // CHECK: %[[PF:.*]] = lowbit.uk.lane_fold %[[P]], %[[P]] : vector<16xi16>
  %pf = lowbit.uk.lane_fold %p, %p : vector<16xi16>
  // CHECK: %[[WR:.*]] = lowbit.uk.widen %[[PF]], %[[SD]] {lane = 1 : i64} : vector<16xi16>, vector<32xi8> -> vector<8xi32>
  %wr = lowbit.uk.widen %pf, %sd {lane = 1 : i64} : vector<16xi16>, vector<32xi8> -> vector<8xi32>
  // CHECK: %[[FOLD:.*]] = lowbit.uk.lane_fold %[[E]], %[[EM]] : vector<8xi32>
  %fold0 = lowbit.uk.lane_fold %e, %em : vector<8xi32>
  // CHECK: arith.addi %[[FOLD]], %[[WR]] : vector<8xi32>
  %fold = arith.addi %fold0, %wr : vector<8xi32>
  return %r, %fold : vector<16xi32>, vector<8xi32>
}

// The int8-table lookups of lut-bitserial (table_bits = 8) at AVX-512,
// AVX2 and NEON widths: one nibble and the other.
// CHECK-LABEL: func.func @microkernel_lut_dot8(
func.func @microkernel_lut_dot8(%w: vector<64xi8>, %m: vector<64xi8>,
                                %acc: vector<16xi32>, %w8: vector<32xi8>,
                                %acc8: vector<8xi32>, %w4: vector<16xi8>,
                                %acc4: vector<4xi32>, %t: memref<?xi8>,
                                %off: index)
    -> (vector<16xi32>, vector<8xi32>, vector<4xi32>) {
  // CHECK: %[[L:.*]] = lowbit.uk.lut_dot8 %{{.*}}, %[[W:.*]], %[[T:.*]][%[[OFF:.*]]], %[[M:.*]] {high = false} : vector<64xi8>, memref<?xi8>, vector<16xi32>
  %l = lowbit.uk.lut_dot8 %acc, %w, %t[%off], %m {high = false} : vector<64xi8>, memref<?xi8>, vector<16xi32>
  // CHECK: %[[H:.*]] = lowbit.uk.lut_dot8 %[[L]], %[[W]], %[[T]][%[[OFF]]], %[[M]] {high = true} : vector<64xi8>, memref<?xi8>, vector<16xi32>
  %h = lowbit.uk.lut_dot8 %l, %w, %t[%off], %m {high = true} : vector<64xi8>, memref<?xi8>, vector<16xi32>
  // CHECK: lowbit.uk.lut_dot8 {{.*}} {high = true} : vector<32xi8>, memref<?xi8>, vector<8xi32>
  %a8 = lowbit.uk.lut_dot8 %acc8, %w8, %t[%off], %w8 {high = true} : vector<32xi8>, memref<?xi8>, vector<8xi32>
  // CHECK: lowbit.uk.lut_dot8 {{.*}} {high = false} : vector<16xi8>, memref<?xi8>, vector<4xi32>
  %a4 = lowbit.uk.lut_dot8 %acc4, %w4, %t[%off], %w4 {high = false} : vector<16xi8>, memref<?xi8>, vector<4xi32>
  return %h, %a8, %a4 : vector<16xi32>, vector<8xi32>, vector<4xi32>
}
