//===- LowBitMicrokernelOps.td - lowbit microkernel ops ----*- tablegen -*-===//
//
// Register-level operations of the up-convert kernels (`lowbit.uk.*`). The
// target-independent lowering (lowbit-lower-upconvert) writes tiled loops out
// of these; the per-target conversions to EmitC turn each one into a few
// intrinsics (x86) or portable scalar C++ (generic) through TargetInfo hooks.
//
//===----------------------------------------------------------------------===//

#ifndef LOWBIT_DIALECT_LOWBIT_IR_LOWBITMICROKERNELOPS_TD
#define LOWBIT_DIALECT_LOWBIT_IR_LOWBITMICROKERNELOPS_TD

include "lowbit/Dialect/LowBit/IR/LowBitBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class LowBit_UkOp<string mnemonic, list<Trait> traits = []>
    : Op<LowBit_Dialect, "uk." # mnemonic, traits>;

// A register of bytes: 4 * L bytes, lane i holding 4 consecutive bytes.
def LowBit_ByteRegister : VectorOfRankAndType<[1], [I8]>;
// A register of L int32 or f32 lanes, one per weight row.
def LowBit_I32Register : VectorOfRankAndType<[1], [I32]>;
def LowBit_F32Register : VectorOfRankAndType<[1], [F32]>;

def LowBit_UkLoadOp : LowBit_UkOp<"load", [MemoryEffects<[MemRead]>]> {
  let summary = "Loads one register of packed weight codes";
  let description = [{
    Loads one register of consecutive bytes starting at byte `offset`. In
    the vnni4 layout a 64-byte vector holds 16 rows x 4 k per bit plane, so
    an R-byte register holds R/4 rows. An int32 result reads little-endian
    int32 lanes (the per-row header of lut_abi.h), an f32 result f32 lanes;
    an i8 base is a LUT kernel's own buffer (tables, partial sums spilled
    with `lowbit.uk.spill`). No alignment is assumed. With `bytes` (a byte
    register, fewer bytes than it holds), only the first `bytes` bytes are
    read and the rest are zero: memory past them is never touched (a 54-byte
    TQ1_0 block in a 64-byte register, kernel_abi.h's GGML ROWS LAYOUT).

    ```mlir
    %w = lowbit.uk.load %codes[%off] : memref<?xui8> -> vector<64xi8>
    %c = lowbit.uk.load %codes[%off] : memref<?xui8> -> vector<16xi32>
    %b = lowbit.uk.load %codes[%off] {bytes = 54} : memref<?xui8> -> vector<64xi8>
    ```
  }];
  let arguments = (ins MemRefRankOf<[UI8, I8], [1]>:$base, Index:$offset,
                   OptionalAttr<ConfinedAttr<I64Attr, [IntMinValue<1>]>>:$bytes);
  let results = (outs AnyTypeOf<[LowBit_ByteRegister, LowBit_I32Register,
                                 LowBit_F32Register]>:$result);
  let builders = [
    OpBuilder<(ins "Type":$result, "Value":$base, "Value":$offset), [{
      build($_builder, $_state, result, base, offset, IntegerAttr());
    }]>
  ];
  let assemblyFormat = [{
    $base `[` $offset `]` attr-dict `:` type($base) `->` type($result)
  }];
}

def LowBit_UkBroadcast4Op
    : LowBit_UkOp<"broadcast4", [MemoryEffects<[MemRead]>]> {
  let summary = "Broadcasts 4 consecutive int8 activations to every lane";
  let description = [{
    Reads the 4 bytes `base[offset .. offset + 3]` and repeats them in every
    32-bit lane of the result: byte `4 * i + r` of the result is
    `base[offset + r]`. This is the activation operand of `lowbit.uk.dot4`.

    ```mlir
    %x = lowbit.uk.broadcast4 %xq[%k] : memref<?xi8> -> vector<64xi8>
    ```
  }];
  let arguments = (ins MemRefRankOf<[I8], [1]>:$base, Index:$offset);
  let results = (outs LowBit_ByteRegister:$result);
  let assemblyFormat = [{
    $base `[` $offset `]` attr-dict `:` type($base) `->` type($result)
  }];
}

def LowBit_UkUnpackOp
    : LowBit_UkOp<"unpack", [Pure, AllTypesMatch<["packed", "result"]>]> {
  let summary = "Extracts one bit plane of packed codes as unsigned bytes";
  let description = [{
    Every byte of the result is `((byte >> (bits * plane)) & (2^bits - 1))
    << scale` of the same byte of `packed`: with the vnni4 layout this is the
    16 rows x 4 k block of unsigned int8 codes for k offset `4 * plane` of
    the vector, multiplied by 2^scale. `bits` is 1, 2 or 4, `plane` is in
    `[0, 8 / bits)` and the scaled codes stay below 256; `scale = bits *
    plane` leaves the plane where it is (one AND, no shift). A dot product
    of scaled codes is divided back with `lowbit.uk.shr_exact`, or the scale
    is part of the math (w1gG doubles its codes: q = 2c - 1).

    With `into`, the result is ORed into the bytes of `%low` (whose bits
    below 2^scale it then sits on): the high plane of a code of 3, 5 or 6
    bits joins its low plane (kernel_abi.h lowbit_vnni4_low_bits), so that
    one dot product takes the whole code.

    ```mlir
    %c = lowbit.uk.unpack %w {bits = 2, plane = 3} : vector<64xi8>
    %d = lowbit.uk.unpack %w {bits = 2, plane = 3, scale = 6} : vector<64xi8>
    %e = lowbit.uk.unpack %h into %c : vector<64xi8> {bits = 1, plane = 0, scale = 4} : vector<64xi8>
    ```
  }];
  let arguments = (ins LowBit_ByteRegister:$packed,
                   Optional<LowBit_ByteRegister>:$low,
                   ConfinedAttr<I64Attr, [IntMinValue<1>]>:$bits,
                   ConfinedAttr<I64Attr, [IntNonNegative]>:$plane,
                   DefaultValuedAttr<ConfinedAttr<I64Attr, [IntNonNegative]>,
                                     "0">:$scale);
  let results = (outs LowBit_ByteRegister:$result);
  let assemblyFormat =
      "$packed (`into` $low^ `:` type($low))? attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def LowBit_UkTritOp
    : LowBit_UkOp<"trit", [Pure, AllTypesMatch<["packed", "result"]>]> {
  let summary = "Extracts one base-3 digit of packed ternary codes";
  let description = [{
    Every byte of the result is `((byte * 3^digit) mod 256) * 3 >> 8` of the
    same byte of `packed`, a code in 0..2: digit `digit` (0 the most
    significant) of a byte that holds five base-3 digits as the fixed-point
    fraction ggml's TQ1_0 stores (ggml-quants.c, dequantize_row_tq1_0), so
    that `lowbit.uk.dot4` takes it like an i2s code. `digit` is in [0, 5).

    ```mlir
    %c = lowbit.uk.trit %w {digit = 3} : vector<64xi8>
    ```
  }];
  let arguments = (ins LowBit_ByteRegister:$packed,
                   ConfinedAttr<I64Attr, [IntNonNegative, IntMaxValue<4>]>:$digit);
  let results = (outs LowBit_ByteRegister:$result);
  let assemblyFormat = "$packed attr-dict `:` type($result)";
}

def LowBit_UkTripleOp
    : LowBit_UkOp<"triple", [Pure, AllTypesMatch<["packed", "result"]>]> {
  let summary = "Multiplies every byte by 3, modulo 256";
  let description = [{
    Every byte of the result is `(3 * byte) mod 256` of the same byte of
    `packed`. With f_i = (v * 3^i) mod 256 the fraction of digit i of a
    TQ1_0 byte v (`lowbit.uk.trit`), f_(i+1) is `triple` of f_i and the
    digit is (3 f_i - f_(i+1)) / 256 exactly, so that a dot product of
    digits is one of fractions (the up-convert kernels of kernel_abi.h's
    GGML ROWS LAYOUT on targets whose dot product takes codes up to 255).

    ```mlir
    %f1 = lowbit.uk.triple %f0 : vector<64xi8>
    ```
  }];
  let arguments = (ins LowBit_ByteRegister:$packed);
  let results = (outs LowBit_ByteRegister:$result);
  let assemblyFormat = "$packed attr-dict `:` type($result)";
}

def LowBit_UkCodebookOp
    : LowBit_UkOp<"codebook", [Pure, AllTypesMatch<["codes", "result"]>]> {
  let summary = "Maps 4-bit codes through a 16-entry byte table";
  let description = [{
    Every byte of the result is `table[byte]` of the same byte of `codes`,
    which must be below 16 (a `lowbit.uk.unpack` of 4 bits or fewer); the
    16 entries of `table` are read as unsigned bytes. The up-convert kernels
    of a `codebook` encoding (ggml's IQ4_NL) look their codes up into
    `codebook[q] + 128`, 8-bit codes with code offset 128 that the dot
    product then takes like Q8_0's (`lowbit.uk.dot4`, `centred` where the
    target needs it). One in-register byte shuffle per register: `pshufb`
    (x86, per 16-byte lane), `tbl` (NEON); a table in the generic C++.

    ```mlir
    %u = lowbit.uk.codebook %c {table = array<i8: 1, 24, 45, 63, 79, 93, 106, 118, -127, -115, -103, -90, -75, -59, -39, -15>} : vector<64xi8>
    ```
  }];
  let arguments = (ins LowBit_ByteRegister:$codes, DenseI8ArrayAttr:$table);
  let results = (outs LowBit_ByteRegister:$result);
  let assemblyFormat = "$codes attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def LowBit_UkDot4Op
    : LowBit_UkOp<"dot4", [Pure, AllTypesMatch<["acc", "result"]>,
                           AllTypesMatch<["codes", "x"]>]> {
  let summary = "Unsigned x signed int8 4-way dot product, accumulated in int32";
  let description = [{
    For every lane i: `result[i] = acc[i] + sum_{r < 4} codes[4i + r] *
    x[4i + r]`, with `codes` read as unsigned and `x` as signed bytes and the
    sum wrapping modulo 2^32 (the semantics of x86 `vpdpbusd`; no
    intermediate saturation can occur for codes below 16).

    With `centred`, a code byte u stands for u - 128 (8-bit codes with
    offset 128, ggml's Q8_0): `result[i] = acc[i] + sum_r (codes[4i + r] -
    128) * x[4i + r]`, for targets whose dot product takes codes below 128
    only (TargetInfo::getMaxDotCode: AVX2's vpmaddubsw saturates int16
    pairs, NEON's sdot is signed x signed), which compute it as a signed
    dot product (AVX2: the vpsignb form of ggml's AVX2 int8 dot, so `x`
    must not be -128, which the activation quantizer never writes: |xq| <=
    127).

    ```mlir
    %a1 = lowbit.uk.dot4 %a0, %c, %x : vector<64xi8> -> vector<16xi32>
    %a2 = lowbit.uk.dot4 %a0, %c, %x {centred} : vector<32xi8> -> vector<8xi32>
    ```
  }];
  let arguments = (ins LowBit_I32Register:$acc, LowBit_ByteRegister:$codes,
                   LowBit_ByteRegister:$x, UnitAttr:$centred);
  let results = (outs LowBit_I32Register:$result);
  let assemblyFormat = [{
    $acc `,` $codes `,` $x attr-dict `:` type($codes) `->` type($result)
  }];
  let hasVerifier = 1;
}

def LowBit_UkShrExactOp
    : LowBit_UkOp<"shr_exact", [Pure, AllTypesMatch<["value", "result"]>]> {
  let summary = "Divides int32 lanes that are multiples of 2^shift by 2^shift";
  let description = [{
    `result[i] = value[i] / 2^shift`, where every lane is known to be a
    multiple of 2^shift (the dot product of codes scaled by
    `lowbit.uk.unpack {scale = shift}`), so the division is exact and equal
    to an arithmetic right shift.

    ```mlir
    %a = lowbit.uk.shr_exact %d {shift = 6} : vector<16xi32>
    ```
  }];
  let arguments = (ins LowBit_I32Register:$value,
                   ConfinedAttr<I64Attr, [IntNonNegative]>:$shift);
  let results = (outs LowBit_I32Register:$result);
  let assemblyFormat = "$value attr-dict `:` type($result)";
}

def LowBit_UkLoadHalfOp
    : LowBit_UkOp<"load_half", [MemoryEffects<[MemRead]>]> {
  let summary = "Loads fp16 values and widens them to f32";
  let description = [{
    Loads as many IEEE binary16 values (stored as 16-bit integers) as the
    result has lanes, from element `offset` on, and converts them exactly to
    f32. Used for the per-row group scales and zero points.

    ```mlir
    %s = lowbit.uk.load_half %scales[%i] : memref<?xui16> -> vector<16xf32>
    ```
  }];
  let arguments = (ins MemRefRankOf<[UI16], [1]>:$base, Index:$offset);
  let results = (outs LowBit_F32Register:$result);
  let assemblyFormat = [{
    $base `[` $offset `]` attr-dict `:` type($base) `->` type($result)
  }];
}

def LowBit_UkLoadScalesOp
    : LowBit_UkOp<"load_scales", [MemoryEffects<[MemRead]>]> {
  let summary = "Loads packed sub-scales of `bits` bits and widens them to f32";
  let description = [{
    The quantized sub-scales (or sub-minimums) of one sub-block of a tile's
    16 rows (kernel_abi.h, K-QUANT SCALES): a little-endian bit string of
    16 values of `bits` bits from byte `offset` of the 16-bit array on (the
    offset counts bytes), row i at bits [bits * i, bits * i + bits). Loads
    the values of rows `row` to `row` + L - 1 (L, the result's lanes, times
    `bits` a whole number of bytes, and `row` a multiple of L, unless L is
    1), unsigned or, with `sign_extend`, two's complement, and converts
    them exactly to f32. A target may read up to 16 bytes from the first
    byte of its rows (the layout keeps the super-block's fp16 scales after
    its sub-scales, so that stays inside the array).

    ```mlir
    %sc = lowbit.uk.load_scales %scales[%at, %row] {bits = 6 : i64} : memref<?xui16> -> vector<16xf32>
    %s6 = lowbit.uk.load_scales %scales[%at, %row] {bits = 8 : i64, sign_extend} : memref<?xui16> -> vector<16xf32>
    ```
  }];
  let arguments = (ins MemRefRankOf<[UI16], [1]>:$base, Index:$offset,
                   Index:$row,
                   ConfinedAttr<I64Attr, [IntMinValue<1>, IntMaxValue<8>]>:$bits,
                   UnitAttr:$sign_extend);
  let results = (outs LowBit_F32Register:$result);
  let assemblyFormat = [{
    $base `[` $offset `,` $row `]` attr-dict `:` type($base) `->` type($result)
  }];
  let hasVerifier = 1;
}

def LowBit_UkBlockCombineOp
    : LowBit_UkOp<"block_combine", [Pure, AttrSizedOperandSegments,
                                    AllTypesMatch<["sums", "result"]>]> {
  let summary = "Adds one 32-k block's integer dot product to its group's sums";
  let description = [{
    For group formats, with D the block's int32 dot product and `inv` = 1 /
    s_b the reciprocal of the block's activation scale, computes per lane

        result = sums + (D - zero * sum) * inv

    the running float sums of the block's scale group (which start at
    zero and go to the output once per group, `lowbit.uk.group_combine`,
    so that the group scale costs one multiply per group, not per block).
    With `scale(%s)` instead of `inv`, a register, each lane is multiplied
    by its own lane of `%s` (the rows' K-quant sub-scales s_j of a
    sub-block of 16, summed over a block's two halves before 1 / s_b).
    The `zero(%zero, %sum)` part is only for per-row zero points (w2gG,
    w4gG: z per row, S the block's activation sum; `D - z * S` is exact in
    f32). Formats whose zero point is the same for every row fold it into
    the accumulator instead (q4_0 starts it at -8 S, w1gG at -S with codes
    doubled). The float rounding of the combination is the kernel's own
    (kernel_abi.h: group formats are checked within an error bound).

    ```mlir
    %g1 = lowbit.uk.block_combine %g0, %d, %inv
          : vector<16xi32> -> vector<16xf32>
    %g2 = lowbit.uk.block_combine %g0, %d, %inv zero(%z, %sum : vector<16xf32>)
          : vector<16xi32> -> vector<16xf32>
    %t1 = lowbit.uk.block_combine %t0, %d scale(%s : vector<16xf32>)
          : vector<16xi32> -> vector<16xf32>
    ```
  }];
  let arguments = (ins LowBit_F32Register:$sums, LowBit_I32Register:$dot,
                   Optional<F32>:$inv, Optional<LowBit_F32Register>:$scale,
                   Optional<LowBit_F32Register>:$zero, Optional<I32>:$sum);
  let results = (outs LowBit_F32Register:$result);
  let assemblyFormat = [{
    $sums `,` $dot (`,` $inv^)?
    (`scale` `(` $scale^ `:` type($scale) `)`)?
    (`zero` `(` $zero^ `,` $sum `:` type($zero) `)`)?
    attr-dict `:` type($dot) `->` type($result)
  }];
  let hasVerifier = 1;
}

def LowBit_UkGroupCombineOp
    : LowBit_UkOp<"group_combine", [Pure, AllTypesMatch<["y", "sums", "scale",
                                                          "result"]>]> {
  let summary = "Folds one scale group's block sums into the output";
  let description = [{
    Per lane `result = y + sums * scale`, with `sums` the group's
    `lowbit.uk.block_combine` sums and `scale` the rows' group scales (one
    fused multiply-add where the target has it).

    ```mlir
    %y1 = lowbit.uk.group_combine %y0, %g, %s : vector<16xf32>
    ```
  }];
  let arguments = (ins LowBit_F32Register:$y, LowBit_F32Register:$sums,
                   LowBit_F32Register:$scale);
  let results = (outs LowBit_F32Register:$result);
  let assemblyFormat = [{
    $y `,` $sums `,` $scale attr-dict `:` type($result)
  }];
}

def LowBit_UkTernaryScaleOp : LowBit_UkOp<"ternary_scale", [Pure]> {
  let summary = "Scales a ternary row's integer dot product, bit-exactly";
  let description = [{
    For every lane: `result = ((float)(dot - sum) * w_scale) / x_scale`,
    each operation rounded separately in f32 (no fused multiply-add), which
    is exactly the reference's `(float)acc * s_w / s_x`. `dot` is the
    whole-row `lowbit.uk.dot4` sum of the unsigned codes c = q + 1 and `sum`
    the row's activation sum, so `dot - sum` is the exact int32 acc.

    ```mlir
    %y = lowbit.uk.ternary_scale %d, %sum, %ws, %sx : vector<16xi32> -> vector<16xf32>
    ```
  }];
  let arguments = (ins LowBit_I32Register:$dot, I32:$sum, F32:$w_scale,
                   F32:$x_scale);
  let results = (outs LowBit_F32Register:$result);
  let assemblyFormat = [{
    $dot `,` $sum `,` $w_scale `,` $x_scale attr-dict `:` type($dot) `->`
    type($result)
  }];
  let hasVerifier = 1;
}

def LowBit_UkStoreOp : LowBit_UkOp<"store", [MemoryEffects<[MemWrite]>]> {
  let summary = "Stores a register of f32 outputs, optionally only a prefix";
  let description = [{
    Stores the lanes of `value` to `base[offset + i]`. With `count`, only the
    lanes `i < count` are written (`count` is in `[0, lanes]`); this is how
    the rows m >= M of the last tile are left untouched.

    ```mlir
    lowbit.uk.store %y, %out[%off] : vector<16xf32>, memref<?xf32>
    lowbit.uk.store %y, %out[%off], %rows : vector<16xf32>, memref<?xf32>
    ```
  }];
  let arguments = (ins LowBit_F32Register:$value, MemRefRankOf<[F32], [1]>:$base,
                   Index:$offset, Optional<Index>:$count);
  let assemblyFormat = [{
    $value `,` $base `[` $offset `]` (`,` $count^)? attr-dict `:`
    type($value) `,` type($base)
  }];
}

def LowBit_UkPrefetchOp : LowBit_UkOp<"prefetch"> {
  let summary = "Hints that packed codes at an offset will be read soon";
  let description = [{
    A cache hint for the byte `base[offset]`; it has no other effect and a
    target without prefetch instructions drops it.

    ```mlir
    lowbit.uk.prefetch %codes[%off] : memref<?xui8>
    ```
  }];
  let arguments = (ins MemRefRankOf<[UI8], [1]>:$base, Index:$offset);
  let assemblyFormat = "$base `[` $offset `]` attr-dict `:` type($base)";
}

//===----------------------------------------------------------------------===//
// Element-wise LUT (tl1/tl2, lut_abi.h)
//===----------------------------------------------------------------------===//

def LowBit_UkStackBufferOp : LowBit_UkOp<"stack_buffer"> {
  let summary = "A local byte array of the kernel (lookup tables)";
  let description = [{
    A function-local array of `bytes` int8 (uninitialized), alive until the
    function returns: the int16 lookup tables a lut-elementwise kernel
    builds from the activations in its prologue. With `alignment` (a power
    of two) its start is a multiple of that many bytes, so that register
    loads of the tables never straddle a cache line; without, the C++
    compiler places it (16 bytes on x86-64).

    ```mlir
    %t = lowbit.uk.stack_buffer {bytes = 65536} : memref<?xi8>
    %a = lowbit.uk.stack_buffer {bytes = 65536, alignment = 64} : memref<?xi8>
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntMinValue<1>]>:$bytes,
                   OptionalAttr<ConfinedAttr<I64Attr, [IntPowerOf2]>>:$alignment);
  let results = (outs MemRefRankOf<[I8], [1]>:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let builders = [
    OpBuilder<(ins "Type":$result, "IntegerAttr":$bytes), [{
      build($_builder, $_state, result, bytes, IntegerAttr());
    }]>
  ];
}

def LowBit_UkLutTablesOp
    : LowBit_UkOp<"lut_tables", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Builds the int16 tables of 8 activation groups (one table vector)";
  let description = [{
    Reads the 8 groups of `width` int8 activations `x[x_offset + width * g +
    i]` (g in 0..7, i < width) and writes the 256 bytes of their tables at
    `tables[table_offset]` as `lowbit.uk.lut_dot` reads them (lut_abi.h):
    group g = 4p + j is table j of the 128 bytes at 128p (p = 0 for the
    low, 1 for the high nibbles of an index register); byte `128p + 16j +
    e` is the low byte of the int16 entry e (0..15) and byte `128p + 64 +
    16j + e` its high byte plus 128 (the high byte of entry + 32768):

    - width 3 (TL2, mirror consolidated): d0 x0 + d1 x1 + d2 x2 for e = 9 d0
      + 3 d1 + d2 in 0..13 (balanced ternary digits), 0 for e = 14, 15;
    - width 2 (TL1): (e / 3 - 1) x0 + (e % 3 - 1) x1 for e in 0..8, else 0;
    - width 4 (bit-serial, bitserial_abi.h): s0 x0 + s1 x1 + s2 x2 + s3 x3
      with s_i = +1 where bit i of e is set, else -1 (e in 0..15; mirror
      symmetric: entry 15 - e = -entry e).

    ```mlir
    lowbit.uk.lut_tables %xq[%x], %t[%at] {width = 3} : memref<?xi8>, memref<?xi8>
    ```
  }];
  let arguments = (ins MemRefRankOf<[I8], [1]>:$x, Index:$x_offset,
                   MemRefRankOf<[I8], [1]>:$tables, Index:$table_offset,
                   ConfinedAttr<I64Attr, [IntMinValue<2>, IntMaxValue<4>]>:$width);
  let assemblyFormat = [{
    $x `[` $x_offset `]` `,` $tables `[` $table_offset `]` attr-dict `:`
    type($x) `,` type($tables)
  }];
}

def LowBit_UkSpillOp : LowBit_UkOp<"spill", [MemoryEffects<[MemWrite]>]> {
  let summary = "Stores a register of int32, f32 or byte lanes to a byte buffer";
  let description = [{
    Stores the lanes of `value` little-endian at bytes `base[offset ..]`
    (no alignment assumed): the partial sums a LUT kernel keeps between the
    K chunks of a tile (int32 sums, or the f32 outputs of the bit-serial
    group formats), or a byte register of decoded codes (the ggml rows
    GEMM's decoded rows, kernel_abi.h; an x86-amx kernel's codes expanded
    to int8 for `lowbit.uk.tile_load`), read back with `lowbit.uk.load`.

    ```mlir
    lowbit.uk.spill %acc, %buf[%off] : vector<16xi32>, memref<?xi8>
    lowbit.uk.spill %y, %buf[%off] : vector<16xf32>, memref<?xi8>
    ```
  }];
  let arguments = (ins AnyTypeOf<[LowBit_I32Register, LowBit_F32Register,
                                  LowBit_ByteRegister]>:$value,
                   MemRefRankOf<[I8], [1]>:$base, Index:$offset);
  let assemblyFormat = [{
    $value `,` $base `[` $offset `]` attr-dict `:` type($value) `,`
    type($base)
  }];
}

def LowBit_UkLutSignsOp
    : LowBit_UkOp<"lut_signs", [MemoryEffects<[MemRead]>]> {
  let summary = "Expands R sign bits to a register of +1/-1 bytes";
  let description = [{
    With R the bytes of the result: byte i is -1 when bit i of the R / 8
    little-endian bytes `base[offset ..]` is set, else +1: the TL2 signs of
    one index register (lut_abi.h sign words) as the signed multipliers of
    `lowbit.uk.lut_dot`. With `by_dword` (R = 32, lut_abi.h's lane order)
    byte i takes bit 8 (i mod 4) + i / 4 instead: byte i of the 4 bytes
    broadcast to every int32 lane (vpbroadcastd, no byte shuffle).

    ```mlir
    %s = lowbit.uk.lut_signs %codes[%off] : memref<?xui8> -> vector<64xi8>
    %t = lowbit.uk.lut_signs %codes[%off] {by_dword} : memref<?xui8> -> vector<32xi8>
    ```
  }];
  let arguments = (ins MemRefRankOf<[UI8], [1]>:$base, Index:$offset,
                   UnitAttr:$by_dword);
  let results = (outs LowBit_ByteRegister:$result);
  let assemblyFormat = [{
    $base `[` $offset `]` attr-dict `:` type($base) `->` type($result)
  }];
}

def LowBit_UkLutDotOp
    : LowBit_UkOp<"lut_dot", [MemoryEffects<[MemRead]>,
        AllTypesMatch<["acc_low", "acc_high", "new_low", "new_high"]>]> {
  let summary = "Table lookups of 4 groups per int32 lane, signed and summed";
  let description = [{
    The core of the lut-elementwise (lut_abi.h) and lut-bitserial
    (bitserial_abi.h) kernels, lossless. Byte i
    of `indices` holds two 4-bit indices; n = its high nibble with `high`,
    else its low nibble. The 128 bytes `tables[table_offset ..]` are 4
    tables of 16 int16 entries: bytes `16j + e` the low bytes (unsigned)
    and `64 + 16j + e` the high bytes plus 128 (unsigned) of entry e of
    table j. Byte i looks up table j = i mod 4 at n (vpermb of a 64-byte
    table), multiplies both bytes by s = `signs[i]` (+1 without `signs`;
    the TL2 signs +1 / -1, or a bit plane's weight 2^p, p < 4), and with
    int32 wrapping adds

      acc_low[i / 4] += the 4 low bytes x s,
      acc_high[i / 4] += the 4 biased high bytes x s

    (vpdpbusd). So acc_low + 256 acc_high grows by the signed entries plus
    32768 times the sum of the multipliers (`lowbit.uk.lut_combine`).

    ```mlir
    %lo, %hi = lowbit.uk.lut_dot %a, %b, %w, %t[%at]
               signs(%s : vector<64xi8>) {high = true}
               : vector<64xi8>, memref<?xi8>, vector<16xi32>
    ```
  }];
  let arguments = (ins LowBit_I32Register:$acc_low, LowBit_I32Register:$acc_high,
                   LowBit_ByteRegister:$indices,
                   MemRefRankOf<[I8], [1]>:$tables, Index:$table_offset,
                   Optional<LowBit_ByteRegister>:$signs, BoolAttr:$high);
  let results = (outs LowBit_I32Register:$new_low,
                 LowBit_I32Register:$new_high);
  let assemblyFormat = [{
    $acc_low `,` $acc_high `,` $indices `,` $tables `[` $table_offset `]`
    (`signs` `(` $signs^ `:` type($signs) `)`)? attr-dict `:`
    type($indices) `,` type($tables) `,` type($acc_low)
  }];
  let hasVerifier = 1;
}

def LowBit_UkLutDot8Op
    : LowBit_UkOp<"lut_dot8", [MemoryEffects<[MemRead]>,
        AllTypesMatch<["acc", "result"]>,
        AllTypesMatch<["indices", "multipliers"]>]> {
  let summary = "Lookups of int8 tables, 4 groups per int32 lane, scaled and summed";
  let description = [{
    The int8-table form of `lowbit.uk.lut_dot` (lut-bitserial with
    table_bits = 8, bitserial_abi.h), lossy only in how the tables were
    quantized. Byte i of `indices` holds two 4-bit indices; n = its high
    nibble with `high`, else its low nibble. The 64 bytes
    `tables[table_offset ..]` are 4 tables of 16 int8 entries: byte `16j +
    e` is entry e of table j. Byte i looks up table j = i mod 4 at n (one
    vpermb / pshufb per table / tbl: half the lookups of lut_dot), multiplies
    the signed entry by the unsigned byte `multipliers[i]` (at most 127)
    and with int32 wrapping adds

      result[i / 4] = acc[i / 4] + the 4 products of the lane

    (vpdpbusd with the multipliers as the unsigned operand: no bias).

    ```mlir
    %acc1 = lowbit.uk.lut_dot8 %acc, %w, %t[%at], %mult {high = true}
            : vector<64xi8>, memref<?xi8>, vector<16xi32>
    ```
  }];
  let arguments = (ins LowBit_I32Register:$acc, LowBit_ByteRegister:$indices,
                   MemRefRankOf<[I8], [1]>:$tables, Index:$table_offset,
                   LowBit_ByteRegister:$multipliers, BoolAttr:$high);
  let results = (outs LowBit_I32Register:$result);
  let assemblyFormat = [{
    $acc `,` $indices `,` $tables `[` $table_offset `]` `,` $multipliers
    attr-dict `:` type($indices) `,` type($tables) `,` type($acc)
  }];
  let hasVerifier = 1;
}

def LowBit_UkLutCombineOp
    : LowBit_UkOp<"lut_combine", [Pure, AllTypesMatch<["low", "high", "result"]>]> {
  let summary = "Recombines the low- and high-byte sums of lut_dot";
  let description = [{
    `result[j] = low[j] + 256 * high[j]` (int32 wrapping): with the row
    correction of the lut_abi.h header added, the exact int32 dot product.

    ```mlir
    %rows = lowbit.uk.lut_combine %lo, %hi : vector<16xi32>
    ```
  }];
  let arguments = (ins LowBit_I32Register:$low, LowBit_I32Register:$high);
  let results = (outs LowBit_I32Register:$result);
  let assemblyFormat = "$low `,` $high attr-dict `:` type($result)";
}

def LowBit_UkLutLookupOp
    : LowBit_UkOp<"lut_lookup", [MemoryEffects<[MemRead]>,
                                 AllTypesMatch<["indices", "result"]>]> {
  let summary = "Looks bytes up in one 16-byte table per 16-byte lane";
  let description = [{
    Byte i of `indices` holds two 4-bit indices; n = its high nibble with
    `high`, else its low nibble. With l = i / 16 the 16-byte lane of byte
    i, the result's byte i is byte `16 l + n` of `tables[table_offset ..]`
    (one pshufb of the R bytes there): the lookups of lut_abi.h's lane
    order, where lane l of an index register holds the 16 rows of one
    table (slot).

    ```mlir
    %lo = lowbit.uk.lut_lookup %w, %t[%at] {high = false}
          : vector<32xi8>, memref<?xi8>
    ```
  }];
  let arguments = (ins LowBit_ByteRegister:$indices,
                   MemRefRankOf<[I8], [1]>:$tables, Index:$table_offset,
                   BoolAttr:$high);
  let results = (outs LowBit_ByteRegister:$result);
  let assemblyFormat = [{
    $indices `,` $tables `[` $table_offset `]` attr-dict `:`
    type($indices) `,` type($tables)
  }];
}

def LowBit_UkZipOp
    : LowBit_UkOp<"zip", [Pure, AllTypesMatch<["lhs", "rhs", "result"]>]> {
  let summary = "Interleaves the bytes of two registers within 16-byte lanes";
  let description = [{
    Per 16-byte lane: the bytes of the lane's low half (or its high half
    with `high`) of `lhs` and `rhs`, alternating, lhs first (punpcklbw /
    punpckhbw). lut_abi.h's lane order zips the lookups of a row's two
    nibbles into the byte pair of one int16 lane for `lowbit.uk.dot2`.

    ```mlir
    %z = lowbit.uk.zip %a, %b {high = true} : vector<32xi8>
    ```
  }];
  let arguments = (ins LowBit_ByteRegister:$lhs, LowBit_ByteRegister:$rhs,
                   BoolAttr:$high);
  let results = (outs LowBit_ByteRegister:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
}

def LowBit_UkDot2Op
    : LowBit_UkOp<"dot2", [Pure, AllTypesMatch<["codes", "x"]>]> {
  let summary = "Sums of products of byte pairs into int16 lanes";
  let description = [{
    For every int16 lane i: `result[i] = codes[2i] * x[2i] + codes[2i + 1]
    * x[2i + 1]`, with `codes` read as unsigned and `x` as signed bytes,
    saturated to int16 (x86 `vpmaddubsw`; exact while |sum| < 2^15, e.g.
    table bytes times +1 / -1 signs). lut_abi.h's lane order sums the
    zipped lookups of two groups of a row in int16 and widens once per
    block (`lowbit.uk.extend`).

    ```mlir
    %p = lowbit.uk.dot2 %codes, %signs : vector<32xi8> -> vector<16xi16>
    ```
  }];
  let arguments = (ins LowBit_ByteRegister:$codes, LowBit_ByteRegister:$x);
  let results = (outs VectorOfRankAndType<[1], [I16]>:$result);
  let assemblyFormat = [{
    $codes `,` $x attr-dict `:` type($codes) `->` type($result)
  }];
  let hasVerifier = 1;
}

def LowBit_UkExtendOp
    : LowBit_UkOp<"extend", [Pure, AllTypesMatch<["low", "high"]>]> {
  let summary = "Widens int16 low and high byte sums into their int32 sum";
  let description = [{
    Per 16-byte lane and i < 4, with j = i (or 4 + i with `high`) an int16
    lane of the lane's low (high) half: `result[i] = low[j] * m0 + high[j]
    * m1` in int32 (exact; x86 `vpunpcklwd` / `vpunpckhwd` of the two, then
    `vpmaddwd`), where (m0, m1) are the two int16 words of each 32-bit
    lane of `multipliers` (all lanes alike), or 1, 256 without it: the
    int16 sums of the low and high table bytes of lut_abi.h's lane order
    (`lowbit.uk.dot2`) as the int32 sums `lowbit.uk.lut_combine` gives for
    `lowbit.uk.lut_dot`. lut-bitserial's int8 tables pass their int16 sums
    as both halves with the words (a, 0): the sums times the act_group's
    table multiplier a.

    ```mlir
    %q = lowbit.uk.extend %lo, %hi {high_half = true} : vector<16xi16> -> vector<8xi32>
    %s = lowbit.uk.extend %w, %w, %a {high_half = false}
         : vector<16xi16>, vector<32xi8> -> vector<8xi32>
    ```
  }];
  let arguments = (ins VectorOfRankAndType<[1], [I16]>:$low,
                   VectorOfRankAndType<[1], [I16]>:$high,
                   Optional<LowBit_ByteRegister>:$multipliers,
                   BoolAttr:$high_half);
  let results = (outs LowBit_I32Register:$result);
  let assemblyFormat = [{
    $low `,` $high (`,` $multipliers^)? attr-dict `:` type($low)
    (`,` type($multipliers)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

def LowBit_UkLaneFoldOp
    : LowBit_UkOp<"lane_fold", [Pure, AllTypesMatch<["lhs", "rhs", "result"]>]> {
  let summary = "Sums the two 16-byte lanes of each of two registers";
  let description = [{
    For registers of two 16-byte lanes (4 int32 or 8 int16 each): lane 0 of
    the result is lane 0 + lane 1 of `lhs`, lane 1 is lane 0 + lane 1 of
    `rhs` (wrapping): the rows of lut_abi.h's lane order, whose two lanes
    hold the sums of different tables of the same rows.

    ```mlir
    %rows = lowbit.uk.lane_fold %q0, %q1 : vector<8xi32>
    %words = lowbit.uk.lane_fold %w0, %w1 : vector<16xi16>
    ```
  }];
  let arguments = (ins VectorOfRankAndType<[1], [I16, I32]>:$lhs,
                   VectorOfRankAndType<[1], [I16, I32]>:$rhs);
  let results = (outs VectorOfRankAndType<[1], [I16, I32]>:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def LowBit_UkWidenOp : LowBit_UkOp<"widen", [Pure]> {
  let summary = "One 16-byte lane of int16 sums as int32, times multipliers";
  let description = [{
    For a register of two 16-byte lanes of int16 lanes: `result[i] =
    words[8 lane + i] * multipliers[i]`, the multipliers read as int32
    lanes, in int32 (x86 `vpmovsxwd` of the lane, `vpmulld`): lut-bitserial
    turns the lane-folded int16 sums of a block's rows (int8 tables, lane
    order) into int32 rows times the act_group's multiplier a.

    ```mlir
    %rows = lowbit.uk.widen %words, %a {lane = 1 : i64}
            : vector<16xi16>, vector<32xi8> -> vector<8xi32>
    ```
  }];
  let arguments = (ins VectorOfRankAndType<[1], [I16]>:$words,
                   LowBit_ByteRegister:$multipliers, I64Attr:$lane);
  let results = (outs LowBit_I32Register:$result);
  let assemblyFormat = [{
    $words `,` $multipliers attr-dict `:` type($words) `,`
    type($multipliers) `->` type($result)
  }];
  let hasVerifier = 1;
}

def LowBit_UkPackedDotOp : LowBit_UkOp<"packed_dot", [Pure]> {
  let summary = "4-way int8 dot product of two packed 32-bit words (GPU)";
  let description = [{
    `result = sum_{r < 4} lhs.byte[r] * rhs.byte[r]`, with the bytes of
    `lhs` signed and those of `rhs` signed, or unsigned with
    `unsigned_rhs`, summed in int32 (no overflow is possible). The GPU
    kernels of `lowbit-lower-gpu` multiply packed activations by packed
    codes with it (#lowbit.gpu int_dot); `lib/Conversion/LowBitToSPIRV`
    lowers it to OpSDot / OpSUDot of SPV_KHR_integer_dot_product.

    ```mlir
    %d = lowbit.uk.packed_dot %x, %codes {unsigned_rhs}
    %s = lowbit.uk.packed_dot %x, %ones
    ```
  }];
  let arguments = (ins I32:$lhs, I32:$rhs, UnitAttr:$unsigned_rhs);
  let results = (outs I32:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict";
}

//===----------------------------------------------------------------------===//
// Matrix tiles (x86-amx: AMX-TILE, AMX-INT8)
//===----------------------------------------------------------------------===//

// The tile registers are state of the thread, not SSA values: each op names
// its tiles (0..7) by attribute, which the conversion keeps compile-time
// constants (the instructions take them as immediates), and has memory
// effects so that the ops stay in program order. lowbit.uk.tile_config
// fixes the tiles' shapes; runtime/include/lowbit/amx_tiles.h states the
// instructions' semantics.
def LowBit_TileIndex : ConfinedAttr<I64Attr, [IntMinValue<0>, IntMaxValue<7>]>;

def LowBit_UkTileConfigOp
    : LowBit_UkOp<"tile_config", [MemoryEffects<[MemWrite]>]> {
  let summary = "Configures the 8 matrix tiles for products of `k` bytes";
  let description = [{
    LDTILECFG of palette 1 (zeroes the tiles): tiles 0..3 (accumulators)
    16 rows of 64 bytes, tiles 4 and 5 (activations) 16 rows of `k` bytes,
    tiles 6 and 7 (codes) `k` / 4 rows of 64 bytes, so that one
    `lowbit.uk.tile_dot` multiplies `k` k (64, or 32: one block of a
    format with a scale per 32-k block). A kernel configures the tiles
    before its first tile op and releases them (`lowbit.uk.tile_release`)
    before it returns.

    ```mlir
    lowbit.uk.tile_config {k = 64}
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntMinValue<4>,
                                               IntMaxValue<64>]>:$k);
  let assemblyFormat = "attr-dict";
}

def LowBit_UkTileReleaseOp
    : LowBit_UkOp<"tile_release", [MemoryEffects<[MemWrite]>]> {
  let summary = "Releases the matrix tiles (TILERELEASE)";
  let assemblyFormat = "attr-dict";
}

def LowBit_UkTileZeroOp
    : LowBit_UkOp<"tile_zero", [MemoryEffects<[MemWrite]>]> {
  let summary = "Zeroes one matrix tile (TILEZERO)";
  let description = [{
    ```mlir
    lowbit.uk.tile_zero {tile = 0}
    ```
  }];
  let arguments = (ins LowBit_TileIndex:$tile);
  let assemblyFormat = "attr-dict";
}

def LowBit_UkTileLoadOp
    : LowBit_UkOp<"tile_load", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Loads the rows of a matrix tile (TILELOADD)";
  let description = [{
    Row r of tile `tile` is the configured bytes per row at `base[offset +
    r * stride]` (`stride` in bytes), for its configured rows.

    ```mlir
    lowbit.uk.tile_load %xq[%at], %kp {tile = 4} : memref<?xi8>
    ```
  }];
  let arguments = (ins MemRefRankOf<[I8, UI8], [1]>:$base, Index:$offset,
                   Index:$stride, LowBit_TileIndex:$tile);
  let assemblyFormat = [{
    $base `[` $offset `]` `,` $stride attr-dict `:` type($base)
  }];
}

def LowBit_UkTileStoreOp
    : LowBit_UkOp<"tile_store", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Stores a matrix tile's 16 rows of 64 bytes (TILESTORED)";
  let description = [{
    Row r of tile `tile` goes to the 64 bytes at `base[offset + r *
    stride]`: an accumulator tile's 16 x 16 int32.

    ```mlir
    lowbit.uk.tile_store %buf[%at], %c64 {tile = 0} : memref<?xi8>
    ```
  }];
  let arguments = (ins MemRefRankOf<[I8], [1]>:$base, Index:$offset,
                   Index:$stride, LowBit_TileIndex:$tile);
  let assemblyFormat = [{
    $base `[` $offset `]` `,` $stride attr-dict `:` type($base)
  }];
}

def LowBit_UkTileDotOp
    : LowBit_UkOp<"tile_dot", [MemoryEffects<[MemWrite]>]> {
  let summary = "int8 matrix product into an int32 tile (TDPBSUD)";
  let description = [{
    `acc[m].dword[n] += sum_k sum_{i < 4} lhs[m].byte[4k + i] *
    rhs[k].byte[4n + i]` for m, n < 16 and k < K / 4 (K the configured
    `k`), `lhs` bytes signed (int8 activations, 16 columns x K), `rhs`
    bytes unsigned (codes in the VNNI4 layout: row k holds k 4k..4k+3 of
    16 weight rows), int32 wrapping.

    ```mlir
    lowbit.uk.tile_dot {acc = 0, lhs = 4, rhs = 6}
    ```
  }];
  let arguments = (ins LowBit_TileIndex:$acc, LowBit_TileIndex:$lhs,
                   LowBit_TileIndex:$rhs);
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

#endif // LOWBIT_DIALECT_LOWBIT_IR_LOWBITMICROKERNELOPS_TD
