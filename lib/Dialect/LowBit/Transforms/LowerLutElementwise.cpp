//===- LowerLutElementwise.cpp - tl1/tl2 mpgemm to table lookups ----------===//
//
// Rewrites a function `@k(x, packed, s) { return lowbit.mpgemm }` with a
// lut_elementwise config and the interleaved tl1/tl2 layout of lut_abi.h
// into a kernel of kernel_abi.h's signature: a prologue that prefetches the
// start of the thread's weights and builds the int16 tables of the
// activations (lowbit.uk.lut_tables into a stack buffer), then, per K chunk
// (lut_abi.h's K panels) and tile group, lowbit.uk.lut_dot on registers
// whose width comes from TargetInfo (int32 sums of the low and high table
// bytes, `bk` weights per loop iteration), lowbit.uk.lut_combine with the
// row correction of the header, and the exact ternary scaling. Layouts in
// lut_abi.h's lane order (#lowbit.layout lane_order = lanes, which
// pack-layout writes for TargetInfo::hasLutLaneOrder: one table per 16-byte
// register lane) get KernelLoopBuilder's lane-order
// lookups instead of lut_dot: lowbit.uk.lut_lookup per (register, nibble,
// table byte), lowbit.uk.zip of a row's two nibbles, lowbit.uk.dot2 with the
// signs into int16 sums widened once per block (lowbit.uk.extend) and
// lowbit.uk.lane_fold at the end. Nothing here depends on the ISA.
//
//===----------------------------------------------------------------------===//

#include "lowbit/Dialect/LowBit/Transforms/Passes.h"

#include "KernelLoopBuilder.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Iterators.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::lowbit {
#define GEN_PASS_DEF_LOWBITLOWERLUTELEMENTWISE
#include "lowbit/Dialect/LowBit/Transforms/Passes.h.inc"
} // namespace mlir::lowbit

using namespace mlir;
using namespace mlir::lowbit;

/// lut_abi.h: rows per tile, bytes per vector and header, weights and
/// bytes per TL2 block, weights per TL1 vector, TL2 blocks per K panel; and
/// the bytes of one vector's four tables.
static constexpr int64_t kTileRows = LOWBIT_TILE_ROWS;
static constexpr int64_t kVectorBytes = LOWBIT_LUT_VECTOR_BYTES;
static constexpr int64_t kHeaderBytes = LOWBIT_LUT_HEADER_BYTES;
static constexpr int64_t kBlockWeights = LOWBIT_LUT_TL2_BLOCK,
                         kBlockBytes = LOWBIT_LUT_BLOCK_BYTES;
static constexpr int64_t kTl1Weights = LOWBIT_LUT_TL1_VECTOR;
static constexpr int64_t kPanelBlocks = LOWBIT_LUT_PANEL_BLOCKS;
static constexpr int64_t kTableBytes = 256;
/// The largest table buffer a kernel keeps on its stack.
static constexpr int64_t kMaxStackBytes = 2 << 20;
/// Tables a tile sweeps without a K split (about an L1 data cache), and the
/// size of the K chunks when they are larger: table vectors read from L2
/// compete with the weight stream (measured on Zen 5: tl2 2560x6912, 73 KiB
/// of tables, 0.70 of the read bandwidth against 0.90 at K = 2560). A
/// GEMV's chunks are the K panels of lut_abi.h (at most 16 KiB of tables),
/// so that each is one sequential run of weights per thread; a GEMM's
/// (`bn` rows of tables) split the panels further.
static constexpr int64_t kL1TableBytes = 36 << 10;
static constexpr int64_t kChunkTableBytes = 24 << 10;
/// Any-shape kernels (kernel_abi.h, lowbit_any_kernel_fn): the largest K
/// (LOWBIT_ANY_SHAPE_MAX_LUT_K), which sizes their table buffer, and the
/// tiles whose int32 sums they keep between K panels at a time (a thread's
/// tiles go in batches of this many, each swept panel by panel).
static constexpr int64_t kAnyShapeMaxK = LOWBIT_ANY_SHAPE_MAX_LUT_K;
static constexpr int64_t kAnyShapeBatchTiles = 64;
/// The alignment of the kernels' stack buffers: a cache line, so that no
/// register load of the tables straddles two (measured on Zen 5, tl1
/// 2560x2560 GEMV warm, one thread: 42 us with the tables at a multiple of
/// 64 bytes against 56 us at 16 or 48 past one).
static constexpr int64_t kBufferAlignment = 64;

namespace {

struct LutPlan {
  /// An any-shape kernel: M and K are arguments (LutShape); tl2Blocks and
  /// tl1Vectors are those of kAnyShapeMaxK (they size the table buffer),
  /// m, kp, tileBytes, numTiles, panels, chunks are unused.
  bool anyShape = false;
  bool tl2 = false;
  int64_t m = 0, kp = 0;
  int64_t tl2Blocks = 0, tl1Vectors = 0, tileBytes = 0, numTiles = 0;
  int64_t tilesPerGroup = 1, bn = 1;
  int64_t blocksPerIteration = 1, vectorsPerIteration = 1;
  int64_t registerBytes = 0, halves = 1, lanes = 0; // lanes: int32 lanes
  /// lut_abi.h's lane order (the layout's lane_order): per (tile,
  /// activation row) one accumulator (low + 256 high) per quarter of the
  /// rows.
  bool laneOrder = false;
  int64_t prefetchBytes = 0;
  /// lut_abi.h's K panels: `panels` of `panelBlocks` TL2 blocks (the last
  /// may have fewer).
  int64_t panels = 1, panelBlocks = 0;
  /// The TL2 blocks [first, first + blocks) of one panel.
  struct Chunk {
    int64_t panel, first, blocks;
  };
  /// The K chunks: every tile of the range for chunk 0, then chunk 1, ...,
  /// with the int32 sums of the tiles kept in a stack buffer; the TL1
  /// vectors and the outputs come with the last chunk.
  SmallVector<Chunk> chunks;

  /// Sets of accumulators that consecutive index vectors take turns on,
  /// so that the dot chains hide the dot latency, and pairs per (set,
  /// register half): one per nibble, or one for both.
  int64_t accSets = 1, nibblePairs = 2;
  /// The 4 index vectors of a TL2 block in an scf.for rather than
  /// unrolled: where the tables take registers (the nibbles then share a
  /// pair, one set), so that the C++ compilers do not interleave the
  /// lookups of 4 vectors and spill.
  bool vectorLoop = false;

  int64_t tableVectors() const { return 4 * tl2Blocks + tl1Vectors; }
  /// Accumulators per (tile, activation row): pairs (low, high bytes) per
  /// set, register half of a vector and nibble pair, or the lane order's
  /// quarters.
  int64_t accsPerColumn() const {
    return laneOrder ? kLaneQuarters : accSets * halves * nibblePairs;
  }
  /// Registers of the int32 sums of one (tile, activation row) between
  /// chunks: per register half the pairs combined (low + 256 high, summed
  /// over sets and nibbles), or the lane order's quarters.
  int64_t partialRegisters() const {
    return laneOrder ? kLaneQuarters : halves;
  }
  int64_t partialBytes() const { return partialRegisters() * registerBytes; }
  int64_t columnTableBytes() const { return tableVectors() * kTableBytes; }

  int64_t blocksOf(int64_t panel) const {
    return std::min(panelBlocks, tl2Blocks - panel * panelBlocks);
  }
  /// The bytes of a tile's piece of `panel` (lut_abi.h piece_c).
  int64_t pieceBytes(int64_t panel) const {
    return blocksOf(panel) * kBlockBytes +
           (panel == panels - 1 ? tl1Vectors * kVectorBytes + kHeaderBytes : 0);
  }
  /// Where `panel` starts: the pieces of all tiles of the panels before.
  int64_t panelOffset(int64_t panel) const {
    int64_t offset = 0;
    for (int64_t c = 0; c < panel; ++c)
      offset += numTiles * pieceBytes(c);
    return offset;
  }
  /// Offset of TL2 block `first` of `panel` in a tile's piece.
  int64_t blockOffset(int64_t panel, int64_t first) const {
    return (first - panel * panelBlocks) * kBlockBytes;
  }
  /// Offset of the TL1 vectors in a tile's piece of the last panel.
  int64_t tl1Offset() const { return blockOffset(panels - 1, tl2Blocks); }
  /// Offset of the header in a tile's piece of the last panel.
  int64_t headerOffset() const {
    return tl1Offset() + tl1Vectors * kVectorBytes;
  }
};

/// The run-time sizes of an any-shape kernel, from its M and K arguments
/// (lut_abi.h's formulas, as pack_lut computes them).
struct LutShape {
  Value m, kp, tl2Blocks, tl1Vectors, numTiles, totalBytes;
  Value panels, panelBlocks, lastBlocks;
  /// Bytes of a tile's piece of a full panel and of the last panel, and
  /// the offsets of the TL1 vectors and the header in the last piece.
  Value fullPiece, lastPiece, tl1Offset, headerOffset;
};

class LutKernelBuilder : KernelLoopBuilder {
public:
  LutKernelBuilder(OpBuilder &b, Location loc, const LutPlan &plan,
                   ValueRange args)
      : KernelLoopBuilder(b, loc), plan(plan), codes(args[0]), xq(args[3]),
        xScales(args[4]), y(args[6]), n(args[7]), tileBegin(args[8]),
        tileEnd(args[9]), wScale(args[10]) {
    if (plan.anyShape) {
      mArg = args[11];
      kArg = args[12];
    }
    MLIRContext *ctx = b.getContext();
    byteReg = VectorType::get({plan.registerBytes}, IntegerType::get(ctx, 8));
    i32Reg = VectorType::get({plan.lanes}, IntegerType::get(ctx, 32));
    f32Reg = VectorType::get({plan.lanes}, Float32Type::get(ctx));
  }

  /// A lowbit.uk.stack_buffer of `bytes` bytes at a cache line.
  Value stackBuffer(int64_t bytes) {
    return createStackBuffer(b, loc, bytes, kBufferAlignment);
  }

  void build() {
    if (plan.anyShape)
      return buildAnyShape();
    tables = stackBuffer(plan.bn * plan.columnTableBytes());
    if (plan.chunks.size() > 1)
      partials = stackBuffer(plan.numTiles * plan.bn * plan.partialBytes());
    prefetchStart(codes, mul(toIndex(tileBegin), plan.pieceBytes(0)),
                  plan.prefetchBytes, plan.numTiles * plan.tileBytes);
    forColumnBlocks(n, plan.bn, [&](Value firstColumn, int64_t columns) {
      buildColumns(firstColumn, columns);
    });
  }

private:
  //===--- Tables (the activation pre-pass) ---------------------------------//

  void buildColumns(Value firstColumn, int64_t columns) {
    for (int64_t c = 0; c < columns; ++c)
      buildTables(add(firstColumn, c), c * plan.columnTableBytes());
    Value begin = toIndex(tileBegin), end = toIndex(tileEnd);
    int64_t group = plan.tilesPerGroup;
    Value groupsEnd = tileGroupsEnd(begin, end, group);
    for (int64_t chunk = 0; chunk < int64_t(plan.chunks.size()); ++chunk) {
      setRun(chunk, begin, end);
      if (group > 1)
        forLoop(begin, groupsEnd, group, [&](Value t) {
          buildTiles(t, group, firstColumn, columns, chunk);
        });
      forLoop(groupsEnd, end, 1,
              [&](Value t) { buildTiles(t, 1, firstColumn, columns, chunk); });
    }
  }

  /// The pair of (tile t, column c, set, register half h, nibble p).
  int64_t accIndex(int64_t t, int64_t columns, int64_t c, int64_t set,
                   int64_t h, int64_t p) const {
    return (t * columns + c) * plan.accsPerColumn() +
           (set * plan.halves + h) * plan.nibblePairs + p % plan.nibblePairs;
  }

  /// The tables of one activation row at byte `base` of the buffer: per
  /// table vector 256 bytes (lut_dot's 128 bytes for the low, then the
  /// high nibbles).
  void buildTables(Value column, int64_t base) {
    Value row = mul(column, plan.kp);
    if (plan.tl2Blocks > 0)
      forLoop(constant(0), constant(4 * plan.tl2Blocks), 1, [&](Value j) {
        buildVectorTables(add(row, mul(j, 24)), add(mul(j, kTableBytes), base),
                          /*width=*/3);
      });
    int64_t k2 = plan.tl2Blocks * kBlockWeights;
    int64_t first = base + 4 * plan.tl2Blocks * kTableBytes;
    if (plan.tl1Vectors > 0)
      forLoop(constant(0), constant(plan.tl1Vectors), 1, [&](Value j) {
        buildVectorTables(add(add(row, mul(j, kTl1Weights)), k2),
                          add(mul(j, kTableBytes), first), /*width=*/2);
      });
  }

  /// Tables of the 8 groups of `width` activations from xq[x] on.
  void buildVectorTables(Value x, Value at, int64_t width) {
    UkLutTablesOp::create(b, loc, xq, x, tables, at,
                          b.getI64IntegerAttr(width));
  }

  //===--- Lookups ---------------------------------------------------------//

  /// A chunk that is a whole panel, but the last, is one run of weights
  /// per thread (its tiles' pieces) followed by the next panel's run: sets
  /// `run` for the prefetches to follow, else clears it.
  void setRun(int64_t chunk, Value begin, Value end) {
    const LutPlan::Chunk &c = plan.chunks[chunk];
    run = PanelRun();
    if (c.first != c.panel * plan.panelBlocks ||
        c.blocks != plan.blocksOf(c.panel) || c.panel == plan.panels - 1)
      return;
    run = panelRun(begin, end, plan.pieceBytes(c.panel),
                   plan.panelOffset(c.panel), plan.pieceBytes(c.panel + 1),
                   plan.panelOffset(c.panel + 1));
  }

  /// Offset in the partial-sum buffer of (tile, column c).
  Value partialOffset(Value tile, int64_t c) {
    return mul(add(mul(tile, plan.bn), c), plan.partialBytes());
  }

  /// K chunk `chunk` of a group of `tiles` tiles for `columns` activation
  /// rows: its TL2 blocks, then on the last chunk the TL1 vectors and the
  /// outputs; between chunks the int32 sums live in `partials`.
  void buildTiles(Value firstTile, int64_t tiles, Value firstColumn,
                  int64_t columns, int64_t chunk) {
    const LutPlan::Chunk &c = plan.chunks[chunk];
    // The tiles' pieces of the chunk's panel.
    SmallVector<Value> tileBase;
    for (int64_t t = 0; t < tiles; ++t)
      tileBase.push_back(add(mul(add(firstTile, t), plan.pieceBytes(c.panel)),
                             plan.panelOffset(c.panel)));
    SmallVector<LutAcc> accs(tiles * columns * plan.accsPerColumn());
    if (chunk == 0)
      for (LutAcc &a : accs) {
        a.low = splat(i32Reg, 0);
        a.high = plan.laneOrder ? Value() : a.low;
      }
    else
      loadPartials(firstTile, Value(), columns, accs, Value());

    bool last = chunk == int64_t(plan.chunks.size()) - 1;
    // TL2 block b of the chunk at b * 320 + blockShift in its tile's piece.
    int64_t blockShift =
        plan.blockOffset(c.panel, c.first) - c.first * kBlockBytes;
    auto tl2 = [&](Value block) {
      tl2Block(tileBase, columns, block, blockShift, accs);
    };
    auto tl1 = [&](Value vector) {
      tl1Vector(tileBase, columns, vector, accs);
    };
    steppedLoop(c.first, c.blocks, plan.blocksPerIteration, accs, tl2);
    if (!last)
      return spillPartials(firstTile, Value(), columns, accs);
    steppedLoop(0, plan.tl1Vectors, plan.vectorsPerIteration, accs, tl1);
    storeOutputs(tileBase, firstTile, firstColumn, columns, accs);
  }

  //===--- Partial sums and outputs (static and any-shape kernels) --------//

  /// fn(index, its offset in `partials`) for every partial register of
  /// the tiles from `firstTile` (counted from `batch` in the buffer; from 0
  /// when null) and `columns` activation rows: index (t * columns + c) *
  /// partialRegisters() + r for (tile t, column c, register r).
  void forEachPartial(Value firstTile, Value batch, int64_t tiles,
                      int64_t columns, function_ref<void(int64_t, Value)> fn) {
    int64_t perColumn = plan.partialRegisters();
    for (int64_t t = 0; t < tiles; ++t)
      for (int64_t c = 0; c < columns; ++c)
        for (int64_t r = 0; r < perColumn; ++r) {
          Value tile = add(firstTile, t);
          if (batch)
            tile = sub(tile, batch);
          Value at = add(partialOffset(tile, c), r * plan.registerBytes);
          fn((t * columns + c) * perColumn + r, at);
        }
  }

  /// The accumulators from `partials` (zero where `fresh`, when not null):
  /// in lane order each quarter's sum; else a register half's combined sum
  /// goes into the low sums of its first pair, the other sums start at 0
  /// (lut_combine of that pair adds it back: exact, int32 wrapping).
  void loadPartials(Value firstTile, Value batch, int64_t columns,
                    MutableArrayRef<LutAcc> accs, Value fresh) {
    Value zero = splat(i32Reg, 0);
    int64_t tiles = int64_t(accs.size()) / (columns * plan.accsPerColumn());
    if (!plan.laneOrder)
      for (LutAcc &a : accs)
        a.low = a.high = zero;
    forEachPartial(firstTile, batch, tiles, columns, [&](int64_t i, Value at) {
      Value sums = UkLoadOp::create(b, loc, i32Reg, partials, at);
      if (fresh)
        sums = arith::SelectOp::create(b, loc, fresh, zero, sums);
      if (plan.laneOrder) {
        accs[i].low = sums;
        return;
      }
      int64_t tc = i / plan.halves, h = i % plan.halves;
      accs[accIndex(tc, 1, 0, 0, h, 0)].low = sums;
    });
  }

  /// The accumulators into `partials`, for the next K chunk or panel: one
  /// register per register half (addHalfSums without the header), not the
  /// pairs (on AVX-512 8 registers per tile, a 432-tile GEMV's 221 KB
  /// against 27 KB; measured on Zen 4, warm, one thread: 0.3-0.9% less
  /// time, docs/perf/tl2-vs-i2s.md).
  void spillPartials(Value firstTile, Value batch, int64_t columns,
                     MutableArrayRef<LutAcc> accs) {
    int64_t tiles = int64_t(accs.size()) / (columns * plan.accsPerColumn());
    forEachPartial(firstTile, batch, tiles, columns, [&](int64_t i, Value at) {
      Value sums;
      if (plan.laneOrder) {
        sums = accs[i].low;
      } else {
        int64_t tc = i / plan.halves, h = i % plan.halves;
        sums = addHalfSums(Value(), accs, tc / columns, columns, tc % columns,
                           h);
      }
      UkSpillOp::create(b, loc, sums, partials, at);
    });
  }

  /// The outputs of the tiles at `tileBase` (from `firstTile`) for `columns`
  /// activation rows: rows [h * lanes, h * lanes + lanes) of a tile are
  /// register half h; the headers end the pieces of the last panel.
  void storeOutputs(ArrayRef<Value> tileBase, Value firstTile,
                    Value firstColumn, int64_t columns,
                    ArrayRef<LutAcc> accs) {
    for (auto [t, base] : llvm::enumerate(tileBase))
      for (int64_t h = 0; h < plan.halves; ++h) {
        int64_t headerBytes = h * plan.lanes * 4;
        Value header = UkLoadOp::create(
            b, loc, i32Reg, codes,
            shape.headerOffset
                ? add(add(base, shape.headerOffset), headerBytes)
                : add(base, plan.headerOffset() + headerBytes));
        Value row = add(mul(add(firstTile, t), kTileRows), h * plan.lanes);
        Value rowsLeft = shape.m ? storeCount(row, shape.m, plan.lanes)
                                 : storeCount(row, plan.m, plan.lanes);
        for (int64_t c = 0; c < columns; ++c) {
          Value acc = addHalfSums(header, accs, t, columns, c, h);
          Value column = add(firstColumn, c);
          Value scale = memref::LoadOp::create(b, loc, xScales, column);
          Value noSum =
              arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(0));
          Value out = UkTernaryScaleOp::create(b, loc, f32Reg, acc, noSum,
                                               wScale, scale);
          storeRows(out, column, row, rowsLeft);
        }
      }
  }

  /// Stores the outputs `out` of activation row `column` from output row
  /// `row` (`rowsLeft` of them, or all when null). An any-shape kernel
  /// stores a whole register where the tile is full: only the last tile of
  /// the matrix can be partial, and a masked store costs more (AVX2's
  /// vmaskmovps; measured on Zen 5, tl1 2560x2560 GEMV cold, one thread:
  /// 1.06-1.09x the time of whole stores).
  void storeRows(Value out, Value column, Value row, Value rowsLeft) {
    if (!shape.m) {
      UkStoreOp::create(b, loc, out, y, add(mul(column, plan.m), row),
                        rowsLeft);
      return;
    }
    Value at = add(mulValue(column, shape.m), row);
    Value full = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                       rowsLeft, constant(plan.lanes));
    auto branch = scf::IfOp::create(b, loc, full, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(branch.thenBlock());
    UkStoreOp::create(b, loc, out, y, at, Value());
    b.setInsertionPointToStart(branch.elseBlock());
    UkStoreOp::create(b, loc, out, y, at, rowsLeft);
  }

  /// `acc` (none: 0) plus the int32 sums of register half h's rows of
  /// (tile t, column c).
  Value addHalfSums(Value acc, ArrayRef<LutAcc> accs, int64_t t,
                    int64_t columns, int64_t c, int64_t h) {
    if (plan.laneOrder) {
      Value rows = laneRows(accs, t * columns + c, h);
      return acc ? arith::AddIOp::create(b, loc, acc, rows) : rows;
    }
    for (int64_t set = 0; set < plan.accSets; ++set)
      for (int64_t p = 0; p < plan.nibblePairs; ++p) {
        const LutAcc &a = accs[accIndex(t, columns, c, set, h, p)];
        Value sums = UkLutCombineOp::create(b, loc, i32Reg, a.low, a.high);
        acc = acc ? arith::AddIOp::create(b, loc, acc, sums) : sums;
      }
    return acc;
  }

  /// One TL2 block: 4 index vectors per tile, each looked up by nibble with
  /// its 64-bit sign word per nibble.
  void tl2Block(ArrayRef<Value> tileBase, int64_t columns, Value block,
                int64_t blockShift, SmallVectorImpl<LutAcc> &accs,
                Value dynamicShift = Value()) {
    Value blockOffset = dynamicShift
                            ? add(mul(block, kBlockBytes), dynamicShift)
                            : add(mul(block, kBlockBytes), blockShift);
    for (Value base : tileBase)
      prefetch(add(base, blockOffset), kBlockBytes / kVectorBytes);
    startWords(tileBase.size() * columns);
    auto vector = [&](Value v) {
      lookupVector(tileBase, columns,
                   add(add(blockOffset, kVectorBytes), mul(v, kVectorBytes)),
                   add(mul(block, 4), v), add(blockOffset, mul(v, 16)), accs);
    };
    if (plan.vectorLoop)
      steppedLoop(0, 4, 1, accs, vector);
    else
      for (int64_t v = 0; v < 4; ++v)
        vector(constant(v));
    widenWords(accs);
  }

  /// One TL1 vector per tile (no signs).
  void tl1Vector(ArrayRef<Value> tileBase, int64_t columns, Value vector,
                 SmallVectorImpl<LutAcc> &accs) {
    Value offset =
        shape.tl1Offset
            ? add(mul(vector, kVectorBytes), shape.tl1Offset)
            : add(mul(vector, kVectorBytes), plan.tl1Offset());
    for (Value base : tileBase)
      prefetch(add(base, offset), 1);
    startWords(tileBase.size() * columns);
    lookupVector(tileBase, columns, offset,
                 shape.tl2Blocks ? add(vector, mul(shape.tl2Blocks, 4))
                                 : add(vector, 4 * plan.tl2Blocks),
                 Value(), accs);
    widenWords(accs);
  }

  /// Lane order: zero int16 pair sums for `count` (tile, column)s.
  void startWords(int64_t count) {
    if (!plan.laneOrder)
      return;
    words.clear();
    for (int64_t i = 0; i < count; ++i)
      words.append(freshWords());
  }

  /// Lane order: the int16 pair sums of each (tile, column) widened into
  /// its quarters (at most 8 vectors of 2 x 510 per int16 lane: exact).
  void widenWords(SmallVectorImpl<LutAcc> &accs) {
    if (!plan.laneOrder)
      return;
    for (int64_t i = 0; i < int64_t(words.size()) / 2; ++i)
      widenLanes(ArrayRef(words).slice(2 * i, 2), accs, i);
  }

  /// The index vector at `offset` of every tile against table vector
  /// `tableVector` of every column; `signOffset` (null for TL1) is the
  /// tile offset of its two sign words.
  void lookupVector(ArrayRef<Value> tileBase, int64_t columns, Value offset,
                    Value tableVector, Value signOffset,
                    SmallVectorImpl<LutAcc> &accs) {
    Value tables = mul(tableVector, kTableBytes);
    if (plan.laneOrder)
      return lookupVectorLanes(tileBase, columns, offset, tables, signOffset);
    int64_t signBytes = plan.registerBytes / 8;
    for (auto [t, base] : llvm::enumerate(tileBase)) {
      Value at = add(base, offset);
      for (int64_t h = 0; h < plan.halves; ++h) {
        Value w = UkLoadOp::create(b, loc, byteReg, codes,
                                   add(at, h * plan.registerBytes));
        for (int64_t p = 0; p < 2; ++p) {
          Value signs;
          if (signOffset)
            signs = UkLutSignsOp::create(
                b, loc, byteReg, codes,
                add(add(base, signOffset), 8 * p + h * signBytes));
          for (int64_t c = 0; c < columns; ++c) {
            LutAcc &a = accs[accIndex(t, columns, c, nextSet, h, p)];
            auto op = UkLutDotOp::create(
                b, loc, TypeRange{i32Reg, i32Reg}, a.low, a.high, w,
                this->tables,
                add(tables, c * plan.columnTableBytes() + 128 * p), signs,
                b.getBoolAttr(p == 1));
            a.low = op.getNewLow();
            a.high = op.getNewHigh();
          }
        }
      }
    }
    nextSet = (nextSet + 1) % plan.accSets;
  }

  /// lookupVector in lane order (lut_abi.h, KernelLoopBuilder): the signs
  /// of (register h, half of the rows) at 4 (2h + half) of the vector's
  /// sign words.
  void lookupVectorLanes(ArrayRef<Value> tileBase, int64_t columns,
                         Value offset, Value tables, Value signOffset) {
    for (auto [t, base] : llvm::enumerate(tileBase)) {
      Value at = add(base, offset);
      Value w[2] = {UkLoadOp::create(b, loc, byteReg, codes, at),
                    UkLoadOp::create(b, loc, byteReg, codes,
                                     add(at, plan.registerBytes))};
      SmallVector<Value, 4> signs;
      for (int64_t h = 0; h < 2; ++h)
        for (int64_t half = 0; half < 2; ++half)
          signs.push_back(
              signOffset ? Value(UkLutSignsOp::create(
                               b, loc, byteReg, codes,
                               add(add(base, signOffset), 4 * (2 * h + half)),
                               /*byDword=*/true))
                         : splat(byteReg, 1));
      for (int64_t c = 0; c < columns; ++c)
        lookupLanes(
            w, this->tables, add(tables, c * plan.columnTableBytes()), signs,
            MutableArrayRef(words).slice(2 * (t * columns + c), 2));
    }
  }

  /// Prefetches the `lines` cache lines prefetchBytes after `offset`.
  void prefetch(Value offset, int64_t lines) {
    if (shape.totalBytes)
      return prefetchAheadDynamic(offset, lines);
    prefetchAhead(codes, offset, plan.prefetchBytes,
                  plan.numTiles * plan.tileBytes, lines, run);
  }

  //===--- Any-shape kernels (M and K arguments) ----------------------------//
  //
  // The loops of the static kernel with run-time bounds: per activation
  // row block the tables of all K, then a thread's tiles in batches of
  // kAnyShapeBatchTiles, each swept one K panel after the other (lut_abi.h:
  // panel c of every tile, then panel c + 1), the int32 sums of the batch's
  // tiles kept in a stack buffer between panels; the last panel adds the
  // TL1 vectors and the header and stores the outputs.

  void buildAnyShape() {
    computeShape();
    tables = stackBuffer(plan.bn * plan.columnTableBytes());
    partials =
        stackBuffer(kAnyShapeBatchTiles * plan.bn * plan.partialBytes());
    if (plan.prefetchBytes > 0) {
      Value one = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                        shape.panels, constant(1));
      Value piece0 = arith::SelectOp::create(b, loc, one, shape.lastPiece,
                                             shape.fullPiece);
      Value start = mulValue(toIndex(tileBegin), piece0);
      Value ahead = add(start, plan.prefetchBytes);
      Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                           ahead, shape.totalBytes);
      Value end =
          arith::SelectOp::create(b, loc, inside, ahead, shape.totalBytes);
      forLoop(start, end, 64,
              [&](Value at) { UkPrefetchOp::create(b, loc, codes, at); });
    }
    forColumnBlocks(n, plan.bn, [&](Value firstColumn, int64_t columns) {
      for (int64_t c = 0; c < columns; ++c)
        buildTablesAny(add(firstColumn, c), c * plan.columnTableBytes());
      Value begin = toIndex(tileBegin), end = toIndex(tileEnd);
      forLoop(begin, end, kAnyShapeBatchTiles, [&](Value batch) {
        Value batchEnd = add(batch, kAnyShapeBatchTiles);
        Value within = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                             batchEnd, end);
        batchEnd = arith::SelectOp::create(b, loc, within, batchEnd, end);
        buildBatch(batch, batchEnd, firstColumn, columns);
      });
    });
  }

  /// The run-time sizes (LutShape) from the M and K arguments.
  void computeShape() {
    shape.m = toIndex(mArg);
    Value k = toIndex(kArg);
    shape.kp = mul(div(add(k, 31), 32), 32);
    shape.tl2Blocks = plan.tl2 ? div(k, kBlockWeights) : constant(0);
    Value k2 = mul(shape.tl2Blocks, kBlockWeights);
    shape.tl1Vectors = div(add(plan.tl2 ? sub(k, k2) : k, kTl1Weights - 1),
                           kTl1Weights);
    shape.numTiles = div(add(shape.m, kTileRows - 1), kTileRows);
    Value tileBytes = add(add(mul(shape.tl2Blocks, kBlockBytes),
                              mul(shape.tl1Vectors, kVectorBytes)),
                          kHeaderBytes);
    shape.totalBytes = mulValue(shape.numTiles, tileBytes);
    // lowbit_lut_panels and lowbit_lut_panel_blocks of lut_abi.h in IR:
    // panels = max(1, (blocks + 8) / 16), panelBlocks = ceil(blocks /
    // panels).
    Value rounded = div(add(shape.tl2Blocks, kPanelBlocks / 2), kPanelBlocks);
    Value none = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                       rounded, constant(1));
    shape.panels = arith::SelectOp::create(b, loc, none, constant(1), rounded);
    shape.panelBlocks = arith::DivSIOp::create(
        b, loc, sub(add(shape.tl2Blocks, shape.panels), constant(1)),
        shape.panels);
    Value lastPanel = sub(shape.panels, constant(1));
    shape.lastBlocks =
        sub(shape.tl2Blocks, mulValue(lastPanel, shape.panelBlocks));
    shape.fullPiece = mul(shape.panelBlocks, kBlockBytes);
    shape.tl1Offset = mul(shape.lastBlocks, kBlockBytes);
    shape.headerOffset =
        add(shape.tl1Offset, mul(shape.tl1Vectors, kVectorBytes));
    shape.lastPiece = add(shape.headerOffset, kHeaderBytes);
  }

  /// buildTables with the run-time K.
  void buildTablesAny(Value column, int64_t base) {
    Value row = mulValue(column, shape.kp);
    forLoop(constant(0), mul(shape.tl2Blocks, 4), 1, [&](Value j) {
      buildVectorTables(add(row, mul(j, 24)), add(mul(j, kTableBytes), base),
                        /*width=*/3);
    });
    Value k2 = mul(shape.tl2Blocks, kBlockWeights);
    Value first = add(mul(shape.tl2Blocks, 4 * kTableBytes), base);
    forLoop(constant(0), shape.tl1Vectors, 1, [&](Value j) {
      buildVectorTables(add(add(row, mul(j, kTl1Weights)), k2),
                        add(mul(j, kTableBytes), first), /*width=*/2);
    });
  }

  /// Tiles [batch, batchEnd) of a thread: the full panels, then the last.
  void buildBatch(Value batch, Value batchEnd, Value firstColumn,
                  int64_t columns) {
    int64_t group = plan.tilesPerGroup;
    Value groupsEnd = tileGroupsEnd(batch, batchEnd, group);
    Value lastPanel = sub(shape.panels, constant(1));
    auto tilesOf = [&](Value panel, bool last) {
      if (group > 1)
        forLoop(batch, groupsEnd, group, [&](Value t) {
          buildPanelTiles(t, group, batch, firstColumn, columns, panel, last);
        });
      forLoop(groupsEnd, batchEnd, 1, [&](Value t) {
        buildPanelTiles(t, 1, batch, firstColumn, columns, panel, last);
      });
    };
    forLoop(constant(0), lastPanel, 1, [&](Value panel) {
      // The thread's run of this panel, then that of the next.
      Value offset = mulValue(panel, mulValue(shape.numTiles, shape.fullPiece));
      Value next = add(offset, mulValue(shape.numTiles, shape.fullPiece));
      Value nextPiece = arith::SelectOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                add(panel, 1), lastPanel),
          shape.lastPiece, shape.fullPiece);
      Value runEnd = add(mulValue(batchEnd, shape.fullPiece), offset);
      run = {runEnd, sub(add(mulValue(batch, nextPiece), next), runEnd)};
      tilesOf(panel, /*last=*/false);
    });
    run = PanelRun();
    tilesOf(lastPanel, /*last=*/true);
  }

  /// Panel `panel` (the last one when `last`) of `tiles` tiles from
  /// `firstTile` (of the batch from `batch`) for `columns` activation rows:
  /// buildTiles with run-time offsets and bounds.
  void buildPanelTiles(Value firstTile, int64_t tiles, Value batch,
                       Value firstColumn, int64_t columns, Value panel,
                       bool last) {
    Value piece = last ? shape.lastPiece : shape.fullPiece;
    Value panelOffset =
        mulValue(panel, mulValue(shape.numTiles, shape.fullPiece));
    SmallVector<Value> tileBase;
    for (int64_t t = 0; t < tiles; ++t)
      tileBase.push_back(
          add(mulValue(add(firstTile, t), piece), panelOffset));
    SmallVector<LutAcc> accs(tiles * columns * plan.accsPerColumn());
    // The first panel starts from 0, the others from the batch's sums.
    Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                        panel, constant(0));
    loadPartials(firstTile, batch, columns, accs, first);
    Value firstBlock = mulValue(panel, shape.panelBlocks);
    Value blocks = last ? shape.lastBlocks : shape.panelBlocks;
    // TL2 block b of the panel at (b - firstBlock) * 320 in its piece.
    Value shift = sub(constant(0), mul(firstBlock, kBlockBytes));
    dynamicLutLoop(firstBlock, blocks, plan.blocksPerIteration, accs,
                   [&](Value block) {
                     tl2Block(tileBase, columns, block, 0, accs, shift);
                   });
    if (!last)
      return spillPartials(firstTile, batch, columns, accs);
    dynamicLutLoop(constant(0), shape.tl1Vectors, plan.vectorsPerIteration,
                   accs, [&](Value vector) {
                     tl1Vector(tileBase, columns, vector, accs);
                   });
    storeOutputs(tileBase, firstTile, firstColumn, columns, accs);
  }

  /// Steps [start, start + count) with `accs` carried: whole iterations of
  /// `perIteration` steps in one scf.for, the rest one at a time.
  void dynamicLutLoop(Value start, Value count, int64_t perIteration,
                      SmallVectorImpl<LutAcc> &accs,
                      function_ref<void(Value)> body) {
    SmallVector<Value> state;
    packLutAccs(accs, state);
    Value iterations = div(count, perIteration);
    carriedRange(constant(0), iterations, 1, state, [&](Value i) {
      unpackLutAccs(state, accs);
      Value base = add(mul(i, perIteration), start);
      for (int64_t s = 0; s < perIteration; ++s)
        body(add(base, s));
      packLutAccs(accs, state);
    });
    if (perIteration > 1)
      carriedRange(add(mul(iterations, perIteration), start),
                   add(start, count), 1, state,
                   [&](Value step) {
                     unpackLutAccs(state, accs);
                     body(step);
                     packLutAccs(accs, state);
                   });
    unpackLutAccs(state, accs);
  }

  /// prefetchAhead against the run-time size of the weights.
  void prefetchAheadDynamic(Value offset, int64_t lines) {
    if (plan.prefetchBytes == 0)
      return;
    Value ahead = add(offset, plan.prefetchBytes);
    if (run.end) {
      Value past = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                         ahead, run.end);
      ahead =
          arith::SelectOp::create(b, loc, past, add(ahead, run.jump), ahead);
    }
    Value last = sub(shape.totalBytes, constant(lines * 64));
    Value inside =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, ahead, last);
    Value at = arith::SelectOp::create(b, loc, inside, ahead, last);
    for (int64_t line = 0; line < lines; ++line)
      UkPrefetchOp::create(b, loc, codes, add(at, line * 64));
  }

  const LutPlan &plan;
  Value codes, xq, xScales, y, n, tileBegin, tileEnd, wScale, tables, partials;
  Value mArg, kArg; // any-shape kernels: M and K (i64)
  LutShape shape;   // any-shape kernels: the run-time sizes
  /// This thread's run of the current chunk's panel (null: no jump).
  PanelRun run;
  /// The accumulator set of the next index vector: consecutive vectors
  /// take turns among the plan's `accSets`.
  int64_t nextSet = 0;
  /// Lane order: the int16 pair sums (low, high table bytes) of the current
  /// block or TL1 vector per (tile, column, half of the rows).
  SmallVector<LutAcc> words;
  VectorType byteReg, i32Reg, f32Reg;
};

class LowerLutElementwisePass
    : public lowbit::impl::LowBitLowerLutElementwiseBase<
          LowerLutElementwisePass> {
public:
  using LowBitLowerLutElementwiseBase::LowBitLowerLutElementwiseBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    FailureOr<KernelToLower> kernel =
        findKernelToLower<LutElementwiseAttr>(func);
    if (failed(kernel))
      return signalPassFailure();
    if (!kernel->op)
      return;
    FailureOr<LutPlan> plan = makePlan(kernel->op, *kernel->target);
    if (failed(plan))
      return signalPassFailure();
    rewriteFunction(func, *plan);
  }

private:
  static FailureOr<LutPlan> makePlan(MpGemmOp op, const TargetInfo &target) {
    LayoutAttr layout = op.getLayout();
    if (!isLutInterleaved(layout))
      return op.emitOpError()
             << "needs the interleaved tl1/tl2 layout of lut_abi.h "
                "(interleave = 16), got "
             << layout << "; run lowbit-pack-layout first";
    if (failed(checkByteTableLookup(op, target, kVectorBytes,
                                    "lowbit-lower-lut-elementwise")))
      return failure();
    // The kernel reads the lane order the layout records (pack-layout took
    // it from the same target); a layout for another target is an error.
    if ((layout.getLaneOrder() == LaneOrder::Lanes) != target.hasLutLaneOrder())
      return op.emitOpError()
             << "has a layout in lane_order "
             << stringifyLaneOrder(layout.getLaneOrder())
             << ", but the target's lut-elementwise kernels read "
             << (target.hasLutLaneOrder() ? "lanes" : "rows")
             << " (lut_abi.h); run lowbit-pack-layout for this target";
    int64_t registerBytes = target.getRegisterBytes();
    auto config = cast<LutElementwiseAttr>(op.getConfigAttr());
    if (isAnyShape(op))
      return makeAnyShapePlan(op, target, config);
    LutPlan plan;
    plan.tl2 = layout.getKind() == LayoutKind::TL2;
    plan.m = op.getM();
    int64_t k = op.getK();
    plan.kp = llvm::alignTo(k, 32);
    int64_t k2 = plan.tl2 ? k / kBlockWeights * kBlockWeights : 0;
    plan.tl2Blocks = k2 / kBlockWeights;
    plan.tl1Vectors = llvm::divideCeil(k - k2, kTl1Weights);
    plan.tileBytes = getLutTileBytes(layout.getKind(), k);
    plan.numTiles = llvm::divideCeil(plan.m, kTileRows);
    plan.tilesPerGroup = config.getBm() / kTileRows;
    plan.bn = config.getBn();
    plan.blocksPerIteration = plan.tl2 ? config.getBk() / kBlockWeights : 1;
    plan.vectorsPerIteration = plan.tl2 ? std::max<int64_t>(plan.tl1Vectors, 1)
                                        : config.getBk() / kTl1Weights;
    plan.registerBytes = registerBytes;
    plan.halves = kVectorBytes / registerBytes;
    plan.lanes = registerBytes / 4;
    plan.prefetchBytes = target.getPrefetchBytes();
    plan.laneOrder = op.getLayout().getLaneOrder() == LaneOrder::Lanes;
    LutAccumulators accs =
        planLutAccumulators(target, plan.halves, plan.tilesPerGroup, plan.bn);
    plan.accSets = accs.sets;
    plan.nibblePairs = accs.nibblePairs;
    plan.vectorLoop =
        !plan.laneOrder && accs.nibblePairs == 1 && accs.sets == 1;
    // The panel count whose panels come nearest kPanelBlocks (lut_abi.h;
    // measured on Zen 5, 2 threads, cold 3200x3200: 2 panels of 17 blocks
    // 3-4% faster than 3 of 11 against i2s across core complexes, equal on
    // one; 4 of 23 at K = 8640 lost 8% against 6 of 15).
    plan.panels = lowbit_lut_panels(plan.tl2Blocks);
    plan.panelBlocks = lowbit_lut_panel_blocks(plan.tl2Blocks);
    // Each panel in one chunk, or in equal ones whose tables fit.
    int64_t blockTables = 4 * kTableBytes * plan.bn;
    for (int64_t panel = 0; panel < plan.panels; ++panel) {
      int64_t blocks = plan.blocksOf(panel);
      int64_t pieces = 1;
      if (blocks * blockTables > kL1TableBytes)
        pieces = llvm::divideCeil(
            blocks, std::max<int64_t>(1, kChunkTableBytes / blockTables));
      int64_t per = llvm::divideCeil(blocks, pieces);
      for (int64_t first = 0; first < blocks; first += per)
        plan.chunks.push_back({panel, panel * plan.panelBlocks + first,
                               std::min(per, blocks - first)});
    }
    if (plan.chunks.empty()) // no TL2 blocks: the TL1 vectors alone
      plan.chunks.push_back({0, 0, 0});
    if (plan.bn * plan.columnTableBytes() +
            (plan.chunks.size() > 1
                 ? plan.numTiles * plan.bn * plan.partialBytes()
                 : 0) >
        kMaxStackBytes)
      return op.emitOpError()
             << "the tables of bn = " << plan.bn << " activation rows take "
             << plan.bn * plan.columnTableBytes() << " bytes for K = " << k
             << ", more than the " << kMaxStackBytes
             << " a kernel keeps on its stack";
    return plan;
  }

  /// The plan of an any-shape kernel: what does not depend on M and K,
  /// with the tables of kAnyShapeMaxK.
  static FailureOr<LutPlan> makeAnyShapePlan(MpGemmOp op,
                                             const TargetInfo &target,
                                             LutElementwiseAttr config) {
    LutPlan plan;
    plan.anyShape = true;
    plan.tl2 = op.getLayout().getKind() == LayoutKind::TL2;
    int64_t k = kAnyShapeMaxK;
    int64_t k2 = plan.tl2 ? k / kBlockWeights * kBlockWeights : 0;
    plan.tl2Blocks = k2 / kBlockWeights;
    plan.tl1Vectors = llvm::divideCeil(k - k2, kTl1Weights);
    plan.tilesPerGroup = config.getBm() / kTileRows;
    plan.bn = config.getBn();
    plan.blocksPerIteration = plan.tl2 ? config.getBk() / kBlockWeights : 1;
    // TL2's K remainder is a few TL1 vectors: one per iteration.
    plan.vectorsPerIteration = plan.tl2 ? 1 : config.getBk() / kTl1Weights;
    plan.registerBytes = target.getRegisterBytes();
    plan.halves = kVectorBytes / plan.registerBytes;
    plan.lanes = plan.registerBytes / 4;
    plan.prefetchBytes = target.getPrefetchBytes();
    plan.laneOrder = op.getLayout().getLaneOrder() == LaneOrder::Lanes;
    LutAccumulators accs =
        planLutAccumulators(target, plan.halves, plan.tilesPerGroup, plan.bn);
    plan.accSets = accs.sets;
    plan.nibblePairs = accs.nibblePairs;
    plan.vectorLoop =
        !plan.laneOrder && accs.nibblePairs == 1 && accs.sets == 1;
    if (plan.bn * plan.columnTableBytes() +
            kAnyShapeBatchTiles * plan.bn * plan.partialBytes() >
        kMaxStackBytes)
      return op.emitOpError()
             << "the tables of bn = " << plan.bn << " activation rows take "
             << plan.bn * plan.columnTableBytes()
             << " bytes for the any-shape K limit " << kAnyShapeMaxK
             << ", more than the " << kMaxStackBytes
             << " a kernel keeps on its stack";
    return plan;
  }

  static void rewriteFunction(func::FuncOp func, const LutPlan &plan) {
    rewriteKernelFunction(
        func,
        [&](OpBuilder &b, ValueRange args) {
          LutKernelBuilder(b, func.getLoc(), plan, args).build();
        },
        plan.anyShape);
  }
};

} // namespace
