//===- LowerLutBitserial.cpp - bit-serial LUT (T-MAC) mpgemm --------------===//
//
// Rewrites a function `@k(x, packed, [scales]) { return lowbit.mpgemm }`
// with a lut_bitserial config and the bit-plane layout of bitserial_abi.h
// into a kernel of kernel_abi.h's signature: a prologue that builds the
// int16 ±1 tables of every group of 4 activations (lowbit.uk.lut_tables
// width 4 into a stack buffer), then per tile group, K first, one
// lowbit.uk.lut_lookup per bit plane and 8 groups (the table of a block
// serves every plane), int16 sums widened to int32, the planes combined
// with their weights 2^p and the linear transform of bitserial_abi.h, and
// the ternary or per-block group scaling. Nothing here depends on the ISA.
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
/// vector and per block of tables (even/odd x low/high bytes).
static constexpr int64_t kTileRows = 16;
static constexpr int64_t kBlockK = 32;
static constexpr int64_t kVectorBytes = 64;
static constexpr int64_t kTableBytes = 256;
/// Groups of 4 weights per block.
static constexpr int64_t kGroupsPerBlock = 8;
/// Blocks whose int16 sums fit before a widening: a lookup adds two entries
/// of |e| <= 512 per int16 lane and a block adds (64 / R) lookups per lane,
/// at most 4, so 15 blocks stay within 15 * 4 * 512 < 2^15.
static constexpr int64_t kMaxBlocksPerWiden = 15;
/// The largest table buffer a kernel keeps on its stack.
static constexpr int64_t kMaxStackBytes = 2 << 20;

namespace {

struct BitserialPlan {
  Encoding encoding;
  int64_t planes = 0;
  int64_t m = 0, kp = 0, blocks = 0;
  int64_t group = 0; // weights per scale (0: ternary)
  int64_t tileBytes = 0, numTiles = 0;
  int64_t tilesPerGroup = 1, bn = 1;
  int64_t blocksPerWiden = 1; // ternary: int16 blocks between widenings
  int64_t registerBytes = 0, halves = 1, lanes = 0;
  int64_t prefetchBytes = 0;

  bool isTernary() const { return encoding == Encoding::Ternary; }
  bool hasZeros() const { return encoding == Encoding::Unsigned; }
  int64_t columnTableBytes() const { return blocks * kTableBytes; }
  int64_t parts() const { return kTileRows / lanes; }
  /// (2^P - 1): the weight of S in 2 D = sum_p 2^p A_p + (2^P - 1) S.
  int64_t sumWeight() const { return (int64_t(1) << planes) - 1; }
};

/// The int16 sums of rows 0..7 / 8..15 of every lane for one (tile,
/// column, plane), and their int32 widenings.
struct PlaneAcc {
  Value low16, high16, low32, high32;
};

class BitserialKernelBuilder : KernelLoopBuilder {
public:
  BitserialKernelBuilder(OpBuilder &b, Location loc, const BitserialPlan &plan,
                         ValueRange args)
      : KernelLoopBuilder(b, loc), plan(plan), codes(args[0]), scales(args[1]),
        zeros(args[2]), xq(args[3]), xScales(args[4]), xSums(args[5]),
        y(args[6]), n(args[7]), tileBegin(args[8]), tileEnd(args[9]),
        wScale(args[10]) {
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

  /// Builds the tables of `columns` activation rows, then sweeps every tile
  /// of [tile_begin, tile_end) over the whole K with them (K first: the
  /// tables stay in cache while the weights stream once).
  void buildColumns(Value firstColumn, int64_t columns) {
    for (int64_t c = 0; c < columns; ++c) {
      Value row = mul(add(firstColumn, c), plan.kp);
      forLoop(constant(0), constant(plan.blocks), 1, [&](Value j) {
        UkLutTablesOp::create(
            b, loc, xq, add(row, mul(j, kBlockK)), tables,
            add(mul(j, kTableBytes), c * plan.columnTableBytes()),
            b.getI64IntegerAttr(4));
      });
    }
    Value begin = toIndex(tileBegin), end = toIndex(tileEnd);
    int64_t group = plan.tilesPerGroup;
    Value groupsEnd = begin;
    if (group > 1) {
      Value positive =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, end, begin);
      Value count = arith::SelectOp::create(b, loc, positive, sub(end, begin),
                                            constant(0));
      groupsEnd = add(begin, mul(div(count, group), group));
      forLoop(begin, groupsEnd, group,
              [&](Value t) { buildTiles(t, group, firstColumn, columns); });
    }
    forLoop(groupsEnd, end, 1,
            [&](Value t) { buildTiles(t, 1, firstColumn, columns); });
  }

  void buildTiles(Value firstTile, int64_t tiles, Value firstColumn,
                  int64_t columns) {
    SmallVector<Value> tileBase;
    for (int64_t t = 0; t < tiles; ++t)
      tileBase.push_back(mul(add(firstTile, t), plan.tileBytes));
    if (plan.isTernary())
      buildTernary(firstTile, tileBase, firstColumn, columns);
    else
      buildGroups(firstTile, tileBase, firstColumn, columns);
  }

  //===--- Lookups of one block --------------------------------------------//

  /// Adds the lookups of block `block` (every plane of every tile, for every
  /// column) to the int16 sums. Without `combined`, plane p of (tile t,
  /// column c) goes to accs[(t * columns + c) * planes + p]; with it, the
  /// planes are weighted in int16 (Horner, from the highest plane: the sum
  /// is doubled before each lower plane) into accs[t * columns + c], which
  /// fits one block: (2^P - 1) * (64 / R) lookups * 2 * 512 < 2^15.
  void lookupBlock(ArrayRef<Value> tileBase, int64_t columns, Value block,
                   MutableArrayRef<PlaneAcc> accs, bool combined) {
    SmallVector<SmallVector<Value, 4>> tableRegs; // [h * columns + c]
    for (int64_t h = 0; h < plan.halves; ++h)
      for (int64_t c = 0; c < columns; ++c) {
        Value at = add(mul(block, kTableBytes),
                       c * plan.columnTableBytes() + h * plan.registerBytes);
        SmallVector<Value, 4> regs;
        for (int64_t i = 0; i < 4; ++i)
          regs.push_back(
              UkLoadOp::create(b, loc, byteReg, tables, add(at, 64 * i)));
        tableRegs.push_back(regs);
      }
    for (auto [t, base] : llvm::enumerate(tileBase))
      for (int64_t step = 0; step < plan.planes; ++step) {
        int64_t p = combined ? plan.planes - 1 - step : step;
        if (combined && step > 0)
          for (int64_t c = 0; c < columns; ++c) {
            PlaneAcc &a = accs[int64_t(t) * columns + c];
            a.low16 = arith::AddIOp::create(b, loc, a.low16, a.low16);
            a.high16 = arith::AddIOp::create(b, loc, a.high16, a.high16);
          }
        for (int64_t h = 0; h < plan.halves; ++h) {
          Value at = add(add(base, mul(block, plan.planes * kVectorBytes)),
                         p * kVectorBytes + h * plan.registerBytes);
          if (h == 0)
            prefetch(at);
          Value w = UkLoadOp::create(b, loc, byteReg, codes, at);
          for (int64_t c = 0; c < columns; ++c) {
            PlaneAcc &a =
                combined ? accs[int64_t(t) * columns + c]
                         : accs[(int64_t(t) * columns + c) * plan.planes + p];
            const SmallVector<Value, 4> &tb = tableRegs[h * columns + c];
            auto op = UkLutLookupOp::create(b, loc, TypeRange{i16Reg, i16Reg},
                                            a.low16, a.high16, w, tb[0], tb[1],
                                            tb[2], tb[3], ValueRange{});
            a.low16 = op.getNewLow();
            a.high16 = op.getNewHigh();
          }
        }
      }
  }

  /// sum_p 2^p A_p of the int32 sums of the planes `accs` (Horner:
  /// additions only), for the low or the high rows.
  Value combinePlanes(ArrayRef<PlaneAcc> accs, bool high) {
    Value sum;
    for (int64_t p = accs.size() - 1; p >= 0; --p) {
      Value a = high ? accs[p].high32 : accs[p].low32;
      if (sum) {
        sum = arith::AddIOp::create(b, loc, sum, sum);
        a = arith::AddIOp::create(b, loc, sum, a);
      }
      sum = a;
    }
    return sum;
  }

  /// D of rows [part * lanes, ..) from the plane-combined lane sums:
  /// (fold + (2^P - 1) S) / 2, or A_0 itself for w1gG (2 D - S = A_0).
  Value rowDots(Value low, Value high, int64_t part, Value sum) {
    Value rows = UkFoldRowsOp::create(b, loc, i32Reg, low, high,
                                      b.getI64IntegerAttr(part));
    if (plan.encoding == Encoding::Binary)
      return rows;
    Value weighted = arith::MulIOp::create(
        b, loc, sum,
        arith::ConstantOp::create(b, loc,
                                  b.getI32IntegerAttr(plan.sumWeight())));
    Value offset = vector::BroadcastOp::create(b, loc, i32Reg, weighted);
    Value twice = arith::AddIOp::create(b, loc, rows, offset);
    return UkShrExactOp::create(b, loc, i32Reg, twice, b.getI64IntegerAttr(1));
  }

  //===--- Ternary: whole-row int32 sums -----------------------------------//

  void buildTernary(Value firstTile, ArrayRef<Value> tileBase,
                    Value firstColumn, int64_t columns) {
    int64_t tiles = tileBase.size();
    SmallVector<PlaneAcc> accs(tiles * columns * plan.planes);
    for (PlaneAcc &a : accs)
      a.low32 = a.high32 = zero(i32Reg);

    // Groups of blocksPerWiden blocks: int16 lookups, then widen_add.
    auto group = [&](Value first, int64_t count) {
      for (PlaneAcc &a : accs)
        a.low16 = a.high16 = zero(i16Reg);
      for (int64_t s = 0; s < count; ++s)
        lookupBlock(tileBase, columns, add(first, s), accs,
                    /*combined=*/false);
      for (PlaneAcc &a : accs) {
        a.low32 = UkWidenAddOp::create(b, loc, i32Reg, a.low32, a.low16);
        a.high32 = UkWidenAddOp::create(b, loc, i32Reg, a.high32, a.high16);
      }
    };
    int64_t per = plan.blocksPerWiden, groups = plan.blocks / per;
    if (groups > 1) {
      SmallVector<Value> state;
      for (PlaneAcc &a : accs)
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
        group(mul(loop.getInductionVar(), per), per);
        SmallVector<Value> next;
        for (PlaneAcc &a : accs)
          next.append({a.low32, a.high32});
        scf::YieldOp::create(b, loc, next);
      }
      for (auto [i, a] : llvm::enumerate(accs)) {
        a.low32 = loop.getResult(2 * i);
        a.high32 = loop.getResult(2 * i + 1);
      }
    } else if (groups == 1) {
      group(constant(0), per);
    }
    if (int64_t rest = plan.blocks - groups * per)
      group(constant(groups * per), rest);

    for (int64_t t = 0; t < tiles; ++t)
      for (int64_t c = 0; c < columns; ++c) {
        ArrayRef<PlaneAcc> planes =
            ArrayRef(accs).slice((t * columns + c) * plan.planes, plan.planes);
        Value low = combinePlanes(planes, false);
        Value high = combinePlanes(planes, true);
        Value column = add(firstColumn, c);
        Value sum = memref::LoadOp::create(b, loc, xSums, column);
        Value scale = memref::LoadOp::create(b, loc, xScales, column);
        for (int64_t part = 0; part < plan.parts(); ++part) {
          // D - S: ternary_scale subtracts the row's sum from D.
          Value dot = rowDots(low, high, part, sum);
          Value out =
              UkTernaryScaleOp::create(b, loc, f32Reg, dot, sum, wScale, scale);
          store(firstTile, t, part, column, out);
        }
      }
  }

  //===--- Group formats: one scaled combination per 32-k block ------------//

  void buildGroups(Value firstTile, ArrayRef<Value> tileBase, Value firstColumn,
                   int64_t columns) {
    int64_t tiles = tileBase.size();
    int64_t outputs = tiles * columns * plan.parts();
    SmallVector<Value> init(outputs, zero(f32Reg));
    auto loop = scf::ForOp::create(b, loc, constant(0), constant(plan.blocks),
                                   constant(1), init);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value block = loop.getInductionVar();
      SmallVector<Value> ys(loop.getRegionIterArgs());
      SmallVector<PlaneAcc> accs(tiles * columns);
      for (PlaneAcc &a : accs) {
        a.low16 = a.high16 = zero(i16Reg);
        a.low32 = a.high32 = zero(i32Reg);
      }
      lookupBlock(tileBase, columns, block, accs, /*combined=*/true);
      for (PlaneAcc &a : accs) {
        a.low32 = UkWidenAddOp::create(b, loc, i32Reg, a.low32, a.low16);
        a.high32 = UkWidenAddOp::create(b, loc, i32Reg, a.high32, a.high16);
      }
      Value scaleGroup = div(block, plan.group / kBlockK);
      for (int64_t c = 0; c < columns; ++c) {
        Value at = add(mul(add(firstColumn, c), plan.blocks), block);
        Value sum = memref::LoadOp::create(b, loc, xSums, at);
        Value xScale = memref::LoadOp::create(b, loc, xScales, at);
        Value one = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0f));
        Value inv = arith::DivFOp::create(b, loc, one, xScale);
        for (int64_t t = 0; t < tiles; ++t) {
          const PlaneAcc &a = accs[t * columns + c];
          for (int64_t part = 0; part < plan.parts(); ++part) {
            Value dot = rowDots(a.low32, a.high32, part, sum);
            Value offset =
                add(mul(add(mul(add(firstTile, t), plan.kp / plan.group),
                            scaleGroup),
                        kTileRows),
                    part * plan.lanes);
            Value scale = UkLoadHalfOp::create(b, loc, f32Reg, scales, offset);
            Value zeroPoint, zeroSum;
            if (plan.hasZeros()) {
              zeroPoint = UkLoadHalfOp::create(b, loc, f32Reg, zeros, offset);
              zeroSum = sum;
            }
            Value &out = ys[(t * columns + c) * plan.parts() + part];
            out = UkBlockCombineOp::create(b, loc, f32Reg, out, dot, scale, inv,
                                           zeroPoint, zeroSum);
          }
        }
      }
      scf::YieldOp::create(b, loc, ys);
    }
    for (int64_t t = 0; t < tiles; ++t)
      for (int64_t c = 0; c < columns; ++c)
        for (int64_t part = 0; part < plan.parts(); ++part)
          store(firstTile, t, part, add(firstColumn, c),
                loop.getResult((t * columns + c) * plan.parts() + part));
  }

  //===--- Stores, prefetch, helpers ----------------------------------------//

  /// Stores rows [part * lanes, ..) of tile firstTile + t for `column`;
  /// rows m >= M are left alone.
  void store(Value firstTile, int64_t t, int64_t part, Value column,
             Value out) {
    Value row = add(mul(add(firstTile, t), kTileRows), part * plan.lanes);
    Value count;
    if (plan.m % kTileRows != 0) {
      // clamp(M - row, 0, lanes), compared as signed.
      Value m = constant(plan.m);
      Value past =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, row, m);
      Value left = sub(m, row);
      Value partial = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                            left, constant(plan.lanes));
      Value some =
          arith::SelectOp::create(b, loc, partial, left, constant(plan.lanes));
      count = arith::SelectOp::create(b, loc, past, constant(0), some);
    }
    UkStoreOp::create(b, loc, out, y, add(mul(column, plan.m), row), count);
  }

  /// Prefetches the codes prefetchBytes after `offset` (the tiles of a
  /// thread are contiguous), clamped to the last vector of the matrix.
  void prefetch(Value offset) {
    if (plan.prefetchBytes == 0)
      return;
    Value ahead = add(offset, plan.prefetchBytes);
    Value last = constant(plan.numTiles * plan.tileBytes - kVectorBytes);
    Value inside =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, ahead, last);
    UkPrefetchOp::create(b, loc, codes,
                         arith::SelectOp::create(b, loc, inside, ahead, last));
  }

  Value zero(VectorType type) {
    Attribute element =
        isa<FloatType>(type.getElementType())
            ? Attribute(b.getFloatAttr(type.getElementType(), 0.0))
            : Attribute(b.getIntegerAttr(type.getElementType(), 0));
    return arith::ConstantOp::create(b, loc,
                                     DenseElementsAttr::get(type, element));
  }

  const BitserialPlan &plan;
  Value codes, scales, zeros, xq, xScales, xSums, y, n, tileBegin, tileEnd,
      wScale, tables;
  VectorType byteReg, i16Reg, i32Reg, f32Reg;
};

class LowerLutBitserialPass
    : public lowbit::impl::LowBitLowerLutBitserialBase<LowerLutBitserialPass> {
public:
  using LowBitLowerLutBitserialBase::LowBitLowerLutBitserialBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<MpGemmOp> ops;
    func.walk([&](MpGemmOp op) {
      if (isa_and_present<LutBitserialAttr>(op.getConfigAttr()))
        ops.push_back(op);
    });
    if (ops.empty())
      return;
    std::unique_ptr<TargetInfo> targetInfo = createTargetInfo(target);
    if (!targetInfo) {
      func.emitError() << "lowbit-lower-lut-bitserial: unknown target '"
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
    FailureOr<BitserialPlan> plan = makePlan(op, *targetInfo);
    if (failed(plan))
      return signalPassFailure();
    Location loc = func.getLoc();
    Block &entry = resetToKernelAbi(func);
    OpBuilder b = OpBuilder::atBlockEnd(&entry);
    BitserialKernelBuilder(b, loc, *plan, entry.getArguments()).build();
    func::ReturnOp::create(b, loc);
    func.walk<WalkOrder::PostOrder, ReverseIterator>([](Operation *op) {
      if (isOpTriviallyDead(op))
        op->erase();
    });
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
    int64_t registerBytes = target.getRegisterBytes();
    if (!target.hasByteTableLookup() || registerBytes % 16 != 0 ||
        kVectorBytes % registerBytes != 0)
      return op.emitOpError()
             << "target " << target.getName()
             << " has no 16-byte-lane table lookup (pshufb/tbl) on "
             << registerBytes
             << "-byte registers; lowbit-lower-lut-bitserial needs one";
    auto config = cast<LutBitserialAttr>(op.getConfigAttr());
    if (config.getFastAggregation())
      return op.emitOpError()
             << "lut_bitserial fast_aggregation (8-bit tables) has no "
                "lowering yet; the lossless int16 tables are the only mode";
    if (config.getActGroup() != kBlockK)
      return op.emitOpError()
             << "lut_bitserial act_group must be " << kBlockK
             << " (the activation block of kernel_abi.h that the lossless "
                "int16 tables follow), got "
             << config.getActGroup();
    if (config.getKfactor() % kGroupsPerBlock != 0 ||
        config.getKfactor() > kGroupsPerBlock * kMaxBlocksPerWiden)
      return op.emitOpError()
             << "lut_bitserial kfactor (groups of 4 summed in int16) must "
                "be a multiple of "
             << kGroupsPerBlock << " up to "
             << kGroupsPerBlock * kMaxBlocksPerWiden << ", got "
             << config.getKfactor();
    WeightAttr weight = op.getWeight();
    BitserialPlan plan;
    plan.encoding = weight.getEncoding();
    plan.planes = weight.getBits();
    plan.m = op.getM();
    plan.kp = llvm::alignTo(op.getK(), kBlockK);
    plan.blocks = plan.kp / kBlockK;
    plan.group = weight.getGroup();
    plan.tileBytes = plan.blocks * plan.planes * kVectorBytes;
    plan.numTiles = llvm::divideCeil(plan.m, kTileRows);
    plan.tilesPerGroup = config.getBm() / kTileRows;
    plan.bn = config.getBn();
    plan.blocksPerWiden = config.getKfactor() / kGroupsPerBlock;
    plan.registerBytes = registerBytes;
    plan.halves = kVectorBytes / registerBytes;
    plan.lanes = registerBytes / 4;
    plan.prefetchBytes = target.getPrefetchBytes();
    if (plan.bn * plan.columnTableBytes() > kMaxStackBytes)
      return op.emitOpError()
             << "the tables of bn = " << plan.bn << " activation rows take "
             << plan.bn * plan.columnTableBytes()
             << " bytes for K = " << op.getK() << ", more than the "
             << kMaxStackBytes << " a kernel keeps on its stack";
    return plan;
  }
};

} // namespace
