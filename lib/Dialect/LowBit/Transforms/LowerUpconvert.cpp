//===- LowerUpconvert.cpp - up-convert mpgemm to microkernel loops --------===//
//
// Rewrites a function `@k(x, packed, [scales]) { return lowbit.mpgemm }`
// into the kernel of kernel_abi.h: pointers to the packed codes, scales,
// zero points and prepared activations, loops over tile groups, activation
// columns and K blocks, and lowbit.uk.* ops on registers whose width comes
// from TargetInfo. Nothing here depends on the ISA. Ternary weights in the
// GGML ROWS LAYOUT (TQ2_0 or TQ1_0 rows) get a row-major kernel
// (RowKernelBuilder).
//
//===----------------------------------------------------------------------===//

#include "lowbit/Dialect/LowBit/Transforms/Passes.h"

#include "KernelLoopBuilder.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Iterators.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <functional>
#include <optional>

namespace mlir::lowbit {
#define GEN_PASS_DEF_LOWBITLOWERUPCONVERT
#include "lowbit/Dialect/LowBit/Transforms/Passes.h.inc"
} // namespace mlir::lowbit

using namespace mlir;
using namespace mlir::lowbit;

/// Rows per packed tile, k per activation block and bytes per vector
/// (kernel_abi.h).
static constexpr int64_t kTileRows = LOWBIT_TILE_ROWS;
static constexpr int64_t kBlockK = LOWBIT_K_BLOCK;
static constexpr int64_t kVectorBytes = LOWBIT_VECTOR_BYTES;

int64_t mlir::lowbit::getSlicesPerLoop(const TargetInfo &target,
                                       int64_t tilesPerGroup, int64_t tileN,
                                       bool ternary) {
  int64_t slices =
      std::max<int64_t>(1, kVectorBytes / target.getRegisterBytes());
  int64_t perOutput = ternary ? 1 : 2;
  for (int64_t s = slices; s > 1; --s)
    if (slices % s == 0 && tilesPerGroup * s * tileN * perOutput + tileN + 3 <=
                               target.getNumRegisters())
      return s;
  return 1;
}

namespace {

/// Everything static about one kernel. An any-shape kernel (`anyShape`,
/// lowbit_any_kernel_fn) leaves m, kp, numTiles, vectorsPerTile and blocks
/// 0: the kernel computes them from its M and K arguments (Shape).
struct KernelPlan {
  bool anyShape = false;
  Encoding encoding;
  int64_t bits = 0;
  int64_t m = 0, kp = 0;      // rows, reduction depth rounded up to 32
  int64_t numTiles = 0;       // ceil(m / 16)
  int64_t vectorsPerTile = 0; // 64-byte vectors per tile: kp * bits / 32
  int64_t blocks = 0;         // 32-k blocks per row: kp / 32
  int64_t group = 0;          // weights per scale along K (0: ternary)
  int64_t tilesPerGroup = 1, tileN = 1;
  int64_t blocksPerStep = 1; // K-loop step in blocks: tile_k / 32 * unroll
  int64_t prefetchBytes = 0; // distance of lowbit.uk.prefetch, 0: none
  int64_t registerBytes = 0, lanes = 0, slices = 0;

  /// The code offset every row shares (q4_0 8, offset encodings' code
  /// offset), subtracted through the activations' block sums; 0 otherwise.
  int64_t codeOffset = 0;
  /// Bits of the low plane of a code (kernel_abi.h lowbit_vnni4_low_bits):
  /// codes of 3, 5, 6 bits have a high plane of bits - lowBits more.
  int64_t lowBits = 0;
  /// 8-bit codes on a target whose dot product takes codes below 128: dot4
  /// {centred} reads code u as u - 128.
  bool centred = false;
  /// Codebook encodings (IQ4_NL): the 16 bytes that lowbit.uk.codebook
  /// maps each unpacked code q to, codebook[q] + 128 (8-bit codes with
  /// offset 128, read as q8_0's); empty otherwise.
  SmallVector<int8_t, 16> lookup;

  bool isTernary() const { return encoding == Encoding::Ternary; }
  bool hasZeros() const { return encoding == Encoding::Unsigned; }
  /// A minimum per 32-k block (min encodings): y += o * S / s_b.
  bool hasMin() const { return encoding == Encoding::Min; }
  /// K-quants (kernel_abi.h, K-QUANT SCALES): `group` is the super-block,
  /// whose fp16 d (and -dmin) scale the sub-scales (and sub-minimums) of
  /// its 32-k blocks, `scaleBits` bits each (two's complement without
  /// minimums: Q3_K's and Q6_K's signed scales).
  bool subScales = false;
  int64_t scaleBits = 0;
  /// Scale groups per 32-k block: 2 for K-quants with sub-blocks of 16
  /// (q2_k, q3_k, q6_k), whose activation sums are per 16 (kernel_abi.h);
  /// their dot products are two accumulators per output, one per half.
  int64_t halves = 1;
  /// Sums per output of a scale group: g, and h for the minimums.
  int64_t sumsPerOutput() const { return subScales && hasMin() ? 2 : 1; }
  /// Sub-blocks per super-block.
  int64_t subBlocks() const { return group / kBlockK * halves; }
  /// Bytes per tile and super-block of the K-quant scales (kernel_abi.h
  /// lowbit_k_quant_super_bytes).
  int64_t superBytes() const {
    return lowbit_k_quant_super_bytes(int(subBlocks()), int(scaleBits),
                                      hasMin());
  }
  int64_t groupsPerRow() const { return kp / group; }
  /// GEMM kernels (tile_n > 1) of one shape on SIMD targets widen each
  /// tile group's K-quant sub-scales (and sub-minimums) to f32 and multiply
  /// them by their super-block's d (and -dmin) once, into a stack buffer
  /// the K loops of all its activation column blocks read (lowbit.uk.load):
  /// s_j = d * sc_j and o_j = -dmin * m_j, as ggml dequantizes. The K loop
  /// then adds each block straight into the outputs (y += s_j * D_j / s_b
  /// + o_j * S_j / s_b), with no per-super-block sums to keep in registers
  /// beside them (the oneDNN / ggml int8 GEMM order: integer dot per
  /// sub-block, one scale per sub-block and row). Bytes of the buffer, 0
  /// for none: [32-k block][half][tile][s_j, o_j][slice] registers.
  /// Any-shape kernels have one only on tiles, sized for the largest K
  /// there (kMaxAmxBufferBytes / 2 tiles: 16384, checked at run time).
  int64_t subScaleBufferBytes() const {
    if (!subScales || (anyShape && !amxTiles) || tileN == 1 || lanes == 1)
      return 0;
    int64_t maxBlocks =
        anyShape ? kMaxAmxBufferBytes / amxTiles / 16 / kBlockK : blocks;
    int64_t bytes = maxBlocks * halves * subScaleTiles() * sumsPerOutput() *
                    kTileRows * 4;
    return bytes <= kMaxSubScaleBufferBytes ? bytes : 0;
  }
  /// Tiles per group of the sub-scale buffer: the VNNI loops' group, or the
  /// tiled path's (amxTiles) where that is larger.
  int64_t subScaleTiles() const { return std::max(tilesPerGroup, amxTiles); }
  /// The largest sub-scale buffer: q2_k's for 4 tiles of K = 14336 (448
  /// KiB; within the 512 KiB stack of a macOS secondary thread).
  static constexpr int64_t kMaxSubScaleBufferBytes = 512 * 1024;
  /// K panels of the K-quant GEMM kernels with a sub-scale buffer: 32-k
  /// blocks per panel, 0 for none (one pass over K). Where a tile group's
  /// codes and s_j / o_j over the whole K outgrow a core's L2 (more than
  /// kPanelMinBytes), every column block would stream them from L3; in
  /// panels of 4 super-blocks (q6_k, 4 tiles: 64 KiB) they are read from
  /// L3 once per chunk of kPanelColumns activation rows, whose column
  /// blocks then find them in L2, their outputs kept in a second stack
  /// buffer between panels (the K blocking of Goto and van de Geijn,
  /// "Anatomy of high-performance matrix multiplication"). Measured on
  /// Zen 4 (1 MiB L2), N = 128, interleaved against q4_0: 4096x14336 q6_k
  /// 1.71-1.86x q4_0's time without panels, 1.37-1.55x with; at K = 4096
  /// (256 KiB per group) panels measured up to 10% slower, and panels of
  /// one super-block (L1) slower everywhere (docs/perf/kquants.md).
  int64_t panelBlocks() const {
    int64_t panel = 4 * group / kBlockK;
    int64_t groupBytes =
        tilesPerGroup * (vectorsPerTile * kVectorBytes +
                         blocks * halves * sumsPerOutput() * kTileRows * 4);
    if (subScaleBufferBytes() == 0 || groupBytes <= kPanelMinBytes ||
        blocks % panel != 0 || panel % blocksPerStep != 0)
      return 0;
    return panel;
  }
  static constexpr int64_t kPanelMinBytes = 512 * 1024;
  /// Activation rows per chunk of the panel loops, and the bytes of their
  /// outputs' buffer: [row in chunk][tile][slice] registers.
  static constexpr int64_t kPanelColumns = 32;
  int64_t panelOutputBytes() const {
    return panelBlocks() ? kPanelColumns * tilesPerGroup * kVectorBytes : 0;
  }
  int64_t totalCodeBytes() const {
    return numTiles * vectorsPerTile * kVectorBytes;
  }
  /// Activation scales and sums per row: one per block, one for ternary.
  int64_t xBlocksPerRow() const { return isTernary() ? 1 : blocks; }

  /// The codes are TQ2_0 rows of kernel_abi.h's GGML ROWS LAYOUT (tile_begin
  /// and tile_end count rows), read by the VNNI GEMM loops below: each
  /// group of tilesPerGroup x 16 rows from tile_begin on (then the rows
  /// left in tiles of 16) is first repacked into the vnni4 i2s layout in a
  /// stack buffer (ggmlRowsBytes(), as a vnni4 tile group's codes: L2)
  /// that every column block then reads as the packed i2s kernel reads
  /// its weights; their outputs are stored from the group's first row on,
  /// rows past tile_end left alone. vnni4 vector v of a tile (k 16v ..
  /// 16v + 15) is bit pair (v mod 8) / 2 of the 16 bytes at 16 v mod 256
  /// + 128 ((v mod 16) >= 8) of each row's block: the 16 rows' 4-byte words
  /// j of them are gathered into one vector per j (4 bytes a row: a
  /// 16 rows x 4 k vnni block per bit pair), and the bit pair of word j
  /// becomes the vector's plane j (lowbit.uk.unpack into). Same math as the
  /// row kernels and the packed i2s: bit-exact.
  bool ggmlRows = false;
  int64_t ggmlRowsBytes() const {
    return tilesPerGroup * vectorsPerTile * kVectorBytes;
  }

  /// GEMM kernels of i2s (and amxPerBlock's formats) on a target with
  /// matrix tiles (x86-amx): weight tiles per tile group of the tiled path
  /// (1 or 2), 0 for none. Per group, the codes of all K are expanded once
  /// to int8 in a stack buffer in the tiles' B layout (kernel_abi.h's
  /// vnni4 vector, unpacked per plane, is one 64-byte row of 16 weight rows
  /// x 4 k: the layout of Intel's VNNI tiles), which stays in L2 while
  /// every block of 16 activation rows multiplies it: tdpbsud of the
  /// activations (16 rows x 64 k, straight from xq) and 16 rows of the
  /// buffer into int32 accumulator tiles, 2 x 2 of them (two blocks of
  /// activation rows, two weight tiles), stored once at the end of K and
  /// scaled as the VNNI kernels do (y = (float)(D - S) * w_scale / s_x:
  /// exact). The last N mod 16 rows take the VNNI loops. A whole-K buffer instead of panels
  /// keeps the accumulators in their tiles over all K with no spills; its
  /// bound, kMaxAmxBufferBytes, is the stack the K-quant buffer already
  /// takes (K up to 16384 with two tiles, 32768 with one; larger K keeps
  /// the VNNI loops). Any-shape kernels take two tiles and check at run
  /// time that their K fits (16384), else run the VNNI loops.
  int64_t amxTiles = 0;
  /// Formats with a scale per 32-k block (q4_0, q5_0, q8_0, iq4_nl; with a
  /// minimum, q4_1, q5_1) or per group of blocks (w1gG, codes doubled;
  /// with zero points, w2gG, w4gG) on tiles: one tile product per block
  /// (tile_config k = 32), its accumulators stored and combined in f32 per
  /// block (block_combine, group_combine, the minimum's o * S / s_b as
  /// foldGroup's), into f32 outputs kept in a stack buffer: the blocking of
  /// llama.cpp's AMX kernels for its block types (ggml-cpu/amx), whose
  /// per-block AVX-512 epilogue bounds them.
  /// K-quants (with the sub-scale buffer: any-shape K up to 16384) too: one
  /// product per sub-block (k = 32, or 16 for sub-blocks of 16), combined
  /// as the VNNI GEMM combines its blocks (combineSubScales,
  /// combineHalves).
  bool amxPerBlock = false;
  static constexpr int64_t kMaxAmxBufferBytes = 512 * 1024;
  /// K per tile product, and K padded to it.
  static constexpr int64_t kAmxK = 64;
  int64_t amxProductK() const {
    return amxPerBlock ? kBlockK / halves : kAmxK;
  }
  int64_t amxKp() const { return llvm::alignTo(kp, amxProductK()); }
  /// Bytes of the expanded codes of one weight tile: Kp / 4 rows of 64.
  int64_t amxTileBytes() const { return amxKp() / 4 * kVectorBytes; }
};

/// The run-time sizes of an any-shape kernel (index values computed from
/// its M and K arguments at entry); all null for a kernel of one shape,
/// which uses the constants of its KernelPlan.
struct Shape {
  Value m, kp, numTiles, vectorsPerTile, blocks, groupsPerRow;
  Value lastVector; // offset of the last code vector (prefetch clamp)
};

/// The values that one (tile group, column block, slice group) works on.
struct Tile {
  Value firstTile;   // index of the first 16-row tile
  int64_t tiles = 1; // tiles in the group
  Value firstColumn; // index of the first activation row n
  int64_t columns = 1;
  Value firstSlice; // first register slice of each tile
  int64_t slices = 1;
  /// Independent int32 accumulators per output register (ternary only),
  /// summed after the K loop, so that few tiles still keep enough dot4
  /// chains in flight. With `scaledPlanes`, chain j takes bit plane j of
  /// every vector unshifted (codes x 2^planeScale[j]) and is divided back
  /// at the end; otherwise the planes alternate between the chains.
  int64_t chains = 1;
  bool scaledPlanes = false;
  SmallVector<int64_t> planeScale;

  int64_t numAccumulators() const { return tiles * slices * columns; }
  int64_t accIndex(int64_t t, int64_t s, int64_t c) const {
    return (t * slices + s) * columns + c;
  }
};

/// Writes the kernel body with an OpBuilder, folding index arithmetic on
/// constants as it goes.
class KernelBuilder : KernelLoopBuilder {
public:
  KernelBuilder(OpBuilder &b, Location loc, const KernelPlan &plan,
                const TargetInfo &target, ValueRange args)
      : KernelLoopBuilder(b, loc), plan(plan), target(target), codes(args[0]),
        scales(args[1]), zeros(args[2]), xq(args[3]), xScales(args[4]),
        xSums(args[5]), y(args[6]), n(args[7]), tileBegin(args[8]),
        tileEnd(args[9]), wScale(args[10]) {
    if (plan.anyShape) {
      mArg = args[11];
      kArg = args[12];
    }
    MLIRContext *ctx = b.getContext();
    byteReg = VectorType::get({plan.registerBytes}, IntegerType::get(ctx, 8));
    accReg = VectorType::get({plan.lanes}, IntegerType::get(ctx, 32));
    outReg = VectorType::get({plan.lanes}, Float32Type::get(ctx));
  }

  void build() {
    if (plan.anyShape)
      computeShape();
    // Aligned to a vector, so that no register load of them straddles a
    // cache line (1-2% of a q4_k GEMM's time, docs/perf/kquants.md).
    if (int64_t bytes = plan.subScaleBufferBytes())
      subScaleBuffer = createStackBuffer(b, loc, bytes, kVectorBytes);
    if (int64_t bytes = plan.panelOutputBytes())
      panelOutputs = createStackBuffer(b, loc, bytes, kVectorBytes);
    Value begin = toIndex(tileBegin), end = toIndex(tileEnd);
    if (plan.ggmlRows)
      buildGgmlRowGroups(begin, end);
    else if (plan.amxTiles)
      buildAmx(begin, end);
    else
      buildTileGroups(begin, end);
  }

private:
  /// `tiles` whole tiles from `firstTile` (every register slice) for the
  /// activation row `firstColumn` (none yet where it is null).
  Tile wholeTiles(Value firstTile, int64_t tiles,
                  Value firstColumn = Value()) {
    Tile tile;
    tile.firstTile = firstTile;
    tile.tiles = tiles;
    tile.firstColumn = firstColumn;
    tile.firstSlice = constant(0);
    return tile;
  }

  /// The VNNI loops: whole tile groups, then the remaining tiles one by
  /// one.
  void buildTileGroups(Value begin, Value end) {
    int64_t group = plan.tilesPerGroup;
    if (group == 1) {
      forLoop(begin, end, 1, [&](Value t) { buildTiles(t, 1); });
      return;
    }
    // Whole groups, then the remaining tiles one by one.
    Value positive =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, end, begin);
    Value count =
        arith::SelectOp::create(b, loc, positive, sub(end, begin), constant(0));
    Value groupsEnd = add(begin, mul(div(count, group), group));
    forLoop(begin, groupsEnd, group, [&](Value t) { buildTiles(t, group); });
    forLoop(groupsEnd, end, 1, [&](Value t) { buildTiles(t, 1); });
  }

  //===--- TQ2_0 rows repacked per tile group (KernelPlan::ggmlRows) -------===//

  /// Groups of tilesPerGroup x 16 rows of [begin, end), then tiles of 16
  /// rows (the last one partial): each repacked into `repacked`, then the
  /// column loops over it with `codes` pointing there.
  void buildGgmlRowGroups(Value begin, Value end) {
    rowsSource = codes;
    rowsEnd = end;
    repacked = createStackBuffer(b, loc, plan.ggmlRowsBytes(), kVectorBytes);
    staging = createStackBuffer(b, loc, (kTileRows + 16) * kVectorBytes,
                                kVectorBytes);
    codes = repacked;
    int64_t group = plan.tilesPerGroup * kTileRows;
    Value groupsEnd = tileGroupsEnd(begin, end, group);
    auto tiles = [&](Value first, int64_t count) {
      for (int64_t t = 0; t < count; ++t)
        repackTile(add(first, t * kTileRows), t);
      rowBase = first;
      buildTiles(constant(0), count);
    };
    forLoop(begin, groupsEnd, group,
            [&](Value first) { tiles(first, plan.tilesPerGroup); });
    forLoop(groupsEnd, end, kTileRows, [&](Value first) { tiles(first, 1); });
  }

  /// Rows [first, first + 16) into tile t of `repacked` (KernelPlan::
  /// ggmlRows); a row at or past the range's end reads its last row (its
  /// outputs are not stored).
  void repackTile(Value first, int64_t t) {
    constexpr int64_t kRowsBlock = LOWBIT_GGML_ROWS_BLOCK;
    constexpr int64_t kRowsBlockBytes = LOWBIT_GGML_ROWS_TQ2_0_BYTES;
    int64_t k = plan.kp;
    Value rowBytes = constant(k / kRowsBlock * kRowsBlockBytes);
    Value last = sub(rowsEnd, constant(1));
    SmallVector<Value> rowStarts;
    for (int64_t r = 0; r < kTileRows; ++r) {
      Value row = add(first, r);
      Value past =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, row, last);
      rowStarts.push_back(
          mulValue(arith::SelectOp::create(b, loc, past, last, row), rowBytes));
    }
    int64_t tileBytes = plan.vectorsPerTile * kVectorBytes;
    forLoop(constant(0), constant(k / kRowsBlock), 1, [&](Value bk) {
      Value block = mul(bk, kRowsBlockBytes);
      // The 64 code bytes of the 16 rows' blocks into staging (row r at
      // 64 r), in registers.
      for (int64_t r = 0; r < kTileRows; ++r)
        for (int64_t s = 0; s < plan.slices; ++s)
          UkSpillOp::create(
              b, loc,
              UkLoadOp::create(b, loc, byteReg, rowsSource,
                               add(add(rowStarts[r], block),
                                   s * plan.registerBytes)),
              staging, constant(r * kVectorBytes + s * plan.registerBytes));
      // Bytes 16 q .. 16 q + 15 of the block: vnni4 vectors 8 (q / 2) + 2 i
      // + q % 2 of the block's 16, bit pair i.
      // All words first, so that their stores are done before the vector
      // loads read them (a load of several smaller stores waits for them).
      for (int64_t q = 0; q < 4; ++q)
        for (int64_t r = 0; r < kTileRows; ++r)
          for (int64_t j = 0; j < 4; ++j)
            copyWord(r * kVectorBytes + 16 * q + 4 * j,
                     kGatheredAt + (4 * q + j) * kVectorBytes + 4 * r);
      for (int64_t q = 0; q < 4; ++q) {
        for (int64_t s = 0; s < plan.slices; ++s) {
          SmallVector<Value> words;
          for (int64_t j = 0; j < 4; ++j)
            words.push_back(UkLoadOp::create(
                b, loc, byteReg, staging,
                constant(kGatheredAt + (4 * q + j) * kVectorBytes +
                         s * plan.registerBytes)));
          for (int64_t i = 0; i < 4; ++i) {
            Value vector;
            for (int64_t j = 0; j < 4; ++j)
              vector = UkUnpackOp::create(
                  b, loc, byteReg, words[j], vector, b.getI64IntegerAttr(2),
                  b.getI64IntegerAttr(i), b.getI64IntegerAttr(2 * j));
            int64_t v = 8 * (q / 2) + 2 * i + q % 2;
            UkSpillOp::create(
                b, loc, vector, repacked,
                add(mul(bk, 16 * kVectorBytes),
                    t * tileBytes + v * kVectorBytes + s * plan.registerBytes));
          }
        }
      }
    });
  }

  /// The 4 bytes at staging[from] to staging[to], loaded before they are
  /// stored: the C++ compiler makes them one 4-byte move.
  void copyWord(int64_t from, int64_t to) {
    SmallVector<Value, 4> bytes;
    for (int64_t j = 0; j < 4; ++j)
      bytes.push_back(
          memref::LoadOp::create(b, loc, staging, constant(from + j)));
    for (int64_t j = 0; j < 4; ++j)
      memref::StoreOp::create(b, loc, bytes[j], staging, constant(to + j));
  }

  //===--- Matrix tiles (KernelPlan::amxTiles) ------------------------------===//

  // Tiles: accumulators 0..3 (block p of activation rows, weight tile w:
  // p * amxTiles + w), activations 4 + p, expanded codes 6 + w.
  static constexpr int64_t kAccTile = 0, kActTile = 4, kCodeTile = 6;

  /// The tiled kernel: groups of plan.amxTiles weight tiles, then the
  /// remaining tiles one by one, between tile_config and tile_release. An
  /// any-shape kernel takes it where its K fits the buffer (run-time
  /// check), else the VNNI loops.
  void buildAmx(Value begin, Value end) {
    Value kp = shape.kp ? shape.kp : constant(plan.kp);
    int64_t productK = plan.amxProductK();
    amxKp = mul(div(add(kp, productK - 1), productK), productK);
    amxTileBytes = mul(div(amxKp, 4), kVectorBytes);
    if (!plan.anyShape) {
      buildAmxGroups(begin, end);
      return;
    }
    Value fits = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ule, mul(amxTileBytes, plan.amxTiles),
        constant(KernelPlan::kMaxAmxBufferBytes));
    auto branch = scf::IfOp::create(b, loc, fits, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(branch.thenBlock());
    buildAmxGroups(begin, end);
    b.setInsertionPointToStart(branch.elseBlock());
    // (K-quants: the sub-scale buffer holds K <= 16384 only)
    subScaleBuffer = Value();
    buildTileGroups(begin, end);
  }

  void buildAmxGroups(Value begin, Value end) {
    UkTileConfigOp::create(b, loc, plan.amxProductK());
    // The expanded codes (sized for the largest K where any shape), the
    // stored accumulators, and the activations of the last 32 k where Kp
    // is not a multiple of 64 (zero padded to 64).
    int64_t bytes = plan.anyShape ? KernelPlan::kMaxAmxBufferBytes
                                  : plan.amxTiles * plan.amxTileBytes();
    amxCodes = createStackBuffer(b, loc, bytes, kVectorBytes);
    // (per half of a block for sub-blocks of 16)
    amxAccs = createStackBuffer(
        b, loc, 4 * plan.halves * kTileRows * kVectorBytes, kVectorBytes);
    if (!plan.amxPerBlock && (plan.anyShape || plan.amxKp() != plan.kp))
      amxTail = createStackBuffer(b, loc, 2 * kTileRows * kVectorBytes,
                                  kVectorBytes);
    // Per-block formats: the f32 outputs of a column block,
    // [block p][row r][weight tile w] registers.
    if (plan.amxPerBlock)
      amxOutputs = createStackBuffer(
          b, loc, 2 * kTileRows * plan.amxTiles * kVectorBytes, kVectorBytes);
    int64_t group = plan.amxTiles;
    Value positive =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, end, begin);
    Value count =
        arith::SelectOp::create(b, loc, positive, sub(end, begin), constant(0));
    Value groupsEnd = add(begin, mul(div(count, group), group));
    forLoop(begin, groupsEnd, group, [&](Value t) { buildAmxGroup(t, group); });
    if (group > 1)
      forLoop(groupsEnd, end, 1, [&](Value t) { buildAmxGroup(t, 1); });
    UkTileReleaseOp::create(b, loc);
  }

  /// One group of `tiles` weight tiles from `firstTile`: its codes
  /// expanded, the blocks of 16 activation rows on tiles (two at a time,
  /// then one), the last N mod 16 rows on the VNNI loops.
  void buildAmxGroup(Value firstTile, int64_t tiles) {
    expandCodes(firstTile, tiles);
    if (subScaleBuffer)
      widenSubScales(firstTile, tiles);
    Value rows = toIndex(n);
    Value pairsEnd = mul(div(rows, 2 * kTileRows), 2 * kTileRows);
    Value blocksEnd = mul(div(rows, kTileRows), kTileRows);
    auto block = [&](Value c, int64_t blocks) {
      if (plan.amxPerBlock)
        buildAmxScaledBlock(firstTile, tiles, c, blocks);
      else
        buildAmxBlock(firstTile, tiles, c, blocks);
    };
    forLoop(constant(0), pairsEnd, 2 * kTileRows,
            [&](Value c) { block(c, 2); });
    forLoop(pairsEnd, blocksEnd, kTileRows, [&](Value c) { block(c, 1); });
    int64_t tileN = plan.tileN;
    Value fullEnd = add(blocksEnd, mul(div(sub(rows, blocksEnd), tileN), tileN));
    forLoop(blocksEnd, fullEnd, tileN,
            [&](Value c) { buildColumns(firstTile, tiles, c, tileN); });
    forLoop(fullEnd, rows, 1,
            [&](Value c) { buildColumns(firstTile, tiles, c, 1); });
  }

  /// Unpacks the tiles' codes into amxCodes, one 64-byte row per 4-k
  /// group: group g of 32-k block c (k 32c + 4g .. + 3 of all 16 weight
  /// rows) is row 8c + g, unpacked as buildBlock unpacks it (plane j of low
  /// vector u is group u (8 / lowBits) + j, looked up in the codebook
  /// (iq4_nl), joined by its high bits where codes have 3, 5 or 6 bits;
  /// 8-bit codes are the vector itself); the rows past Kp / 4 up to
  /// amxKp / 4 are zero.
  void expandCodes(Value firstTile, int64_t tiles) {
    Tile tile = wholeTiles(firstTile, tiles);
    int64_t planes = 8 / plan.lowBits, highBits = plan.bits - plan.lowBits;
    Value numBlocks = shape.blocks ? shape.blocks : constant(plan.blocks);
    Value zero = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(byteReg, b.getI8IntegerAttr(0)));
    for (int64_t t = 0; t < tiles; ++t) {
      Value base = mul(amxTileBytes, t);
      forLoop(constant(0), numBlocks, 1, [&](Value block) {
        auto load = [&](int64_t v) -> Value {
          return UkLoadOp::create(
              b, loc, byteReg, codes,
              codesOffset(tile, t, 0, add(mul(block, plan.bits), v)));
        };
        SmallVector<Value> high(highBits);
        for (int64_t u = 0; u < plan.lowBits; ++u) {
          Value packed = load(u);
          for (int64_t j = 0; j < planes; ++j) {
            int64_t group = u * planes + j;
            // (w1gG's codes doubled, as buildBlock doubles them)
            int64_t scale = plan.encoding == Encoding::Binary ? 1 : 0;
            Value w = plan.lowBits == 8
                          ? packed
                          : UkUnpackOp::create(
                                b, loc, byteReg, packed, Value(),
                                b.getI64IntegerAttr(plan.lowBits),
                                b.getI64IntegerAttr(j),
                                b.getI64IntegerAttr(scale));
            if (!plan.lookup.empty())
              w = UkCodebookOp::create(b, loc, byteReg, w, plan.lookup);
            if (highBits > 0) {
              int64_t highPlanes = 8 / highBits;
              Value &h = high[group / highPlanes];
              if (!h)
                h = load(plan.lowBits + group / highPlanes);
              w = UkUnpackOp::create(b, loc, byteReg, h, w,
                                     b.getI64IntegerAttr(highBits),
                                     b.getI64IntegerAttr(group % highPlanes),
                                     b.getI64IntegerAttr(plan.lowBits));
            }
            UkSpillOp::create(
                b, loc, w, amxCodes,
                add(mul(add(mul(block, 8), group), kVectorBytes), base));
          }
        }
      });
      forLoop(mul(numBlocks, 8), div(amxKp, 4), 1, [&](Value row) {
        UkSpillOp::create(b, loc, zero, amxCodes,
                          add(mul(row, kVectorBytes), base));
      });
    }
  }

  /// One tile product step at k, into accumulators (p, w): the activation
  /// tiles of the `blocks` blocks of 16 rows (block p at `xAt(p)` of
  /// `xBase`, rows `xStride` bytes apart) times the `tiles` code tiles of
  /// the expanded codes' rows from k / 4.
  void amxProducts(Value k, int64_t tiles, int64_t blocks,
                   function_ref<Value(int64_t)> xAt, Value xBase,
                   Value xStride) {
    for (int64_t p = 0; p < blocks; ++p)
      UkTileLoadOp::create(b, loc, xBase, xAt(p), xStride, kActTile + p);
    for (int64_t w = 0; w < tiles; ++w)
      UkTileLoadOp::create(
          b, loc, amxCodes,
          add(mul(div(k, 4), kVectorBytes), mul(amxTileBytes, w)),
          constant(kVectorBytes), kCodeTile + w);
    for (int64_t p = 0; p < blocks; ++p)
      for (int64_t w = 0; w < tiles; ++w)
        UkTileDotOp::create(b, loc, amxAcc(p, w, tiles), kActTile + p,
                            kCodeTile + w);
  }

  /// The accumulator tile of block p of activation rows and weight tile w.
  static int64_t amxAcc(int64_t p, int64_t w, int64_t tiles) {
    return kAccTile + p * tiles + w;
  }

  /// Activation rows [firstColumn, firstColumn + 16 * blocks) times the
  /// group's expanded codes: tile products over K, then the epilogue.
  void buildAmxBlock(Value firstTile, int64_t tiles, Value firstColumn,
                     int64_t blocks) {
    auto acc = [&](int64_t p, int64_t w) { return amxAcc(p, w, tiles); };
    for (int64_t p = 0; p < blocks; ++p)
      for (int64_t w = 0; w < tiles; ++w)
        UkTileZeroOp::create(b, loc, acc(p, w));
    Value kp = shape.kp ? shape.kp : constant(plan.kp);
    auto xRow = [&](Value column) { return scaled(column, plan.kp, shape.kp); };
    Value fullK = mul(div(kp, KernelPlan::kAmxK), KernelPlan::kAmxK);
    forLoop(constant(0), fullK, KernelPlan::kAmxK, [&](Value k) {
      amxProducts(
          k, tiles, blocks,
          [&](int64_t p) {
            return add(xRow(add(firstColumn, p * kTileRows)), k);
          },
          xq, kp);
    });
    // The last 32 k where Kp is not a multiple of 64 (a loop of at most
    // one step): 32 bytes per activation row, zero padded, in amxTail
    // (xq's rows end there; the codes rows past Kp / 4 are 0).
    if (amxTail)
      forLoop(fullK, kp, KernelPlan::kAmxK, [&](Value k) {
        for (int64_t p = 0; p < blocks; ++p)
          forLoop(constant(0), constant(kTileRows), 1, [&](Value r) {
            Value column = add(add(firstColumn, p * kTileRows), r);
            Value x = UkLoadOp::create(
                b, loc, byteReg, xq, add(xRow(column), k),
                b.getI64IntegerAttr(KernelPlan::kAmxK / 2));
            UkSpillOp::create(
                b, loc, x, amxTail,
                add(mul(r, kVectorBytes), p * kTileRows * kVectorBytes));
          });
        amxProducts(
            k, tiles, blocks,
            [&](int64_t p) { return constant(p * kTileRows * kVectorBytes); },
            amxTail, constant(kVectorBytes));
      });
    for (int64_t p = 0; p < blocks; ++p)
      for (int64_t w = 0; w < tiles; ++w)
        UkTileStoreOp::create(b, loc, amxAccs,
                              constant(acc(p, w) * kTileRows * kVectorBytes),
                              constant(kVectorBytes), acc(p, w));
    // Row r of accumulator (p, w): activation row firstColumn + 16p + r,
    // the 16 int32 of weight tile w.
    for (int64_t p = 0; p < blocks; ++p)
      forLoop(constant(0), constant(kTileRows), 1, [&](Value r) {
        Tile tile = wholeTiles(firstTile, tiles,
                               add(add(firstColumn, p * kTileRows), r));
        Value sum = memref::LoadOp::create(b, loc, xSums, tile.firstColumn);
        Value scale = memref::LoadOp::create(b, loc, xScales, tile.firstColumn);
        SmallVector<Value> outputs;
        for (int64_t w = 0; w < tiles; ++w) {
          Value dot = UkLoadOp::create(
              b, loc, accReg, amxAccs,
              add(mul(r, kVectorBytes), acc(p, w) * kTileRows * kVectorBytes));
          outputs.push_back(UkTernaryScaleOp::create(b, loc, outReg, dot, sum,
                                                     wScale, scale));
        }
        store(tile, outputs);
      });
  }

  /// buildAmxBlock for the formats of KernelPlan::amxPerBlock: per 32-k
  /// block one tile product, then per activation row n and weight tile
  /// g = (D - off * S_b) / s_b (off: the code offset; with zero points
  /// block_combine's (D - z * S_b) / s_b, z the rows' zero points of the
  /// block's group) and y += g * d (group_combine, d the rows' fp16 scales
  /// of the group), y in amxOutputs until the end of K. For a group of one
  /// block this is the VNNI kernels' float combination; larger groups scale
  /// each block's share by d rather than their sum (within kernel_abi.h's
  /// bound, as every group format's combination). K-quants take one
  /// product per sub-block (two per block for sub-blocks of 16) and
  /// combineAmxSubScales.
  void buildAmxScaledBlock(Value firstTile, int64_t tiles, Value firstColumn,
                           int64_t blocks) {
    auto acc = [&](int64_t p, int64_t w) { return amxAcc(p, w, tiles); };
    auto outputAt = [&](int64_t p, Value r, int64_t w) {
      return add(mul(r, tiles * kVectorBytes),
                 (p * kTileRows * tiles + w) * kVectorBytes);
    };
    Value kp = shape.kp ? shape.kp : constant(plan.kp);
    for (int64_t p = 0; p < blocks; ++p)
      forLoop(constant(0), constant(kTileRows), 1, [&](Value r) {
        for (int64_t w = 0; w < tiles; ++w)
          UkSpillOp::create(b, loc, zeroOut(), amxOutputs, outputAt(p, r, w));
      });
    Value numBlocks = shape.blocks ? shape.blocks : constant(plan.blocks);
    // Accumulator (p, w) of half h: rows of 16 int32 at accAt(p, w, h).
    auto accAt = [&](int64_t p, int64_t w, int64_t h) {
      return (h * 4 + acc(p, w)) * kTileRows * kVectorBytes;
    };
    int64_t productK = plan.amxProductK();
    forLoop(constant(0), numBlocks, 1, [&](Value block) {
      for (int64_t h = 0; h < plan.halves; ++h) {
        Value k = add(mul(block, kBlockK), h * productK);
        for (int64_t p = 0; p < blocks; ++p)
          for (int64_t w = 0; w < tiles; ++w)
            UkTileZeroOp::create(b, loc, acc(p, w));
        amxProducts(
            k, tiles, blocks,
            [&](int64_t p) {
              return add(scaled(add(firstColumn, p * kTileRows), plan.kp,
                                shape.kp),
                         k);
            },
            xq, kp);
        for (int64_t p = 0; p < blocks; ++p)
          for (int64_t w = 0; w < tiles; ++w)
            UkTileStoreOp::create(b, loc, amxAccs, constant(accAt(p, w, h)),
                                  constant(kVectorBytes), acc(p, w));
      }
      if (plan.subScales) {
        for (int64_t p = 0; p < blocks; ++p)
          forLoop(constant(0), constant(kTileRows), 1, [&](Value r) {
            combineAmxSubScales(firstTile, tiles, block,
                                add(add(firstColumn, p * kTileRows), r),
                                [&](int64_t w) { return outputAt(p, r, w); },
                                [&](int64_t w, int64_t h) {
                                  return add(mul(r, kVectorBytes),
                                             accAt(p, w, h));
                                });
          });
        return;
      }
      Tile tile = wholeTiles(firstTile, tiles);
      Value group = div(block, plan.group / kBlockK);
      SmallVector<Value> scale, zero;
      for (int64_t w = 0; w < tiles; ++w) {
        scale.push_back(UkLoadHalfOp::create(
            b, loc, outReg, scales, scalesOffset(tile, w, 0, group)));
        if (plan.hasZeros() || plan.hasMin())
          zero.push_back(UkLoadHalfOp::create(
              b, loc, outReg, zeros, scalesOffset(tile, w, 0, group)));
      }
      for (int64_t p = 0; p < blocks; ++p)
        forLoop(constant(0), constant(kTileRows), 1, [&](Value r) {
          Value column = add(add(firstColumn, p * kTileRows), r);
          Value at = add(scaled(column, plan.xBlocksPerRow(), shape.blocks),
                         block);
          Value sum = memref::LoadOp::create(b, loc, xSums, at);
          Value one = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1));
          Value inv = arith::DivFOp::create(
              b, loc, one, memref::LoadOp::create(b, loc, xScales, at));
          // The code offset's share (w1gG's doubled codes: q = 2c - 1).
          int64_t offset =
              plan.encoding == Encoding::Binary ? 1 : plan.codeOffset;
          Value start;
          if (offset) {
            Value z = arith::ConstantOp::create(
                b, loc, b.getI32IntegerAttr(int32_t(-offset)));
            start = vector::BroadcastOp::create(
                b, loc, accReg, arith::MulIOp::create(b, loc, sum, z));
          }
          // Minimums (q4_1, q5_1): y += o * S / s_b, as foldGroup.
          Value minTerm;
          if (plan.hasMin())
            minTerm = vector::BroadcastOp::create(
                b, loc, outReg,
                arith::MulFOp::create(
                    b, loc,
                    arith::SIToFPOp::create(b, loc, b.getF32Type(), sum),
                    inv));
          for (int64_t w = 0; w < tiles; ++w) {
            Value dot = UkLoadOp::create(b, loc, accReg, amxAccs,
                                         add(mul(r, kVectorBytes),
                                             accAt(p, w, 0)));
            if (start)
              dot = arith::AddIOp::create(b, loc, start, dot);
            Value g = UkBlockCombineOp::create(
                b, loc, outReg, zeroOut(), dot, inv, Value(),
                plan.hasZeros() ? zero[w] : Value(),
                plan.hasZeros() ? sum : Value());
            Value y = UkLoadOp::create(b, loc, outReg, amxOutputs,
                                       outputAt(p, r, w));
            y = UkGroupCombineOp::create(b, loc, outReg, y, g, scale[w]);
            if (minTerm)
              y = UkGroupCombineOp::create(b, loc, outReg, y, minTerm,
                                           zero[w]);
            UkSpillOp::create(b, loc, y, amxOutputs, outputAt(p, r, w));
          }
        });
    });
    for (int64_t p = 0; p < blocks; ++p)
      forLoop(constant(0), constant(kTileRows), 1, [&](Value r) {
        Tile tile = wholeTiles(firstTile, tiles,
                               add(add(firstColumn, p * kTileRows), r));
        SmallVector<Value> outputs;
        for (int64_t w = 0; w < tiles; ++w)
          outputs.push_back(UkLoadOp::create(b, loc, outReg, amxOutputs,
                                             outputAt(p, r, w)));
        store(tile, outputs);
      });
  }

  /// K-quants on tiles: activation row `column`'s int32 products of
  /// `block` (per weight tile w and half h at amxAccs[dotAt(w, h)]) into
  /// its f32 outputs (amxOutputs[outputAt(w)]), by the VNNI GEMM's block
  /// combination: the code offset's share from the block sums
  /// (initialDots), then combineHalves or combineSubScales with the tile
  /// group's sub-scale buffer.
  void combineAmxSubScales(Value firstTile, int64_t tiles, Value block,
                           Value column, function_ref<Value(int64_t)> outputAt,
                           function_ref<Value(int64_t, int64_t)> dotAt) {
    Tile tile = wholeTiles(firstTile, tiles, column);
    SmallVector<Value> sums, invs, outputs;
    blockActivations(tile, block, sums, invs);
    SmallVector<Value> dots = initialDots(tile, sums);
    for (int64_t w = 0; w < tiles; ++w) {
      for (int64_t h = 0; h < plan.halves; ++h) {
        Value &dot = dots[tile.accIndex(w, 0, 0) * plan.halves + h];
        dot = arith::AddIOp::create(
            b, loc, dot,
            UkLoadOp::create(b, loc, accReg, amxAccs, dotAt(w, h)));
      }
      outputs.push_back(
          UkLoadOp::create(b, loc, outReg, amxOutputs, outputAt(w)));
    }
    outputs = plan.halves == 2
                  ? combineHalves(tile, block, outputs, dots, invs)
                  : combineSubScales(tile, block, outputs, dots, invs);
    for (int64_t w = 0; w < tiles; ++w)
      UkSpillOp::create(b, loc, outputs[w], amxOutputs, outputAt(w));
  }

  //===--- Loops over tiles, columns and register slices ------------------===//

  void buildTiles(Value firstTile, int64_t tiles) {
    if (subScaleBuffer)
      widenSubScales(firstTile, tiles);
    if (panelOutputs) {
      buildPanels(firstTile, tiles);
      return;
    }
    Value rows = toIndex(n);
    int64_t tileN = plan.tileN;
    if (tileN == 1) {
      forLoop(constant(0), rows, 1,
              [&](Value c) { buildColumns(firstTile, tiles, c, 1); });
      return;
    }
    Value fullEnd = mul(div(rows, tileN), tileN);
    forLoop(constant(0), fullEnd, tileN,
            [&](Value c) { buildColumns(firstTile, tiles, c, tileN); });
    forLoop(fullEnd, rows, 1,
            [&](Value c) { buildColumns(firstTile, tiles, c, 1); });
  }

  /// The activation rows [firstColumn, firstColumn + columns) of the
  /// tiles; with `panel`, only the blocks of that K panel, into the outputs
  /// kept in panelOutputs for the rows from `chunk` on.
  void buildColumns(Value firstTile, int64_t tiles, Value firstColumn,
                    int64_t columns, Value panel = Value(),
                    Value chunk = Value()) {
    Tile tile;
    tile.firstTile = firstTile;
    tile.tiles = tiles;
    tile.firstColumn = firstColumn;
    tile.columns = columns;
    tile.slices = getSlicesPerLoop(target, tiles, columns, plan.isTernary());
    if (plan.isTernary())
      chooseChains(tile);
    auto slices = [&]() {
      if (panel)
        buildPanelSlices(tile, panel, chunk);
      else
        buildSlices(tile);
    };
    int64_t sliceGroups = plan.slices / tile.slices;
    if (sliceGroups == 1) {
      tile.firstSlice = constant(0);
      slices();
      return;
    }
    forLoop(constant(0), constant(plan.slices), tile.slices, [&](Value s) {
      tile.firstSlice = s;
      slices();
    });
  }

  /// K panels (KernelPlan::panelBlocks): per chunk of kPanelColumns
  /// activation rows, its outputs zeroed in panelOutputs, every panel's
  /// blocks added by the chunk's column blocks, then stored to y.
  void buildPanels(Value firstTile, int64_t tiles) {
    Value rows = toIndex(n);
    int64_t chunkColumns = KernelPlan::kPanelColumns, tileN = plan.tileN;
    forLoop(constant(0), rows, chunkColumns, [&](Value chunk) {
      Value left = sub(rows, chunk);
      Value fewer = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                          left, constant(chunkColumns));
      Value count = arith::SelectOp::create(b, loc, fewer, left,
                                            constant(chunkColumns));
      Value chunkEnd = add(chunk, count);
      Tile all;
      all.firstTile = firstTile;
      all.tiles = tiles;
      all.firstSlice = constant(0);
      all.slices = plan.slices;
      forLoop(chunk, chunkEnd, 1, [&](Value c) {
        for (int64_t t = 0; t < tiles; ++t)
          for (int64_t s = 0; s < plan.slices; ++s)
            UkSpillOp::create(b, loc, zeroOut(), panelOutputs,
                              panelOutputOffset(all, t, s, c, chunk));
      });
      Value panels = constant(plan.blocks / plan.panelBlocks());
      Value fullEnd = add(chunk, mul(div(count, tileN), tileN));
      forLoop(constant(0), panels, 1, [&](Value panel) {
        forLoop(chunk, fullEnd, tileN, [&](Value c) {
          buildColumns(firstTile, tiles, c, tileN, panel, chunk);
        });
        forLoop(fullEnd, chunkEnd, 1, [&](Value c) {
          buildColumns(firstTile, tiles, c, 1, panel, chunk);
        });
      });
      forLoop(chunk, chunkEnd, 1, [&](Value c) {
        Tile tile = all;
        tile.firstColumn = c;
        SmallVector<Value> outputs;
        for (int64_t t = 0; t < tiles; ++t)
          for (int64_t s = 0; s < plan.slices; ++s)
            outputs.push_back(UkLoadOp::create(
                b, loc, outReg, panelOutputs,
                panelOutputOffset(all, t, s, c, chunk)));
        store(tile, outputs);
      });
    });
  }

  /// Byte offset in panelOutputs of slice `s` (of the tile's slice group)
  /// of tile `t` for activation row `column` of the chunk from `chunk`.
  Value panelOutputOffset(const Tile &tile, int64_t t, int64_t s, Value column,
                          Value chunk) {
    Value row = add(mul(sub(column, chunk), plan.tilesPerGroup), t);
    return add(mul(row, kVectorBytes),
               mul(add(tile.firstSlice, s), plan.registerBytes));
  }

  /// One K panel of a tile's column block: its outputs from panelOutputs,
  /// the panel's blocks added, and back.
  void buildPanelSlices(const Tile &tile, Value panel, Value chunk) {
    SmallVector<Value> state(tile.numAccumulators());
    for (int64_t t = 0; t < tile.tiles; ++t)
      for (int64_t s = 0; s < tile.slices; ++s)
        for (int64_t c = 0; c < tile.columns; ++c)
          state[tile.accIndex(t, s, c)] = UkLoadOp::create(
              b, loc, outReg, panelOutputs,
              panelOutputOffset(tile, t, s, add(tile.firstColumn, c), chunk));
    Value first = mul(panel, plan.panelBlocks());
    carriedLoop(plan.panelBlocks() / plan.blocksPerStep, state, [&](Value i) {
      Value base = add(mul(i, plan.blocksPerStep), first);
      for (int64_t step = 0; step < plan.blocksPerStep; ++step) {
        SmallVector<Value> next = buildBlock(tile, add(base, step), state);
        state.assign(next.begin(), next.end());
      }
    });
    for (int64_t t = 0; t < tile.tiles; ++t)
      for (int64_t s = 0; s < tile.slices; ++s)
        for (int64_t c = 0; c < tile.columns; ++c)
          UkSpillOp::create(
              b, loc, state[tile.accIndex(t, s, c)], panelOutputs,
              panelOutputOffset(tile, t, s, add(tile.firstColumn, c), chunk));
  }

  /// Fills subScaleBuffer with s_j = d * sc_j (and o_j = -dmin * m_j) of
  /// the tiles [firstTile, firstTile + tiles), every 32-k block.
  void widenSubScales(Value firstTile, int64_t tiles) {
    Tile tile = wholeTiles(firstTile, tiles);
    int64_t blocksPer = plan.group / kBlockK;
    int64_t subBytes = kTileRows * plan.scaleBits / 8;
    Value supers = shape.groupsPerRow ? shape.groupsPerRow
                                      : constant(plan.groupsPerRow());
    forLoop(constant(0), supers, 1, [&](Value super) {
      for (int64_t t = 0; t < tiles; ++t)
        for (int64_t s = 0; s < plan.slices; ++s) {
          SmallVector<Value> superScales = loadSuperScales(tile, t, s, super);
          for (int64_t within = 0; within < blocksPer; ++within)
            for (int64_t h = 0; h < plan.halves; ++h)
              for (int64_t part = 0; part < plan.sumsPerOutput(); ++part) {
                Value at =
                    add(superScalesOffset(tile, t, super),
                        (part * plan.subBlocks() + within * plan.halves + h) *
                            subBytes);
                Value block = add(mul(super, blocksPer), within);
                Value v = UkLoadScalesOp::create(
                    b, loc, outReg, scales, at, sliceRow(tile, s),
                    uint64_t(plan.scaleBits), !plan.hasMin());
                v = UkGroupCombineOp::create(b, loc, outReg, zeroOut(), v,
                                             superScales[part]);
                UkSpillOp::create(
                    b, loc, v, subScaleBuffer,
                    subScaleBufferOffset(block, h, t, part, constant(s)));
              }
        }
    });
  }

  /// The fp16 d (and -dmin) of K-quant super-block `super` for slice `s`
  /// of tile `t`: they follow the packed sub-scales (and sub-minimums),
  /// -dmin 16 elements after d.
  SmallVector<Value> loadSuperScales(const Tile &tile, int64_t t, int64_t s,
                                     Value super) {
    int64_t halvesAt = plan.sumsPerOutput() * plan.subBlocks() * plan.scaleBits;
    Value at = add(add(div(superScalesOffset(tile, t, super), 2), halvesAt),
                   sliceRow(tile, s));
    SmallVector<Value> result{UkLoadHalfOp::create(b, loc, outReg, scales, at)};
    if (plan.hasMin())
      result.push_back(
          UkLoadHalfOp::create(b, loc, outReg, scales, add(at, kTileRows)));
    return result;
  }

  /// Byte offset in subScaleBuffer of slice `slice` of tile `t` (in its
  /// group) of half `h` of `block`: its sub-scales (part 0) or
  /// sub-minimums (part 1).
  Value subScaleBufferOffset(Value block, int64_t h, int64_t t, int64_t part,
                             Value slice) {
    Value index = add(mul(add(mul(block, plan.halves), h),
                          plan.subScaleTiles() * plan.sumsPerOutput()),
                      t * plan.sumsPerOutput() + part);
    return mul(add(mul(index, plan.slices), slice), plan.registerBytes);
  }

  /// Picks the accumulator chains of a ternary tile: scaled planes when
  /// their accumulators fit the registers, their codes the target's dot
  /// product and their sums int32; else as many alternating chains as the
  /// target's dot-product latency asks for and the registers allow.
  void chooseChains(Tile &tile) {
    int64_t outputs = tile.numAccumulators();
    int64_t planes = 8 / plan.bits, maxCode = (int64_t(1) << plan.bits) - 1;
    int64_t budget = target.getNumRegisters() - tile.columns - 3;
    int64_t maxScale = 0;
    while ((maxCode << (maxScale + 1)) <= target.getMaxDotCode())
      ++maxScale;
    // |sum| <= (k per row and plane) * (largest scaled code) * 128.
    int64_t largest = maxCode << std::min(maxScale, plan.bits * (planes - 1));
    int64_t kp = plan.anyShape ? kAnyShapeMaxTernaryK : plan.kp;
    bool fitsInt32 = kp / planes * largest * 128 <= int64_t(INT32_MAX);
    if (planes > 1 && outputs * planes <= budget && fitsInt32) {
      tile.scaledPlanes = true;
      tile.chains = planes;
      for (int64_t j = 0; j < planes; ++j)
        tile.planeScale.push_back(std::min(maxScale, plan.bits * j));
      return;
    }
    tile.chains = std::min<int64_t>(
        8, llvm::divideCeilSigned(target.getDotChains(), outputs));
    while (tile.chains > 1 && outputs * tile.chains > budget)
      --tile.chains;
  }

  /// The K loop of one tile and its epilogue: ternary blocks accumulate
  /// int32 dot products, group formats' blocks add to the float sums of
  /// their scale group, which fold into the outputs once per group.
  void buildSlices(const Tile &tile) {
    SmallVector<Value> state(tile.numAccumulators() * tile.chains,
                             plan.isTernary() ? zeroAcc() : zeroOut());
    auto accumulate = [&](Value block, SmallVectorImpl<Value> &into) {
      SmallVector<Value> next = buildBlock(tile, block, into);
      into.assign(next.begin(), next.end());
    };
    if (plan.isTernary()) {
      if (shape.blocks)
        dynamicSteppedLoop(shape.blocks, plan.blocksPerStep, state,
                           [&](Value block) { accumulate(block, state); });
      else
        steppedLoop(0, plan.blocks, plan.blocksPerStep, state,
                    [&](Value block) { accumulate(block, state); });
      state = finishTernary(tile, state);
    } else if (subScaleBuffer) {
      // s_j and o_j carry d and -dmin: every block adds to the outputs.
      if (shape.blocks)
        dynamicSteppedLoop(shape.blocks, plan.blocksPerStep, state,
                           [&](Value block) { accumulate(block, state); });
      else
        steppedLoop(0, plan.blocks, plan.blocksPerStep, state,
                    [&](Value block) { accumulate(block, state); });
    } else if (shape.blocks) {
      dynamicGroupedLoop(
          shape.blocks, plan.blocksPerStep, plan.group / kBlockK, zeroOut(),
          int64_t(state.size()) * plan.sumsPerOutput(), state,
          [&](Value first) { loadGroupZeros(tile, first); }, accumulate,
          [&](Value first, ArrayRef<Value> sums) {
            foldGroup(tile, first, sums, state);
          });
    } else {
      groupedLoop(
          0, plan.blocks, plan.blocksPerStep, plan.group / kBlockK, zeroOut(),
          int64_t(state.size()) * plan.sumsPerOutput(), state,
          [&](Value first) { loadGroupZeros(tile, first); }, accumulate,
          [&](Value first, ArrayRef<Value> sums) {
            foldGroup(tile, first, sums, state);
          });
    }
    store(tile, state);
  }

  //===--- One 32-k block ---------------------------------------------------//

  /// Accumulates block `block` (a 32-k block index) into `state`: the int32
  /// accumulators (ternary) or the f32 sums of its group (group formats).
  SmallVector<Value> buildBlock(const Tile &tile, Value block,
                                ArrayRef<Value> state) {
    SmallVector<Value> dots(state);
    SmallVector<Value> sums, invs;
    if (!plan.isTernary()) {
      blockActivations(tile, block, sums, invs);
      dots = initialDots(tile, sums);
    }

    Value kBase = mul(block, kBlockK);
    // One register per (tile, slice) of 64-byte vector `v` of the block,
    // loaded once and unpacked per plane.
    auto loadVector = [&](int64_t v) {
      SmallVector<Value> packed;
      Value vector = add(mul(block, plan.bits), v);
      for (int64_t t = 0; t < tile.tiles; ++t)
        for (int64_t s = 0; s < tile.slices; ++s) {
          Value offset = codesOffset(tile, t, s, vector);
          packed.push_back(UkLoadOp::create(b, loc, byteReg, codes, offset));
          if (plan.prefetchBytes > 0 && s == 0)
            prefetch(offset);
        }
      return packed;
    };
    // Codes of 3, 5 or 6 bits: the low plane's vectors, each 4-k plane of
    // them joined by its high bits (the high plane's vectors, loaded when
    // first needed, whose codes count 2^lowBits each) before one dot4.
    int64_t highBits = plan.bits - plan.lowBits;
    SmallVector<SmallVector<Value>> highPacked(highBits);
    for (int64_t u = 0; u < plan.lowBits; ++u) {
      int64_t width = plan.lowBits, inPlane = u;
      int64_t planes = 8 / width;
      SmallVector<Value> packed = loadVector(u);
      for (int64_t j = 0; j < planes; ++j) {
        int64_t group = inPlane * planes + j; // 4-k group of the block
        Value k = add(kBase, 4 * group);
        int64_t highPlanes = highBits > 0 ? 8 / highBits : 1;
        int64_t highVector = group / highPlanes;
        if (highBits > 0 && highPacked[highVector].empty())
          highPacked[highVector] = loadVector(plan.lowBits + highVector);
        SmallVector<Value> x;
        for (int64_t c = 0; c < tile.columns; ++c)
          x.push_back(UkBroadcast4Op::create(
              b, loc, byteReg, xq,
              add(scaled(add(tile.firstColumn, c), plan.kp, shape.kp), k)));
        for (int64_t t = 0; t < tile.tiles; ++t)
          for (int64_t s = 0; s < tile.slices; ++s) {
            // Binary codes are doubled: q = 2c - 1 (the -1 is in the
            // accumulator's start). 8-bit codes are the bytes themselves.
            int64_t scale = tile.scaledPlanes ? tile.planeScale[j]
                            : plan.encoding == Encoding::Binary ? 1
                                                                : 0;
            Value w = packed[t * tile.slices + s];
            if (width < 8)
              w = UkUnpackOp::create(b, loc, byteReg, w, Value(),
                                     b.getI64IntegerAttr(width),
                                     b.getI64IntegerAttr(j),
                                     b.getI64IntegerAttr(scale));
            if (!plan.lookup.empty())
              w = UkCodebookOp::create(b, loc, byteReg, w, plan.lookup);
            if (highBits > 0)
              w = UkUnpackOp::create(
                  b, loc, byteReg, highPacked[highVector][t * tile.slices + s],
                  w, b.getI64IntegerAttr(highBits),
                  b.getI64IntegerAttr(group % highPlanes),
                  b.getI64IntegerAttr(plan.lowBits));
            int64_t chain =
                tile.scaledPlanes ? j : (u * planes + j) % tile.chains;
            // Sub-blocks of 16: k 0..15 and 16..31 of the block apart.
            int64_t half = 4 * group * plan.halves / kBlockK;
            for (int64_t c = 0; c < tile.columns; ++c) {
              Value &acc =
                  dots[(tile.accIndex(t, s, c) * tile.chains + chain) *
                           plan.halves +
                       half];
              acc = UkDot4Op::create(b, loc, accReg, acc, w, x[c],
                                     plan.centred);
            }
          }
      }
    }
    if (plan.isTernary())
      return dots;
    if (plan.subScales && subScaleBuffer && plan.halves == 2)
      return combineHalves(tile, block, state, dots, invs);
    if (plan.subScales)
      return combineSubScales(tile, block, state, dots, invs);
    return combineBlock(tile, state, dots, sums, invs);
  }

  /// The activation sum S and 1 / s of `block` for every column.
  void blockActivations(const Tile &tile, Value block,
                        SmallVectorImpl<Value> &sums,
                        SmallVectorImpl<Value> &invs) {
    for (int64_t c = 0; c < tile.columns; ++c) {
      Value at = add(scaled(add(tile.firstColumn, c), plan.xBlocksPerRow(),
                            plan.isTernary() ? Value() : shape.blocks),
                     block);
      // Sub-blocks of 16: one activation sum per half (kernel_abi.h).
      for (int64_t h = 0; h < plan.halves; ++h)
        sums.push_back(memref::LoadOp::create(
            b, loc, xSums, add(mul(at, plan.halves), h)));
      Value scale = memref::LoadOp::create(b, loc, xScales, at);
      Value one = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0f));
      invs.push_back(arith::DivFOp::create(b, loc, one, scale));
    }
    // Min encodings: S / s_b per column (and half), for foldGroup or
    // combineSubScales; S alone for combineHalves, which divides by s_b
    // after the halves' sum.
    blockMinTerms.clear();
    bool perHalf = subScaleBuffer && plan.halves == 2;
    if (plan.hasMin())
      for (int64_t c = 0; c < tile.columns; ++c)
        for (int64_t h = 0; h < plan.halves; ++h) {
          Value sum = arith::SIToFPOp::create(b, loc, b.getF32Type(),
                                              sums[c * plan.halves + h]);
          if (!perHalf)
            sum = arith::MulFOp::create(b, loc, sum, invs[c]);
          blockMinTerms.push_back(
              vector::BroadcastOp::create(b, loc, outReg, sum));
        }
  }

  /// The accumulators a block starts from: the zero point's share of the
  /// dot product when it is the same for every row (sum q x = sum c x - z S:
  /// q4_0 z = 8, offset encodings their code offset, less the 128 that dot4
  /// {centred} subtracts itself; w1gG q = 2c - 1 with doubled codes, so
  /// -S), else 0.
  SmallVector<Value> initialDots(const Tile &tile, ArrayRef<Value> sums) {
    int64_t zeroPoint = plan.encoding == Encoding::Binary
                            ? 1
                            : plan.codeOffset - (plan.centred ? 128 : 0);
    SmallVector<Value> dots(tile.numAccumulators() * plan.halves);
    for (int64_t c = 0; c < tile.columns; ++c)
      for (int64_t h = 0; h < plan.halves; ++h) {
        Value start = zeroAcc();
        if (zeroPoint != 0) {
          Value z = arith::ConstantOp::create(
              b, loc, b.getI32IntegerAttr(int32_t(-zeroPoint)));
          Value offset =
              arith::MulIOp::create(b, loc, sums[c * plan.halves + h], z);
          start = vector::BroadcastOp::create(b, loc, accReg, offset);
        }
        for (int64_t t = 0; t < tile.tiles; ++t)
          for (int64_t s = 0; s < tile.slices; ++s)
            dots[tile.accIndex(t, s, c) * plan.halves + h] = start;
      }
    return dots;
  }

  /// The rows' zero points of the group whose first block is `first`
  /// (formats with per-row zero points), for combineBlock.
  void loadGroupZeros(const Tile &tile, Value first) {
    groupZeros.clear();
    if (!plan.hasZeros() && !(plan.hasMin() && !plan.subScales))
      return;
    Value group = div(first, plan.group / kBlockK);
    for (int64_t t = 0; t < tile.tiles; ++t)
      for (int64_t s = 0; s < tile.slices; ++s)
        groupZeros.push_back(UkLoadHalfOp::create(
            b, loc, outReg, zeros, scalesOffset(tile, t, s, group)));
  }

  /// g += (D - z * S) / s_b for every accumulator of the block (the z term
  /// only for per-row zero points): `groupSums` are the float sums of the
  /// block's scale group.
  SmallVector<Value> combineBlock(const Tile &tile, ArrayRef<Value> groupSums,
                                  ArrayRef<Value> dots, ArrayRef<Value> sums,
                                  ArrayRef<Value> invs) {
    SmallVector<Value> result(groupSums);
    for (int64_t c = 0; c < tile.columns; ++c)
      for (int64_t t = 0; t < tile.tiles; ++t)
        for (int64_t s = 0; s < tile.slices; ++s) {
          int64_t i = tile.accIndex(t, s, c), r = t * tile.slices + s;
          Value zero = plan.hasZeros() ? groupZeros[r] : Value();
          Value sum = plan.hasZeros() ? sums[c] : Value();
          result[i] = UkBlockCombineOp::create(
              b, loc, outReg, result[i], dots[i], invs[c], Value(), zero, sum);
        }
    return result;
  }

  /// K-quants: g += sc_j * (D_j / s_b) and (minimums) h += m_j * (S_j /
  /// s_b) with the rows' sub-scales sc_j and sub-minimums m_j of the
  /// sub-blocks j of `block` (one, or two halves of 16); with the
  /// sub-scale buffer y += s_j * (D_j / s_b) + o_j * (S_j / s_b) straight
  /// into the outputs `groupSums`.
  SmallVector<Value> combineSubScales(const Tile &tile, Value block,
                                      ArrayRef<Value> groupSums,
                                      ArrayRef<Value> dots,
                                      ArrayRef<Value> invs) {
    SmallVector<Value> result(groupSums);
    int64_t outputs = tile.numAccumulators();
    int64_t blocksPer = plan.group / kBlockK;
    Value super = div(block, blocksPer);
    Value within = sub(block, mul(super, blocksPer));
    for (int64_t t = 0; t < tile.tiles; ++t)
      for (int64_t s = 0; s < tile.slices; ++s) {
        // Bytes: the sub-block's packed sub-scales of 16 rows, then
        // (minimums) the sub-minimums, subBlocks sub-blocks later.
        int64_t subBytes = kTileRows * plan.scaleBits / 8;
        Value row = sliceRow(tile, s);
        for (int64_t h = 0; h < plan.halves; ++h) {
          Value at = add(superScalesOffset(tile, t, super),
                         mul(add(mul(within, plan.halves), h), subBytes));
          auto load = [&](Value offset, int64_t part) -> Value {
            if (subScaleBuffer)
              return UkLoadOp::create(
                  b, loc, outReg, subScaleBuffer,
                  subScaleBufferOffset(block, h, t, part,
                                       add(tile.firstSlice, s)));
            return UkLoadScalesOp::create(
                b, loc, outReg, scales, offset, row,
                uint64_t(plan.scaleBits), !plan.hasMin());
          };
          Value sc = load(at, 0);
          Value mins;
          if (plan.hasMin())
            mins = load(add(at, plan.subBlocks() * subBytes), 1);
          for (int64_t c = 0; c < tile.columns; ++c) {
            int64_t i = tile.accIndex(t, s, c);
            Value scaled = UkBlockCombineOp::create(
                b, loc, outReg, zeroOut(), dots[i * plan.halves + h], invs[c],
                Value(), Value(), Value());
            result[i] = UkGroupCombineOp::create(b, loc, outReg, result[i],
                                                 scaled, sc);
            int64_t minAt = subScaleBuffer ? i : outputs + i;
            if (mins)
              result[minAt] = UkGroupCombineOp::create(
                  b, loc, outReg, result[minAt],
                  blockMinTerms[c * plan.halves + h], mins);
          }
        }
      }
    return result;
  }

  /// K-quant GEMM with sub-blocks of 16 (q2_k, q3_k, q6_k) and the
  /// sub-scale buffer: per output the block's two halves first, t = s_0 D_0
  /// (+ o_0 S_0) + s_1 D_1 (+ o_1 S_1), then y += t / s_b once, in the
  /// order of the reference (runtime/README.md: term_j0 + term_j1, then
  /// / s_x): one multiply by 1 / s_b per block instead of one per half.
  SmallVector<Value> combineHalves(const Tile &tile, Value block,
                                   ArrayRef<Value> outputs,
                                   ArrayRef<Value> dots, ArrayRef<Value> invs) {
    SmallVector<Value> result(outputs), invRegs;
    for (int64_t c = 0; c < tile.columns; ++c)
      invRegs.push_back(vector::BroadcastOp::create(b, loc, outReg, invs[c]));
    for (int64_t t = 0; t < tile.tiles; ++t)
      for (int64_t s = 0; s < tile.slices; ++s) {
        Value slice = add(tile.firstSlice, s);
        SmallVector<Value> sc, mins;
        for (int64_t h = 0; h < 2; ++h) {
          sc.push_back(
              UkLoadOp::create(b, loc, outReg, subScaleBuffer,
                               subScaleBufferOffset(block, h, t, 0, slice)));
          if (plan.hasMin())
            mins.push_back(
                UkLoadOp::create(b, loc, outReg, subScaleBuffer,
                                 subScaleBufferOffset(block, h, t, 1, slice)));
        }
        for (int64_t c = 0; c < tile.columns; ++c) {
          int64_t i = tile.accIndex(t, s, c);
          Value term = zeroOut();
          for (int64_t h = 0; h < 2; ++h) {
            term =
                UkBlockCombineOp::create(b, loc, outReg, term, dots[i * 2 + h],
                                         Value(), sc[h], Value(), Value());
            if (plan.hasMin())
              term = UkGroupCombineOp::create(
                  b, loc, outReg, term, blockMinTerms[c * 2 + h], mins[h]);
          }
          result[i] = UkGroupCombineOp::create(b, loc, outReg, result[i], term,
                                               invRegs[c]);
        }
      }
    return result;
  }

  /// y += g * s_g for every output: the group's sums `groupSums` times the
  /// rows' scales of the group whose first block is `first`; for min
  /// encodings (group = block) also y += o * S / s_b, the rows' minimums;
  /// for K-quants y += g * d (and y += h * -dmin) of the super-block.
  void foldGroup(const Tile &tile, Value first, ArrayRef<Value> groupSums,
                 SmallVectorImpl<Value> &outputs) {
    Value group = div(first, plan.group / kBlockK);
    if (plan.subScales) {
      int64_t count = tile.numAccumulators();
      for (int64_t t = 0; t < tile.tiles; ++t)
        for (int64_t s = 0; s < tile.slices; ++s) {
          SmallVector<Value> superScales = loadSuperScales(tile, t, s, group);
          for (int64_t c = 0; c < tile.columns; ++c) {
            int64_t i = tile.accIndex(t, s, c);
            for (int64_t part = 0; part < plan.sumsPerOutput(); ++part)
              outputs[i] = UkGroupCombineOp::create(
                  b, loc, outReg, outputs[i], groupSums[part * count + i],
                  superScales[part]);
          }
        }
      return;
    }
    for (int64_t t = 0; t < tile.tiles; ++t)
      for (int64_t s = 0; s < tile.slices; ++s) {
        Value scale = UkLoadHalfOp::create(b, loc, outReg, scales,
                                           scalesOffset(tile, t, s, group));
        for (int64_t c = 0; c < tile.columns; ++c) {
          int64_t i = tile.accIndex(t, s, c);
          outputs[i] = UkGroupCombineOp::create(b, loc, outReg, outputs[i],
                                                groupSums[i], scale);
          if (plan.hasMin())
            outputs[i] = UkGroupCombineOp::create(
                b, loc, outReg, outputs[i], blockMinTerms[c],
                groupZeros[t * tile.slices + s]);
        }
      }
  }

  /// Sums the chains of each accumulator, then y = (float)(D - S) *
  /// w_scale / s_x, exactly as the reference.
  SmallVector<Value> finishTernary(const Tile &tile, ArrayRef<Value> chains) {
    SmallVector<Value> dots, outputs(tile.numAccumulators());
    for (int64_t i = 0; i < tile.numAccumulators(); ++i) {
      Value sum;
      for (int64_t q = 0; q < tile.chains; ++q) {
        Value chain = chains[i * tile.chains + q];
        if (tile.scaledPlanes && tile.planeScale[q] > 0)
          chain = UkShrExactOp::create(b, loc, accReg, chain,
                                       b.getI64IntegerAttr(tile.planeScale[q]));
        sum = sum ? arith::AddIOp::create(b, loc, sum, chain) : chain;
      }
      dots.push_back(sum);
    }
    for (int64_t c = 0; c < tile.columns; ++c) {
      Value at = add(tile.firstColumn, c);
      Value sum = memref::LoadOp::create(b, loc, xSums, at);
      Value scale = memref::LoadOp::create(b, loc, xScales, at);
      for (int64_t t = 0; t < tile.tiles; ++t)
        for (int64_t s = 0; s < tile.slices; ++s) {
          int64_t i = tile.accIndex(t, s, c);
          outputs[i] = UkTernaryScaleOp::create(b, loc, outReg, dots[i], sum,
                                                wScale, scale);
        }
    }
    return outputs;
  }

  /// Stores the rows of every slice; rows m >= M are left alone.
  void store(const Tile &tile, ArrayRef<Value> outputs) {
    for (int64_t t = 0; t < tile.tiles; ++t)
      for (int64_t s = 0; s < tile.slices; ++s) {
        Value row = add(mul(add(tile.firstTile, t), kTileRows),
                        mul(add(tile.firstSlice, s), plan.lanes));
        Value count;
        if (rowBase) {
          row = add(rowBase, row);
          count = storeCount(row, rowsEnd, plan.lanes);
        } else if (shape.m) {
          count = storeCount(row, shape.m, plan.lanes);
        } else if (plan.m % kTileRows != 0) {
          // clamp(M - row, 0, lanes), compared as signed.
          Value m = constant(plan.m);
          Value past =
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, row, m);
          Value left = sub(m, row);
          Value partial = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::slt, left, constant(plan.lanes));
          Value some = arith::SelectOp::create(b, loc, partial, left,
                                               constant(plan.lanes));
          count = arith::SelectOp::create(b, loc, past, constant(0), some);
        }
        for (int64_t c = 0; c < tile.columns; ++c) {
          Value offset =
              add(scaled(add(tile.firstColumn, c), plan.m, shape.m), row);
          UkStoreOp::create(b, loc, outputs[tile.accIndex(t, s, c)], y, offset,
                            count);
        }
      }
  }

  /// Prefetches the codes prefetchBytes after `offset`, clamped to the last
  /// vector of the matrix (so that no pointer leaves the array).
  void prefetch(Value offset) {
    Value ahead = add(offset, plan.prefetchBytes);
    Value last = shape.lastVector
                     ? shape.lastVector
                     : constant(plan.totalCodeBytes() - kVectorBytes);
    Value inside =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, ahead, last);
    UkPrefetchOp::create(b, loc, codes,
                         arith::SelectOp::create(b, loc, inside, ahead, last));
  }

  //===--- Offsets ----------------------------------------------------------//

  /// Byte offset of slice `s` of vector `vector` of tile `t` of the group.
  Value codesOffset(const Tile &tile, int64_t t, int64_t s, Value vector) {
    Value tileIndex = add(tile.firstTile, t);
    Value first =
        mul(add(scaled(tileIndex, plan.vectorsPerTile, shape.vectorsPerTile),
                vector),
            kVectorBytes);
    return add(first, mul(add(tile.firstSlice, s), plan.registerBytes));
  }

  /// Byte offset of K-quant super-block `super` of tile `t` of the group
  /// in the scales array ([tile][super-block][superBytes]).
  Value superScalesOffset(const Tile &tile, int64_t t, Value super) {
    Value tileIndex = add(tile.firstTile, t);
    return mul(add(scaled(tileIndex, plan.anyShape ? 0 : plan.groupsPerRow(),
                          shape.groupsPerRow),
                   super),
               plan.superBytes());
  }

  /// The first row (in its tile) of register slice `s`.
  Value sliceRow(const Tile &tile, int64_t s) {
    return mul(add(tile.firstSlice, s), plan.lanes);
  }

  /// Element offset of the fp16 scales (and zeros) of a slice for `group`:
  /// [tile][group][16 rows].
  Value scalesOffset(const Tile &tile, int64_t t, int64_t s, Value group) {
    Value tileIndex = add(tile.firstTile, t);
    Value first =
        mul(add(scaled(tileIndex, plan.anyShape ? 0 : plan.groupsPerRow(),
                       shape.groupsPerRow),
                group),
            kTileRows);
    return add(first, mul(add(tile.firstSlice, s), plan.lanes));
  }

  //===--- Helpers ----------------------------------------------------------//

  /// The run-time sizes of an any-shape kernel from its M and K arguments
  /// (kernel_abi.h, lowbit_any_kernel_fn): Kp = ceil(K / 32) * 32, the
  /// 64-byte vectors per tile Kp * bits / 32, the scale groups per row
  /// Kp / G, the last vector's offset ceil(M / 16) * vectors per tile * 64
  /// - 64.
  void computeShape() {
    shape.m = toIndex(mArg);
    Value k = toIndex(kArg);
    shape.blocks = div(add(k, kBlockK - 1), kBlockK);
    shape.kp = mul(shape.blocks, kBlockK);
    shape.numTiles = div(add(shape.m, kTileRows - 1), kTileRows);
    shape.vectorsPerTile = mul(shape.blocks, plan.bits);
    if (plan.group > 0)
      shape.groupsPerRow = div(shape.kp, plan.group);
    if (plan.prefetchBytes > 0)
      shape.lastVector = sub(
          mul(mulValue(shape.numTiles, shape.vectorsPerTile), kVectorBytes),
          constant(kVectorBytes));
  }

  /// `v * size`: the run-time size `dynamic` when there is one, else the
  /// constant `size`.
  Value scaled(Value v, int64_t size, Value dynamic) {
    return dynamic ? mulValue(v, dynamic) : mul(v, size);
  }

  Value zeroAcc() {
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(accReg, b.getI32IntegerAttr(0)));
  }
  Value zeroOut() {
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(outReg, b.getF32FloatAttr(0.0f)));
  }

  const KernelPlan &plan;
  const TargetInfo &target;
  Value codes, scales, zeros, xq, xScales, xSums, y, n, tileBegin, tileEnd,
      wScale;
  Value mArg, kArg; // any-shape kernels: M and K (i64)
  /// The f32 sub-scales of the tile group (KernelPlan::subScaleBufferBytes),
  /// null without.
  Value subScaleBuffer;
  /// The outputs of a chunk of activation rows between K panels
  /// (KernelPlan::panelOutputBytes), null without.
  Value panelOutputs;
  /// KernelPlan::ggmlRows: the TQ2_0 rows and the end of the range, the
  /// group's repacked codes (which `codes` then points to), one buffer for
  /// a block's code bytes of 16 rows (row r at 64 r) and their gathered
  /// words (q, j) (at kGatheredAt + 64 (4 q + j); one buffer, so that the
  /// C++ compiler sees that the two do not overlap), the group's first row
  /// (store); else null.
  Value rowsSource, rowsEnd, repacked, staging, rowBase;
  static constexpr int64_t kGatheredAt = kTileRows * kVectorBytes;
  /// Tiled kernels (KernelPlan::amxTiles): the expanded codes of a tile
  /// group, the stored accumulators, the zero-padded last 32 k of the
  /// activations (null when Kp is a multiple of 64).
  Value amxCodes, amxAccs, amxTail;
  /// Per-block formats (KernelPlan::amxPerBlock): the f32 outputs of the
  /// column block on tiles.
  Value amxOutputs;
  /// Kp rounded up to 64, and the bytes of a weight tile's expanded codes
  /// (amxKp / 4 rows of 64).
  Value amxKp, amxTileBytes;
  Shape shape;
  VectorType byteReg, accReg, outReg;
  SmallVector<Value> groupZeros; // the current group's, see loadGroupZeros
  SmallVector<Value> blockMinTerms; // min encodings: the last block's S / s_b
};

/// The kernel of kernel_abi.h's GGML ROWS LAYOUT: ternary weights in TQ2_0
/// rows as a GGUF file stores them (ggml's block_tq2_0), read in place. Per
/// 256-weight block and row one 64-byte run of codes: unpacking bit pair i
/// of byte 32h + j gives weight 128h + 32i + j, so bit pair i of a register
/// pairs with activations 32i + j of the block's half h, contiguous where a
/// register lies within one half (registers of 32 bytes or fewer). A
/// 64-byte register spans both halves: its activations are gathered per
/// block into a stack buffer once, in that order, for all rows of the
/// group. `rows` rows (config tile_m) share every activation register
/// (ggml's vec_dot_tq2_0_q8_K reads one row per call); the int32 lanes of a
/// row are summed at the end and scaled as the reference scales ternary
/// weights (y = (float)(D - S) * w_scale / s_x).
///
/// TQ1_0 rows (ggml's block_tq1_0, 54 bytes): the block's 52 bytes of
/// base-3 digits in as few registers as cover them (the last one ending at
/// byte 52; a 64-byte register reads 52 bytes and no further), each byte's
/// five digits decoded in registers (lowbit.uk.trit) and paired with
/// activations gathered per block in register order, zero where a byte
/// holds no weight (the d bytes, digit 4 of qh, bytes an earlier register
/// covered). ggml's vec_dot_tq1_0_q8_K decodes the same digits; its AVX2
/// loop reads the 32 and 16 bytes of qs apart.
///
/// GEMM tiles of one shape (decodeRows): each group of rows is decoded
/// once, unpacked or base-3 digits as above, into a stack buffer of int8
/// codes 0..2 in weight order (K bytes a row), which every block of
/// activation rows then reads against the activations in place (no
/// gathering): the decoding is paid once per row instead of once per
/// block of activation rows, and the inner loop is a plain int8 dot
/// product, as the vnni4 GEMM's is after its unpacking.
struct RowPlan {
  bool anyShape = false;
  int64_t m = 0, k = 0; // static shape (0 for any shape)
  /// Bytes of the rows' ggml block (layout block_bytes): TQ2_0 or TQ1_0.
  int64_t blockBytes = LOWBIT_GGML_ROWS_TQ2_0_BYTES;
  /// TQ1_0 on targets whose dot product takes codes up to 255: dot
  /// products of the digits' fractions f_i = (v * 3^i) mod 256 (two adds
  /// from f_(i-1), lowbit.uk.triple) in two sums A = sum f_i x, B = sum
  /// f_(i+1) x, the digits' one (3A - B) / 256 per lane at the end: 2 adds
  /// and 2 dot products a digit instead of a 6-7-instruction decode and one
  /// (GEMV tiles: makeRowPlan).
  bool tritFractions = false;
  /// A GEMM tile of one shape whose rows' codes fit kMaxDecodedBytes:
  /// decode each group of rows once (above).
  bool decodeRows = false;
  int64_t rows = 1, tileN = 1;
  int64_t prefetchGroups = 0; // config prefetch: row groups ahead, 0: none
  int64_t registerBytes = 0, lanes = 0;
  /// The largest power of two (as a shift) that codes 0..3 may be scaled
  /// by within the target's dot product (TargetInfo::getMaxDotCode).
  int64_t maxScale = 0;
};

class RowKernelBuilder : KernelLoopBuilder {
  static constexpr int64_t kBlock = LOWBIT_GGML_ROWS_BLOCK;
  static constexpr int64_t kHalf = kBlock / 2;
  static constexpr int64_t kRun = kBlockK; // weights per bit pair and half
  /// TQ1_0: bytes of base-3 digits per block, digits per byte.
  static constexpr int64_t kTritBytes = 52, kTrits = 5;

public:
  RowKernelBuilder(OpBuilder &b, Location loc, const RowPlan &plan,
                   ValueRange args)
      : KernelLoopBuilder(b, loc), plan(plan), codes(args[0]), xq(args[3]),
        xScales(args[4]), xSums(args[5]), y(args[6]), n(args[7]),
        tileBegin(args[8]), tileEnd(args[9]), wScale(args[10]) {
    if (plan.anyShape) {
      mArg = args[11];
      kArg = args[12];
    }
    MLIRContext *ctx = b.getContext();
    byteReg = VectorType::get({plan.registerBytes}, IntegerType::get(ctx, 8));
    accReg = VectorType::get({plan.lanes}, IntegerType::get(ctx, 32));
    trits = plan.blockBytes == LOWBIT_GGML_ROWS_TQ1_0_BYTES;
    if (trits) {
      int64_t r = plan.registerBytes;
      for (int64_t o = 0; o < kTritBytes; o += r)
        tritOffsets.push_back(std::max<int64_t>(0, std::min(o, kTritBytes - r)));
    }
    // Activation bytes gathered per block: TQ2_0 in its own order (4 bit
    // pairs x 64 bytes), TQ1_0 5 digits x each register.
    gatherBytes = trits ? int64_t(tritOffsets.size()) * kTrits *
                              plan.registerBytes
                        : kBlock;
  }

  void build() {
    if (plan.anyShape) {
      mValue = toIndex(mArg);
      kValue = toIndex(kArg);
      blocks = div(kValue, kBlock);
      rowBytes = mul(blocks, plan.blockBytes);
    } else {
      mValue = constant(plan.m);
      kValue = constant(plan.k);
      blocks = constant(plan.k / kBlock);
      rowBytes = constant(plan.k / kBlock * plan.blockBytes);
    }
    matrixBytes = mulValue(mValue, rowBytes);
    if (plan.decodeRows) {
      buildDecoded();
      return;
    }
    // 64-byte registers: the activations in register order, whole rows
    // for a kernel of one shape (gathered once per chunk of rows) up to
    // kMaxGatheredBytes of stack, else one block at a time.
    // TQ1_0 rows gather for every register width.
    int64_t rowGathered = plan.k / kBlock * gatherBytes;
    wholeRows =
        !plan.anyShape && plan.tileN * rowGathered <= kMaxGatheredBytes;
    if (trits || plan.registerBytes > kRun)
      gathered = createStackBuffer(
          b, loc, plan.tileN * (wholeRows ? rowGathered : gatherBytes));
    // The accumulators of a row group, spilled for their lane sums.
    folds = createStackBuffer(b, loc, plan.rows * plan.lanes * 4 *
                                          (plan.tritFractions ? 2 : 1));
    Value begin = toIndex(tileBegin), end = toIndex(tileEnd);
    int64_t chunk = plan.rows * std::max<int64_t>(
                                    kChunkGroups, kChunkRows / plan.rows);
    forLoop(begin, end, chunk, [&](Value first) {
      Value left = sub(end, first);
      Value fewer = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                          left, constant(chunk));
      Value last = add(first, arith::SelectOp::create(b, loc, fewer, left,
                                                      constant(chunk)));
      forColumnBlocks(n, plan.tileN, [&](Value firstColumn, int64_t columns) {
        if (gathered && wholeRows)
          forLoop(constant(0), blocks, 1, [&](Value bk) {
            gatherBlock(bk, mul(bk, gatherBytes), firstColumn, columns,
                        plan.k / kBlock * gatherBytes);
          });
        Value groupsEnd =
            plan.rows == 1 ? last : tileGroupsEnd(first, last, plan.rows);
        forLoop(first, groupsEnd, plan.rows, [&](Value r) {
          buildColumns(r, plan.rows, firstColumn, columns);
        });
        if (plan.rows > 1)
          forLoop(groupsEnd, last, 1, [&](Value r) {
            buildColumns(r, 1, firstColumn, columns);
          });
      });
    });
  }

  /// The most bytes of decoded codes (rows x K) a GEMM tile keeps on the
  /// stack (RowPlan::decodeRows).
  static constexpr int64_t kMaxDecodedBytes = 64 * 1024;

private:
  /// Row groups per chunk of rows, and rows at least: the activations
  /// gathered for a chunk serve them all.
  static constexpr int64_t kChunkGroups = 16, kChunkRows = 128;
  /// The most bytes of whole gathered activation rows on the stack (128
  /// KiB: tile_n 4 x K 32768; a macOS secondary thread has 512 KiB).
  static constexpr int64_t kMaxGatheredBytes = 128 * 1024;

  /// Block bk of activation rows [firstColumn, firstColumn + columns) into
  /// `gathered` from byte `to` on in register order (bit pair i's runs of
  /// both halves together), activation row c at c * rowLength after it.
  void gatherBlock(Value bk, Value to, Value firstColumn, int64_t columns,
                   int64_t rowLength) {
    Value blockX = mul(bk, kBlock);
    if (trits) {
      gatherTrits(blockX, to, firstColumn, columns, rowLength);
      return;
    }
    for (int64_t c = 0; c < columns; ++c)
      for (int64_t i = 0; i < 4; ++i)
        for (int64_t h = 0; h < 2; ++h)
          copyRun(
              xOffset(add(firstColumn, c), add(blockX, h * kHalf + i * kRun)),
              add(to, c * rowLength + i * kVectorBytes + h * kRun));
  }

  /// Rows [firstRow, firstRow + rows) x activation rows [firstColumn,
  /// firstColumn + columns): one int32 accumulator each over all blocks.
  void buildColumns(Value firstRow, int64_t rows, Value firstColumn,
                    int64_t columns) {
    if (trits) {
      buildTritColumns(firstRow, rows, firstColumn, columns);
      return;
    }
    // Independent dot chains per output (bit pair i adds into chain i %
    // chains), so that few outputs still keep several vpdpbusd in flight.
    // With one chain per bit pair (a single output), pair i is masked in
    // place, codes x 2^scale[i], and its chain divided back at the end
    // (lowbit.uk.shr_exact, as the vnni4 kernel's scaled planes): no shift
    // per block and pair.
    int64_t chains = std::max<int64_t>(1, 4 / (rows * columns));
    SmallVector<int64_t, 4> scale(4, 0);
    if (chains == 4)
      for (int64_t i = 0; i < 4; ++i)
        scale[i] = std::min(plan.maxScale, 2 * i);
    SmallVector<Value> accs(rows * columns * chains, zeroAcc());
    int64_t slices = kVectorBytes / plan.registerBytes;
    auto block = [&](Value bk) {
      Value blockX = mul(bk, kBlock);
      // Where block bk of activation row c lies in `gathered`.
      Value gatheredBlock = blockX;
      int64_t rowLength = plan.k / kBlock * gatherBytes;
      if (gathered && !wholeRows) {
        gatherBlock(bk, constant(0), firstColumn, columns, kBlock);
        gatheredBlock = constant(0);
        rowLength = kBlock;
      }
      // x[c][i][s]: the activations of bit pair i for register s.
      SmallVector<Value> x;
      for (int64_t c = 0; c < columns; ++c)
        for (int64_t i = 0; i < 4; ++i)
          for (int64_t s = 0; s < slices; ++s) {
            int64_t byte = s * plan.registerBytes;
            if (gathered) {
              x.push_back(UkLoadOp::create(
                  b, loc, byteReg, gathered,
                  add(gatheredBlock,
                      c * rowLength + i * kVectorBytes + byte)));
              continue;
            }
            int64_t h = byte / kRun, within = byte % kRun;
            x.push_back(UkLoadOp::create(
                b, loc, byteReg, xq,
                xOffset(add(firstColumn, c),
                        add(blockX, h * kHalf + i * kRun + within))));
          }
      Value blockBytes = mul(bk, plan.blockBytes);
      for (int64_t r = 0; r < rows; ++r) {
        Value rowStart = add(mulValue(add(firstRow, r), rowBytes), blockBytes);
        prefetchAhead(rowStart, rows);
        for (int64_t s = 0; s < slices; ++s) {
          Value w = UkLoadOp::create(b, loc, byteReg, codes,
                                     add(rowStart, s * plan.registerBytes));
          for (int64_t i = 0; i < 4; ++i) {
            Value code = UkUnpackOp::create(b, loc, byteReg, w, Value(),
                                            b.getI64IntegerAttr(2),
                                            b.getI64IntegerAttr(i),
                                            b.getI64IntegerAttr(scale[i]));
            for (int64_t c = 0; c < columns; ++c) {
              Value &acc = accs[(r * columns + c) * chains + i % chains];
              acc = UkDot4Op::create(b, loc, accReg, acc, code,
                                     x[(c * 4 + i) * slices + s], false);
            }
          }
        }
      }
    };
    carriedRange(constant(0), blocks, 1, accs, block);
    finishColumns(firstRow, rows, firstColumn, columns,
                  sumChains(accs, rows * columns, chains, scale));
  }

  /// Row r of the group `prefetch` groups ahead of the block at `rowStart`
  /// (its last byte, so that every line of the row is asked for once).
  void prefetchAhead(Value rowStart, int64_t rows) {
    if (rows != plan.rows || plan.prefetchGroups <= 0)
      return;
    Value ahead =
        add(add(rowStart,
                mulValue(constant(rows * plan.prefetchGroups), rowBytes)),
            plan.blockBytes - 1);
    Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                         ahead, matrixBytes);
    UkPrefetchOp::create(b, loc, codes,
                         arith::SelectOp::create(
                             b, loc, inside, ahead,
                             sub(matrixBytes, constant(1))));
  }

  /// The weight (0..255 of its block) that digit `digit` of TQ1_0 block
  /// byte `byte` holds (kernel_abi.h), or -1 for none.
  static int64_t tritWeight(int64_t byte, int64_t digit) {
    if (byte < 32)
      return 32 * digit + byte;
    if (byte < 48)
      return 160 + 16 * digit + (byte - 32);
    if (byte < kTritBytes && digit < 4)
      return 240 + 4 * digit + (byte - 48);
    return -1;
  }

  /// TQ1_0: the activations of the block at activation `blockX` for
  /// register s, digit i at `to` + c * rowLength + (s * 5 + i) * R: runs
  /// of consecutive weights copied, zeros where a byte holds none (or an
  /// earlier register holds it).
  void gatherTrits(Value blockX, Value to, Value firstColumn,
                   int64_t columns, int64_t rowLength) {
    int64_t r = plan.registerBytes;
    for (int64_t c = 0; c < columns; ++c)
      for (int64_t s = 0; s < int64_t(tritOffsets.size()); ++s)
        for (int64_t i = 0; i < kTrits; ++i) {
          int64_t base = c * rowLength + (s * kTrits + i) * r;
          for (int64_t byte = 0; byte < r;) {
            auto weightOf = [&](int64_t j) {
              int64_t p = tritOffsets[s] + j;
              return p < s * r ? -1 : tritWeight(p, i);
            };
            int64_t first = weightOf(byte), length = 1;
            while (byte + length < r &&
                   (first < 0 ? weightOf(byte + length) < 0
                              : weightOf(byte + length) == first + length))
              ++length;
            Value dest = add(to, base + byte);
            if (first < 0)
              forLoop(constant(0), constant(length), 1, [&](Value j) {
                Value zero =
                    arith::ConstantIntOp::create(b, loc, b.getI8Type(), 0);
                memref::StoreOp::create(b, loc, zero, gathered, add(dest, j));
              });
            else
              copyBytes(xOffset(add(firstColumn, c), add(blockX, first)),
                        dest, length);
            byte += length;
          }
        }
  }

  /// TQ1_0 rows [firstRow, firstRow + rows) x activation rows
  /// [firstColumn, firstColumn + columns): per block, the registers of its
  /// digits (tritOffsets), five decoded digits each, dot products with the
  /// gathered activations into independent chains per output.
  void buildTritColumns(Value firstRow, int64_t rows, Value firstColumn,
                        int64_t columns) {
    int64_t chains = std::max<int64_t>(1, 4 / (rows * columns));
    int64_t registers = int64_t(tritOffsets.size());
    int64_t outputs = rows * columns;
    // accs[o * chains + q]; with fractions, the B sums after the A sums.
    int64_t sumsPerKind = outputs * chains;
    SmallVector<Value> accs(sumsPerKind * (plan.tritFractions ? 2 : 1),
                            zeroAcc());
    int64_t rowLength = plan.k / kBlock * gatherBytes;
    auto block = [&](Value bk) {
      Value gatheredBlock = mul(bk, gatherBytes);
      int64_t length = rowLength;
      if (!wholeRows) {
        gatherBlock(bk, constant(0), firstColumn, columns, gatherBytes);
        gatheredBlock = constant(0);
        length = gatherBytes;
      }
      SmallVector<Value> x; // x[(c * registers + s) * 5 + i]
      for (int64_t c = 0; c < columns; ++c)
        for (int64_t s = 0; s < registers; ++s)
          for (int64_t i = 0; i < kTrits; ++i)
            x.push_back(UkLoadOp::create(
                b, loc, byteReg, gathered,
                add(gatheredBlock,
                    c * length + (s * kTrits + i) * plan.registerBytes)));
      Value blockBytes = mul(bk, plan.blockBytes);
      for (int64_t r = 0; r < rows; ++r) {
        Value rowStart = add(mulValue(add(firstRow, r), rowBytes), blockBytes);
        prefetchAhead(rowStart, rows);
        for (int64_t s = 0; s < registers; ++s) {
          // A register wider than the digits reads them and no further.
          IntegerAttr partial =
              plan.registerBytes > kTritBytes
                  ? b.getI64IntegerAttr(kTritBytes)
                  : IntegerAttr();
          Value w = UkLoadOp::create(b, loc, byteReg, codes,
                                     add(rowStart, tritOffsets[s]), partial);
          Value fraction = w; // f_i, from f_0 = the bytes
          for (int64_t i = 0; i < kTrits; ++i) {
            Value next, code = fraction;
            if (plan.tritFractions)
              next = UkTripleOp::create(b, loc, byteReg, fraction);
            else
              code = UkTritOp::create(b, loc, byteReg, w,
                                      b.getI64IntegerAttr(i));
            for (int64_t c = 0; c < columns; ++c) {
              int64_t at = (r * columns + c) * chains + (s * kTrits + i) % chains;
              Value xi = x[(c * registers + s) * kTrits + i];
              accs[at] = UkDot4Op::create(b, loc, accReg, accs[at], code, xi,
                                          false);
              if (next)
                accs[sumsPerKind + at] = UkDot4Op::create(
                    b, loc, accReg, accs[sumsPerKind + at], next, xi, false);
            }
            fraction = next;
          }
        }
      }
    };
    carriedRange(constant(0), blocks, 1, accs, block);
    // Per output the sums of its chains (A, then B).
    SmallVector<Value> a = sumChains(
        ArrayRef<Value>(accs).take_front(sumsPerKind), outputs, chains);
    SmallVector<Value> next;
    if (plan.tritFractions)
      next = sumChains(ArrayRef<Value>(accs).drop_front(sumsPerKind), outputs,
                       chains);
    finishColumns(firstRow, rows, firstColumn, columns, a, next);
  }

  /// Per output o of `outputs`, the sum of its chains accs[o * chains + q]
  /// (chain q divided back by 2^scale[q] first, where scale is given).
  SmallVector<Value> sumChains(ArrayRef<Value> accs, int64_t outputs,
                               int64_t chains, ArrayRef<int64_t> scale = {}) {
    SmallVector<Value> sums;
    for (int64_t o = 0; o < outputs; ++o) {
      Value sum;
      for (int64_t q = 0; q < chains; ++q) {
        Value chain = accs[o * chains + q];
        if (!scale.empty() && scale[q] > 0)
          chain = UkShrExactOp::create(b, loc, accReg, chain,
                                       b.getI64IntegerAttr(scale[q]));
        sum = sum ? arith::AddIOp::create(b, loc, sum, chain) : chain;
      }
      sums.push_back(sum);
    }
    return sums;
  }

  /// finish for each of the `columns` activation rows from firstColumn, the
  /// sums of output (r, c) at sums[r * columns + c] (and TQ1_0's `next`
  /// likewise).
  void finishColumns(Value firstRow, int64_t rows, Value firstColumn,
                     int64_t columns, ArrayRef<Value> sums,
                     ArrayRef<Value> next = {}) {
    int64_t span = (rows - 1) * columns + 1;
    for (int64_t c = 0; c < columns; ++c)
      finish(firstRow, rows, add(firstColumn, c),
             sums.drop_front(c).take_front(span), columns,
             next.empty() ? ArrayRef<Value>()
                          : next.drop_front(c).take_front(span));
  }

  /// Sums the lanes of each row's accumulator (accs[r * stride]; with
  /// `next`, TQ1_0's fraction sums, the digits' (3 A - B) / 256 of each lane
  /// of accs and next) and
  /// stores y[column][row] = (float)(D - S) * w_scale / s_x, each operation
  /// rounded in f32 as the reference rounds ternary outputs. The lanes go
  /// through `folds` as little-endian bytes (lowbit.uk.spill), read back as
  /// int32 scalars, which the C++ compiler turns back into a register
  /// reduction.
  void finish(Value firstRow, int64_t rows, Value column, ArrayRef<Value> accs,
              int64_t stride, ArrayRef<Value> next = {}) {
    Type i32 = b.getI32Type();
    Value xSum = memref::LoadOp::create(b, loc, xSums, column);
    Value xScale = memref::LoadOp::create(b, loc, xScales, column);
    int64_t spilled = plan.lanes * 4;
    // Lane l of the register spilled at byte `at` of `folds`.
    auto laneAt = [&](int64_t at, int64_t l) {
      Value lane;
      for (int64_t j = 0; j < 4; ++j) {
        Value byte =
            memref::LoadOp::create(b, loc, folds, constant(at + 4 * l + j));
        Value word = arith::ExtUIOp::create(b, loc, i32, byte);
        if (j > 0)
          word = arith::ShLIOp::create(
              b, loc, word, arith::ConstantIntOp::create(b, loc, i32, 8 * j));
        lane = lane ? arith::OrIOp::create(b, loc, lane, word) : word;
      }
      return lane;
    };
    for (int64_t r = 0; r < rows; ++r) {
      int64_t at = r * spilled * (next.empty() ? 1 : 2);
      UkSpillOp::create(b, loc, accs[r * stride], folds, constant(at));
      if (!next.empty())
        UkSpillOp::create(b, loc, next[r * stride], folds,
                          constant(at + spilled));
      Value sum;
      for (int64_t l = 0; l < plan.lanes; ++l) {
        Value lane = laneAt(at, l);
        if (!next.empty()) {
          // 3 A - B = 256 x the lane's digit sum, within int32
          // (makeRowPlan's bound).
          Value triple = arith::AddIOp::create(
              b, loc, arith::AddIOp::create(b, loc, lane, lane), lane);
          lane = arith::ShRSIOp::create(
              b, loc, arith::SubIOp::create(b, loc, triple, laneAt(at + spilled, l)),
              arith::ConstantIntOp::create(b, loc, i32, 8));
        }
        sum = sum ? arith::AddIOp::create(b, loc, sum, lane) : lane;
      }
      Value acc = arith::SubIOp::create(b, loc, sum, xSum);
      Value out = arith::SIToFPOp::create(b, loc, b.getF32Type(), acc);
      out = arith::MulFOp::create(b, loc, out, wScale);
      out = arith::DivFOp::create(b, loc, out, xScale);
      memref::StoreOp::create(
          b, loc, out, y, add(mulValue(column, mValue), add(firstRow, r)));
    }
  }

  /// RowPlan::decodeRows: per group of plan.rows rows (then the rows left
  /// one by one) their codes into `decoded`, then every block of tileN
  /// activation rows against them.
  void buildDecoded() {
    int64_t registers = trits ? int64_t(tritOffsets.size()) * kTrits
                              : 4 * (kVectorBytes / plan.registerBytes);
    decoded = createStackBuffer(b, loc, plan.rows * plan.k);
    scratch = createStackBuffer(b, loc, registers * plan.registerBytes);
    folds = createStackBuffer(b, loc, plan.rows * plan.lanes * 4);
    Value begin = toIndex(tileBegin), end = toIndex(tileEnd);
    Value groupsEnd =
        plan.rows == 1 ? end : tileGroupsEnd(begin, end, plan.rows);
    auto group = [&](Value first, int64_t rows) {
      for (int64_t r = 0; r < rows; ++r)
        decodeRow(add(first, r), r * plan.k);
      forColumnBlocks(n, plan.tileN, [&](Value firstColumn, int64_t columns) {
        dotDecoded(first, rows, firstColumn, columns);
      });
    };
    forLoop(begin, groupsEnd, plan.rows,
            [&](Value r) { group(r, plan.rows); });
    if (plan.rows > 1)
      forLoop(groupsEnd, end, 1, [&](Value r) { group(r, 1); });
  }

  /// The codes of row `row` into decoded[at ..] in weight order: per block
  /// its registers decoded (TQ2_0: bit pair i of register s; TQ1_0: digit
  /// i of register s) and spilled to `scratch` in that order, then copied
  /// from there in runs of consecutive weights.
  void decodeRow(Value row, int64_t at) {
    int64_t r = plan.registerBytes;
    Value rowStart = mulValue(row, rowBytes);
    forLoop(constant(0), blocks, 1, [&](Value bk) {
      Value block = add(rowStart, mul(bk, plan.blockBytes));
      Value to = add(constant(at), mul(bk, kBlock));
      // weightOf(slot, j): the weight of byte j of register `slot`, or -1.
      std::function<int64_t(int64_t, int64_t)> weightOf;
      int64_t slot = 0;
      if (trits) {
        IntegerAttr partial = r > kTritBytes ? b.getI64IntegerAttr(kTritBytes)
                                             : IntegerAttr();
        for (int64_t s = 0; s < int64_t(tritOffsets.size()); ++s) {
          Value w = UkLoadOp::create(b, loc, byteReg, codes,
                                     add(block, tritOffsets[s]), partial);
          for (int64_t i = 0; i < kTrits; ++i, ++slot)
            UkSpillOp::create(
                b, loc,
                UkTritOp::create(b, loc, byteReg, w, b.getI64IntegerAttr(i)),
                scratch, constant(slot * r));
        }
        // Bytes an earlier register holds are copied from that one.
        weightOf = [&](int64_t slot, int64_t j) {
          int64_t s = slot / kTrits, p = tritOffsets[s] + j;
          return p < s * r ? -1 : tritWeight(p, slot % kTrits);
        };
      } else {
        for (int64_t s = 0; s < kVectorBytes / r; ++s) {
          Value w = UkLoadOp::create(b, loc, byteReg, codes, add(block, s * r));
          for (int64_t i = 0; i < 4; ++i, ++slot)
            UkSpillOp::create(b, loc,
                              UkUnpackOp::create(b, loc, byteReg, w, Value(),
                                                 b.getI64IntegerAttr(2),
                                                 b.getI64IntegerAttr(i),
                                                 b.getI64IntegerAttr(0)),
                              scratch, constant(slot * r));
        }
        // Byte p = 32h + j of the block, bit pair i: weight 128h + 32i + j.
        weightOf = [&](int64_t slot, int64_t j) {
          int64_t p = slot / 4 * r + j;
          return p / kRun * kHalf + slot % 4 * kRun + p % kRun;
        };
      }
      for (int64_t q = 0; q < slot; ++q)
        for (int64_t j = 0; j < r;) {
          int64_t first = weightOf(q, j), length = 1;
          while (j + length < r && first >= 0 &&
                 weightOf(q, j + length) == first + length)
            ++length;
          if (first >= 0)
            forLoop(constant(0), constant(length), 1, [&](Value e) {
              Value v = memref::LoadOp::create(b, loc, scratch,
                                               add(e, q * r + j));
              memref::StoreOp::create(b, loc, v, decoded,
                                      add(add(to, first), e));
            });
          j += length;
        }
    });
  }

  /// Rows [firstRow, firstRow + rows), decoded, x activation rows
  /// [firstColumn, firstColumn + columns) read in place: one int8 dot
  /// product per register of codes and activation row.
  void dotDecoded(Value firstRow, int64_t rows, Value firstColumn,
                  int64_t columns) {
    int64_t r = plan.registerBytes;
    int64_t chains = std::max<int64_t>(1, 4 / (rows * columns));
    SmallVector<Value> accs(rows * columns * chains, zeroAcc());
    auto block = [&](Value bk) {
      Value blockX = mul(bk, kBlock);
      for (int64_t t = 0; t < kBlock / r; ++t) {
        Value k = add(blockX, t * r);
        SmallVector<Value> x;
        for (int64_t c = 0; c < columns; ++c)
          x.push_back(UkLoadOp::create(b, loc, byteReg, xq,
                                       xOffset(add(firstColumn, c), k)));
        for (int64_t row = 0; row < rows; ++row) {
          Value w = UkLoadOp::create(b, loc, byteReg, decoded,
                                     add(k, row * plan.k));
          for (int64_t c = 0; c < columns; ++c) {
            Value &acc = accs[(row * columns + c) * chains + t % chains];
            acc = UkDot4Op::create(b, loc, accReg, acc, w, x[c], false);
          }
        }
      }
    };
    carriedRange(constant(0), blocks, 1, accs, block);
    finishColumns(firstRow, rows, firstColumn, columns,
                  sumChains(accs, rows * columns, chains));
  }

  /// Copies the kRun activation bytes at xq[from] to gathered[to].
  void copyRun(Value from, Value to) { copyBytes(from, to, kRun); }

  /// Copies `count` activation bytes at xq[from] to gathered[to].
  void copyBytes(Value from, Value to, int64_t count) {
    forLoop(constant(0), constant(count), 1, [&](Value j) {
      Value v = memref::LoadOp::create(b, loc, xq, add(from, j));
      memref::StoreOp::create(b, loc, v, gathered, add(to, j));
    });
  }

  /// Index in xq of activation `k` of activation row `column`.
  Value xOffset(Value column, Value k) {
    return add(mulValue(column, kValue), k);
  }

  Value zeroAcc() {
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(accReg, b.getI32IntegerAttr(0)));
  }

  const RowPlan &plan;
  Value codes, xq, xScales, xSums, y, n, tileBegin, tileEnd, wScale;
  Value mArg, kArg;
  Value mValue, kValue, blocks, rowBytes, matrixBytes;
  Value gathered, folds;
  /// RowPlan::decodeRows: the group's codes (rows x K int8) and the
  /// registers of one block decoded before they are copied there.
  Value decoded, scratch;
  bool wholeRows = false; // `gathered` holds whole activation rows
  bool trits = false;     // TQ1_0 rows (base-3 digits), else TQ2_0
  /// TQ1_0: the block bytes each register of digits starts at.
  SmallVector<int64_t, 4> tritOffsets;
  int64_t gatherBytes = 0; // gathered activation bytes per block and row
  VectorType byteReg, accReg;
};

class LowerUpconvertPass
    : public lowbit::impl::LowBitLowerUpconvertBase<LowerUpconvertPass> {
public:
  using LowBitLowerUpconvertBase::LowBitLowerUpconvertBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    FailureOr<KernelToLower> kernel = findKernelToLower<UpconvertAttr>(func);
    if (failed(kernel))
      return signalPassFailure();
    if (!kernel->op)
      return;
    if (kernel->op.getLayout().getKind() == LayoutKind::Gguf) {
      FailureOr<RowPlan> rows = makeRowPlan(kernel->op, *kernel->target);
      if (failed(rows))
        return signalPassFailure();
      if (std::optional<KernelPlan> groups =
              makeGgmlRowsPlan(kernel->op, *rows)) {
        rewriteFunction(func, *groups, *kernel->target);
        return;
      }
      rewriteKernelFunction(
          func,
          [&](OpBuilder &b, ValueRange args) {
            RowKernelBuilder(b, func.getLoc(), *rows, args).build();
          },
          rows->anyShape);
      return;
    }
    FailureOr<KernelPlan> plan = makePlan(kernel->op, *kernel->target);
    if (failed(plan))
      return signalPassFailure();
    rewriteFunction(func, *plan, *kernel->target);
  }

private:
  /// The target's register width in bytes: a divisor of the 64-byte
  /// vectors of at least `least` bytes, else one error naming `kernel`.
  static FailureOr<int64_t> registerBytesOf(MpGemmOp op,
                                            const TargetInfo &target,
                                            int64_t least, StringRef kernel) {
    int64_t registerBytes = target.getRegisterBytes();
    if (registerBytes < least || kVectorBytes % registerBytes != 0)
      return op.emitOpError()
             << "target " << target.getName() << " has registers of "
             << registerBytes << " bytes; " << kernel
             << " needs a divisor of 64 that is at least " << least;
    return registerBytes;
  }

  /// The kernel of the GGML ROWS LAYOUT (ternary TQ2_0 or TQ1_0 rows,
  /// tile_m rows per group).
  static FailureOr<RowPlan> makeRowPlan(MpGemmOp op, const TargetInfo &target) {
    LayoutAttr layout = op.getLayout();
    if (!layout.isTiled() || op.getWeight().getEncoding() != Encoding::Ternary)
      return op.emitOpError()
             << "reads ternary weights in the ggml rows layout (tile_m = 1, "
                "tile_k = 256) only, got "
             << layout << "; run lowbit-pack-layout first";
    // The lane sums go through lowbit.uk.spill, which SIMD targets have.
    FailureOr<int64_t> registerBytes =
        registerBytesOf(op, target, 16, "the ggml rows kernel");
    if (failed(registerBytes))
      return failure();
    auto config = cast<UpconvertAttr>(op.getConfigAttr());
    RowPlan plan;
    plan.anyShape = isAnyShape(op);
    if (!plan.anyShape) {
      plan.m = op.getM();
      plan.k = op.getK();
    }
    plan.rows = config.getTileM();
    plan.tileN = config.getTileN();
    plan.prefetchGroups = config.getPrefetch();
    plan.registerBytes = *registerBytes;
    plan.lanes = *registerBytes / 4;
    plan.blockBytes = layout.getGgmlRowsBlockBytes();
    plan.decodeRows =
        !plan.anyShape && plan.tileN > 1 &&
        plan.rows * plan.k <= RowKernelBuilder::kMaxDecodedBytes;
    if (plan.blockBytes == LOWBIT_GGML_ROWS_TQ1_0_BYTES) {
      // Per lane and block at most registers x 5 dot products of 4
      // fractions <= 255 by |x| <= 128: 3 A must stay within int32.
      int64_t registers = llvm::divideCeil(int64_t(52), *registerBytes);
      int64_t blocksMax =
          (plan.anyShape ? kAnyShapeMaxTernaryK : plan.k) / LOWBIT_GGML_ROWS_BLOCK;
      // GEMV tiles only: a tile of several outputs shares each decoded
      // digit among its activation rows, and two sums per output would
      // take twice the accumulator registers (the 4 x 4 GEMM tile: all
      // 32 zmm; measured 1.3-3x slower than decoding, docs/perf/llama-cpp.md).
      plan.tritFractions = target.getMaxDotCode() >= 255 &&
                           !plan.decodeRows && plan.rows * plan.tileN <= 2 &&
                           3 * registers * 5 * 4 * 255 * 128 * blocksMax <=
                               int64_t(INT32_MAX);
    }
    // |sum| of a scaled chain <= (K / 4) * (3 << scale) * 128 must stay
    // within int32 (any shape: up to kAnyShapeMaxTernaryK).
    int64_t k = plan.anyShape ? kAnyShapeMaxTernaryK : plan.k;
    auto fits = [&](int64_t scale) {
      int64_t largest = int64_t(3) << scale;
      return largest <= target.getMaxDotCode() &&
             k / 4 * largest * 128 <= int64_t(INT32_MAX);
    };
    while (plan.maxScale < 6 && fits(plan.maxScale + 1))
      ++plan.maxScale;
    return plan;
  }

  /// TQ2_0 rows in a GEMM tile of one shape whose tile_m is a multiple of
  /// 16: the VNNI GEMM loops over each group's rows repacked into vnni4 i2s
  /// codes (KernelPlan::ggmlRows), with the config's tile_m, tile_n and
  /// unroll; else none (the row kernel).
  static std::optional<KernelPlan> makeGgmlRowsPlan(MpGemmOp op,
                                                    const RowPlan &rows) {
    auto config = cast<UpconvertAttr>(op.getConfigAttr());
    if (rows.anyShape || rows.blockBytes != LOWBIT_GGML_ROWS_TQ2_0_BYTES ||
        rows.tileN == 1 || rows.rows % kTileRows != 0)
      return std::nullopt;
    KernelPlan plan;
    plan.ggmlRows = true;
    plan.encoding = Encoding::Ternary;
    plan.bits = 2;
    plan.lowBits = lowbit_vnni4_low_bits(2);
    plan.m = rows.m;
    plan.kp = rows.k;
    plan.numTiles = llvm::divideCeilSigned(plan.m, kTileRows);
    plan.vectorsPerTile = plan.kp * plan.bits / kBlockK;
    plan.blocks = plan.kp / kBlockK;
    plan.tilesPerGroup = rows.rows / kTileRows;
    plan.tileN = rows.tileN;
    // tile_k is the layout's 256; a K step of 2 blocks (the vnni4 GEMM's
    // tile_k = 64) per unroll.
    plan.blocksPerStep = 2 * config.getUnroll();
    plan.registerBytes = rows.registerBytes;
    plan.lanes = rows.lanes;
    plan.slices = kVectorBytes / rows.registerBytes;
    if (plan.ggmlRowsBytes() > kMaxRepackedBytes)
      return std::nullopt;
    return plan;
  }
  /// The most stack for a group's repacked codes (K = 16384 at 64 rows).
  static constexpr int64_t kMaxRepackedBytes = 512 * 1024;

  static FailureOr<KernelPlan> makePlan(MpGemmOp op, const TargetInfo &target) {
    LayoutAttr layout = op.getLayout();
    WeightAttr weight = op.getWeight();
    if (layout.getKind() != LayoutKind::VNNI4 || layout.getTileM() != kTileRows)
      return op.emitOpError()
             << "needs the vnni4 layout with tile_m = 16 of kernel_abi.h, "
                "got "
             << layout << "; run lowbit-pack-layout first";
    FailureOr<int64_t> registerWidth =
        registerBytesOf(op, target, 4, "lowbit-lower-upconvert");
    if (failed(registerWidth))
      return failure();
    const int64_t registerBytes = *registerWidth;
    auto config = cast<UpconvertAttr>(op.getConfigAttr());
    KernelPlan plan;
    plan.anyShape = isAnyShape(op);
    plan.encoding = weight.getEncoding();
    plan.bits = weight.getBits();
    plan.codeOffset = plan.encoding == Encoding::GgufQ4_0 ? 8
                                                          : weight.getCodeOffset();
    plan.lowBits = lowbit_vnni4_low_bits(int(plan.bits));
    plan.subScales = weight.getSuperBlock() > 0;
    // A codebook's values are int8: looked up as c + 128, they are the
    // 8-bit codes of offset 128 that the rest of the kernel reads as q8_0's
    // (the offset through the activation sums, or dot4 {centred}).
    int64_t dotBits = plan.bits;
    if (plan.encoding == Encoding::Codebook) {
      for (int8_t c : weight.getCodebook().asArrayRef())
        plan.lookup.push_back(int8_t(uint8_t(c + 128)));
      plan.lookup.resize(16, 0);
      plan.codeOffset = 128;
      dotBits = 8;
    }
    plan.centred = dotBits == 8 && target.getMaxDotCode() < 255;
    if (plan.hasMin() && !plan.subScales && weight.getGroup() != kBlockK)
      return op.emitOpError() << "lowbit-lower-upconvert takes minimums per "
                                 "32-k block (group = 32) without a "
                                 "super-block, got group = "
                              << weight.getGroup();
    if (plan.subScales && weight.getGroup() != kBlockK &&
        weight.getGroup() != kBlockK / 2)
      return op.emitOpError() << "lowbit-lower-upconvert takes sub-blocks "
                                 "of 32 or 16, got group = "
                              << weight.getGroup();
    if (plan.subScales) {
      plan.halves = kBlockK / weight.getGroup();
      plan.scaleBits = weight.getScaleBits();
      // lowbit.uk.load_scales: a register of several rows starts on a byte.
      int64_t lanes = registerBytes / 4;
      if (lanes > 1 && lanes * plan.scaleBits % 8 != 0)
        return op.emitOpError()
               << "lowbit-lower-upconvert reads " << lanes << " rows of "
               << plan.scaleBits << "-bit sub-scales per register on target "
               << target.getName() << ", not a whole number of bytes";
    }
    if (!plan.anyShape) {
      plan.m = op.getM();
      plan.kp = llvm::alignTo(op.getK(), kBlockK);
      plan.numTiles = llvm::divideCeilSigned(plan.m, kTileRows);
      plan.vectorsPerTile = plan.kp * plan.bits / kBlockK;
      plan.blocks = plan.kp / kBlockK;
    }
    plan.group = plan.subScales ? weight.getSuperBlock() : weight.getGroup();
    plan.tilesPerGroup = config.getTileM() / kTileRows;
    plan.tileN = config.getTileN();
    plan.blocksPerStep = config.getTileK() / kBlockK * config.getUnroll();
    plan.prefetchBytes = config.getPrefetch() * config.getTileK() / kBlockK *
                         plan.bits * kVectorBytes;
    plan.registerBytes = registerBytes;
    plan.lanes = registerBytes / 4;
    plan.slices = kVectorBytes / registerBytes;
    // An any-shape kernel sizes its buffer for 2 tiles of the largest K
    // that fits (16384) and checks its K at run time.
    // Formats with a scale per 32-k block and a code offset the same for
    // every row (q4_0, q5_0, q8_0; iq4_nl's looked-up codes, offset 128),
    // or a scale (w1gG, codes doubled) and a zero point (w2gG, w4gG) per
    // row and group of whole blocks.
    bool sameOffset = (plan.encoding == Encoding::GgufQ4_0 ||
                       plan.encoding == Encoding::Offset ||
                       plan.encoding == Encoding::Codebook) &&
                      plan.group == kBlockK;
    // (and q4_1, q5_1: a minimum per row and 32-k block)
    bool zeroPoints = (plan.hasZeros() || plan.encoding == Encoding::Binary) &&
                      plan.group % kBlockK == 0;
    bool minimums = plan.hasMin() && plan.group == kBlockK;
    bool perBlock = (sameOffset || zeroPoints || minimums) &&
                    !plan.subScales && !plan.centred;
    // K-quants (their sub-scales from the sub-scale buffer).
    bool kQuant = plan.subScales && !plan.centred;
    perBlock = perBlock || kQuant;
    if (target.hasMatrixTiles() &&
        ((plan.isTernary() && plan.bits == 2) || perBlock) &&
        plan.tileN > 1 && registerBytes == kVectorBytes) {
      plan.amxPerBlock = perBlock;
      for (int64_t tiles : {2, 1})
        if (plan.anyShape ||
            tiles * plan.amxTileBytes() <= KernelPlan::kMaxAmxBufferBytes) {
          plan.amxTiles = tiles;
          break;
        }
      if (kQuant && plan.subScaleBufferBytes() == 0) {
        plan.amxTiles = 0;
        plan.amxPerBlock = false;
      }
    }
    return plan;
  }

  /// Replaces the signature and body of `func` by the kernel ABI function.
  static void rewriteFunction(func::FuncOp func, const KernelPlan &plan,
                              const TargetInfo &target) {
    rewriteKernelFunction(
        func,
        [&](OpBuilder &b, ValueRange args) {
          KernelBuilder(b, func.getLoc(), plan, target, args).build();
        },
        plan.anyShape);
  }
};

} // namespace
