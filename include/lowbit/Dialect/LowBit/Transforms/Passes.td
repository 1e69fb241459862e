//===- Passes.td - lowbit transformation passes ------------*- tablegen -*-===//
//
// The target-independent steps of the pipeline in docs/design.md: pick a
// config, record the packed layout it needs, lower to tiled loops of
// microkernel ops.
//
//===----------------------------------------------------------------------===//

#ifndef LOWBIT_DIALECT_LOWBIT_TRANSFORMS_PASSES_TD
#define LOWBIT_DIALECT_LOWBIT_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def LowBitSelectConfig : Pass<"lowbit-select-config", "ModuleOp"> {
  let summary = "Chooses a strategy config for every lowbit.mpgemm";
  let description = [{
    Sets the `config` attribute of every `lowbit.mpgemm` that has none (a
    `config` given in the IR is kept):

    1. with `config`, that attribute (the CLI's override);
    2. else with `schedule`, the entry of the JSON schedule file for the op's
       (format, M, K, n_class, target, threads), where n_class is `gemv`
       when N (static N, else `n-hint`) is 1 and `gemm` otherwise;
    3. else, or when the schedule has no entry for the op, an up-convert
       config from the target's TargetInfo (`selectUpconvertConfig`). GEMV
       is bound by memory: one 16-row tile (one sequential stream of
       weights per thread), `tile_n = 1`, weights prefetched
       `getPrefetchBytes()` ahead (4 KiB on x86); the lowering keeps the dot
       product busy inside the tile. GEMM is bound by compute: the largest
       block of tiles x activation rows (at least 2 rows) whose accumulators
       fit the register file, more tiles on a tie (AVX512: i2s 64 x 4, q4_0
       64 x 2; AVX2 / AVX-VNNI: i2s 32 x 2, group formats 16 x 2).
       `tile_k = 64`. The choices were measured on Zen 5 (see
       `SelectConfig.cpp`). With `strategy=lut-bitserial` the heuristic is
       a lut_bitserial config instead (`selectLutBitserialConfig`: one
       16-row tile and `bn = 1` for GEMV, `bn = 2` activation rows for GEMM
       on targets with 32 registers; `kfactor = 16`, 8 on NEON, lossless
       tables). For a GPU target (`spirv-vulkan`, `spirv-xe2`) the
       heuristic is a `#lowbit.gpu` config from its GpuTargetInfo
       (`selectGpuConfig`: the target's default tiles and subgroup size,
       the activation scale fused for GEMV and from a pre-kernel for GEMM,
       the integer dot product where the target has it); a GPU target takes
       only `#lowbit.gpu` configs and a CPU target none.

    The module gets the target as its `lowbit.target` attribute
    (`module attributes {lowbit.target = "x86-avx512vnni"}`), from which
    the lowerings and conversions take their TargetInfo.

    The chosen config must pass the op's verifier (`verifyFor`); a schedule
    that cannot be read or parsed, a version other than 1 or 2, an entry
    with a missing or mistyped field, or a config that does not parse or
    verify is an error naming the file and the entry.

    Schedule format (version 1; version 2, which `lowbit tune` writes, adds
    `tool_version`, `cpu` and per entry `us`, `gbps`, `heuristic_config`,
    `heuristic_us`: see `include/lowbit/Tuning/Schedule.h`):

    ```json
    {"version": 1, "entries": [
      {"format": "i2s", "M": 2560, "K": 2560, "n_class": "gemv",
       "target": "x86-avx512vnni", "threads": 2,
       "config": "#lowbit.upconvert<tile_m = 32, tile_k = 64, tile_n = 1>"}
    ]}
    ```

    Example (`target=x86-avx512vnni`):

    ```mlir
    %y = lowbit.mpgemm %x, %w, %s {weight = #lowbit.weight<bits = 2, encoding = ternary>,
                                   layout = #lowbit.layout<i2s>}
         : (tensor<?x2560xf32>, tensor<2560x640xi8>, tensor<1xf32>) -> tensor<?x2560xf32>
    // becomes
    %y = lowbit.mpgemm %x, %w, %s {config = #lowbit.upconvert<tile_m = 16, tile_k = 64, tile_n = 1, prefetch = 16>, ...}
    ```
  }];
  let dependentDialects = ["::mlir::lowbit::LowBitDialect"];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"generic\"",
           "Target the config is for (x86-avx2, x86-avxvnni, "
           "x86-avx512vnni, x86-amx, aarch64-neon, aarch64-neon-nodot, "
           "generic, "
           "spirv-vulkan, spirv-xe2)">,
    Option<"threads", "threads", "int64_t", /*default=*/"1",
           "Threads the kernel will run on (schedule key; the heuristic "
           "keeps at least this many tile groups)">,
    Option<"nHint", "n-hint", "int64_t", /*default=*/"1",
           "Expected activation rows N when N is dynamic (1 selects GEMV)">,
    Option<"schedule", "schedule", "std::string", /*default=*/"",
           "Path of a JSON schedule file to look configs up in">,
    Option<"config", "config", "std::string", /*default=*/"",
           "A config attribute to use for every op, e.g. "
           "'#lowbit.upconvert<tile_m = 32, tile_k = 64, tile_n = 1>'">,
    Option<"strategy", "strategy", "std::string", /*default=*/"",
           "Strategy of the heuristic config: empty for the format's "
           "default (lut-elementwise for tl1/tl2, else upconvert) or "
           "lut-bitserial">,
  ];
}

def LowBitPackLayout : Pass<"lowbit-pack-layout", "::mlir::func::FuncOp"> {
  let summary = "Records the packed weight layout that the chosen strategy reads";
  let description = [{
    For every `lowbit.mpgemm` with an up-convert config, replaces its layout
    by the vnni4 layout of kernel_abi.h, `#lowbit.layout<vnni4, tile_m = 16,
    tile_k = 32 / bits>`, and the type of its packed weights (a function
    argument, whose type changes with it) by
    `tensor<ceil(M/16) x ceil(K/32)*bits x 64 x i8>`: tiles of 16 rows,
    vectors of 64 bytes. With a lut_elementwise config, a row-major tl1/tl2
    layout becomes the interleaved layout of lut_abi.h,
    `#lowbit.layout<tl2, tile_m = 16, tile_k = 96, interleave = 16>` (tl1:
    `tile_k = 16`; `lane_order = lanes` for a module target whose
    TargetInfo::hasLutLaneOrder, lut_abi.h's LANE ORDER), and the weights
    `tensor<ceil(M/16) x B x i8>` with B the tile bytes (64 + 320 per TL2
    block + 64 per TL1 vector). The constants are those of the runtime's
    kernel_abi.h, lut_abi.h and bitserial_abi.h. Ops with a
    reference config are left alone; an op
    without a config, or with a strategy that has no packed layout yet, is
    an error.

    ```mlir
    func.func @k(%x: tensor<?x100xf32>, %w: tensor<33x25xi8>, %s: tensor<1xf32>) -> tensor<?x33xf32> {
      %y = lowbit.mpgemm %x, %w, %s {layout = #lowbit.layout<i2s>, config = #lowbit.upconvert<...>, ...}
    // becomes
    func.func @k(%x: tensor<?x100xf32>, %w: tensor<3x8x64xi8>, %s: tensor<1xf32>) -> tensor<?x33xf32> {
      %y = lowbit.mpgemm %x, %w, %s {layout = #lowbit.layout<vnni4, tile_m = 16, tile_k = 16>, ...}
    ```
  }];
  let dependentDialects = ["::mlir::lowbit::LowBitDialect"];
}

def LowBitLowerUpconvert : Pass<"lowbit-lower-upconvert", "::mlir::func::FuncOp"> {
  let summary = "Lowers an up-convert lowbit.mpgemm to tiled loops of microkernel ops";
  let description = [{
    Rewrites a function whose body is one `lowbit.mpgemm` (up-convert config,
    vnni4 layout) and its return into the kernel of kernel_abi.h:

    ```mlir
    func.func @k(%codes: memref<?xui8> {lowbit.readonly}, %scales: memref<?xui16> {lowbit.readonly},
                 %zeros: memref<?xui16> {lowbit.readonly}, %xq: memref<?xi8> {lowbit.readonly},
                 %x_scales: memref<?xf32> {lowbit.readonly}, %x_sums: memref<?xi32> {lowbit.readonly},
                 %y: memref<?xf32>, %n: i64, %tile_begin: i64, %tile_end: i64, %w_scale: f32)
    ```

    with M and K compile-time constants. The body is target independent but
    sized by the TargetInfo of the module's `lowbit.target` (register
    bytes R, register count):

    - `scf.for` over groups of `tile_m / 16` tiles in [tile_begin, tile_end),
      then the remaining tiles one at a time;
    - `scf.for` over blocks of `tile_n` activation rows, then the rest one
      at a time;
    - K-quants with `tile_n` > 1 on SIMD targets (registers of several
      rows; M and K constant, the buffer at most 512 KiB): before those
      loops, per tile group, the sub-scales (and sub-minimums) of every
      sub-block widened once by `lowbit.uk.load_scales`, multiplied by the
      super-block's d (and -dmin) and stored with `lowbit.uk.spill` into a
      `lowbit.uk.stack_buffer`, which the K loops read back with
      `lowbit.uk.load` to add every block straight into the outputs;
      where a tile group's codes and buffer over K exceed 512 KiB (a
      core's L2), K panels of 4 super-blocks per chunk of 32 activation
      rows, the chunk's outputs kept in a second stack buffer between
      panels and stored after the last;
    - `scf.for` over K in steps of `tile_k * unroll` (a multiple of the
      32-k activation block), with the remaining blocks straight-line after
      it; accumulators (vector<R/4 x i32>, and vector<R/4 x f32> outputs for
      group formats) are loop-carried, i.e. kept in registers;
    - per block: `lowbit.uk.load` of each tile's R-byte slices, one
      `lowbit.uk.unpack` per bit plane reused by all `tile_n` columns,
      `lowbit.uk.broadcast4` of 4 activations per column and plane,
      `lowbit.uk.dot4`; group formats then add the block to the float sums
      of its scale group with `lowbit.uk.block_combine` (D / s_b, with the
      group's zero points, loaded once per group by `lowbit.uk.load_half`;
      the block accumulator of q4_0 starts at -8 S and that of w1gG, whose
      codes are doubled, at -S) and fold each group's sums into the outputs
      with its scales (`lowbit.uk.group_combine`): the K loop steps whole
      groups, or a group is a loop of whole steps; ternary weights
      accumulate the whole row and finish with `lowbit.uk.ternary_scale`;
    - ternary accumulators are split into independent chains when the tile
      alone has fewer than `getDotChains()`: when registers, the target's
      largest dot4 code and int32 range allow, bit plane j is masked in
      place (codes x 4^j, no shift) into its own chain and divided back by
      `lowbit.uk.shr_exact` after the K loop;
    - `lowbit.uk.store`, with a row count where M is not a multiple of 16.

    When a 64-byte vector spans several registers (R < 64), as many slices
    as fit the register budget are accumulated in one K loop and an outer
    `scf.for` walks the slice groups.

    ```mlir
    %acc = scf.for %kb = %c0 to %c80 step %c2 iter_args(%a = %zero) -> (vector<16xi32>) {
      %w = lowbit.uk.load %codes[%o] : memref<?xui8> -> vector<64xi8>
      %c = lowbit.uk.unpack %w {bits = 2, plane = 0} : vector<64xi8>
      %x = lowbit.uk.broadcast4 %xq[%k] : memref<?xi8> -> vector<64xi8>
      %a1 = lowbit.uk.dot4 %a, %c, %x : vector<64xi8> -> vector<16xi32>
      ...
    }
    ```
  }];
  let dependentDialects = [
    "::mlir::lowbit::LowBitDialect", "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def LowBitLowerLutElementwise
    : Pass<"lowbit-lower-lut-elementwise", "::mlir::func::FuncOp"> {
  let summary = "Lowers a tl1/tl2 lowbit.mpgemm to table-lookup microkernel loops";
  let description = [{
    Rewrites a function whose body is one `lowbit.mpgemm` (lut_elementwise
    config, interleaved tl1/tl2 layout of runtime/include/lowbit/lut_abi.h)
    and its return into a kernel with the signature of kernel_abi.h (codes
    in the lut_abi.h layout, scales and zeros unused), bitnet.cpp's TL1/TL2
    kernels made lossless. Target independent; sized by the TargetInfo of
    the module's `lowbit.target` (register bytes R, a multiple of 16
    dividing 64, and `hasByteTableLookup`):

    - prologue per block of `bn` activation rows: int16 tables for every
      pair (TL1, 9 entries) or triple (TL2, 14 entries: mirror
      consolidation, the sign is applied by multiplication) of activations,
      written as low and biased high bytes to a `lowbit.uk.stack_buffer` by
      `lowbit.uk.lut_tables` (8 groups at a time);
    - `scf.for` over groups of `bm / 16` tiles in [tile_begin, tile_end),
      then the remaining tiles one at a time;
    - the block-fitting split: TL2 blocks of 96 weights (4 index vectors and
      their sign words, `lowbit.uk.lut_signs` per nibble), then the TL1
      vectors of the K remainder; per index register and nibble one
      `lowbit.uk.lut_dot` per activation row (each loaded weight register
      serves `bn` rows) into int32 sums of the low and high table bytes,
      one pair per register half and nibble (independent dot chains), `bk`
      weights per iteration of an `scf.for` that carries them;
    - on targets whose vectors are in lut_abi.h's lane order
      (`TargetInfo::hasLutLaneOrder`: AVX2, AVX-VNNI) instead, per register
      and nibble one `lowbit.uk.lut_lookup` of each table byte (one table
      per 16-byte lane), the two nibbles zipped (`lowbit.uk.zip`) and
      multiplied by their signs (`lowbit.uk.lut_signs {by_dword}`) into
      int16 pair sums (`lowbit.uk.dot2`), widened into int32 sums per
      quarter of the rows after each TL2 block or TL1 vector
      (`lowbit.uk.extend`), whose two lanes `lowbit.uk.lane_fold` adds at
      the end;
    - when the TL2 tables of the `bn` rows exceed 32 KiB (about an L1
      cache), the blocks are split into K chunks of at most 24 KiB of
      tables: every tile of the range runs chunk 0, then chunk 1, ..., the
      int32 sums kept between chunks in a second stack buffer
      (`lowbit.uk.spill` / `lowbit.uk.load`), and the weight prefetch
      follows that order;
    - `lowbit.uk.lut_combine` of each pair plus the header's correction,
      then `lowbit.uk.ternary_scale` (exactly the reference's
      `(float)acc * s_w / s_x`) and `lowbit.uk.store`.

    ```mlir
    %t = lowbit.uk.stack_buffer {bytes = 27648} : memref<?xi8>
    ...
    %r:4 = scf.for %i = %c0 to %c3 step %c1 iter_args(...) {
      %w = lowbit.uk.load %codes[%o] : memref<?xui8> -> vector<64xi8>
      %s = lowbit.uk.lut_signs %codes[%so] : memref<?xui8> -> vector<64xi8>
      %lo, %hi = lowbit.uk.lut_dot %a, %b, %w, %t[%at]
                 signs(%s : vector<64xi8>) {high = false}
                 : vector<64xi8>, memref<?xi8>, vector<16xi32>
      ...
    }
    %rows = lowbit.uk.lut_combine %lo, %hi : vector<16xi32>
    ```
  }];
  let dependentDialects = [
    "::mlir::lowbit::LowBitDialect", "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def LowBitLowerGpu : Pass<"lowbit-lower-gpu", "ModuleOp"> {
  let summary = "Lowers an i2s, w1gG..w4gG or ggml block-format lowbit.mpgemm to a gpu.module kernel";
  let description = [{
    Replaces every function whose body is one ternary (i2s layout), binary
    or unsigned 1- to 4-bit (w1gG..w4gG, canonical layout) or ggml block
    format (q4_0 ... iq4_nl, gguf layout) `lowbit.mpgemm` and its return
    by a `gpu.module @<function>` holding the kernel
    `gpu.func @mpgemm` and, when the config does not fuse the activation
    scales, the pre-kernel `gpu.func @act_scales`. The op's `#lowbit.gpu`
    config, which `lowbit-select-config` chose for a GPU target, sizes the
    kernel; an op without one is an error. The kernels are target-neutral
    (gpu, arith, memref, scf, math and `lowbit.uk.packed_dot` for the
    integer dot product); `lib/Conversion/LowBitToSPIRV` gives them their
    SPIR-V forms.

    Both kernels take the same six storage buffers (runtime/include/
    lowbit/vulkan.h), with M and K compile-time constants; a config whose
    workgroup memory exceeds the module target's (its `lowbit.target`'s
    GpuTargetInfo: 32 KiB) is an error:

    ```mlir
    gpu.func @mpgemm(%x: memref<?xf32>,        // [N][K] activations
                     %w: memref<MxKwxi32>,     // i2s codes, 16 per word
                     %y: memref<?xf32>,        // [N][M] output
                     %params: memref<2xi32>,   // N, bits of w_scale
                     %scales: memref<?xf32>,   // [N] int8 scales (unfused)
                     %blocks: memref<?xf32>)   // wbgG: [M][K/32] (s, z); the
                                               // ggml formats: memref<?xi32>,
                                               // their scales at ggml's bits
        kernel attributes {known_block_size = array<i32: ...>}
    ```

    Workgroup (x, y) computes rows [x * wg_tile_m, ...) of W and activation
    rows [y * wg_tile_n, ...):

    1. the `wg_tile_n` row scales s = 127 / max(absmax, 1e-5) (an
       invocation-strided absmax, combined in workgroup memory), or loads
       of the pre-kernel's scales;
    2. per subgroup tile, each lane walks its share of the K words: 16
       activations per row quantized in registers (round half to even,
       clamp to [-128, 127]), reused by `sg_tile_m` weight words whose 2-bit
       codes c give c - 1 and are multiplied and added into int32;
    3. lane and K-split partial sums added in workgroup memory; y =
       (float)acc * w_scale / s, exactly the reference's expression, for
       rows inside M and N.

    With `matrix = true` (i2s only) steps 2-3 become cooperative-matrix
    tiles: per 32 K the lanes of a subgroup write an 8 x 32 int8 tile of
    codes - 1 and a 32 x 16 int8 tile of quantized activations into
    workgroup memory, `gpu.subgroup_mma_compute` adds their product to an
    8 x 16 int32 matrix, which goes through workgroup memory to the lanes
    for the reference's dequantization.

    With `dtype` f16 or bf16, %x and %y are `memref<?xi16>` holding the
    bits: each activation is widened to f32 exactly in integer ops and y is
    rounded to nearest even in integer ops after step 3, so Y is the f32
    result rounded as the runtime's float_to_half / float_to_bf16 do.

    w1gG..w4gG and the ggml block formats (a 32-block is b words of %w)
    walk K in 32-blocks instead: each lane quantizes a block's activations
    with the block's own scale in registers and adds (float)(D - z S) * s_w
    / s_x per block (the reference's block term; w1gG: 2D - S; with a min
    s_w (float)D + o (float)S, per scale block of 16 or 32) to f32
    accumulators, which step 3 sums. The ggml formats' scales are decoded
    from ggml's bits in the kernel (vulkan.h GGML SCALES: fp16 d, m, dmin
    widened in integer ops, K-quant sub-scales s = d * sc, o = -(dmin * m));
    a codebook encoding (iq4_nl) looks its codes up as codebook[q] + 128
    from the weight attribute's codebook, an offset code with z = 128.
  }];
  let dependentDialects = [
    "::mlir::lowbit::LowBitDialect", "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect", "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect"
  ];
  let options = [
    Option<"dtype", "dtype", "std::string", /*default=*/"\"f32\"",
           "Element type of X and Y: f32, f16 or bf16 (16-bit: memref of "
           "i16 bits, widened and rounded to nearest even in the kernel)">,
  ];
}

def LowBitLowerLutBitserial
    : Pass<"lowbit-lower-lut-bitserial", "::mlir::func::FuncOp"> {
  let summary = "Lowers a bit-serial LUT (T-MAC) lowbit.mpgemm to table-lookup loops";
  let description = [{
    Rewrites a function whose body is one `lowbit.mpgemm` (lut_bitserial
    config, bit-plane layout of runtime/include/lowbit/bitserial_abi.h:
    i2s as two planes, w1gG, w2gG, w3gG, w4gG) and its return into a kernel
    with the signature of kernel_abi.h. Target independent; sized by
    the TargetInfo of the module's `lowbit.target` (register bytes R, a
    multiple of 16, and `hasByteTableLookup`):

    - prologue per block of `bn` activation rows: for every group of 4
      activations a 16-entry int16 table of the sums with signs ±1 (T-MAC's
      s0 = -1, s1 = +1; lossless, mirror symmetric: T[15 - e] = -T[e]),
      written to a `lowbit.uk.stack_buffer` by `lowbit.uk.lut_tables
      {width = 4}` in `lowbit.uk.lut_dot`'s form (low bytes, high bytes +
      128; 256 bytes per 32-k block);
    - K first: `scf.for` over groups of `bm / 16` tiles in [tile_begin,
      tile_end), then the remaining tiles one at a time, each sweeping the
      whole K against the tables (held in cache across the M range); with
      more than one K panel of bitserial_abi.h (K > 2048), the tiles (in
      ranges of as many as 512 KiB of partial sums hold) sweep panel 0,
      1, ... that way, their partial sums (int32 sums,
      or the group formats' f32 outputs) spilled to a stack buffer between
      panels (`lowbit.uk.spill` / `lowbit.uk.load`), and the prefetches
      jump from one run of pieces to the next;
    - per 32-k block and tile, one `lowbit.uk.lut_dot` per plane vector,
      register half and nibble (each index register serves `bn` rows) with
      the plane weight 2^p as multiplier bytes, into int32 sums whose high
      halves start at minus the table bias (128 (2^P - 1) per group of 4);
      consecutive plane vectors take turns among accumulator sets (as
      lut-elementwise: enough for `TargetInfo::getDotChains`); `kfactor /
      8` blocks per iteration of an `scf.for` with loop-carried registers;
      on targets with lut_abi.h's lane order (`TargetInfo::hasLutLaneOrder`:
      AVX2, AVX-VNNI) instead, the weights in bitserial_abi.h's lane order
      (`#lowbit.layout` `lane_order = lanes`, which lowbit-pack-layout
      writes there; a row-order layout there is an error): with two planes
      (T-MAC's AVX2 formulation) each register is looked up as loaded
      (`lut_lookup` per nibble and table byte) and `dot2` with the bytes 1, 2
      adds a row's two planes into int16 sums, which ternary kernels keep
      over the blocks of an iteration (at most 8); with one, three or four
      planes each plane vector is looked up as
      lowbit-lower-lut-elementwise does there (`zip`, `dot2` with the plane
      weight); then `extend` into int32 sums per quarter of the rows and
      `lane_fold`;
    - ternary: after K, `lowbit.uk.lut_combine` of every set gives sum 2^p
      A_p; the linear transform D = (sum + 3 S) / 2
      (`lowbit.uk.shr_exact`) and `lowbit.uk.ternary_scale`: bit-exact
      with the reference;
    - group formats: the same per 32-k block (the activation block) with
      fresh sums, every lookup of the block on one pair per (tile, row,
      register half) (blocks are independent chains), one lut_combine,
      D = (sum + (2^P - 1) S) / 2 and `lowbit.uk.block_combine` into the
      float sums of its scale group with the group's zero points (w1gG:
      acc = A_0 directly), folded into the outputs once per group with its
      scales (`lowbit.uk.group_combine`);
    - `lowbit.uk.store`, with a row count where M is not a multiple of 16.

    The lossless int16 tables take `act_group = 32`. With `table_bits = 8`
    (lossy, bitserial_abi.h "INT8 TABLES"; `act_group` a multiple of 32)
    the prologue quantizes the tables of each act_group instead: from the
    largest sum of |x_i| over its groups of 4, a = max(1, ceil(d max /
    127)) with d = 127 / (4 * 2^(P-1)) rounded down, entries round(d T[e] /
    a) (64 bytes per nibble and block) and, after the row's tables, the
    multiplier bytes a * 2^p of every plane; the lookups are
    `lowbit.uk.lut_dot8` with those multipliers into sums that start at
    zero (no bias, no lut_combine). In lane order the int8 entries are
    looked up as the int16 tables' bytes are (one `lut_lookup` per nibble,
    `dot2` with the plane weights unsigned and the entries signed), and the
    int16 sums of a run of blocks of one act_group (ternary: a loop
    iteration's, when the iteration holds whole act_groups and the K
    panels whole act_groups; else one block) are widened by `extend`
    times the words (a, 0) the prologue writes there instead (group
    formats: a block's two lanes folded in int16 by `lane_fold`, each half
    of the rows widened times a by `widen`).

    With dynamic M and K (an any-shape kernel, kernel_abi.h's
    `lowbit_any_kernel_fn`) the same loops run over run-time blocks, tiles
    and K panels as pack_bitserial lays them out, the tables sized for the
    largest K such a kernel takes; int8 tables need a static K.

    ```mlir
    %y = lowbit.mpgemm %x, %w, %s {weight = #lowbit.weight<bits = 2, encoding = unsigned, group = 64, scale = per_group>,
           layout = #lowbit.layout<bitplanes, tile_m = 16, tile_k = 32, interleave = 16>,
           config = #lowbit.lut_bitserial<bm = 16, kfactor = 8>} : ...
    // becomes, per 32-k block, tile, plane vector and nibble
    %s1, %h1 = lowbit.uk.lut_dot %s0, %h0, %idx, %tables[%at] {high = false}
               : vector<64xi8>, memref<?xi8>, vector<16xi32>
    // and with table_bits = 8, act_group = 64
    %s1 = lowbit.uk.lut_dot8 %s0, %idx, %tables[%at], %mult {high = false}
          : vector<64xi8>, memref<?xi8>, vector<16xi32>
    ```
  }];
  let dependentDialects = [
    "::mlir::lowbit::LowBitDialect", "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

#endif // LOWBIT_DIALECT_LOWBIT_TRANSFORMS_PASSES_TD
