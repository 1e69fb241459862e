//===- LowBitAttrs.td - lowbit attributes ------------------*- tablegen -*-===//
//
// The three attributes of a lowbit matmul: what the weights mean
// (#lowbit.weight), how they are packed (#lowbit.layout), and which kernel
// strategy computes the product with which tiles (one attribute per
// strategy, all implementing StrategyConfigAttrInterface).
//
//===----------------------------------------------------------------------===//

#ifndef LOWBIT_DIALECT_LOWBIT_IR_LOWBITATTRS_TD
#define LOWBIT_DIALECT_LOWBIT_IR_LOWBITATTRS_TD

include "lowbit/Dialect/LowBit/IR/LowBitBase.td"
include "lowbit/Dialect/LowBit/IR/LowBitEnums.td"
include "lowbit/Dialect/LowBit/IR/LowBitInterfaces.td"
include "mlir/IR/AttrTypeBase.td"

//===----------------------------------------------------------------------===//
// Parameter helpers
//===----------------------------------------------------------------------===//

class LowBit_DefaultEnumParameter<EnumInfo enumInfo, string case>
    : EnumParameter<enumInfo> {
  let defaultValue = enumInfo.cppType # "::" # case;
}

// A boolean spelled `true` / `false`, `default` unless given.
class LowBit_Flag<string default> : AttrParameter<"bool", "a true/false flag"> {
  let defaultValue = default;
  let parser = [{
    [&]() -> ::mlir::FailureOr<bool> {
      if (::mlir::succeeded($_parser.parseOptionalKeyword("true")))
        return true;
      if (::mlir::succeeded($_parser.parseOptionalKeyword("false")))
        return false;
      return $_parser.emitError($_parser.getCurrentLocation(),
                                "expected 'true' or 'false'");
    }()
  }];
  let printer = [{ $_printer << ($_self ? "true" : "false") }];
}
def LowBit_FlagParameter : LowBit_Flag<"false">;

class LowBit_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<LowBit_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

class LowBit_ConfigAttr<string name, string attrMnemonic>
    : LowBit_Attr<name, attrMnemonic, [
        DeclareAttrInterfaceMethods<LowBit_StrategyConfigAttrInterface>]>;

//===----------------------------------------------------------------------===//
// Weight encoding
//===----------------------------------------------------------------------===//

def LowBit_WeightAttr : LowBit_Attr<"Weight", "weight"> {
  let summary = "Quantization math of a low-bit weight matrix";
  let description = [{
    What the integer codes of an M x K weight matrix mean, independent of how
    they are packed into bytes.

    - `bits`: bits per weight code q (unsigned, 0..2^bits-1), 1 to 8.
    - `encoding`: `ternary` (codes -1/0/+1, BitNet b1.58), `binary` (codes
      -1/+1), `unsigned` (codes 0..2^bits-1 with a zero point stored per
      group), `gguf_q4_0` (GGUF Q4_0 blocks of 32, byte-identical to ggml),
      or one of the block encodings of llama.cpp's formats, whose scales are
      stored inside the blocks (`scale = per_block`):
      - `offset`: w = s * (q - code_offset), a fixed offset that centres the
        codes (ggml's Q8_0, Q5_0, Q3_K, Q6_K);
      - `min`: w = s * q + o, a stored minimum o per scale group (Q4_1,
        Q5_1, Q2_K, Q4_K, Q5_K; ggml's "dmin");
      - `codebook`: w = s * codebook[q], a non-linear table of 2^bits int8
        values (IQ4_NL).
    - `group`: weights along K that share a scale; 0 (the default) when the
      scale is not per group. The block encodings' scale group: 32, or 16
      inside a super-block.
    - `scale`: `per_tensor` (the default), `per_group` or `per_block` (the
      scale is stored inside each block).
    - `code_offset`: the offset of `offset` weights, in [1, 2^bits); 0 (the
      default) otherwise.
    - `super_block`: 0 (the default), or 256 for ggml's K-quants: blocks of
      256 weights whose per-group scales (and minimums) are themselves
      quantized to `scale_bits` unsigned bits against one fp16 scale (and
      one fp16 minimum scale) per super-block: s = d * sc, o = -dmin * m
      (Q3_K: sc - 32; Q6_K: int8 sc).
    - `scale_bits`: bits of those sub-scales, 4 to 8, with a super-block;
      0 (the default) without.
    - `codebook`: the 2^bits values of a `codebook` encoding, in code order
      (`codebook = [-127, -104, ...]`).

    The legal combinations are the formats of the runtime:

    | format  | bits | encoding    | group | scale        | other                         |
    | ------- | ---- | ----------- | ----- | ------------ | ----------------------------- |
    | ternary | 2    | `ternary`   | 0     | `per_tensor` |                               |
    | w1gG    | 1    | `binary`    | G, a multiple of 32 | `per_group` |                |
    | wbgG    | 2..4 | `unsigned`  | G, a multiple of 32 | `per_group` |                |
    | q4_0    | 4    | `gguf_q4_0` | 32    | `per_block`  |                               |
    | q8_0    | 8    | `offset`    | 32    | `per_block`  | code_offset = 128             |
    | q5_0    | 5    | `offset`    | 32    | `per_block`  | code_offset = 16              |
    | q4_1    | 4    | `min`       | 32    | `per_block`  |                               |
    | q5_1    | 5    | `min`       | 32    | `per_block`  |                               |
    | iq4_nl  | 4    | `codebook`  | 32    | `per_block`  | codebook = ggml's kvalues_iq4nl |
    | q2_k    | 2    | `min`       | 16    | `per_block`  | super_block = 256, scale_bits = 4 |
    | q3_k    | 3    | `offset`    | 16    | `per_block`  | code_offset = 4, super_block = 256, scale_bits = 6 |
    | q4_k    | 4    | `min`       | 32    | `per_block`  | super_block = 256, scale_bits = 6 |
    | q5_k    | 5    | `min`       | 32    | `per_block`  | super_block = 256, scale_bits = 6 |
    | q6_k    | 6    | `offset`    | 16    | `per_block`  | code_offset = 32, super_block = 256, scale_bits = 8 |

    Parameters equal to their default are omitted when printing.

    ```mlir
    #lowbit.weight<bits = 2, encoding = ternary>
    #lowbit.weight<bits = 1, encoding = binary, group = 128, scale = per_group>
    #lowbit.weight<bits = 3, encoding = unsigned, group = 64, scale = per_group>
    #lowbit.weight<bits = 4, encoding = gguf_q4_0, group = 32, scale = per_block>
    #lowbit.weight<bits = 8, encoding = offset, group = 32, scale = per_block, code_offset = 128>
    #lowbit.weight<bits = 4, encoding = min, group = 32, scale = per_block, super_block = 256, scale_bits = 6>
    ```
  }];
  let parameters = (ins
    "int64_t":$bits,
    EnumParameter<LowBit_Encoding>:$encoding,
    DefaultValuedParameter<"int64_t", "0">:$group,
    LowBit_DefaultEnumParameter<LowBit_ScaleGranularity, "PerTensor">:$scale,
    DefaultValuedParameter<"int64_t", "0">:$code_offset,
    DefaultValuedParameter<"int64_t", "0">:$super_block,
    DefaultValuedParameter<"int64_t", "0">:$scale_bits,
    OptionalParameter<"::mlir::DenseI8ArrayAttr">:$codebook
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let builders = [
    // The formats without a block description (ternary, wbgG, q4_0).
    AttrBuilder<(ins "int64_t":$bits, "Encoding":$encoding, "int64_t":$group,
                     "ScaleGranularity":$scale), [{
      return $_get($_ctxt, bits, encoding, group, scale, 0, 0, 0,
                   ::mlir::DenseI8ArrayAttr());
    }]>
  ];
  let extraClassDeclaration = [{
    /// Whether this is one of the block encodings of llama.cpp's formats
    /// (offset, min, codebook): scales inside ggml blocks.
    bool isBlockEncoding() const;
    /// Bytes of ggml's encoding of `blockWeights` weights of a row (32, or
    /// the 256 of a super-block): codes, sub-scales and fp16 scales.
    int64_t getGgmlBlockBytes() const;
    /// Weights per ggml block: the super-block, or the scale group.
    int64_t getGgmlBlockWeights() const;
  }];
}

//===----------------------------------------------------------------------===//
// Packed layout
//===----------------------------------------------------------------------===//

def LowBit_LayoutAttr : LowBit_Attr<"Layout", "layout"> {
  let summary = "Packed byte layout of a low-bit weight matrix";
  let description = [{
    How the weight codes are packed into the bytes of the `lowbit.mpgemm`
    weights operand. The kind names a layout; the optional parameters
    describe the tiling that a strategy chose when it repacked the weights.

    - `canonical`: the runtime's row-major packing of binary and unsigned
      codes, `K * bits / 8` bytes per row.
    - `i2s`: ternary, four 2-bit codes per byte, `ceil(K / 4)` bytes per row
      (bitnet.cpp I2_S).
    - `tl1`: ternary, two weights form one 4-bit table index, `ceil(K / 4)`
      bytes per row (bitnet.cpp TL1); K must be even.
    - `tl2`: ternary, three weights form a sign bit and a 4-bit index, with
      the K remainder in tl1 form (bitnet.cpp TL2, 1.67 bits per weight).
    - `gguf`: ggml's blocks as a GGUF file stores them, row after row: Q4_0
      (18 bytes per 32 weights) and the block encodings (`offset`, `min`,
      `codebook`; `WeightAttr::getGgmlBlockBytes` per block).
    - `vnni4`: int8-VNNI interleaved layout for up-convert kernels
      (`[M/tile_m][K/tile_k][tile_k/4][...][k4][m<interleave>]`); codes of
      3, 5 or 6 bits as two planes (2 + 1, 4 + 1, 4 + 2 bits) and
      `tile_k = 32`, else `tile_k = 32 / bits`.
    - `bitplanes`: one plane per bit of the code, for bit-serial LUT kernels.

    Parameters (0 means "not tiled along that dimension"; all default and are
    omitted when printing at their default):
    - `tile_m`: rows per tile;
    - `tile_k`: weights per tile along K, a multiple of the number of weights
      the kind packs together (i2s and vnni4: 4, tl1: 2, tl2: 3,
      bitplanes: 8);
    - `interleave`: rows interleaved together (default 1), dividing `tile_m`;
    - `lane_order`: the byte order of the 64-byte vectors of the interleaved
      tl1/tl2 layout (lut_abi.h): `rows` (default; byte 4r + j holds row r,
      slot j) or `lanes` (byte 16j + r, one slot per 16-byte lane, for
      targets whose table lookup works per lane: TargetInfo::hasLutLaneOrder),
      and of the plane vectors of the bitplanes layout (bitserial_abi.h):
      `rows` or `lanes` (two planes: a block's bytes permuted so that a
      16-byte lane holds one slot of 8 rows, the two planes of a row side by
      side). Only an interleaved tl1/tl2 or bitplanes layout may have `lanes`.

    - `block_bytes`: a tiled `gguf` layout only (kernel_abi.h's GGML ROWS
      LAYOUT): the bytes of the ggml block of 256 ternary weights that its
      rows hold, 66 for TQ2_0 (the default, written 0) or 54 for TQ1_0.

    `canonical` takes no parameters; `gguf` none, or tile_m = 1, tile_k =
    256 and `block_bytes` (ternary rows).

    ```mlir
    #lowbit.layout<i2s>
    #lowbit.layout<tl2, tile_m = 256, tile_k = 96>
    #lowbit.layout<tl2, tile_m = 16, tile_k = 96, interleave = 16, lane_order = lanes>
    #lowbit.layout<vnni4, tile_m = 32, tile_k = 64, interleave = 4>
    #lowbit.layout<gguf, tile_m = 1, tile_k = 256, block_bytes = 54>
    ```
  }];
  let parameters = (ins
    EnumParameter<LowBit_LayoutKind>:$kind,
    DefaultValuedParameter<"int64_t", "0">:$tile_m,
    DefaultValuedParameter<"int64_t", "0">:$tile_k,
    DefaultValuedParameter<"int64_t", "1">:$interleave,
    LowBit_DefaultEnumParameter<LowBit_LaneOrder, "Rows">:$lane_order,
    DefaultValuedParameter<"int64_t", "0">:$block_bytes
  );
  let builders = [
    AttrBuilder<(ins "LayoutKind":$kind, "int64_t":$tile_m,
                     "int64_t":$tile_k, "int64_t":$interleave,
                     "LaneOrder":$lane_order), [{
      return $_get($_ctxt, kind, tile_m, tile_k, interleave, lane_order, 0);
    }]>
  ];
  let assemblyFormat = [{
    `<` $kind (`,` struct($tile_m, $tile_k, $interleave, $lane_order,
                          $block_bytes)^)? `>`
  }];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Whether this layout has any parameter away from its default.
    bool isTiled() const;
    /// A tiled gguf layout (kernel_abi.h's GGML ROWS LAYOUT): the bytes of
    /// the ggml block its rows hold (LOWBIT_GGML_ROWS_TQ2_0_BYTES or
    /// LOWBIT_GGML_ROWS_TQ1_0_BYTES).
    int64_t getGgmlRowsBlockBytes() const;
  }];
}

//===----------------------------------------------------------------------===//
// Strategy configs
//===----------------------------------------------------------------------===//

def LowBit_ReferenceAttr : LowBit_ConfigAttr<"Reference", "reference"> {
  let summary = "Scalar reference strategy";
  let description = [{
    The scalar C++ oracle that every other strategy is tested against. It
    supports every weight encoding and layout and has no parameters.

    ```mlir
    #lowbit.reference
    ```
  }];
}

def LowBit_UpconvertAttr : LowBit_ConfigAttr<"Upconvert", "upconvert"> {
  let summary = "Up-convert-and-FMA strategy and its tiles";
  let description = [{
    Unpacks weights to int8 in registers and multiplies with int8 dot-product
    instructions (vpdpbusd / vpmaddubsw / sdot), never dequantizing to memory.
    Supports ternary weights (i2s or vnni4 layout), binary, unsigned 2- and
    4-bit, and gguf_q4_0; not 3-bit weights, tl1 or tl2.

    - `tile_m`, `tile_k`, `tile_n`: output rows, reduction depth and
      activation rows per micro-tile; `tile_k` is a multiple of 4 (one VNNI
      dot product), of 32 for gguf_q4_0, and divides or is divided by the
      weight group size;
    - `unroll`: K-loop unroll factor (default 1);
    - `prefetch`: prefetch distance in K tiles, 0 (the default) for none.

    Used on an `lowbit.mpgemm`, the kernels of `kernel_abi.h` further need
    `tile_m` to be a multiple of 16 (tile_m / 16 packed tiles are
    register-blocked together) and `tile_k` a multiple of 32 (the block of
    the activations' scales and sums). One K-loop step then covers
    `tile_k * unroll` weights per row; `tile_n` activation rows share every
    unpacked weight register.

    ```mlir
    #lowbit.upconvert<tile_m = 32, tile_k = 256, tile_n = 4>
    #lowbit.upconvert<tile_m = 16, tile_k = 128, tile_n = 1, unroll = 4, prefetch = 2>
    ```
  }];
  let parameters = (ins
    "int64_t":$tile_m,
    "int64_t":$tile_k,
    "int64_t":$tile_n,
    DefaultValuedParameter<"int64_t", "1">:$unroll,
    DefaultValuedParameter<"int64_t", "0">:$prefetch
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def LowBit_LutElementwiseAttr
    : LowBit_ConfigAttr<"LutElementwise", "lut_elementwise"> {
  let summary = "Element-wise LUT strategy (bitnet.cpp TL1/TL2) and its tiles";
  let description = [{
    Builds per-activation lookup tables and gathers them with the weight
    indices (pshufb / tbl), as bitnet.cpp's TL1 and TL2 kernels do. Needs a
    `tl1` or `tl2` layout.

    - `bm`: rows per tile (bitnet.cpp `BM`);
    - `bk`: weights per tile along K (`BK`), a multiple of 2 for tl1 and of
      3 for tl2;
    - `sub_m`: rows per table lookup pass (bitnet.cpp `bm`, default 32),
      dividing `bm`;
    - `bn`: activation rows whose tables share every loaded weight register
      (default 1; GEMM configs take more).

    With a row-major tiled layout its tiles must equal `bm` and `bk`. With
    the interleaved layout of `lut_abi.h` (`interleave = 16`: tiles of 16
    rows, `tile_k` 96 for tl2 blocks and 16 for tl1 vectors), `sub_m` must
    be 16 (one 16-byte pshufb lane of rows), `bm` is the rows register
    blocked together (a multiple of 16) and `bk` the weights whose int16
    sums are added before they are widened to int32: a multiple of
    `tile_k`, at most 960 for tl2 (10 blocks: 10 x 8 x 385 < 2^15) and 1008
    for tl1 (63 vectors: 63 x 2 x 256 < 2^15).

    ```mlir
    #lowbit.lut_elementwise<bm = 256, bk = 96>
    #lowbit.lut_elementwise<bm = 128, bk = 64, sub_m = 64>
    #lowbit.lut_elementwise<bm = 32, bk = 768, sub_m = 16, bn = 4>
    ```
  }];
  let parameters = (ins
    "int64_t":$bm,
    "int64_t":$bk,
    DefaultValuedParameter<"int64_t", "32">:$sub_m,
    DefaultValuedParameter<"int64_t", "1">:$bn
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def LowBit_LutBitserialAttr
    : LowBit_ConfigAttr<"LutBitserial", "lut_bitserial"> {
  let summary = "Bit-serial LUT strategy (T-MAC) and its tiles";
  let description = [{
    Splits b-bit weights into b one-bit planes, looks up g = 4 activation
    sums per plane in a table held in one register and accumulates the
    planes with their weights (T-MAC). Supports ternary (as two planes, i2s
    or bitplanes layout), binary and unsigned 1..4 bit weights; not
    gguf_q4_0, tl1 or tl2.

    - `bm`: rows per tile;
    - `bn`: activation rows per tile (default 1);
    - `kfactor`: groups of 4 weights per loop iteration over K
      (lowbit-lower-lut-bitserial: a multiple of 8, whole 32-k blocks);
    - `act_group`: activations per table-quantization scale, a positive
      multiple of 4 (default 32) dividing the weight group size
      (lowbit-lower-lut-bitserial: 32 for int16 tables, a multiple of 32
      for int8 tables);
    - `table_bits`: 16 (default) for the lossless int16 tables, 8 for int8
      tables with one scale per act_group (T-MAC's table quantization:
      half the lookups and table bytes, lossy within the bound of
      bitserial_abi.h).

    ```mlir
    #lowbit.lut_bitserial<bm = 512, kfactor = 16>
    #lowbit.lut_bitserial<bm = 256, bn = 4, kfactor = 8, act_group = 64, table_bits = 8>
    ```
  }];
  let parameters = (ins
    "int64_t":$bm,
    DefaultValuedParameter<"int64_t", "1">:$bn,
    "int64_t":$kfactor,
    DefaultValuedParameter<"int64_t", "32">:$act_group,
    DefaultValuedParameter<"int64_t", "16">:$table_bits
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def LowBit_GpuAttr : LowBit_ConfigAttr<"Gpu", "gpu"> {
  let summary = "GPU (SPIR-V) strategy: workgroup and subgroup tiles";
  let description = [{
    The GPU kernel of Intel's AI-PC/Xe2 paper ("Pushing the Envelope of LLM
    Inference on AI-PC and Intel GPUs", section III-E) as
    `lowbit-lower-gpu` emits it through the `gpu` dialect to SPIR-V. A
    workgroup computes a `wg_tile_m x wg_tile_n` block of Y (weight rows x
    activation rows); the block is cut into `sg_tile_m x sg_tile_n` tiles,
    one per subgroup of `subgroup_size` invocations, whose lanes stride over
    K with `sg_tile_m * sg_tile_n` int32 accumulators each. `k_split`
    subgroups share one tile, each taking a contiguous part of K; partial
    sums are added in workgroup memory. A workgroup has
    `subgroup_size * (wg_tile_m / sg_tile_m) * (wg_tile_n / sg_tile_n) *
    k_split` invocations, at most 1024.

    `fuse_act_quant = true` computes each activation row's absmax and int8
    scale inside the kernel (every workgroup of a row again, the paper's
    choice for GEMV); `false` runs a separate pre-kernel that writes the
    scales once (the paper's choice for GEMM). Activations are quantized to
    int8 in registers either way. `int_dot = true` multiplies 4 int8
    activations by 4 unsigned codes per instruction (`OpSUDot`,
    SPV_KHR_integer_dot_product; the device needs Vulkan 1.3's
    `shaderIntegerDotProduct`) and subtracts the activation sum once, as the
    CPU kernels do; `false` (the default) uses int32 multiply-add, which
    every device runs. Supports ternary weights in i2s layout, binary and
    unsigned 1- to 4-bit weights (w1gG..w4gG) in canonical layout and q4_0
    in gguf layout; for the latter activations are scaled per 32-block in
    registers (no row scale, no pre-kernel). `lowbit-select-config` chooses
    it for GPU targets (the heuristic from the target's GpuTargetInfo, a
    schedule entry or the config option).

    `matrix = true` is the Xe2 matrix path: each subgroup's 8 x 16 tile is
    one cooperative-matrix multiply-add per 32 K (A: 8 x 32 int8 weights
    q = c - 1, B: 32 x 16 int8 activations, C: int32; Xe2's DPAS shape),
    staged through workgroup memory (SPV_KHR_cooperative_matrix; the device
    needs VK_KHR_cooperative_matrix with that shape, and shaderInt8). It
    requires subgroup_size = 16, sg_tile_m = 8, sg_tile_n = 16, k_split = 1
    and int_dot = false, i2s weights only, and target spirv-xe2.

    ```mlir
    #lowbit.gpu<wg_tile_m = 64, wg_tile_n = 1, sg_tile_m = 4, sg_tile_n = 1, subgroup_size = 16>
    #lowbit.gpu<wg_tile_m = 64, wg_tile_n = 16, sg_tile_m = 8, sg_tile_n = 8, k_split = 2, fuse_act_quant = false, subgroup_size = 16>
    ```
  }];
  let parameters = (ins
    "int64_t":$wg_tile_m,
    "int64_t":$wg_tile_n,
    "int64_t":$sg_tile_m,
    "int64_t":$sg_tile_n,
    DefaultValuedParameter<"int64_t", "1">:$k_split,
    LowBit_Flag<"true">:$fuse_act_quant,
    LowBit_FlagParameter:$int_dot,
    LowBit_FlagParameter:$matrix,
    "int64_t":$subgroup_size
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Invocations per workgroup.
    int64_t getWorkgroupSize() const;
  }];
}

#endif // LOWBIT_DIALECT_LOWBIT_IR_LOWBITATTRS_TD
