//===- LowerLutBitserial.cpp - bit-serial LUT (T-MAC) mpgemm --------------===//
//
// Rewrites a function `@k(x, packed, [scales]) { return lowbit.mpgemm }`
// with a lut_bitserial config and the bit-plane layout of bitserial_abi.h
// into a kernel of kernel_abi.h's signature: a prologue that builds the
// int16 ±1 tables of every group of 4 activations (lowbit.uk.lut_tables
// width 4 into a stack buffer, the table form of lut_abi.h), then per tile
// group, K first (by bitserial_abi.h's K panels, whose tables stay in L1,
// over the thread's tiles, their partial sums spilled between the panels),
// one lowbit.uk.lut_dot per bit plane vector and nibble
// with the plane weight 2^p as its multiplier bytes (the table of a block
// serves every plane), int32 sums whose high halves start at minus the
// table bias, lowbit.uk.lut_combine, the linear transform of
// bitserial_abi.h, and the ternary or per-block group scaling. Nothing here
// depends on the ISA. With dynamic M and K (an any-shape kernel,
// kernel_abi.h's lowbit_any_kernel_fn) the same loops run over run-time
// bounds: the blocks, tiles and K panels computed from the M and K
// arguments as bitserial_abi.h (pack_bitserial) lays them out, the panels
// in an scf.for.
//
//===----------------------------------------------------------------------===//

#include "lowbit/Dialect/LowBit/Transforms/Passes.h"

#include "KernelLoopBuilder.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Iterators.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::lowbit {
#define GEN_PASS_DEF_LOWBITLOWERLUTBITSERIAL
#include "lowbit/Dialect/LowBit/Transforms/Passes.h.inc"
} // namespace mlir::lowbit

using namespace mlir;
using namespace mlir::lowbit;

/// bitserial_abi.h: rows per tile, weights per block, bytes per plane
/// vector and per block of int16 tables (lut_dot's 128 bytes per nibble)
/// or of int8 tables (lut_dot8's 64 bytes per nibble).
static constexpr int64_t kTileRows = LOWBIT_TILE_ROWS;
static constexpr int64_t kBlockK = LOWBIT_BITSERIAL_BLOCK;
static constexpr int64_t kVectorBytes = LOWBIT_BITSERIAL_VECTOR_BYTES;
static constexpr int64_t kTableBytes = 256;
static constexpr int64_t kTable8Bytes = 128;
/// int8 tables: bytes of multipliers per act_group (4 per plane).
static constexpr int64_t kMultiplierBytes = 16;
/// Groups of 4 weights per block, i.e. lookups per int32 lane and plane.
static constexpr int64_t kGroupsPerBlock = 8;
/// The largest table buffer a kernel keeps on its stack.
static constexpr int64_t kMaxStackBytes = 2 << 20;
/// bitserial_abi.h: the most blocks per K panel (16 KiB of int16 tables,
/// as lut-elementwise's panels). Warm, one thread, the size hardly matters
/// (w1g128 1024x14336: panels of 64 blocks 43-45 GB/s, of 128 45-46); cold
/// the weight stream in flight competes with the tables for the L1D
/// (Zen 5, 2 threads, w1g128 at K = 4096 and 14336, alternating runs: 0.73
/// of the read bandwidth with 128 blocks against 0.81-0.84 with 64 and
/// 0.78-0.80 with 32 across core complexes, 0.90 against 0.94-0.98 on one).
static constexpr int64_t kPanelBlocks = LOWBIT_BITSERIAL_PANEL_BLOCKS;
/// The partial sums a kernel keeps between K panels: its tiles sweep the
/// panels in ranges of as many tiles as this holds (at least 16), in
/// practice the thread's whole range (64 bytes per tile and activation row
/// for the group formats, 8 times that for i2s). Measured on Zen 5, 2
/// threads, cold w1g128 at K = 14336: whole ranges 0.94 of the read limit
/// against 0.87-0.88 for ranges of 16 tiles (tl2: ranges of 16 tiles 5-15%
/// slower than whole ones).
static constexpr int64_t kPartialBytes = 512 << 10;

namespace {

struct BitserialPlan {
  /// An any-shape kernel: M and K are arguments (BitserialShape); `blocks`
  /// is kAnyShapeMaxLutK's (it sizes the table buffer and strides its
  /// columns), m, kp, tileBytes, numTiles, panels and panelBlocks are
  /// unused.
  bool anyShape = false;
  Encoding encoding;
  int64_t planes = 0;
  int64_t m = 0, kp = 0, blocks = 0;
  int64_t group = 0; // weights per scale (0: ternary)
  int64_t tileBytes = 0, numTiles = 0;
  int64_t tilesPerGroup = 1, bn = 1;
  int64_t blocksPerIteration = 1;
  int64_t registerBytes = 0, halves = 1, lanes = 0;
  int64_t prefetchBytes = 0;
  /// Targets with lut_abi.h's lane order (TargetInfo::hasLutLaneOrder),
  /// whose weights pack-layout writes in bitserial_abi.h's lane order
  /// (#lowbit.layout lane_order = lanes): each plane vector is looked up as
  /// loaded, as lut-elementwise does there; per (tile, activation row) one
  /// int32 accumulator per quarter of the rows. With two planes
  /// (planePairs) the plane pairs of a row are multiplied by 1, 2 (T-MAC's
  /// AVX2 formulation).
  bool laneOrder = false, planePairs = false;
  /// laneOrder with int8 tables: the int16 sums of a run of blocks are
  /// widened times the act_group's multiplier a, so a run ends where an
  /// act_group does: after every `actGroupRun` blocks from the start of a
  /// loop iteration (act_groups whole iterations, K panels whole
  /// act_groups), else after every block (1).
  int64_t actGroupRun = 1;
  /// Sets of accumulators that consecutive plane vectors take turns on, so
  /// that the dot chains hide the dot latency, and pairs per (set, register
  /// half): one per nibble, or one for both.
  int64_t accSets = 1, nibblePairs = 2;
  /// int8 tables (table_bits = 8): 32-k blocks per act_group, act_groups
  /// per row (the last one may be partial).
  bool int8Tables = false;
  int64_t blocksPerActGroup = 1, actGroups = 0;
  /// bitserial_abi.h's K panels: `panels` of `panelBlocks` blocks (the last
  /// may have fewer), swept by ranges of `rangeTiles` tiles.
  int64_t panels = 1, panelBlocks = 0, rangeTiles = 1;

  int64_t blocksOf(int64_t panel) const {
    return std::min(panelBlocks, blocks - panel * panelBlocks);
  }
  /// The bytes of a tile's piece of `panel` (bitserial_abi.h piece_c).
  int64_t pieceBytes(int64_t panel) const {
    return blocksOf(panel) * planes * kVectorBytes;
  }
  /// Where `panel` starts: every panel before it has panelBlocks blocks.
  int64_t panelOffset(int64_t panel) const {
    return panel * numTiles * panelBlocks * planes * kVectorBytes;
  }
  /// Blocks per scale group (1 for ternary: no scales), and for the group
  /// formats the element where the scales (zeros) of `panel` start (panels
  /// are whole groups).
  int64_t blocksPerScale() const { return group > 0 ? group / kBlockK : 1; }
  int64_t scalePanelOffset(int64_t panel) const {
    return panel * numTiles * (panelBlocks / blocksPerScale()) * kTileRows;
  }
  /// What a (tile, activation row) keeps between panels: its accumulators
  /// (ternary: sums over the whole row) or its f32 outputs (group formats).
  int64_t partialBytes() const {
    if (!isTernary())
      return halves * registerBytes;
    return accsPerColumn() * (int8Tables || laneOrder ? 1 : 2) * registerBytes;
  }

  bool isTernary() const { return encoding == Encoding::Ternary; }
  /// int8 tables: the table scale of an act_group is a / d (a an integer)
  /// with d = 127 / (4 * 2^(P-1)) (31, 15, 7, 3 for 1..4 planes), the
  /// finest steps whose largest multiplier a * 2^(P-1) (a <= ceil(d * 512
  /// / 127)) stays below 128 (unsigned for vpdpbusd, signed for sdot).
  int64_t scaleDenominator() const { return 127 / (4 << (planes - 1)); }
  bool hasZeros() const { return encoding == Encoding::Unsigned; }
  /// int8 tables looked up in lane order (lowbit.uk.lut_lookup).
  bool int8Lanes() const { return int8Tables && laneOrder; }
  /// int8Lanes for a group format: a block's int16 sums are folded into
  /// rows before they are widened (BitserialKernelBuilder::widenRun).
  bool foldsRows() const { return int8Lanes() && !isTernary(); }
  int64_t blockTableBytes() const {
    return int8Tables ? kTable8Bytes : kTableBytes;
  }
  /// The tables of a row's blocks, then (int8) its multiplier bytes.
  int64_t columnTableBytes() const {
    return blocks * blockTableBytes() + actGroups * kMultiplierBytes;
  }
  /// What the int32 dots the kernel scales stand for: D (or A_0 for w1gG)
  /// times 1 with int16 tables; with int8 tables the sums are in units of
  /// 1 / scaleDenominator() and the halving of 2 D is left to the float
  /// scaling.
  int64_t dotUnit() const {
    if (!int8Tables)
      return 1;
    return encoding == Encoding::Binary ? scaleDenominator()
                                        : 2 * scaleDenominator();
  }
  /// Accumulator pairs per (tile, activation row): per set, register half
  /// of a vector and nibble.
  int64_t accsPerColumn() const {
    return laneOrder ? kLaneQuarters : accSets * halves * nibblePairs;
  }
  /// (2^P - 1): the weight of S in 2 D = sum_p 2^p A_p + (2^P - 1) S, and
  /// the sum of the plane weights.
  int64_t sumWeight() const { return (int64_t(1) << planes) - 1; }
};

/// The run-time sizes of an any-shape kernel, from its M and K arguments
/// (bitserial_abi.h's formulas, as pack_bitserial computes them).
struct BitserialShape {
  Value m, blocks, numTiles, totalBytes;
  Value panels, panelBlocks, lastBlocks;
  /// Bytes of a tile's piece of a full and of the last panel, of a full
  /// panel of all tiles, and elements of a full panel's scales.
  Value fullPiece, lastPiece, panelBytes, panelScales;
};

class BitserialKernelBuilder : KernelLoopBuilder {
public:
  BitserialKernelBuilder(OpBuilder &b, Location loc, const BitserialPlan &plan,
                         ValueRange args)
      : KernelLoopBuilder(b, loc), plan(plan), codes(args[0]), scales(args[1]),
        zeros(args[2]), xq(args[3]), xScales(args[4]), xSums(args[5]),
        y(args[6]), n(args[7]), tileBegin(args[8]), tileEnd(args[9]),
        wScale(args[10]) {
    if (plan.anyShape)
      computeShape(args[11], args[12]);
    MLIRContext *ctx = b.getContext();
    byteReg = VectorType::get({plan.registerBytes}, IntegerType::get(ctx, 8));
    i32Reg = VectorType::get({plan.lanes}, IntegerType::get(ctx, 32));
    f32Reg = VectorType::get({plan.lanes}, Float32Type::get(ctx));
  }

  void build() {
    tables = stackBuffer(plan.bn * plan.columnTableBytes());
    if (plan.panels > 1 || plan.anyShape)
      partials = stackBuffer(plan.rangeTiles * plan.bn * plan.partialBytes());
    if (plan.planePairs) // bytes 1, 2, 1, 2, ...: planes 0 and 1 of a row
      planeWeights.push_back(UkZipOp::create(b, loc, byteReg,
                                             splat(byteReg, 1),
                                             splat(byteReg, 2), false));
    else if (!plan.int8Tables || plan.laneOrder)
      for (int64_t p = plan.laneOrder ? 0 : 1; p < plan.planes; ++p)
        planeWeights.push_back(splat(byteReg, int64_t(1) << p));
    if (plan.anyShape)
      prefetchStart(codes, mulValue(toIndex(tileBegin), shape.fullPiece),
                    plan.prefetchBytes, shape.totalBytes);
    else
      prefetchStart(codes, mul(toIndex(tileBegin), plan.pieceBytes(0)),
                    plan.prefetchBytes, plan.numTiles * plan.tileBytes);
    forColumnBlocks(n, plan.bn, [&](Value firstColumn, int64_t columns) {
      buildColumns(firstColumn, columns);
    });
  }

private:
  /// A lowbit.uk.stack_buffer of `bytes` bytes where the C++ compiler
  /// places it.
  Value stackBuffer(int64_t bytes) { return createStackBuffer(b, loc, bytes); }

  /// One panel of a group of tiles: its blocks [firstBlock, firstBlock +
  /// blocks), whether it is the last, and (more than one panel) the index
  /// of the group's first tile in the partial sums. Any-shape kernels: the
  /// panel, its first block and its blocks are run-time values (anyPanel,
  /// ...; panel, firstBlock and blocks are 0, the tiles' bases count from
  /// the first block).
  struct PanelSweep {
    int64_t panel, firstBlock, blocks;
    bool last;
    Value partialTile = {};
    Value anyPanel = {}, anyFirstBlock = {}, anyBlocks = {};
  };

  /// The run-time sizes (BitserialShape) from the M and K arguments.
  void computeShape(Value mArg, Value kArg) {
    auto select = [&](arith::CmpIPredicate pred, Value lhs, Value rhs,
                      Value ifTrue, Value ifFalse) {
      Value cond = arith::CmpIOp::create(b, loc, pred, lhs, rhs);
      return arith::SelectOp::create(b, loc, cond, ifTrue, ifFalse);
    };
    auto ceilDiv = [&](Value lhs, Value rhs) {
      return arith::DivSIOp::create(b, loc, sub(add(lhs, rhs), constant(1)),
                                    rhs);
    };
    int64_t blockBytes = plan.planes * kVectorBytes;
    shape.m = toIndex(mArg);
    shape.blocks = div(add(toIndex(kArg), kBlockK - 1), kBlockK);
    shape.numTiles = div(add(shape.m, kTileRows - 1), kTileRows);
    shape.totalBytes = mul(mulValue(shape.numTiles, shape.blocks), blockBytes);
    // lowbit_bitserial_panel_blocks and lowbit_bitserial_panels of
    // bitserial_abi.h in IR: guess = max(1, ceil(blocks / 64)); panels of
    // ceil(blocks / guess) blocks rounded up to whole scale groups; the last
    // has the rest.
    Value guess = div(add(shape.blocks, kPanelBlocks - 1), kPanelBlocks);
    guess = select(arith::CmpIPredicate::slt, guess, constant(1), constant(1),
                   guess);
    int64_t perScale = plan.blocksPerScale();
    shape.panelBlocks =
        mul(div(add(ceilDiv(shape.blocks, guess), perScale - 1), perScale),
            perScale);
    shape.panels = ceilDiv(shape.blocks, shape.panelBlocks);
    shape.lastBlocks =
        sub(shape.blocks,
            mulValue(sub(shape.panels, constant(1)), shape.panelBlocks));
    shape.fullPiece = mul(shape.panelBlocks, blockBytes);
    shape.lastPiece = mul(shape.lastBlocks, blockBytes);
    shape.panelBytes = mulValue(shape.numTiles, shape.fullPiece);
    shape.panelScales =
        mul(mulValue(shape.numTiles, div(shape.panelBlocks, perScale)),
            kTileRows);
  }

  /// The blocks of a row: Kp / 32.
  Value blockCount() {
    return plan.anyShape ? shape.blocks : constant(plan.blocks);
  }
  /// Where activation row `column` starts in xq: column * Kp.
  Value activationRow(Value column) {
    if (plan.anyShape)
      return mul(mulValue(column, shape.blocks), kBlockK);
    return mul(column, plan.kp);
  }
  /// Where block `block` of activation row `column` has its sum and scale
  /// (group formats).
  Value activationBlock(Value column, Value block) {
    if (plan.anyShape)
      return add(mulValue(column, shape.blocks), block);
    return add(mul(column, plan.blocks), block);
  }
  /// Where output row `row` of activation row `column` lies in y, and how
  /// many of the lanes from there to store (null: all).
  Value outputAt(Value column, Value row) {
    if (plan.anyShape)
      return add(mulValue(column, shape.m), row);
    return add(mul(column, plan.m), row);
  }
  Value rowsLeft(Value row) {
    if (plan.anyShape)
      return storeCount(row, shape.m, plan.lanes);
    return storeCount(row, plan.m, plan.lanes);
  }

  //===--- Tables (the activation pre-pass) ---------------------------------//

  /// Builds the tables of `columns` activation rows, then sweeps every tile
  /// of [tile_begin, tile_end) over the whole K with them (K first: the
  /// tables stay in cache while the weights stream once).
  void buildColumns(Value firstColumn, int64_t columns) {
    for (int64_t c = 0; c < columns; ++c) {
      Value row = activationRow(add(firstColumn, c));
      if (plan.int8Tables) {
        buildInt8Tables(row, c);
        continue;
      }
      forLoop(constant(0), blockCount(), 1, [&](Value j) {
        UkLutTablesOp::create(
            b, loc, xq, add(row, mul(j, kBlockK)), tables,
            add(mul(j, kTableBytes), c * plan.columnTableBytes()),
            b.getI64IntegerAttr(4));
      });
    }
    Value begin = toIndex(tileBegin), end = toIndex(tileEnd);
    if (plan.anyShape)
      return sweepRanges(begin, end, firstColumn, columns);
    if (plan.panels == 1) {
      sweepPanel(begin, end, staticSweep(0), begin, firstColumn, columns);
      return;
    }
    // rangeTiles tiles at a time sweep panel 0, then 1, ...: in each, one
    // run of weights (their pieces) whose end the prefetches jump over to
    // the next run, the same tiles' piece of the next panel or, after the
    // last panel, the next tiles' piece of panel 0.
    forLoop(begin, end, plan.rangeTiles, [&](Value first) {
      Value last = rangeEnd(first, end);
      for (int64_t panel = 0; panel < plan.panels; ++panel) {
        bool lastPanel = panel == plan.panels - 1;
        int64_t next = lastPanel ? 0 : panel + 1;
        run = panelRun(lastPanel ? last : first, last, plan.pieceBytes(panel),
                       plan.panelOffset(panel), plan.pieceBytes(next),
                       plan.panelOffset(next));
        sweepPanel(first, last, staticSweep(panel), first, firstColumn,
                   columns);
      }
    });
  }

  /// min(first + rangeTiles, end): the end of the range from `first`.
  Value rangeEnd(Value first, Value end) {
    Value full = add(first, plan.rangeTiles);
    return arith::SelectOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, full, end),
        full, end);
  }

  /// buildColumns' panel sweeps in an any-shape kernel: the ranges of
  /// tiles, each over the full panels in an scf.for, then the last panel.
  void sweepRanges(Value begin, Value end, Value firstColumn, int64_t columns) {
    forLoop(begin, end, plan.rangeTiles, [&](Value first) {
      Value last = rangeEnd(first, end);
      Value lastPanel = sub(shape.panels, constant(1));
      forLoop(constant(0), lastPanel, 1, [&](Value panel) {
        Value offset = mulValue(panel, shape.panelBytes);
        Value nextIsLast = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::eq, add(panel, 1), lastPanel);
        Value nextPiece = arith::SelectOp::create(b, loc, nextIsLast,
                                                  shape.lastPiece,
                                                  shape.fullPiece);
        run = panelRun(first, last, shape.fullPiece, offset, nextPiece,
                       add(offset, shape.panelBytes));
        sweepPanel(first, last, dynamicSweep(panel, /*last=*/false), first,
                   firstColumn, columns);
      });
      // After the last panel, the next range's tiles of panel 0.
      run = panelRun(last, last, shape.lastPiece,
                     mulValue(lastPanel, shape.panelBytes), shape.fullPiece,
                     constant(0));
      sweepPanel(first, last, dynamicSweep(lastPanel, /*last=*/true), first,
                 firstColumn, columns);
    });
  }

  /// The tiles [begin, end) over the K panel of `sweep`, in groups of the
  /// plan's tilesPerGroup; their partial sums at their index from
  /// `partialBase`.
  void sweepPanel(Value begin, Value end, const PanelSweep &sweep,
                  Value partialBase, Value firstColumn, int64_t columns) {
    int64_t group = plan.tilesPerGroup;
    Value groupsEnd = tileGroupsEnd(begin, end, group);
    if (group > 1)
      forLoop(begin, groupsEnd, group, [&](Value t) {
        buildTiles(t, group, firstColumn, columns, sweep, partialBase);
      });
    forLoop(groupsEnd, end, 1, [&](Value t) {
      buildTiles(t, 1, firstColumn, columns, sweep, partialBase);
    });
  }

  /// The int8 tables of activation row `row` (its xq offset), table column
  /// c: per act_group, the largest sum of |x_i| over its groups of 4 gives
  /// a = max(1, ceil(d * max / 127)) (d = scaleDenominator()); entry e of a
  /// group is round(d * T[e] / a) (T[e] of bitserial_abi.h, rounded
  /// half away from zero in float, so entry 15 - e = -entry e is stored as
  /// the negation), and multiplier byte 4p + i is a * 2^p (lane order: the
  /// multiplier bytes start with the int16 words a, 0 that
  /// lowbit.uk.extend takes). Scalar code: it runs once per activation row
  /// and K.
  void buildInt8Tables(Value row, int64_t c) {
    int64_t full = plan.blocks / plan.blocksPerActGroup;
    int64_t tail = plan.blocks - full * plan.blocksPerActGroup;
    forLoop(constant(0), constant(full), 1, [&](Value g) {
      buildActGroupTables(row, c, g, plan.blocksPerActGroup);
    });
    if (tail > 0)
      buildActGroupTables(row, c, constant(full), tail);
  }

  void buildActGroupTables(Value row, int64_t c, Value actGroup,
                           int64_t blocks) {
    Type i32 = b.getI32Type(), i8 = b.getI8Type(), f32 = b.getF32Type();
    auto i32Const = [&](int64_t v) {
      return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
    };
    Value firstBlock = mul(actGroup, plan.blocksPerActGroup);
    // x_i of group g of block j (j relative to the act_group), as i32.
    auto activation = [&](Value j, Value g, int64_t i) {
      Value at =
          add(add(add(row, mul(add(firstBlock, j), kBlockK)), mul(g, 4)), i);
      Value x = memref::LoadOp::create(b, loc, xq, at);
      return arith::ExtSIOp::create(b, loc, i32, x);
    };
    auto select = [&](arith::CmpIPredicate pred, Value lhs, Value rhs,
                      Value ifTrue, Value ifFalse) {
      Value cond = arith::CmpIOp::create(b, loc, pred, lhs, rhs);
      return arith::SelectOp::create(b, loc, cond, ifTrue, ifFalse);
    };
    Value zero = i32Const(0);
    auto loop = scf::ForOp::create(b, loc, constant(0), constant(blocks),
                                   constant(1), ValueRange{zero});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value block = loop.getInductionVar();
      SmallVector<Value, 1> largest{loop.getRegionIterArgs()[0]};
      // A loop over the groups, not 8 copies (see the entries below).
      carriedLoop(kGroupsPerBlock, largest, [&](Value g) {
        Value sum = zero;
        for (int64_t i = 0; i < 4; ++i) {
          Value x = activation(block, g, i);
          Value negated = arith::SubIOp::create(b, loc, zero, x);
          Value magnitude =
              select(arith::CmpIPredicate::slt, x, zero, negated, x);
          sum = arith::AddIOp::create(b, loc, sum, magnitude);
        }
        largest[0] = select(arith::CmpIPredicate::sgt, sum, largest[0], sum,
                            largest[0]);
      });
      scf::YieldOp::create(b, loc, largest[0]);
    }
    Value scaled = arith::MulIOp::create(b, loc, loop.getResult(0),
                                         i32Const(plan.scaleDenominator()));
    Value ceil = arith::DivSIOp::create(
        b, loc, arith::AddIOp::create(b, loc, scaled, i32Const(126)),
        i32Const(127));
    Value one = i32Const(1);
    Value a = select(arith::CmpIPredicate::slt, ceil, one, one, ceil);
    Value reciprocal = arith::DivFOp::create(
        b, loc,
        arith::ConstantOp::create(b, loc,
                                  b.getF32FloatAttr(float(plan.scaleDenominator()))),
        arith::SIToFPOp::create(b, loc, f32, a));
    Value base = constant(c * plan.columnTableBytes());
    Value multipliers =
        add(base, add(mul(actGroup, kMultiplierBytes),
                      plan.blocks * kTable8Bytes));
    if (plan.laneOrder) {
      // a < 128: the bytes a, 0, 0, 0.
      Value zeroByte = arith::ConstantOp::create(b, loc, b.getI8IntegerAttr(0));
      for (int64_t i = 0; i < 4; ++i)
        memref::StoreOp::create(
            b, loc, i == 0 ? Value(arith::TruncIOp::create(b, loc, i8, a))
                           : zeroByte,
            tables, add(multipliers, i));
    } else {
      for (int64_t p = 0; p < 4; ++p) {
        Value weight = arith::TruncIOp::create(
            b, loc, i8, arith::ShLIOp::create(b, loc, a, i32Const(p)));
        for (int64_t i = 0; i < 4; ++i)
          memref::StoreOp::create(b, loc, weight, tables,
                                  add(multipliers, 4 * p + i));
      }
    }
    Value half = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.5f));
    Value minusHalf =
        arith::ConstantOp::create(b, loc, b.getF32FloatAttr(-0.5f));
    forLoop(constant(0), constant(blocks), 1, [&](Value j) {
      Value blockAt = add(base, mul(add(firstBlock, j), kTable8Bytes));
      // Group g of the block, its 16 entries at 16 g: a loop, not 8 copies
      // (unrolled, this was most of the kernel's C++).
      forLoop(constant(0), constant(kGroupsPerBlock), 1, [&](Value g) {
        SmallVector<Value, 4> xs;
        for (int64_t i = 0; i < 4; ++i)
          xs.push_back(activation(j, g, i));
        Value tableAt = add(blockAt, mul(g, 16));
        // Entries 0..7 (bit 3 clear: -x3), their mirrors 15..8.
        for (int64_t e = 0; e < 8; ++e) {
          Value entry = arith::SubIOp::create(b, loc, zero, xs[3]);
          for (int64_t i = 0; i < 3; ++i)
            entry = (e >> i) & 1
                        ? Value(arith::AddIOp::create(b, loc, entry, xs[i]))
                        : Value(arith::SubIOp::create(b, loc, entry, xs[i]));
          Value scaledEntry = arith::MulFOp::create(
              b, loc, arith::SIToFPOp::create(b, loc, f32, entry), reciprocal);
          Value rounding = select(arith::CmpIPredicate::slt, entry, zero,
                                  minusHalf, half);
          Value q = arith::FPToSIOp::create(
              b, loc, i32,
              arith::AddFOp::create(b, loc, scaledEntry, rounding));
          memref::StoreOp::create(b, loc,
                                  arith::TruncIOp::create(b, loc, i8, q),
                                  tables, add(tableAt, e));
          Value mirror = arith::SubIOp::create(b, loc, zero, q);
          memref::StoreOp::create(b, loc,
                                  arith::TruncIOp::create(b, loc, i8, mirror),
                                  tables, add(tableAt, 15 - e));
        }
      });
    });
  }

  /// `tiles` tiles from `firstTile` over the K panel of `panelSweep`.
  void buildTiles(Value firstTile, int64_t tiles, Value firstColumn,
                  int64_t columns, const PanelSweep &panelSweep,
                  Value partialBase) {
    PanelSweep sweep = panelSweep;
    SmallVector<Value> tileBase;
    if (plan.anyShape) {
      // Block b of the panel at (b - first block) * planes * 64 in a piece.
      Value piece = sweep.last ? shape.lastPiece : shape.fullPiece;
      Value offset =
          sub(mulValue(sweep.anyPanel, shape.panelBytes),
              mul(sweep.anyFirstBlock, plan.planes * kVectorBytes));
      for (int64_t t = 0; t < tiles; ++t)
        tileBase.push_back(add(mulValue(add(firstTile, t), piece), offset));
    } else {
      int64_t panel = sweep.panel;
      for (int64_t t = 0; t < tiles; ++t)
        tileBase.push_back(add(mul(add(firstTile, t), plan.pieceBytes(panel)),
                               plan.panelOffset(panel)));
    }
    if (plan.panels > 1 || plan.anyShape)
      sweep.partialTile = sub(firstTile, partialBase);
    if (plan.isTernary())
      buildTernary(firstTile, tileBase, firstColumn, columns, sweep);
    else
      buildGroups(firstTile, tileBase, firstColumn, columns, sweep);
  }

  PanelSweep staticSweep(int64_t panel) {
    return {panel, panel * plan.panelBlocks, plan.blocksOf(panel),
            panel == plan.panels - 1};
  }
  PanelSweep dynamicSweep(Value panel, bool last) {
    PanelSweep sweep{0, 0, 0, last};
    sweep.anyPanel = panel;
    sweep.anyFirstBlock = mulValue(panel, shape.panelBlocks);
    sweep.anyBlocks = last ? shape.lastBlocks : shape.panelBlocks;
    return sweep;
  }

  /// Sets each partial (`forEachPartial(fn)` calls fn(value, offset) for
  /// each) to the one kept from the previous panel, past the first panel
  /// (any-shape kernels: selected at run time); on the first it keeps its
  /// fresh value.
  template <typename ForEach>
  void resumePartials(const PanelSweep &sweep, VectorType type,
                      ForEach forEachPartial) {
    if (sweep.anyPanel) {
      Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          sweep.anyPanel, constant(0));
      forEachPartial([&](Value &v, Value at) {
        v = arith::SelectOp::create(b, loc, first, v,
                                    UkLoadOp::create(b, loc, type, partials,
                                                     at));
      });
    } else if (sweep.panel > 0) {
      forEachPartial([&](Value &v, Value at) {
        v = UkLoadOp::create(b, loc, type, partials, at);
      });
    }
  }

  /// The blocks of the panel of `sweep` in a loop that carries `accs`:
  /// steppedLoop, or for an any-shape kernel dynamicSteppedLoop from its
  /// first block.
  void panelBlocksLoop(const PanelSweep &sweep, SmallVectorImpl<LutAcc> &accs,
                       function_ref<void(Value)> body) {
    if (!sweep.anyPanel)
      return steppedLoop(sweep.firstBlock, sweep.blocks,
                         plan.blocksPerIteration, accs, body);
    dynamicSteppedLoop(sweep.anyBlocks, plan.blocksPerIteration, accs,
                       [&](Value block) {
                         body(add(block, sweep.anyFirstBlock));
                       });
  }

  /// panelBlocksLoop with the blocks of an iteration handed to `chunk`
  /// together (KernelLoopBuilder::chunkedLoop).
  void panelChunksLoop(const PanelSweep &sweep, SmallVectorImpl<LutAcc> &accs,
                       function_ref<void(Value, int64_t)> chunk) {
    if (!sweep.anyPanel)
      return chunkedLoop(sweep.firstBlock, sweep.blocks,
                         plan.blocksPerIteration, accs, chunk);
    dynamicChunkedLoop(sweep.anyBlocks, plan.blocksPerIteration, accs,
                       [&](Value first, int64_t count) {
                         chunk(add(first, sweep.anyFirstBlock), count);
                       });
  }

  /// The partial sums of (tile t of the group, column c), register `r` of
  /// its partialBytes().
  Value partialOffset(const PanelSweep &sweep, int64_t t, int64_t c,
                      int64_t r) {
    return add(mul(add(mul(add(sweep.partialTile, t), plan.bn), c),
                   plan.partialBytes()),
               r * plan.registerBytes);
  }

  //===--- Lookups ---------------------------------------------------------//

  /// The pair of (tile t, column c, set, register half h, nibble p).
  int64_t accIndex(int64_t t, int64_t columns, int64_t c, int64_t set,
                   int64_t h, int64_t p) const {
    return (t * columns + c) * plan.accsPerColumn() +
           (set * plan.halves + h) * plan.nibblePairs + p;
  }

  /// Fresh accumulators of `tiles` tiles and `columns` rows for a range of
  /// `groups` groups of 4 per row: zero, except that the high sums of set 0
  /// start at minus the bias of the tables' high bytes (128 per lookup,
  /// times the plane weight), so lut_combine gives sum_p 2^p A_p exactly.
  /// int8 tables: one zero sum each (lut_dot8 has no bias).
  /// Any-shape kernels: `anyGroups`, the run-time count, instead of
  /// `groups`.
  SmallVector<LutAcc> freshAccs(int64_t tiles, int64_t columns,
                                int64_t groups, Value anyGroups = Value()) {
    SmallVector<LutAcc> accs(tiles * columns * plan.accsPerColumn());
    Value zero = splat(i32Reg, 0);
    for (LutAcc &a : accs)
      a.low = zero;
    if (plan.int8Tables)
      return accs;
    // `perGroup` times the groups, in every lane.
    auto bias = [&](int64_t perGroup) {
      if (!anyGroups)
        return splat(i32Reg, perGroup * groups);
      Value lane = arith::IndexCastOp::create(b, loc, b.getI32Type(),
                                              mul(anyGroups, perGroup));
      return Value(vector::BroadcastOp::create(b, loc, i32Reg, lane));
    };
    Value highBias = bias(-128 * plan.sumWeight());
    for (LutAcc &a : accs)
      a.high = zero;
    if (plan.laneOrder) {
      // One sum low + 256 high per quarter, each lane of which sums half
      // the groups of its rows.
      Value laneBias = bias(-16384 * plan.sumWeight());
      for (LutAcc &a : accs) {
        a.low = laneBias;
        a.high = Value();
      }
      return accs;
    }
    for (int64_t t = 0; t < tiles; ++t)
      for (int64_t c = 0; c < columns; ++c)
        for (int64_t h = 0; h < plan.halves; ++h)
          accs[accIndex(t, columns, c, 0, h, 0)].high = highBias;
    return accs;
  }

  /// Looks up every plane vector of block `block` of every tile against the
  /// block's tables of every column: lut_dot per register half and nibble
  /// with the plane weight 2^p as multiplier (int8 tables: lut_dot8 with
  /// the act_group's multiplier bytes a * 2^p); consecutive plane vectors
  /// take turns among `sets` accumulator sets from set 0, each nibble on its
  /// own pair, or with `oneChain` both nibbles on the pair of nibble 0.
  void lookupBlock(ArrayRef<Value> tileBase, int64_t columns, Value block,
                   int64_t firstBlock, int64_t sets, bool oneChain,
                   MutableArrayRef<LutAcc> accs) {
    if (plan.planePairs)
      return lookupPlanePairs(tileBase, columns, block, 1, firstBlock, accs);
    Value tableBase = mul(block, plan.blockTableBytes());
    // int8 tables: the multipliers of plane p for column c at c * planes + p.
    SmallVector<Value> multipliers;
    if (plan.int8Tables && !plan.laneOrder) {
      Value at = add(mul(div(block, plan.blocksPerActGroup), kMultiplierBytes),
                     plan.blocks * kTable8Bytes);
      for (int64_t c = 0; c < columns; ++c)
        for (int64_t p = 0; p < plan.planes; ++p)
          multipliers.push_back(UkBroadcast4Op::create(
              b, loc, byteReg, tables,
              add(at, c * plan.columnTableBytes() + 4 * p)));
    }
    int64_t set = 0;
    for (auto [t, base] : llvm::enumerate(tileBase)) {
      Value blockAt = blockAddress(base, block, firstBlock);
      if (plan.laneOrder) {
        lookupBlockLanes(t, columns, block, blockAt, tableBase, accs);
        continue;
      }
      for (int64_t p = 0; p < plan.planes; ++p) {
        Value signs = p == 0 ? Value() : planeWeights[p - 1];
        for (int64_t h = 0; h < plan.halves; ++h) {
          Value w = UkLoadOp::create(
              b, loc, byteReg, codes,
              add(blockAt, p * kVectorBytes + h * plan.registerBytes));
          for (int64_t nibble = 0; nibble < 2; ++nibble)
            for (int64_t c = 0; c < columns; ++c) {
              LutAcc &a =
                  accs[accIndex(t, columns, c, set, h, oneChain ? 0 : nibble)];
              if (plan.int8Tables) {
                a.low = UkLutDot8Op::create(
                    b, loc, i32Reg, a.low, w, tables,
                    add(tableBase, c * plan.columnTableBytes() + 64 * nibble),
                    multipliers[c * plan.planes + p],
                    b.getBoolAttr(nibble == 1));
                continue;
              }
              auto op = UkLutDotOp::create(
                  b, loc, TypeRange{i32Reg, i32Reg}, a.low, a.high, w, tables,
                  add(tableBase, c * plan.columnTableBytes() + 128 * nibble),
                  signs, b.getBoolAttr(nibble == 1));
              a.low = op.getNewLow();
              a.high = op.getNewHigh();
            }
        }
        set = (set + 1) % sets;
      }
    }
  }

  /// lookupBlock in lane order: the planes of tile t's block `block` at
  /// `blockAt`, looked up with the multipliers 2^p into int16 sums (at most
  /// 2 x 2 x 255 x (2^P - 1) < 2^15 per lane; int8 tables 2 x 2 x 127 x
  /// (2^P - 1)), widened into each column's quarters.
  void lookupBlockLanes(int64_t t, int64_t columns, Value block,
                        Value blockAt, Value tableBase,
                        MutableArrayRef<LutAcc> accs) {
    SmallVector<LutAcc> words;
    for (int64_t c = 0; c < columns; ++c)
      words.append(freshWords());
    for (int64_t p = 0; p < plan.planes; ++p) {
      Value at = add(blockAt, p * kVectorBytes);
      Value w[2] = {UkLoadOp::create(b, loc, byteReg, codes, at),
                    UkLoadOp::create(b, loc, byteReg, codes,
                                     add(at, plan.registerBytes))};
      SmallVector<Value, 4> multipliers(4, planeWeights[p]);
      for (int64_t c = 0; c < columns; ++c)
        lookupLanes(w, tables, add(tableBase, c * plan.columnTableBytes()),
                    multipliers, MutableArrayRef(words).slice(2 * c, 2),
                    plan.int8Tables);
    }
    for (int64_t c = 0; c < columns; ++c)
      widenRun(ArrayRef(words).slice(2 * c, 2), accs, t * columns + c, block,
               c);
  }

  /// The int16 sums `words` of (tile, column) `tileColumn` (column c) after
  /// a run of blocks ending at `block` into its accumulators: widenLanes,
  /// with int8 tables times the act_group's multiplier; for the group
  /// formats' int8 tables (foldsRows: a run is one block) the two lanes
  /// folded in int16 first (at most 2 x 4 x 127 x 15 < 2^15) and each half
  /// of the rows widened times the multiplier into quarters 0 and 2, which
  /// combine takes as the rows.
  void widenRun(ArrayRef<LutAcc> words, MutableArrayRef<LutAcc> accs,
                int64_t tileColumn, Value block, int64_t c) {
    Value multiplier = tableMultiplier(block, c);
    if (!plan.foldsRows())
      return widenLanes(words, accs, tileColumn, multiplier);
    Value rows = UkLaneFoldOp::create(b, loc, words[0].low.getType(),
                                      words[0].low, words[1].low);
    for (int64_t h = 0; h < 2; ++h)
      accs[tileColumn * kLaneQuarters + 2 * h].low = UkWidenOp::create(
          b, loc, i32Reg, rows, multiplier, b.getI64IntegerAttr(h));
  }

  /// int8 tables in lane order: the words (a, 0) of the act_group of
  /// `block` for column c, by which lowbit.uk.extend widens its sums (null
  /// for int16 tables).
  Value tableMultiplier(Value block, int64_t c) {
    if (!plan.int8Tables)
      return {};
    Value at = add(mul(div(block, plan.blocksPerActGroup), kMultiplierBytes),
                   plan.blocks * kTable8Bytes + c * plan.columnTableBytes());
    return UkBroadcast4Op::create(b, loc, byteReg, tables, at);
  }

  /// Where block `block` of the tile whose panel piece starts at `base`
  /// lies (blocks from `firstBlock`), with the weights ahead of it
  /// prefetched.
  Value blockAddress(Value base, Value block, int64_t firstBlock) {
    Value blockAt = add(base, add(mul(block, plan.planes * kVectorBytes),
                                  -firstBlock * plan.planes * kVectorBytes));
    if (plan.anyShape)
      prefetchAhead(codes, blockAt, plan.prefetchBytes, shape.totalBytes,
                    plan.planes, run);
    else
      prefetchAhead(codes, blockAt, plan.prefetchBytes,
                    plan.numTiles * plan.tileBytes, plan.planes, run);
    return blockAt;
  }

  /// lookupBlock in bitserial_abi.h's lane order for the `count` blocks
  /// from `first`, tile after tile: register (half, hs) of a block holds
  /// rows 8 half .. + 7 with slots 2 hs, 2 hs + 1 (one per 16-byte lane) and
  /// both planes of a row side by side, so each nibble and table byte is
  /// one lut_lookup of the register as loaded and one dot2 with the bytes
  /// 1, 2 (the plane weights) into the int16 words of its half of the rows
  /// (4 x 255 x 3 per lane and block; int8 tables one table byte, 4 x 127 x
  /// 3), widened into each column's quarters as lookupBlockLanes's after
  /// runs of at most kWordBlocks blocks (int8 tables: of one act_group,
  /// times its multiplier): T-MAC's int16 accumulation across blocks
  /// (ternary formats, whose blocks share one activation scale; the group
  /// formats take one block at a time).
  void lookupPlanePairs(ArrayRef<Value> tileBase, int64_t columns, Value first,
                        int64_t count, int64_t firstBlock,
                        MutableArrayRef<LutAcc> accs) {
    constexpr int64_t kWordBlocks = 8; // 8 x 4 x 765 < 2^15
    auto wordReg = VectorType::get({plan.registerBytes / 2}, b.getI16Type());
    int64_t entryBytes = laneTableBytes(plan.int8Tables);
    auto runEnds = [&](int64_t s, int64_t run) {
      return run == kWordBlocks || s == count - 1 ||
             (plan.int8Tables && (s + 1) % plan.actGroupRun == 0);
    };
    for (auto [t, base] : llvm::enumerate(tileBase)) {
      SmallVector<LutAcc> words;
      int64_t run = 0;
      for (int64_t s = 0; s < count; ++s) {
        if (run++ == 0)
          for (int64_t c = 0; c < columns; ++c)
            words.append(freshWords());
        Value block = add(first, s);
        Value blockAt = blockAddress(base, block, firstBlock);
        Value tableBase = mul(block, plan.blockTableBytes());
        for (int64_t half = 0; half < 2; ++half)
          for (int64_t hs = 0; hs < 2; ++hs) {
            Value w = UkLoadOp::create(
                b, loc, byteReg, codes,
                add(blockAt, (2 * half + hs) * plan.registerBytes));
            for (int64_t c = 0; c < columns; ++c)
              for (int64_t nibble = 0; nibble < 2; ++nibble)
                for (int64_t x = 0; x < entryBytes; ++x) {
                  Value looked = UkLutLookupOp::create(
                      b, loc, byteReg, w, tables,
                      add(tableBase,
                          c * plan.columnTableBytes() +
                              laneTableOffset(plan.int8Tables, nibble, x, hs)),
                      nibble == 1);
                  Value pairs =
                      dot2(looked, planeWeights[0], wordReg, plan.int8Tables);
                  LutAcc &word = words[2 * c + half];
                  Value &sum = x == 0 ? word.low : word.high;
                  sum = sum ? arith::AddIOp::create(b, loc, sum, pairs) : pairs;
                }
          }
        if (runEnds(s, run)) {
          for (int64_t c = 0; c < columns; ++c)
            widenRun(ArrayRef(words).slice(2 * c, 2), accs, t * columns + c,
                     block, c);
          words.clear();
          run = 0;
        }
      }
    }
  }

  /// sum_p 2^p A_p of rows [h * lanes, ..) of (tile t, column c): the
  /// lut_combine of the first `sets` sets, of `nibbles` pairs each (int8
  /// tables: the sum of the lut_dot8 sums, scaleDenominator() times it).
  Value combine(ArrayRef<LutAcc> accs, int64_t sets, int64_t nibbles, int64_t t,
                int64_t columns, int64_t c, int64_t h) {
    if (plan.foldsRows())
      return accs[(t * columns + c) * kLaneQuarters + 2 * h].low;
    if (plan.laneOrder)
      return laneRows(accs, t * columns + c, h);
    Value sum;
    for (int64_t set = 0; set < sets; ++set)
      for (int64_t p = 0; p < nibbles; ++p) {
        const LutAcc &a = accs[accIndex(t, columns, c, set, h, p)];
        Value part =
            a.high ? UkLutCombineOp::create(b, loc, i32Reg, a.low, a.high)
                   : a.low;
        sum = sum ? arith::AddIOp::create(b, loc, sum, part) : part;
      }
    return sum;
  }

  /// D from the plane-weighted sum: (sum + (2^P - 1) S) / 2, or for w1gG
  /// A_0 itself (2 D - S = A_0, what block_combine takes). int8 tables:
  /// dotUnit() times that (the sum is scaleDenominator() sum_p 2^p A_p,
  /// approximately, and 2 D is not halved).
  Value rowDots(Value weighted, Value sum) {
    if (plan.encoding == Encoding::Binary)
      return weighted;
    int64_t unit = plan.int8Tables ? plan.scaleDenominator() : 1;
    Value scaledSum = arith::MulIOp::create(
        b, loc, sum,
        arith::ConstantOp::create(
            b, loc, b.getI32IntegerAttr(plan.sumWeight() * unit)));
    Value offset = vector::BroadcastOp::create(b, loc, i32Reg, scaledSum);
    Value twice = arith::AddIOp::create(b, loc, weighted, offset);
    if (plan.int8Tables)
      return twice;
    return UkShrExactOp::create(b, loc, i32Reg, twice, b.getI64IntegerAttr(1));
  }

  /// `value` (i32 or f32) times dotUnit(): the row sums and activation
  /// scales that meet the dots.
  Value inDotUnits(Value value) {
    if (plan.dotUnit() == 1)
      return value;
    if (isa<FloatType>(value.getType()))
      return arith::MulFOp::create(
          b, loc, value,
          arith::ConstantOp::create(b, loc,
                                    b.getF32FloatAttr(float(plan.dotUnit()))));
    return arith::MulIOp::create(
        b, loc, value,
        arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(plan.dotUnit())));
  }

  //===--- Ternary: whole-row int32 sums -----------------------------------//

  void buildTernary(Value firstTile, ArrayRef<Value> tileBase,
                    Value firstColumn, int64_t columns,
                    const PanelSweep &sweep) {
    int64_t tiles = tileBase.size();
    SmallVector<LutAcc> accs =
        plan.anyShape ? freshAccs(tiles, columns, 0,
                                  mul(shape.blocks, kGroupsPerBlock))
                      : freshAccs(tiles, columns, plan.blocks * kGroupsPerBlock);
    // Between panels a (tile, column)'s pairs lie low, high, low, ...
    auto forEachPartial = [&](auto fn) {
      int64_t perColumn = plan.accsPerColumn();
      for (int64_t t = 0; t < tiles; ++t)
        for (int64_t c = 0; c < columns; ++c) {
          int64_t r = 0;
          for (int64_t a = 0; a < perColumn; ++a) {
            LutAcc &acc = accs[(t * columns + c) * perColumn + a];
            fn(acc.low, partialOffset(sweep, t, c, r++));
            if (acc.high)
              fn(acc.high, partialOffset(sweep, t, c, r++));
          }
        }
    };
    resumePartials(sweep, i32Reg, forEachPartial);
    int64_t sets = plan.accSets;
    if (plan.planePairs)
      panelChunksLoop(sweep, accs, [&](Value first, int64_t count) {
        lookupPlanePairs(tileBase, columns, first, count, sweep.firstBlock,
                         accs);
      });
    else
      panelBlocksLoop(sweep, accs, [&](Value block) {
        lookupBlock(tileBase, columns, block, sweep.firstBlock, sets,
                    /*oneChain=*/plan.nibblePairs == 1, accs);
      });
    if (!sweep.last) {
      forEachPartial([&](Value &v, Value at) {
        UkSpillOp::create(b, loc, v, partials, at);
      });
      return;
    }
    for (int64_t t = 0; t < tiles; ++t)
      for (int64_t h = 0; h < plan.halves; ++h) {
        Value row = add(mul(add(firstTile, t), kTileRows), h * plan.lanes);
        Value left = rowsLeft(row);
        for (int64_t c = 0; c < columns; ++c) {
          Value column = add(firstColumn, c);
          Value sum = memref::LoadOp::create(b, loc, xSums, column);
          Value scale = memref::LoadOp::create(b, loc, xScales, column);
          // D - S: ternary_scale subtracts the row's sum from D.
          Value dot = rowDots(
              combine(accs, sets, plan.nibblePairs, t, columns, c, h), sum);
          Value out = UkTernaryScaleOp::create(b, loc, f32Reg, dot,
                                               inDotUnits(sum), wScale,
                                               inDotUnits(scale));
          UkStoreOp::create(b, loc, out, y, outputAt(column, row), left);
        }
      }
  }

  //===--- Group formats: block sums per scale group ------------------------//

  void buildGroups(Value firstTile, ArrayRef<Value> tileBase, Value firstColumn,
                   int64_t columns, const PanelSweep &sweep) {
    int64_t tiles = tileBase.size();
    auto outIndex = [&](int64_t t, int64_t c, int64_t h) {
      return (t * columns + c) * plan.halves + h;
    };
    SmallVector<Value> ys(tiles * columns * plan.halves, splat(f32Reg, 0));
    // Between panels a (tile, column)'s outputs lie by register half.
    auto forEachPartial = [&](auto fn) {
      for (int64_t t = 0; t < tiles; ++t)
        for (int64_t c = 0; c < columns; ++c)
          for (int64_t h = 0; h < plan.halves; ++h)
            fn(ys[outIndex(t, c, h)], partialOffset(sweep, t, c, h));
    };
    resumePartials(sweep, f32Reg, forEachPartial);
    // The sums of a block start fresh, so blocks are independent chains:
    // one pair per (tile, column, register half) takes every lookup of the
    // block, and one lut_combine gives its sum, which block_combine adds to
    // the float sums of the block's scale group; group_combine folds those
    // into the outputs once per group with the rows' group scales.
    // Where the rows' scales and zero points of the group whose first block
    // is `first` lie (bitserial_abi.h: the tile's groups of this panel).
    auto scaleOffset = [&](Value first, int64_t t, int64_t h) {
      if (sweep.anyPanel) {
        Value scaleGroup =
            div(sub(first, sweep.anyFirstBlock), plan.blocksPerScale());
        Value groups = div(sweep.anyBlocks, plan.blocksPerScale());
        return add(add(mul(add(mulValue(add(firstTile, t), groups),
                               scaleGroup),
                           kTileRows),
                       h * plan.lanes),
                   mulValue(sweep.anyPanel, shape.panelScales));
      }
      Value scaleGroup =
          div(add(first, -sweep.firstBlock), plan.blocksPerScale());
      return add(add(mul(add(mul(add(firstTile, t),
                                     sweep.blocks / plan.blocksPerScale()),
                             scaleGroup),
                         kTileRows),
                     h * plan.lanes),
                 plan.scalePanelOffset(sweep.panel));
    };
    SmallVector<Value> zeroPoints(tiles * plan.halves);
    auto enter = [&](Value first) {
      if (!plan.hasZeros())
        return;
      for (int64_t t = 0; t < tiles; ++t)
        for (int64_t h = 0; h < plan.halves; ++h)
          zeroPoints[t * plan.halves + h] = UkLoadHalfOp::create(
              b, loc, f32Reg, zeros, scaleOffset(first, t, h));
    };
    auto addBlock = [&](Value block, SmallVectorImpl<Value> &sums) {
      SmallVector<LutAcc> accs = freshAccs(tiles, columns, kGroupsPerBlock);
      lookupBlock(tileBase, columns, block, sweep.firstBlock, /*sets=*/1,
                  /*oneChain=*/true, accs);
      for (int64_t c = 0; c < columns; ++c) {
        Value at = activationBlock(add(firstColumn, c), block);
        Value sum = memref::LoadOp::create(b, loc, xSums, at);
        Value xScale = memref::LoadOp::create(b, loc, xScales, at);
        Value one = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0f));
        Value inv = arith::DivFOp::create(b, loc, one, inDotUnits(xScale));
        for (int64_t t = 0; t < tiles; ++t)
          for (int64_t h = 0; h < plan.halves; ++h) {
            Value dot =
                rowDots(combine(accs, 1, 1, t, columns, c, h), sum);
            Value zeroSum = plan.hasZeros() ? inDotUnits(sum) : Value();
            Value &out = sums[outIndex(t, c, h)];
            out = UkBlockCombineOp::create(
                b, loc, f32Reg, out, dot, inv, Value(),
                zeroPoints[t * plan.halves + h], zeroSum);
          }
      }
    };
    auto fold = [&](Value first, ArrayRef<Value> sums) {
      for (int64_t t = 0; t < tiles; ++t)
        for (int64_t h = 0; h < plan.halves; ++h) {
          Value scale = UkLoadHalfOp::create(b, loc, f32Reg, scales,
                                             scaleOffset(first, t, h));
          for (int64_t c = 0; c < columns; ++c) {
            Value &out = ys[outIndex(t, c, h)];
            out = UkGroupCombineOp::create(b, loc, f32Reg, out,
                                           sums[outIndex(t, c, h)], scale);
          }
        }
    };
    if (sweep.anyPanel) {
      // dynamicGroupedLoop counts the panel's blocks from 0.
      auto from = [&](Value block) { return add(block, sweep.anyFirstBlock); };
      dynamicGroupedLoop(
          sweep.anyBlocks, plan.blocksPerIteration, plan.blocksPerScale(),
          splat(f32Reg, 0), int64_t(ys.size()), ys,
          [&](Value first) { enter(from(first)); },
          [&](Value block, SmallVectorImpl<Value> &sums) {
            addBlock(from(block), sums);
          },
          [&](Value first, ArrayRef<Value> sums) { fold(from(first), sums); });
    } else {
      groupedLoop(sweep.firstBlock, sweep.blocks, plan.blocksPerIteration,
                  plan.blocksPerScale(), splat(f32Reg, 0), int64_t(ys.size()),
                  ys, enter, addBlock, fold);
    }
    if (!sweep.last) {
      forEachPartial([&](Value &v, Value at) {
        UkSpillOp::create(b, loc, v, partials, at);
      });
      return;
    }
    for (int64_t t = 0; t < tiles; ++t)
      for (int64_t h = 0; h < plan.halves; ++h) {
        Value row = add(mul(add(firstTile, t), kTileRows), h * plan.lanes);
        Value left = rowsLeft(row);
        for (int64_t c = 0; c < columns; ++c) {
          Value column = add(firstColumn, c);
          UkStoreOp::create(b, loc, ys[outIndex(t, c, h)], y,
                            outputAt(column, row), left);
        }
      }
  }

  const BitserialPlan &plan;
  BitserialShape shape; // any-shape kernels: the run-time sizes
  Value codes, scales, zeros, xq, xScales, xSums, y, n, tileBegin, tileEnd,
      wScale, tables, partials;
  /// The run of weights of the panel being swept (null: one panel).
  PanelRun run;
  /// Splats of 2^p for planes p >= 1 (plane 0 multiplies by 1).
  SmallVector<Value, 3> planeWeights;
  VectorType byteReg, i32Reg, f32Reg;
};

class LowerLutBitserialPass
    : public lowbit::impl::LowBitLowerLutBitserialBase<LowerLutBitserialPass> {
public:
  using LowBitLowerLutBitserialBase::LowBitLowerLutBitserialBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    FailureOr<KernelToLower> kernel = findKernelToLower<LutBitserialAttr>(func);
    if (failed(kernel))
      return signalPassFailure();
    if (!kernel->op)
      return;
    FailureOr<BitserialPlan> plan = makePlan(kernel->op, *kernel->target);
    if (failed(plan))
      return signalPassFailure();
    rewriteKernelFunction(
        func,
        [&](OpBuilder &b, ValueRange args) {
          BitserialKernelBuilder(b, func.getLoc(), *plan, args).build();
        },
        plan->anyShape);
  }

private:
  static FailureOr<BitserialPlan> makePlan(MpGemmOp op,
                                           const TargetInfo &target) {
    LayoutAttr layout = op.getLayout();
    if (!isBitserialTiled(layout))
      return op.emitOpError()
             << "needs the bit-plane layout of bitserial_abi.h (bitplanes, "
                "tile_m = 16, tile_k = 32, interleave = 16), got "
             << layout << "; run lowbit-pack-layout first";
    if (failed(checkByteTableLookup(op, target, kVectorBytes,
                                    "lowbit-lower-lut-bitserial")))
      return failure();
    int64_t registerBytes = target.getRegisterBytes();
    auto config = cast<LutBitserialAttr>(op.getConfigAttr());
    bool int8Tables = config.getTableBits() == 8;
    if (!int8Tables && config.getActGroup() != kBlockK)
      return op.emitOpError()
             << "lut_bitserial act_group must be " << kBlockK
             << " (the activation block of kernel_abi.h that the lossless "
                "int16 tables follow), got "
             << config.getActGroup();
    if (int8Tables && config.getActGroup() % kBlockK != 0)
      return op.emitOpError()
             << "lut_bitserial act_group must be a multiple of " << kBlockK
             << " with table_bits = 8 (whole 32-k blocks share a table "
                "scale), got "
             << config.getActGroup();
    if (config.getKfactor() % kGroupsPerBlock != 0)
      return op.emitOpError()
             << "lut_bitserial kfactor (groups of 4 per loop iteration) must "
                "be a multiple of "
             << kGroupsPerBlock << " (one 32-k block), got "
             << config.getKfactor();
    BitserialPlan plan;
    plan.anyShape = isAnyShape(op);
    if (plan.anyShape && int8Tables)
      return op.emitOpError()
             << "with dynamic M and K (an any-shape kernel) needs int16 "
                "tables (table_bits = 16): int8 tables are not lowered for "
                "a run-time K";
    // An any-shape kernel's tables are those of the largest K it takes.
    int64_t k = plan.anyShape ? kAnyShapeMaxLutK : op.getK();
    WeightAttr weight = op.getWeight();
    plan.encoding = weight.getEncoding();
    plan.planes = weight.getBits();
    plan.m = plan.anyShape ? 0 : op.getM();
    plan.kp = llvm::alignTo(k, kBlockK);
    plan.blocks = plan.kp / kBlockK;
    plan.group = weight.getGroup();
    plan.int8Tables = int8Tables;
    if (int8Tables) {
      plan.blocksPerActGroup = config.getActGroup() / kBlockK;
      plan.actGroups = llvm::divideCeil(plan.blocks, plan.blocksPerActGroup);
    }
    plan.tileBytes = plan.blocks * plan.planes * kVectorBytes;
    plan.numTiles = plan.anyShape ? 0 : llvm::divideCeil(plan.m, kTileRows);
    plan.tilesPerGroup = config.getBm() / kTileRows;
    plan.bn = config.getBn();
    plan.blocksPerIteration = config.getKfactor() / kGroupsPerBlock;
    plan.registerBytes = registerBytes;
    plan.halves = kVectorBytes / registerBytes;
    plan.lanes = registerBytes / 4;
    plan.prefetchBytes = target.getPrefetchBytes();
    // The kernel reads the lane order the layout records (pack-layout took
    // it from the same target); a layout for another target is an error.
    plan.laneOrder = target.hasLutLaneOrder();
    if ((layout.getLaneOrder() == LaneOrder::Lanes) != plan.laneOrder)
      return op.emitOpError()
             << "has a bitplanes layout in lane_order "
             << stringifyLaneOrder(layout.getLaneOrder())
             << ", but the target's lut-bitserial kernels read "
             << (plan.laneOrder ? "lanes" : "rows")
             << " (bitserial_abi.h); run lowbit-pack-layout for this target";
    plan.planePairs = plan.laneOrder && plan.planes == 2;
    LutAccumulators accs =
        planLutAccumulators(target, plan.halves, plan.tilesPerGroup, plan.bn);
    plan.accSets = accs.sets;
    plan.nibblePairs = accs.nibblePairs;
    // Panels of whole scale groups (bitserial_abi.h).
    plan.panelBlocks =
        lowbit_bitserial_panel_blocks(plan.blocks, plan.blocksPerScale());
    plan.panels = lowbit_bitserial_panels(plan.blocks, plan.blocksPerScale());
    if (plan.int8Lanes() &&
        plan.blocksPerIteration % plan.blocksPerActGroup == 0 &&
        (plan.panels == 1 || plan.panelBlocks % plan.blocksPerActGroup == 0))
      plan.actGroupRun = plan.blocksPerActGroup;
    plan.rangeTiles =
        std::max<int64_t>(16, kPartialBytes / (plan.bn * plan.partialBytes()));
    if (!plan.anyShape)
      plan.rangeTiles = std::min(plan.numTiles, plan.rangeTiles);
    if (plan.bn * plan.columnTableBytes() > kMaxStackBytes)
      return op.emitOpError()
             << "the tables of bn = " << plan.bn << " activation rows take "
             << plan.bn * plan.columnTableBytes() << " bytes for "
             << (plan.anyShape ? "the any-shape K limit " : "K = ") << k
             << ", more than the "
             << kMaxStackBytes << " a kernel keeps on its stack";
    return plan;
  }
};

} // namespace
