// RUN: lowbit-opt %s -split-input-file -verify-diagnostics

// One case per diagnostic of the lowbit.uk.* verifiers.

func.func @unpack_bits(%w: vector<64xi8>) -> vector<64xi8> {
  // expected-error@+1 {{'lowbit.uk.unpack' op bits must be 1, 2 or 4, got 3}}
  %c = lowbit.uk.unpack %w {bits = 3, plane = 0} : vector<64xi8>
  return %c : vector<64xi8>
}

// -----

func.func @unpack_plane(%w: vector<64xi8>) -> vector<64xi8> {
  // expected-error@+1 {{'lowbit.uk.unpack' op plane must be below 2 for 4-bit codes, got 2}}
  %c = lowbit.uk.unpack %w {bits = 4, plane = 2} : vector<64xi8>
  return %c : vector<64xi8>
}

// -----

func.func @codebook_table(%c: vector<64xi8>) -> vector<64xi8> {
  // expected-error@+1 {{'lowbit.uk.codebook' op table must have 16 entries, got 4}}
  %u = lowbit.uk.codebook %c {table = array<i8: 1, 2, 3, 4>} : vector<64xi8>
  return %u : vector<64xi8>
}

// -----

func.func @load_scales_bytes(%s: memref<?xui16>, %i: index) -> vector<4xf32> {
  // expected-error@+1 {{'lowbit.uk.load_scales' op 4 lanes of 5-bit values are not a whole number of bytes}}
  %v = lowbit.uk.load_scales %s[%i, %i] {bits = 5} : memref<?xui16> -> vector<4xf32>
  return %v : vector<4xf32>
}

// -----

func.func @dot4_lanes(%acc: vector<8xi32>, %w: vector<64xi8>) -> vector<8xi32> {
  // expected-error@+1 {{'lowbit.uk.dot4' op byte register 'vector<64xi8>' must hold 4 bytes per lane of 'vector<8xi32>'}}
  %d = lowbit.uk.dot4 %acc, %w, %w : vector<64xi8> -> vector<8xi32>
  return %d : vector<8xi32>
}

// -----

func.func @combine_lanes(%y: vector<16xf32>, %d: vector<8xi32>, %inv: f32) -> vector<16xf32> {
  // expected-error@+1 {{'lowbit.uk.block_combine' op dot 'vector<8xi32>' and sums 'vector<16xf32>' must have the same number of lanes}}
  %r = lowbit.uk.block_combine %y, %d, %inv : vector<8xi32> -> vector<16xf32>
  return %r : vector<16xf32>
}

// -----

func.func @combine_zero_type(%y: vector<16xf32>, %z: vector<8xf32>, %d: vector<16xi32>, %sum: i32, %inv: f32) -> vector<16xf32> {
  // expected-error@+1 {{'lowbit.uk.block_combine' op zero 'vector<8xf32>' must have the type of the sums 'vector<16xf32>'}}
  %r = lowbit.uk.block_combine %y, %d, %inv zero(%z, %sum : vector<8xf32>) : vector<16xi32> -> vector<16xf32>
  return %r : vector<16xf32>
}

// -----

func.func @combine_zero_without_sum(%y: vector<16xf32>, %d: vector<16xi32>, %inv: f32) -> vector<16xf32> {
  // expected-error@+1 {{'lowbit.uk.block_combine' op takes the zero points and the activation sum together}}
  %r = "lowbit.uk.block_combine"(%y, %d, %inv, %y) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 1, 0>} : (vector<16xf32>, vector<16xi32>, f32, vector<16xf32>) -> vector<16xf32>
  return %r : vector<16xf32>
}

// -----

func.func @combine_two_multipliers(%y: vector<16xf32>, %d: vector<16xi32>, %inv: f32) -> vector<16xf32> {
  // expected-error@+1 {{'lowbit.uk.block_combine' op takes one multiplier: inv or scale}}
  %r = lowbit.uk.block_combine %y, %d, %inv scale(%y : vector<16xf32>) : vector<16xi32> -> vector<16xf32>
  return %r : vector<16xf32>
}

// -----

func.func @combine_no_multiplier(%y: vector<16xf32>, %d: vector<16xi32>) -> vector<16xf32> {
  // expected-error@+1 {{'lowbit.uk.block_combine' op takes one multiplier: inv or scale}}
  %r = lowbit.uk.block_combine %y, %d : vector<16xi32> -> vector<16xf32>
  return %r : vector<16xf32>
}

// -----

func.func @combine_scale_type(%y: vector<16xf32>, %s: vector<8xf32>, %d: vector<16xi32>) -> vector<16xf32> {
  // expected-error@+1 {{'lowbit.uk.block_combine' op scale 'vector<8xf32>' must have the type of the sums 'vector<16xf32>'}}
  %r = lowbit.uk.block_combine %y, %d scale(%s : vector<8xf32>) : vector<16xi32> -> vector<16xf32>
  return %r : vector<16xf32>
}

// -----

func.func @group_combine_types(%y: vector<16xf32>, %s: vector<8xf32>) -> vector<16xf32> {
  // expected-error@+1 {{'lowbit.uk.group_combine' op failed to verify that all of {y, sums, scale, result} have same type}}
  %r = "lowbit.uk.group_combine"(%y, %y, %s) : (vector<16xf32>, vector<16xf32>, vector<8xf32>) -> vector<16xf32>
  return %r : vector<16xf32>
}

// -----

func.func @unpack_byte(%w: vector<64xi8>) -> vector<64xi8> {
  // expected-error@+1 {{'lowbit.uk.unpack' op scale 7 makes 2-bit codes exceed a byte}}
  %c = lowbit.uk.unpack %w {bits = 2, plane = 3, scale = 7} : vector<64xi8>
  return %c : vector<64xi8>
}

// -----

func.func @ternary_lanes(%d: vector<16xi32>, %sum: i32, %s: f32) -> vector<8xf32> {
  // expected-error@+1 {{'lowbit.uk.ternary_scale' op dot 'vector<16xi32>' and result 'vector<8xf32>' must have the same number of lanes}}
  %r = lowbit.uk.ternary_scale %d, %sum, %s, %s : vector<16xi32> -> vector<8xf32>
  return %r : vector<8xf32>
}

// -----

func.func @load_element_type(%codes: memref<?xi16>, %off: index) -> vector<64xi8> {
  // expected-error@+1 {{'lowbit.uk.load' op operand #0 must be 1D memref of 8-bit unsigned integer or 8-bit signless integer values, but got 'memref<?xi16>'}}
  %w = lowbit.uk.load %codes[%off] : memref<?xi16> -> vector<64xi8>
  return %w : vector<64xi8>
}

// -----

func.func @lut_dot_acc(%a: vector<8xi32>, %w: vector<64xi8>, %t: memref<?xi8>, %off: index) -> vector<8xi32> {
  // expected-error@+1 {{'lowbit.uk.lut_dot' op accumulator 'vector<8xi32>' must hold one int32 per 4 bytes of 'vector<64xi8>'}}
  %l, %h = lowbit.uk.lut_dot %a, %a, %w, %t[%off] {high = false} : vector<64xi8>, memref<?xi8>, vector<8xi32>
  return %l : vector<8xi32>
}

// -----

func.func @lut_dot_signs(%a: vector<16xi32>, %w: vector<64xi8>, %s: vector<32xi8>, %t: memref<?xi8>, %off: index) -> vector<16xi32> {
  // expected-error@+1 {{'lowbit.uk.lut_dot' op signs 'vector<32xi8>' must have the type of the indices 'vector<64xi8>'}}
  %l, %h = lowbit.uk.lut_dot %a, %a, %w, %t[%off] signs(%s : vector<32xi8>) {high = false} : vector<64xi8>, memref<?xi8>, vector<16xi32>
  return %l : vector<16xi32>
}

// -----

func.func @dot2_lanes(%a: vector<32xi8>) -> vector<8xi16> {
  // expected-error@+1 {{'lowbit.uk.dot2' op needs two bytes of 'vector<32xi8>' per int16 lane of 'vector<8xi16>'}}
  %p = lowbit.uk.dot2 %a, %a : vector<32xi8> -> vector<8xi16>
  return %p : vector<8xi16>
}

// -----

func.func @extend_lanes(%a: vector<16xi16>) -> vector<16xi32> {
  // expected-error@+1 {{'lowbit.uk.extend' op widens half the int16 lanes of 'vector<16xi16>', not to 'vector<16xi32>'}}
  %e = lowbit.uk.extend %a, %a {high_half = false} : vector<16xi16> -> vector<16xi32>
  return %e : vector<16xi32>
}

// -----

func.func @extend_multipliers(%a: vector<16xi16>, %m: vector<64xi8>) -> vector<8xi32> {
  // expected-error@+1 {{'lowbit.uk.extend' op needs a word pair per int32 lane of 'vector<8xi32>' in its multipliers, got 'vector<64xi8>'}}
  %e = lowbit.uk.extend %a, %a, %m {high_half = false} : vector<16xi16>, vector<64xi8> -> vector<8xi32>
  return %e : vector<8xi32>
}

// -----

func.func @lane_fold_lanes(%a: vector<16xi32>) -> vector<16xi32> {
  // expected-error@+1 {{'lowbit.uk.lane_fold' op folds registers of two 16-byte lanes (vector<8xi32> or vector<16xi16>), got 'vector<16xi32>'}}
  %f = lowbit.uk.lane_fold %a, %a : vector<16xi32>
  return %f : vector<16xi32>
}

// -----

func.func @widen_lane(%w: vector<16xi16>, %m: vector<32xi8>) -> vector<8xi32> {
  // expected-error@+1 {{'lowbit.uk.widen' op lane must be 0 or 1, got 2}}
  %r = lowbit.uk.widen %w, %m {lane = 2 : i64} : vector<16xi16>, vector<32xi8> -> vector<8xi32>
  return %r : vector<8xi32>
}

// -----

func.func @widen_types(%w: vector<32xi16>, %m: vector<32xi8>) -> vector<8xi32> {
  // expected-error@+1 {{'lowbit.uk.widen' op widens a 16-byte lane of vector<16xi16> into vector<8xi32> with vector<32xi8> multipliers, got 'vector<32xi16>', 'vector<32xi8>' -> 'vector<8xi32>'}}
  %r = lowbit.uk.widen %w, %m {lane = 0 : i64} : vector<32xi16>, vector<32xi8> -> vector<8xi32>
  return %r : vector<8xi32>
}

// -----

func.func @lut_dot8_lanes(%a: vector<8xi32>, %w: vector<64xi8>, %t: memref<?xi8>, %off: index) -> vector<8xi32> {
  // expected-error@+1 {{'lowbit.uk.lut_dot8' op accumulator 'vector<8xi32>' must hold one int32 per 4 bytes of 'vector<64xi8>'}}
  %r = lowbit.uk.lut_dot8 %a, %w, %t[%off], %w {high = false} : vector<64xi8>, memref<?xi8>, vector<8xi32>
  return %r : vector<8xi32>
}
