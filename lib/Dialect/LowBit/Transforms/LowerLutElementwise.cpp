//===- LowerLutElementwise.cpp - tl1/tl2 mpgemm to table lookups ----------===//
//
// Rewrites a function `@k(x, packed, s) { return lowbit.mpgemm }` with a
// lut_elementwise config and the interleaved tl1/tl2 layout of lut_abi.h
// into a kernel of kernel_abi.h's signature: a prologue that builds the
// int16 tables of the activations (lowbit.uk.lut_tables into a stack
// buffer), then per
// tile group lowbit.uk.lut_lookup on registers whose width comes from
// TargetInfo, int16 sums widened to int32 every `bk` weights, and the exact
// ternary scaling. Nothing here depends on the ISA.
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

/// lut_abi.h: rows per tile, bytes per vector and header, weights per TL2
/// block and TL1 vector, bytes of one vector's four tables.
static constexpr int64_t kTileRows = 16;
static constexpr int64_t kVectorBytes = 64;
static constexpr int64_t kHeaderBytes = 64;
static constexpr int64_t kBlockWeights = 96, kBlockBytes = 320;
static constexpr int64_t kTl1Weights = 16;
static constexpr int64_t kTableBytes = 256;
/// The largest table buffer a kernel keeps on its stack.
static constexpr int64_t kMaxStackBytes = 2 << 20;
/// Tables a tile sweeps without a K split (about an L1 data cache), and the
/// size of the K chunks when they are larger: table vectors read from L2
/// compete with the weight stream (measured on Zen 5: tl2 2560x6912, 73 KiB
/// of tables, 0.70 of the read bandwidth against 0.90 at K = 2560).
static constexpr int64_t kL1TableBytes = 32 << 10;
static constexpr int64_t kChunkTableBytes = 24 << 10;

namespace {

struct LutPlan {
  bool tl2 = false;
  int64_t m = 0, kp = 0;
  int64_t tl2Blocks = 0, tl1Vectors = 0, tileBytes = 0, numTiles = 0;
  int64_t tilesPerGroup = 1, bn = 1;
  int64_t blocksPerWiden = 1, vectorsPerWiden = 1;
  int64_t registerBytes = 0, halves = 1, lanes = 0; // lanes: int32 lanes
  int64_t prefetchBytes = 0;
  /// TL2 blocks are processed in `chunks` K chunks of `chunkBlocks` (the
  /// last may be shorter): every tile of the range for chunk 0, then chunk
  /// 1, ..., with the int32 sums of the tiles kept in a stack buffer.
  int64_t chunks = 1, chunkBlocks = 0;

  int64_t tableVectors() const { return 4 * tl2Blocks + tl1Vectors; }
  int64_t columnTableBytes() const { return tableVectors() * kTableBytes; }
  int64_t tl1Offset() const { return kHeaderBytes + tl2Blocks * kBlockBytes; }
};

/// Accumulators of one (tile, column): int16 sums of the rows 0..7 and
/// 8..15 of every lane, and their int32 widenings.
struct Acc {
  Value low16, high16, low32, high32;
};

class LutKernelBuilder : KernelLoopBuilder {
public:
  LutKernelBuilder(OpBuilder &b, Location loc, const LutPlan &plan,
                   ValueRange args)
      : KernelLoopBuilder(b, loc), plan(plan), codes(args[0]), xq(args[3]),
        xScales(args[4]), y(args[6]), n(args[7]), tileBegin(args[8]),
        tileEnd(args[9]), wScale(args[10]) {
    MLIRContext *ctx = b.getContext();
    byteReg = VectorType::get({plan.registerBytes}, IntegerType::get(ctx, 8));
    i16Reg =
        VectorType::get({plan.registerBytes / 2}, IntegerType::get(ctx, 16));
    i32Reg = VectorType::get({plan.lanes}, IntegerType::get(ctx, 32));
    f32Reg = VectorType::get({plan.lanes}, Float32Type::get(ctx));
  }

  void build() {
    tables = UkStackBufferOp::create(
        b, loc, MemRefType::get({ShapedType::kDynamic}, b.getI8Type()),
        b.getI64IntegerAttr(plan.bn * plan.columnTableBytes()));
    if (plan.chunks > 1)
      partials = UkStackBufferOp::create(
          b, loc, MemRefType::get({ShapedType::kDynamic}, b.getI8Type()),
          b.getI64IntegerAttr(plan.numTiles * plan.bn * partialBytes()));
    Value rows = toIndex(n);
    if (plan.bn == 1) {
      forLoop(constant(0), rows, 1, [&](Value c) { buildColumns(c, 1); });
      return;
    }
    Value fullEnd = mul(div(rows, plan.bn), plan.bn);
    forLoop(constant(0), fullEnd, plan.bn,
            [&](Value c) { buildColumns(c, plan.bn); });
    forLoop(fullEnd, rows, 1, [&](Value c) { buildColumns(c, 1); });
  }

private:
  //===--- Tables (the activation pre-pass) ---------------------------------//

  void buildColumns(Value firstColumn, int64_t columns) {
    for (int64_t c = 0; c < columns; ++c)
      buildTables(add(firstColumn, c), c * plan.columnTableBytes());
    Value begin = toIndex(tileBegin), end = toIndex(tileEnd);
    int64_t group = plan.tilesPerGroup;
    Value groupsEnd = begin;
    if (group > 1) {
      Value positive =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, end, begin);
      Value count = arith::SelectOp::create(b, loc, positive, sub(end, begin),
                                            constant(0));
      groupsEnd = add(begin, mul(div(count, group), group));
    }
    for (int64_t chunk = 0; chunk < plan.chunks; ++chunk) {
      if (group > 1)
        forLoop(begin, groupsEnd, group, [&](Value t) {
          buildTiles(t, group, firstColumn, columns, chunk);
        });
      forLoop(groupsEnd, end, 1,
              [&](Value t) { buildTiles(t, 1, firstColumn, columns, chunk); });
    }
  }

  /// Bytes of the int32 sums of one (tile, activation row) between chunks.
  int64_t partialBytes() const { return 2 * plan.registerBytes; }

  /// The tables of one activation row at byte `base` of the buffer: per
  /// table vector 256 bytes (even low, even high, odd low, odd high bytes;
  /// 16 entries per lane).
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

  /// Offset in the partial-sum buffer of (tile, column c).
  Value partialOffset(Value tile, int64_t c) {
    return mul(add(mul(tile, plan.bn), c), partialBytes());
  }

  /// K chunk `chunk` of a group of `tiles` tiles for `columns` activation
  /// rows: its TL2 blocks, then on the last chunk the TL1 vectors and the
  /// outputs; between chunks the int32 sums live in `partials`.
  void buildTiles(Value firstTile, int64_t tiles, Value firstColumn,
                  int64_t columns, int64_t chunk) {
    SmallVector<Value> tileBase;
    for (int64_t t = 0; t < tiles; ++t)
      tileBase.push_back(mul(add(firstTile, t), plan.tileBytes));
    int64_t count = tiles * columns;
    SmallVector<Acc> accs(count);
    for (int64_t t = 0; t < tiles; ++t)
      for (int64_t c = 0; c < columns; ++c) {
        Acc &a = accs[t * columns + c];
        if (chunk == 0) {
          a.low32 = a.high32 = zero(i32Reg);
          continue;
        }
        Value at = partialOffset(add(firstTile, t), c);
        a.low32 = UkLoadOp::create(b, loc, i32Reg, partials, at);
        a.high32 = UkLoadOp::create(b, loc, i32Reg, partials,
                                    add(at, plan.registerBytes));
      }

    // TL2 blocks, widened every blocksPerWiden blocks, then the TL1 vectors.
    bool last = chunk == plan.chunks - 1;
    int64_t firstBlock = chunk * plan.chunkBlocks;
    int64_t blocks = std::min(plan.chunkBlocks, plan.tl2Blocks - firstBlock);
    runEnd = kHeaderBytes + (firstBlock + blocks) * kBlockBytes +
             (last ? plan.tl1Vectors * kVectorBytes : 0);
    runSkip = tiles * plan.tileBytes - blocks * kBlockBytes -
              (last ? plan.tl1Vectors * kVectorBytes : 0);
    auto tl2 = [&](Value block, SmallVectorImpl<Acc> &state) {
      tl2Block(tileBase, columns, block, state);
    };
    auto tl1 = [&](Value vector, SmallVectorImpl<Acc> &state) {
      tl1Vector(tileBase, columns, vector, state);
    };
    widenedLoop(firstBlock, blocks, plan.blocksPerWiden, accs, tl2);
    if (!last) {
      for (int64_t t = 0; t < tiles; ++t)
        for (int64_t c = 0; c < columns; ++c) {
          const Acc &a = accs[t * columns + c];
          Value at = partialOffset(add(firstTile, t), c);
          UkStoreI32Op::create(b, loc, a.low32, partials, at);
          UkStoreI32Op::create(b, loc, a.high32, partials,
                               add(at, plan.registerBytes));
        }
      return;
    }
    widenedLoop(0, plan.tl1Vectors, plan.vectorsPerWiden, accs, tl1);

    int64_t parts = kTileRows / plan.lanes;
    for (int64_t t = 0; t < tiles; ++t)
      for (int64_t p = 0; p < parts; ++p) {
        Value header = UkLoadOp::create(b, loc, i32Reg, codes,
                                        add(tileBase[t], p * plan.lanes * 4));
        Value row = add(mul(add(firstTile, t), kTileRows), p * plan.lanes);
        Value rowsLeft = storeCount(row);
        for (int64_t c = 0; c < columns; ++c) {
          const Acc &a = accs[t * columns + c];
          Value rows = UkFoldRowsOp::create(b, loc, i32Reg, a.low32, a.high32,
                                            b.getI64IntegerAttr(p));
          Value acc = arith::AddIOp::create(b, loc, rows, header);
          Value column = add(firstColumn, c);
          Value scale = memref::LoadOp::create(b, loc, xScales, column);
          Value noSum =
              arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(0));
          Value out = UkTernaryScaleOp::create(b, loc, f32Reg, acc, noSum,
                                               wScale, scale);
          UkStoreOp::create(b, loc, out, y, add(mul(column, plan.m), row),
                            rowsLeft);
        }
      }
  }

  /// Runs `body` for steps [start, start + total) with int16 accumulators
  /// widened to int32 after every `perWiden` steps: an scf.for over whole
  /// groups (the int32 accumulators loop-carried), then the remaining steps.
  void widenedLoop(int64_t start, int64_t total, int64_t perWiden,
                   SmallVectorImpl<Acc> &accs,
                   function_ref<void(Value, SmallVectorImpl<Acc> &)> body) {
    auto group = [&](Value first, int64_t steps) {
      for (Acc &a : accs)
        a.low16 = a.high16 = zero(i16Reg);
      for (int64_t s = 0; s < steps; ++s)
        body(add(first, s), accs);
      for (Acc &a : accs) {
        a.low32 = UkWidenAddOp::create(b, loc, i32Reg, a.low32, a.low16);
        a.high32 = UkWidenAddOp::create(b, loc, i32Reg, a.high32, a.high16);
      }
    };
    int64_t groups = total / perWiden;
    if (groups > 1) {
      SmallVector<Value> state;
      for (Acc &a : accs)
        state.append({a.low32, a.high32});
      auto loop = scf::ForOp::create(b, loc, constant(0), constant(groups),
                                     constant(1), state);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(loop.getBody());
        for (auto [i, a] : llvm::enumerate(accs)) {
          a.low32 = loop.getRegionIterArgs()[2 * i];
          a.high32 = loop.getRegionIterArgs()[2 * i + 1];
        }
        group(add(mul(loop.getInductionVar(), perWiden), start), perWiden);
        SmallVector<Value> next;
        for (Acc &a : accs)
          next.append({a.low32, a.high32});
        scf::YieldOp::create(b, loc, next);
      }
      for (auto [i, a] : llvm::enumerate(accs)) {
        a.low32 = loop.getResult(2 * i);
        a.high32 = loop.getResult(2 * i + 1);
      }
    } else if (groups == 1) {
      group(constant(start), perWiden);
    }
    if (int64_t rest = total - groups * perWiden)
      group(constant(start + groups * perWiden), rest);
  }

  /// One TL2 block: 4 index vectors and their sign vector per tile.
  void tl2Block(ArrayRef<Value> tileBase, int64_t columns, Value block,
                SmallVectorImpl<Acc> &accs) {
    Value blockOffset = add(mul(block, kBlockBytes), kHeaderBytes);
    for (int64_t h = 0; h < plan.halves; ++h) {
      SmallVector<Value> signs;
      for (Value base : tileBase) {
        Value at = add(add(base, blockOffset), h * plan.registerBytes);
        if (h == 0)
          prefetch(add(at, 256), base);
        signs.push_back(UkLoadOp::create(b, loc, byteReg, codes, add(at, 256)));
      }
      for (int64_t v = 0; v < 4; ++v) {
        Value tableVector = add(mul(block, 4), v);
        SmallVector<SmallVector<Value, 4>> columnTables;
        for (int64_t c = 0; c < columns; ++c)
          columnTables.push_back(loadTables(tableVector, c, h));
        for (auto [t, base] : llvm::enumerate(tileBase)) {
          Value at =
              add(add(add(base, blockOffset), 64 * v), h * plan.registerBytes);
          if (h == 0)
            prefetch(at, base);
          Value w = UkLoadOp::create(b, loc, byteReg, codes, at);
          Value even = UkLutSignMaskOp::create(b, loc, byteReg, signs[t],
                                               b.getI64IntegerAttr(2 * v));
          Value odd = UkLutSignMaskOp::create(b, loc, byteReg, signs[t],
                                              b.getI64IntegerAttr(2 * v + 1));
          for (int64_t c = 0; c < columns; ++c)
            lookup(accs[t * columns + c], w, columnTables[c], {even, odd});
        }
      }
    }
  }

  /// One TL1 vector per tile.
  void tl1Vector(ArrayRef<Value> tileBase, int64_t columns, Value vector,
                 SmallVectorImpl<Acc> &accs) {
    Value tableVector = add(vector, 4 * plan.tl2Blocks);
    Value offset = add(mul(vector, kVectorBytes), plan.tl1Offset());
    for (int64_t h = 0; h < plan.halves; ++h) {
      SmallVector<SmallVector<Value, 4>> columnTables;
      for (int64_t c = 0; c < columns; ++c)
        columnTables.push_back(loadTables(tableVector, c, h));
      for (auto [t, base] : llvm::enumerate(tileBase)) {
        Value at = add(add(base, offset), h * plan.registerBytes);
        if (h == 0)
          prefetch(at, base);
        Value w = UkLoadOp::create(b, loc, byteReg, codes, at);
        for (int64_t c = 0; c < columns; ++c)
          lookup(accs[t * columns + c], w, columnTables[c], {});
      }
    }
  }

  /// The four table registers of table vector `vector`, column `c`, half h.
  SmallVector<Value, 4> loadTables(Value vector, int64_t c, int64_t h) {
    Value at = add(mul(vector, kTableBytes),
                   c * plan.columnTableBytes() + h * plan.registerBytes);
    SmallVector<Value, 4> regs;
    for (int64_t i = 0; i < 4; ++i)
      regs.push_back(
          UkLoadOp::create(b, loc, byteReg, tables, add(at, 64 * i)));
    return regs;
  }

  void lookup(Acc &a, Value w, ArrayRef<Value> t, ValueRange signs) {
    auto op = UkLutLookupOp::create(b, loc, TypeRange{i16Reg, i16Reg}, a.low16,
                                    a.high16, w, t[0], t[1], t[2], t[3], signs);
    a.low16 = op.getNewLow();
    a.high16 = op.getNewHigh();
  }

  /// Prefetches the codes prefetchBytes after `offset` in the order the
  /// kernel reads them, clamped inside: with K chunks, past the end of this
  /// tile's run (`base` + runEnd) comes the same run of the next tile group.
  void prefetch(Value offset, Value base) {
    if (plan.prefetchBytes == 0)
      return;
    Value ahead = add(offset, plan.prefetchBytes);
    if (plan.chunks > 1) {
      Value past = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                         ahead, add(base, runEnd));
      ahead = arith::SelectOp::create(b, loc, past, add(ahead, runSkip), ahead);
    }
    Value last = constant(plan.numTiles * plan.tileBytes - kVectorBytes);
    Value inside =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, ahead, last);
    UkPrefetchOp::create(b, loc, codes,
                         arith::SelectOp::create(b, loc, inside, ahead, last));
  }

  /// Lanes of the register at `row` to store: clamp(M - row, 0, lanes), or
  /// null when M is a multiple of 16.
  Value storeCount(Value row) {
    if (plan.m % kTileRows == 0)
      return Value();
    Value m = constant(plan.m);
    Value past =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, row, m);
    Value left = sub(m, row);
    Value partial = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                          left, constant(plan.lanes));
    Value some =
        arith::SelectOp::create(b, loc, partial, left, constant(plan.lanes));
    return arith::SelectOp::create(b, loc, past, constant(0), some);
  }

  //===--- Helpers ----------------------------------------------------------//

  Value zero(VectorType type) {
    return arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(type,
                               b.getIntegerAttr(type.getElementType(), 0)));
  }
  const LutPlan &plan;
  Value codes, xq, xScales, y, n, tileBegin, tileEnd, wScale, tables, partials;
  /// The current chunk's run of a tile ends at tile base + runEnd; the next
  /// run starts runSkip bytes later.
  int64_t runEnd = 0, runSkip = 0;
  VectorType byteReg, i16Reg, i32Reg, f32Reg;
};

class LowerLutElementwisePass
    : public lowbit::impl::LowBitLowerLutElementwiseBase<
          LowerLutElementwisePass> {
public:
  using LowBitLowerLutElementwiseBase::LowBitLowerLutElementwiseBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<MpGemmOp> ops;
    func.walk([&](MpGemmOp op) {
      if (isa_and_present<LutElementwiseAttr>(op.getConfigAttr()))
        ops.push_back(op);
    });
    if (ops.empty())
      return;
    std::unique_ptr<TargetInfo> targetInfo = createTargetInfo(target);
    if (!targetInfo) {
      func.emitError() << "lowbit-lower-lut-elementwise: unknown target '"
                       << target << "'";
      return signalPassFailure();
    }
    MpGemmOp op = ops.front();
    Block &body = func.getBody().front();
    auto ret = dyn_cast<func::ReturnOp>(body.getTerminator());
    if (ops.size() != 1 || !func.getBody().hasOneBlock() ||
        &body.front() != op.getOperation() || op->getNextNode() != ret ||
        ret.getNumOperands() != 1 || ret.getOperand(0) != op.getResult()) {
      op.emitOpError() << "can only be lowered as the whole body of its "
                          "function (one lowbit.mpgemm whose result is "
                          "returned)";
      return signalPassFailure();
    }
    FailureOr<LutPlan> plan = makePlan(op, *targetInfo);
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
    int64_t registerBytes = target.getLutRegisterBytes();
    if (!target.hasByteTableLookup() || registerBytes % 16 != 0 ||
        kVectorBytes % registerBytes != 0)
      return op.emitOpError()
             << "target " << target.getName()
             << " has no 16-byte-lane table lookup (pshufb/tbl) on "
             << registerBytes
             << "-byte registers; lowbit-lower-lut-elementwise needs one";
    auto config = cast<LutElementwiseAttr>(op.getConfigAttr());
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
    plan.blocksPerWiden = plan.tl2 ? config.getBk() / kBlockWeights : 1;
    plan.vectorsPerWiden = plan.tl2 ? std::max<int64_t>(plan.tl1Vectors, 1)
                                    : config.getBk() / kTl1Weights;
    plan.registerBytes = registerBytes;
    plan.halves = kVectorBytes / registerBytes;
    plan.lanes = registerBytes / 4;
    plan.prefetchBytes = target.getPrefetchBytes();
    plan.chunkBlocks = plan.tl2Blocks;
    int64_t blockTables = 4 * kTableBytes * plan.bn;
    if (plan.tl2Blocks * blockTables > kL1TableBytes) {
      int64_t maxBlocks = std::max<int64_t>(1, kChunkTableBytes / blockTables);
      plan.chunks = llvm::divideCeil(plan.tl2Blocks, maxBlocks);
      plan.chunkBlocks = llvm::divideCeil(plan.tl2Blocks, plan.chunks);
      plan.chunks = llvm::divideCeil(plan.tl2Blocks, plan.chunkBlocks);
    }
    if (plan.bn * plan.columnTableBytes() +
            (plan.chunks > 1 ? plan.numTiles * plan.bn * 2 * registerBytes
                             : 0) >
        kMaxStackBytes)
      return op.emitOpError()
             << "the tables of bn = " << plan.bn << " activation rows take "
             << plan.bn * plan.columnTableBytes() << " bytes for K = " << k
             << ", more than the " << kMaxStackBytes
             << " a kernel keeps on its stack";
    return plan;
  }

  static void rewriteFunction(func::FuncOp func, const LutPlan &plan) {
    Location loc = func.getLoc();
    Block &entry = resetToKernelAbi(func);
    OpBuilder b = OpBuilder::atBlockEnd(&entry);
    LutKernelBuilder(b, loc, plan, entry.getArguments()).build();
    func::ReturnOp::create(b, loc);
    func.walk<WalkOrder::PostOrder, ReverseIterator>([](Operation *op) {
      if (isOpTriviallyDead(op))
        op->erase();
    });
  }
};

} // namespace
