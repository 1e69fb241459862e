// RUN: lowbit-opt %s --lowbit-select-config=target=generic --lowbit-convert-to-generic | mlir-translate --mlir-to-cpp | FileCheck %s --implicit-check-not=_mm

// The generic TargetInfo: a register is one row x 4 k in a uint32_t
// assembled from bytes (endianness-independent), unpacked with shifts and
// masks on all 4 bytes at once, multiplied byte by byte with the
// activations sign-extended as (v ^ 0x80) - 0x80; fp16 through ldexpf; a
// partial store is an if.

// CHECK: #include <math.h>
// CHECK-LABEL: extern "C" void ops(
// CHECK: uint8_t [[B0:v[0-9]+]] = {{v[0-9]+}}[{{v[0-9]+}}];
// CHECK: uint32_t [[W0:v[0-9]+]] = (uint32_t) [[B0]];
// CHECK: uint32_t {{v[0-9]+}} = {{v[0-9]+}} << {{v[0-9]+}};
// CHECK-COUNT-3: uint32_t {{v[0-9]+}} = {{v[0-9]+}} | {{v[0-9]+}};
// 0xC0C0C0C0: plane 3 of 2-bit codes left in place (x 64).
// CHECK: uint32_t [[MASK:v[0-9]+]] = 3233857728;
// CHECK: uint32_t [[C:v[0-9]+]] = {{v[0-9]+}} & [[MASK]];
// CHECK: int32_t [[BIAS:v[0-9]+]] = 128;
// CHECK: int32_t [[XOR:v[0-9]+]] = {{v[0-9]+}} ^ [[BIAS]];
// CHECK: int32_t [[XS:v[0-9]+]] = [[XOR]] - [[BIAS]];
// CHECK: int32_t {{v[0-9]+}} = {{v[0-9]+}} * [[XS]];
// CHECK-COUNT-4: int32_t {{v[0-9]+}} = {{v[0-9]+}} + {{v[0-9]+}};
// CHECK: int32_t [[SIXTYFOUR:v[0-9]+]] = 64;
// CHECK: int32_t {{v[0-9]+}} = {{v[0-9]+}} / [[SIXTYFOUR]];
// CHECK: float {{v[0-9]+}} = ldexpf(
// g + (D - z * S) * inv, then y + g * s
// CHECK: float [[S:v[0-9]+]] = {{v[0-9]+}} ? {{v[0-9]+}} : {{v[0-9]+}};
// CHECK-NEXT: float [[DF:v[0-9]+]] = (float) {{v[0-9]+}};
// CHECK-NEXT: float [[SF:v[0-9]+]] = (float) {{v[0-9]+}};
// CHECK-NEXT: float [[ZS:v[0-9]+]] = [[S]] * [[SF]];
// CHECK-NEXT: float [[T:v[0-9]+]] = [[DF]] - [[ZS]];
// CHECK-NEXT: float [[TI:v[0-9]+]] = [[T]] * {{v[0-9]+}};
// CHECK-NEXT: float [[G:v[0-9]+]] = [[S]] + [[TI]];
// CHECK-NEXT: float [[GS:v[0-9]+]] = [[G]] * [[S]];
// CHECK-NEXT: float {{v[0-9]+}} = [[S]] + [[GS]];
// CHECK: if ({{v[0-9]+}}) {
// CHECK-NEXT: size_t [[ZERO:v[0-9]+]] = 0;
// CHECK-NEXT: {{v[0-9]+}}[[[ZERO]]] = {{v[0-9]+}};
// CHECK-NEXT: }
func.func @ops(%codes: memref<?xui8> {lowbit.readonly}, %scales: memref<?xui16> {lowbit.readonly},
               %xq: memref<?xi8> {lowbit.readonly}, %y: memref<?xf32>, %off: index, %count: index,
               %sum: i32, %inv: f32) {
  %zero = arith.constant dense<0> : vector<1xi32>
  %w = lowbit.uk.load %codes[%off] : memref<?xui8> -> vector<4xi8>
  %x = lowbit.uk.broadcast4 %xq[%off] : memref<?xi8> -> vector<4xi8>
  %c = lowbit.uk.unpack %w {bits = 2, plane = 3, scale = 6} : vector<4xi8>
  %d = lowbit.uk.dot4 %zero, %c, %x : vector<4xi8> -> vector<1xi32>
  %e = lowbit.uk.shr_exact %d {shift = 6} : vector<1xi32>
  %s = lowbit.uk.load_half %scales[%off] : memref<?xui16> -> vector<1xf32>
  %g1 = lowbit.uk.block_combine %s, %e, %inv zero(%s, %sum : vector<1xf32>) : vector<1xi32> -> vector<1xf32>
  %y1 = lowbit.uk.group_combine %s, %g1, %s : vector<1xf32>
  lowbit.uk.store %y1, %y[%off], %count : vector<1xf32>, memref<?xf32>
  return
}
