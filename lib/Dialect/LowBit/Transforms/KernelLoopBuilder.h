//===- KernelLoopBuilder.h - index arithmetic for kernel lowerings -*- C++ -*-//
//
// What lowbit-lower-upconvert, lowbit-lower-lut-elementwise and
// lowbit-lower-lut-bitserial share when they write a kernel body: scf.for
// loops (also with loop-carried registers, tile groups, blocks of
// activation rows) and index arithmetic that folds constants as it goes (so
// that offsets of fully unrolled code are constants and no unused constants
// are left), the partial stores of the last tile, finding the mpgemm a
// pass lowers (the whole function) with its TargetInfo, and what the two
// LUT lowerings share: the accumulator plan and the prefetching of K-panel
// layouts.
//
//===----------------------------------------------------------------------===//

#ifndef LOWBIT_LIB_DIALECT_LOWBIT_TRANSFORMS_KERNELLOOPBUILDER_H
#define LOWBIT_LIB_DIALECT_LOWBIT_TRANSFORMS_KERNELLOOPBUILDER_H

#include "lowbit/Dialect/LowBit/IR/LowBitOps.h"
#include "lowbit/Target/TargetInfo.h"
#include "lowbit/bitserial_abi.h"
#include "lowbit/kernel_abi.h"
#include "lowbit/lut_abi.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Iterators.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <algorithm>

namespace mlir::lowbit {

/// The largest K an any-shape ternary kernel takes (kernel_abi.h,
/// LOWBIT_ANY_SHAPE_MAX_TERNARY_K): its lowering picks the int32 accumulator
/// chains for this K where a static kernel picks them for its own.
inline constexpr int64_t kAnyShapeMaxTernaryK = LOWBIT_ANY_SHAPE_MAX_TERNARY_K;

/// A lowbit.uk.stack_buffer of `bytes` bytes, at an `alignment`-byte
/// boundary where one is given (else where the C++ compiler places it).
inline Value createStackBuffer(OpBuilder &b, Location loc, int64_t bytes,
                               int64_t alignment = 0) {
  return UkStackBufferOp::create(
      b, loc, MemRefType::get({ShapedType::kDynamic}, b.getI8Type()),
      b.getI64IntegerAttr(bytes),
      alignment ? b.getI64IntegerAttr(alignment) : IntegerAttr());
}
/// The largest K of an any-shape kernel that keeps the tables of all K on
/// its stack (kernel_abi.h, LOWBIT_ANY_SHAPE_MAX_LUT_K): lut-elementwise's
/// tl1/tl2 and lut-bitserial's, whose table buffers are sized for it.
inline constexpr int64_t kAnyShapeMaxLutK = LOWBIT_ANY_SHAPE_MAX_LUT_K;

/// Whether `op` is the any-shape form of lowbit.mpgemm: M and K dynamic,
/// run-time arguments of the kernel (lowbit_any_kernel_fn).
inline bool isAnyShape(MpGemmOp op) {
  return ShapedType::isDynamic(op.getM()) || ShapedType::isDynamic(op.getK());
}

/// Empties `func` and gives it the signature of lowbit_kernel_fn
/// (runtime/include/lowbit/kernel_abi.h): codes, scales, zeros, xq,
/// x_scales, x_sums (read-only), y, n, tile_begin, tile_end, w_scale; with
/// `anyShape` that of lowbit_any_kernel_fn, which adds M and K (i64).
/// Returns the empty entry block, whose arguments are those parameters.
inline Block &resetToKernelAbi(func::FuncOp func, bool anyShape = false) {
  MLIRContext *ctx = func.getContext();
  auto memref = [&](Type element) {
    return MemRefType::get({ShapedType::kDynamic}, element);
  };
  Type u8 = IntegerType::get(ctx, 8, IntegerType::Unsigned);
  Type u16 = IntegerType::get(ctx, 16, IntegerType::Unsigned);
  Type i64 = IntegerType::get(ctx, 64);
  Type f32 = Float32Type::get(ctx);
  SmallVector<Type> inputs = {memref(u8),  memref(u16),
                              memref(u16), memref(IntegerType::get(ctx, 8)),
                              memref(f32), memref(IntegerType::get(ctx, 32)),
                              memref(f32), i64,
                              i64,         i64,
                              f32};
  if (anyShape)
    inputs.append({i64, i64});
  Block &entry = func.getBody().front();
  entry.clear();
  entry.eraseArguments(0, entry.getNumArguments());
  for (Type type : inputs)
    entry.addArgument(type, func.getLoc());
  func.setFunctionType(FunctionType::get(ctx, inputs, {}));
  func.setAllArgAttrs(ArrayRef<DictionaryAttr>{});
  func.setAllResultAttrs(ArrayRef<DictionaryAttr>{});
  for (unsigned i = 0; i < 6; ++i)
    func.setArgAttr(i, kReadOnlyArgAttrName, UnitAttr::get(ctx));
  return entry;
}

/// Replaces the body of `func` by the kernel `build(builder, arguments)`
/// writes on the lowbit_kernel_fn signature (resetToKernelAbi), returns, and
/// erases what the constant folding of the index arithmetic left unused.
template <typename BuildFn>
void rewriteKernelFunction(func::FuncOp func, BuildFn build,
                           bool anyShape = false) {
  Location loc = func.getLoc();
  Block &entry = resetToKernelAbi(func, anyShape);
  OpBuilder b = OpBuilder::atBlockEnd(&entry);
  build(b, entry.getArguments());
  func::ReturnOp::create(b, loc);
  func.walk<WalkOrder::PostOrder, ReverseIterator>([](Operation *op) {
    if (isOpTriviallyDead(op))
      op->erase();
  });
}

/// Checks that `target` has a byte table lookup (vpermb / pshufb / tbl) on
/// registers of whole 16-byte lanes dividing the `vectorBytes` vectors of a
/// LUT layout, as the LUT lowerings need; emits the error on `op` otherwise.
inline LogicalResult checkByteTableLookup(MpGemmOp op, const TargetInfo &target,
                                          int64_t vectorBytes,
                                          StringRef passName) {
  int64_t registerBytes = target.getRegisterBytes();
  if (target.hasByteTableLookup() && registerBytes % 16 == 0 &&
      vectorBytes % registerBytes == 0)
    return success();
  return op.emitOpError() << "target " << target.getName()
                          << " has no byte table lookup (vpermb/pshufb/tbl) "
                             "on "
                          << registerBytes << "-byte registers; " << passName
                          << " needs one";
}

/// The kernel a lowering pass rewrites `func` into: its one lowbit.mpgemm
/// and the TargetInfo of the module's target (its lowbit.target).
struct KernelToLower {
  MpGemmOp op; // null: `func` has no op with the pass's config
  std::unique_ptr<TargetInfo> target;
};

/// The mpgemm of `func` configured with `ConfigAttr`, when there is one, and
/// the TargetInfo of the module's lowbit.target. Fails (with the error
/// emitted) for a missing or unknown target, or unless the op is the whole
/// body of `func` (one lowbit.mpgemm whose result is returned).
template <typename ConfigAttr>
FailureOr<KernelToLower> findKernelToLower(func::FuncOp func) {
  SmallVector<MpGemmOp> ops;
  func.walk([&](MpGemmOp op) {
    if (isa_and_present<ConfigAttr>(op.getConfigAttr()))
      ops.push_back(op);
  });
  if (ops.empty())
    return KernelToLower{};
  FailureOr<std::unique_ptr<TargetInfo>> target = lookupTargetInfo(func);
  if (failed(target))
    return failure();
  MpGemmOp op = ops.front();
  Block &body = func.getBody().front();
  auto ret = dyn_cast<func::ReturnOp>(body.getTerminator());
  if (ops.size() != 1 || !func.getBody().hasOneBlock() ||
      &body.front() != op.getOperation() || op->getNextNode() != ret ||
      ret.getNumOperands() != 1 || ret.getOperand(0) != op.getResult()) {
    op.emitOpError() << "can only be lowered as the whole body of its "
                        "function (one lowbit.mpgemm whose result is "
                        "returned)";
    return failure();
  }
  return KernelToLower{op, std::move(*target)};
}

/// The int32 sums of the low and high table bytes of lowbit.uk.lut_dot
/// (lut_abi.h, bitserial_abi.h), one pair per accumulator; `high` is null
/// for the one sum of lowbit.uk.lut_dot8 (int8 tables), kept in `low`.
struct LutAcc {
  Value low, high;
};

/// LutAcc pairs as the flat state of a carried loop (a null `high`, as
/// lut_dot8 sums have, takes no slot): packLutAccs writes the state,
/// unpackLutAccs reads the loop's values back into the pairs.
inline void packLutAccs(ArrayRef<LutAcc> accs, SmallVectorImpl<Value> &state) {
  state.clear();
  for (const LutAcc &a : accs) {
    state.push_back(a.low);
    if (a.high)
      state.push_back(a.high);
  }
}
inline void unpackLutAccs(ArrayRef<Value> state,
                          MutableArrayRef<LutAcc> accs) {
  size_t next = 0;
  for (LutAcc &a : accs) {
    a.low = state[next++];
    if (a.high)
      a.high = state[next++];
  }
}

/// How the LUT lowerings spread their lut_dot sums over accumulator pairs:
/// `sets` that consecutive index vectors take turns on, each with
/// `nibblePairs` pairs per (tile, activation row, register half): 2 (one
/// per nibble) or 1 (both nibbles on one pair).
struct LutAccumulators {
  int64_t sets = 1, nibblePairs = 2;
};

/// The accumulators of `tiles` tiles x `columns` activation rows whose
/// 64-byte vectors are `halves` registers. A set is 2 pairs (nibbles) per
/// (tile, row, register half), 4 dot chains (low and high sums): as many
/// sets as give the target's dot chains twice over (a chain gets one dot
/// per index vector, whose other ~12 ops do not hide the dot latency),
/// within half of the registers. When the accumulators fit the register
/// file but not together with the tables both nibbles' lookups of a
/// register hold (getLutTableRegisters, e.g. 4 registers per 64-byte table
/// on 16-byte registers) and a few working registers, the nibbles share
/// one pair, which halves the accumulators and still leaves 2 chains per
/// (tile, row, register half).
inline LutAccumulators planLutAccumulators(const TargetInfo &target,
                                           int64_t halves, int64_t tiles,
                                           int64_t columns) {
  // Index, looked-up bytes, nibble mask, selectors, multiplier bytes.
  const int64_t workRegisters = 6;
  LutAccumulators plan;
  int64_t pairs = 2 * halves * tiles * columns;
  int64_t registers = target.getNumRegisters();
  plan.sets =
      std::clamp<int64_t>(target.getDotChains() / pairs, 1,
                          std::max<int64_t>(1, registers / 2 / (2 * pairs)));
  int64_t accumulators = 2 * pairs * plan.sets;
  if (accumulators + workRegisters <= registers &&
      accumulators + 2 * target.getLutTableRegisters() + workRegisters >
          registers)
    plan.nibblePairs = 1;
  return plan;
}

/// lut_abi.h's lane order: the int32 accumulators (low + 256 high) of a
/// (tile, activation row), one per quarter of its 16 rows.
inline constexpr int64_t kLaneQuarters = 4;

class KernelLoopBuilder {
  /// The cache line the prefetches step by (the layouts' 64-byte vectors).
  static constexpr int64_t kPrefetchLineBytes = 64;

public:
  KernelLoopBuilder(OpBuilder &b, Location loc) : b(b), loc(loc) {}

protected:
  /// `scf.for %i = lower to upper step step { body(%i) }`.
  void forLoop(Value lower, Value upper, int64_t step,
               function_ref<void(Value)> body) {
    auto loop = scf::ForOp::create(b, loc, lower, upper, constant(step));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    body(loop.getInductionVar());
  }

  /// `scf.for %i = 0 to iterations` whose loop-carried values are `state`:
  /// `body(%i)` reads and updates `state` inside the loop, and `state` is
  /// the loop's results after it.
  void carriedLoop(int64_t iterations, SmallVectorImpl<Value> &state,
                   function_ref<void(Value)> body) {
    auto loop = scf::ForOp::create(b, loc, constant(0), constant(iterations),
                                   constant(1), state);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      state.assign(loop.getRegionIterArgs().begin(),
                   loop.getRegionIterArgs().end());
      body(loop.getInductionVar());
      scf::YieldOp::create(b, loc, state);
    }
    state.assign(loop.getResults().begin(), loop.getResults().end());
  }

  /// Runs `body` for steps [start, start + total), `perIteration` steps
  /// per iteration of an scf.for over whole iterations whose loop-carried
  /// values are `state` (which `body` reads and updates), then the
  /// remaining steps.
  void steppedLoop(int64_t start, int64_t total, int64_t perIteration,
                   SmallVectorImpl<Value> &state,
                   function_ref<void(Value)> body) {
    chunkedLoop(start, total, perIteration, state,
                [&](Value first, int64_t count) {
                  for (int64_t s = 0; s < count; ++s)
                    body(add(first, s));
                });
  }
  /// steppedLoop with the steps of one iteration handed to `chunk(first,
  /// count)` together: `perIteration` steps per iteration, then the
  /// remaining ones (fewer than 2 perIteration) in one chunk.
  void chunkedLoop(int64_t start, int64_t total, int64_t perIteration,
                   SmallVectorImpl<Value> &state,
                   function_ref<void(Value, int64_t)> chunk) {
    int64_t iterations = total / perIteration;
    if (iterations > 1) {
      carriedLoop(iterations, state, [&](Value i) {
        chunk(add(mul(i, perIteration), start), perIteration);
      });
      start += iterations * perIteration;
      total -= iterations * perIteration;
    }
    if (total > 0)
      chunk(constant(start), total);
  }

  /// The block loop of a group format, whose 32-k blocks share a scale per
  /// group of `perGroup` blocks: blocks [start, start + total) (`start` a
  /// group's first block), `perIteration` per loop iteration. Per group,
  /// `enter(first)` (`first` its first block) loads what its blocks share,
  /// `block(b, sums)` adds each block b into `sums` (`count` float registers
  /// starting at `zero`) and `fold(first, sums)` then folds them into
  /// `state`, the loop-carried outputs. An iteration holds whole groups, or
  /// a group is a loop of whole iterations; when neither divides the other
  /// every block is its own group. The last group may be short.
  void groupedLoop(int64_t start, int64_t total, int64_t perIteration,
                   int64_t perGroup, Value zero, int64_t count,
                   SmallVectorImpl<Value> &state,
                   function_ref<void(Value)> enter,
                   function_ref<void(Value, SmallVectorImpl<Value> &)> block,
                   function_ref<void(Value, ArrayRef<Value>)> fold) {
    if (perIteration % perGroup != 0 && perGroup % perIteration != 0)
      perGroup = 1;
    auto group = [&](Value first, int64_t blocks) {
      enter(first);
      SmallVector<Value> sums(count, zero);
      if (perGroup > perIteration && blocks == perGroup) {
        carriedLoop(blocks / perIteration, sums, [&](Value i) {
          Value base = add(mul(i, perIteration), first);
          for (int64_t s = 0; s < perIteration; ++s)
            block(add(base, s), sums);
        });
      } else {
        for (int64_t s = 0; s < blocks; ++s)
          block(add(first, s), sums);
      }
      fold(first, sums);
    };
    int64_t chunk = std::max(perIteration, perGroup);
    int64_t chunks = total / chunk;
    steppedLoop(0, chunks, 1, state, [&](Value c) {
      Value first = add(mul(c, chunk), start);
      for (int64_t g = 0; g < chunk; g += perGroup)
        group(add(first, g), perGroup);
    });
    for (int64_t g = chunks * chunk; g < total; g += perGroup)
      group(constant(start + g), std::min(perGroup, total - g));
  }

  //===--- Loops of any-shape kernels (run-time K) ------------------------//

  /// `scf.for %i = lower to upper step step` whose loop-carried values are
  /// `state`, as carriedLoop.
  void carriedRange(Value lower, Value upper, int64_t step,
                    SmallVectorImpl<Value> &state,
                    function_ref<void(Value)> body) {
    auto loop = scf::ForOp::create(b, loc, lower, upper, constant(step), state);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      state.assign(loop.getRegionIterArgs().begin(),
                   loop.getRegionIterArgs().end());
      body(loop.getInductionVar());
      scf::YieldOp::create(b, loc, state);
    }
    state.assign(loop.getResults().begin(), loop.getResults().end());
  }

  /// steppedLoop for a run-time `total` (steps [0, total)): an scf.for over
  /// the whole iterations of `perIteration` steps, then one over the
  /// remaining steps one at a time.
  void dynamicSteppedLoop(Value total, int64_t perIteration,
                          SmallVectorImpl<Value> &state,
                          function_ref<void(Value)> body) {
    dynamicChunkedLoop(total, perIteration, state,
                       [&](Value first, int64_t count) {
                         for (int64_t s = 0; s < count; ++s)
                           body(add(first, s));
                       });
  }
  /// dynamicSteppedLoop with chunks as chunkedLoop's: the remaining steps
  /// are chunks of one.
  void dynamicChunkedLoop(Value total, int64_t perIteration,
                          SmallVectorImpl<Value> &state,
                          function_ref<void(Value, int64_t)> chunk) {
    Value iterations = div(total, perIteration);
    carriedRange(constant(0), iterations, 1, state, [&](Value i) {
      chunk(mul(i, perIteration), perIteration);
    });
    if (perIteration > 1)
      carriedRange(mul(iterations, perIteration), total, 1, state,
                   [&](Value step) { chunk(step, 1); });
  }

  /// groupedLoop for a run-time `total` (blocks [0, total)), a multiple of
  /// `perGroup` (K is a multiple of the group size): whole chunks of
  /// max(perIteration, perGroup) blocks in one scf.for, then the remaining
  /// whole groups in another.
  void dynamicGroupedLoop(
      Value total, int64_t perIteration, int64_t perGroup, Value zero,
      int64_t count, SmallVectorImpl<Value> &state,
      function_ref<void(Value)> enter,
      function_ref<void(Value, SmallVectorImpl<Value> &)> block,
      function_ref<void(Value, ArrayRef<Value>)> fold) {
    if (perIteration % perGroup != 0 && perGroup % perIteration != 0)
      perGroup = 1;
    auto group = [&](Value first) {
      enter(first);
      SmallVector<Value> sums(count, zero);
      if (perGroup > perIteration) {
        carriedLoop(perGroup / perIteration, sums, [&](Value i) {
          Value base = add(mul(i, perIteration), first);
          for (int64_t s = 0; s < perIteration; ++s)
            block(add(base, s), sums);
        });
      } else {
        for (int64_t s = 0; s < perGroup; ++s)
          block(add(first, s), sums);
      }
      fold(first, sums);
    };
    int64_t chunk = std::max(perIteration, perGroup);
    Value chunks = div(total, chunk);
    carriedRange(constant(0), chunks, 1, state, [&](Value c) {
      Value first = mul(c, chunk);
      for (int64_t g = 0; g < chunk; g += perGroup)
        group(add(first, g));
    });
    if (chunk > perGroup)
      carriedRange(mul(chunks, chunk), total, perGroup, state, group);
  }

  /// `lhs * rhs` for a run-time `rhs`, folded when `lhs` is 0 or 1.
  Value mulValue(Value lhs, Value rhs) {
    if (std::optional<int64_t> l = getConstantIntValue(lhs)) {
      if (*l == 0)
        return lhs;
      if (*l == 1)
        return rhs;
    }
    return arith::MulIOp::create(b, loc, lhs, rhs);
  }

  /// Lanes of the register of output rows from `row` to store for a
  /// run-time `m`: clamp(m - row, 0, lanes).
  Value storeCount(Value row, Value mv, int64_t lanes) {
    Value past =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, row, mv);
    Value left = sub(mv, row);
    Value partial = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                          left, constant(lanes));
    Value some =
        arith::SelectOp::create(b, loc, partial, left, constant(lanes));
    return arith::SelectOp::create(b, loc, past, constant(0), some);
  }

  /// steppedLoop and dynamicSteppedLoop with lut_dot accumulator pairs (or
  /// lut_dot8 sums, whose `high` stays null) as the state.
  void steppedLoop(int64_t start, int64_t total, int64_t perIteration,
                   SmallVectorImpl<LutAcc> &accs,
                   function_ref<void(Value)> body) {
    onLutAccs(accs, body, [&](SmallVectorImpl<Value> &state,
                              function_ref<void(Value)> step) {
      steppedLoop(start, total, perIteration, state, step);
    });
  }
  void dynamicSteppedLoop(Value total, int64_t perIteration,
                          SmallVectorImpl<LutAcc> &accs,
                          function_ref<void(Value)> body) {
    onLutAccs(accs, body, [&](SmallVectorImpl<Value> &state,
                              function_ref<void(Value)> step) {
      dynamicSteppedLoop(total, perIteration, state, step);
    });
  }
  /// chunkedLoop and dynamicChunkedLoop with lut_dot accumulators.
  void chunkedLoop(int64_t start, int64_t total, int64_t perIteration,
                   SmallVectorImpl<LutAcc> &accs,
                   function_ref<void(Value, int64_t)> chunk) {
    onLutAccs(accs, chunk, [&](SmallVectorImpl<Value> &state,
                               function_ref<void(Value, int64_t)> step) {
      chunkedLoop(start, total, perIteration, state, step);
    });
  }
  void dynamicChunkedLoop(Value total, int64_t perIteration,
                          SmallVectorImpl<LutAcc> &accs,
                          function_ref<void(Value, int64_t)> chunk) {
    onLutAccs(accs, chunk, [&](SmallVectorImpl<Value> &state,
                               function_ref<void(Value, int64_t)> step) {
      dynamicChunkedLoop(total, perIteration, state, step);
    });
  }
  /// Runs `loop(state, step)`, a loop whose carried values are `state` and
  /// whose steps call `step`, with `accs` packed into the state: `body`
  /// reads and updates `accs` in each step.
  template <typename... Args, typename Loop>
  void onLutAccs(SmallVectorImpl<LutAcc> &accs,
                 function_ref<void(Args...)> body, Loop loop) {
    SmallVector<Value> state;
    packLutAccs(accs, state);
    loop(state, [&](Args... args) {
      unpackLutAccs(state, accs);
      body(args...);
      packLutAccs(accs, state);
    });
    unpackLutAccs(state, accs);
  }

  /// `columns(first, bn)` for the whole blocks of `bn` activation rows of
  /// [0, n), then `columns(first, 1)` for each remaining row.
  void forColumnBlocks(Value n, int64_t bn,
                       function_ref<void(Value, int64_t)> columns) {
    Value rows = toIndex(n);
    if (bn == 1) {
      forLoop(constant(0), rows, 1, [&](Value c) { columns(c, 1); });
      return;
    }
    Value fullEnd = mul(div(rows, bn), bn);
    forLoop(constant(0), fullEnd, bn, [&](Value c) { columns(c, bn); });
    forLoop(fullEnd, rows, 1, [&](Value c) { columns(c, 1); });
  }

  /// The end of the whole groups of `group` tiles from `begin` within
  /// [begin, end) (`begin` for group 1 or an empty range).
  Value tileGroupsEnd(Value begin, Value end, int64_t group) {
    if (group == 1)
      return begin;
    Value positive =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, end, begin);
    Value count =
        arith::SelectOp::create(b, loc, positive, sub(end, begin), constant(0));
    return add(begin, mul(div(count, group), group));
  }

  /// Lanes of the register of output rows from `row` to store: clamp(m -
  /// row, 0, lanes), or null when m is a multiple of the 16-row tiles.
  Value storeCount(Value row, int64_t m, int64_t lanes) {
    if (m % 16 == 0)
      return Value();
    Value mv = constant(m);
    Value past =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, row, mv);
    Value left = sub(mv, row);
    Value partial = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                          left, constant(lanes));
    Value some =
        arith::SelectOp::create(b, loc, partial, left, constant(lanes));
    return arith::SelectOp::create(b, loc, past, constant(0), some);
  }

  /// A thread's weights in a K-panel layout (lut_abi.h, bitserial_abi.h):
  /// panel c holds every tile's piece in tile order, so the tiles [begin,
  /// end) of a thread are one contiguous run per panel. `end` is where the
  /// run of the panel being swept ends and `jump` the distance from there to
  /// the thread's run of the next panel (both null for the last panel).
  struct PanelRun {
    Value end, jump;
  };
  /// The run of the panel whose pieces are `pieceBytes` from `panelOffset`
  /// on, followed by the panel of `nextPieceBytes` from `nextPanelOffset`.
  PanelRun panelRun(Value begin, Value end, int64_t pieceBytes,
                    int64_t panelOffset, int64_t nextPieceBytes,
                    int64_t nextPanelOffset) {
    Value runEnd = add(mul(end, pieceBytes), panelOffset);
    Value next = add(mul(begin, nextPieceBytes), nextPanelOffset);
    return {runEnd, sub(next, runEnd)};
  }
  /// The same with run-time sizes (any-shape kernels).
  PanelRun panelRun(Value begin, Value end, Value pieceBytes,
                    Value panelOffset, Value nextPieceBytes,
                    Value nextPanelOffset) {
    Value runEnd = add(mulValue(end, pieceBytes), panelOffset);
    Value next = add(mulValue(begin, nextPieceBytes), nextPanelOffset);
    return {runEnd, sub(next, runEnd)};
  }

  /// Prefetches the `lines` cache lines of `codes` `distance` bytes after
  /// `offset` in the order the kernel reads them (one address computation
  /// for all of them): past the end of `run` comes the next run; clamped
  /// to the last lines of the `total` bytes.
  void prefetchAhead(Value codes, Value offset, int64_t distance,
                     int64_t total, int64_t lines, const PanelRun &run) {
    if (distance != 0)
      prefetchAhead(codes, offset, distance, constant(total), lines, run);
  }
  /// The same against a run-time `total` (any-shape kernels).
  void prefetchAhead(Value codes, Value offset, int64_t distance, Value total,
                     int64_t lines, const PanelRun &run) {
    if (distance == 0)
      return;
    Value ahead = add(offset, distance);
    if (run.end) {
      Value past = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                         ahead, run.end);
      ahead = arith::SelectOp::create(b, loc, past, add(ahead, run.jump),
                                      ahead);
    }
    Value last = add(total, -lines * kPrefetchLineBytes);
    Value inside =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, ahead, last);
    Value first = arith::SelectOp::create(b, loc, inside, ahead, last);
    for (int64_t line = 0; line < lines; ++line)
      UkPrefetchOp::create(b, loc, codes,
                           add(first, line * kPrefetchLineBytes));
  }

  /// Prefetches the `distance` bytes of `codes` from `start` (clamped to the
  /// `total` bytes), which prefetchAhead, that far ahead of the reads,
  /// never asks for: the memory fetches them while the tables are built.
  void prefetchStart(Value codes, Value start, int64_t distance,
                     int64_t total) {
    if (distance == 0)
      return;
    Value ahead = add(start, distance);
    prefetchRange(codes, start, ahead, constant(total));
  }
  /// The same against a run-time `total` (any-shape kernels).
  void prefetchStart(Value codes, Value start, int64_t distance, Value total) {
    if (distance != 0)
      prefetchRange(codes, start, add(start, distance), total);
  }
  /// Prefetches `codes` from `start` to `ahead`, at most to `total`.
  void prefetchRange(Value codes, Value start, Value ahead, Value total) {
    Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                         ahead, total);
    Value end = arith::SelectOp::create(b, loc, inside, ahead, total);
    forLoop(start, end, kPrefetchLineBytes,
            [&](Value at) { UkPrefetchOp::create(b, loc, codes, at); });
  }

  //===--- lut_abi.h's lane order (TargetInfo::hasLutLaneOrder) -----------//
  //
  // A 64-byte index vector is two registers; register h holds slots 2h and
  // 2h + 1 of 16 rows, one slot per 16-byte lane, so one lut_lookup per
  // register, nibble and table byte (low, high) reads the 32 table bytes at
  // 128 nibble + 64 byte + 32h. A row's two nibbles are zipped into an
  // int16 lane and multiplied (dot2) into int16 pair sums per half of the
  // rows ("words": low, high table bytes), widened per block into the int32
  // sums low + 256 high per quarter of the rows (quarter 2 half + hi,
  // lanes: table pairs; a LutAcc with `low` only), whose lanes are folded
  // into rows at the end.

  /// Adds to `words` (halves 0 and 1) the lookups of the lane-order
  /// registers `w` in the tables at `tables`[`at`], each row's two nibbles
  /// times `multipliers[2h + half]` (+1 / -1 signs, or 2^p). With
  /// `int8Entries` the tables are lut-bitserial's signed int8 ones (64
  /// bytes per nibble, `words` low only) and the multipliers the unsigned
  /// operand of dot2.
  void lookupLanes(ArrayRef<Value> w, Value tables, Value at,
                   ArrayRef<Value> multipliers, MutableArrayRef<LutAcc> words,
                   bool int8Entries = false) {
    auto byteReg = cast<VectorType>(w[0].getType());
    auto wordReg = VectorType::get({byteReg.getNumElements() / 2},
                                   b.getIntegerType(16));
    for (int64_t x = 0; x < laneTableBytes(int8Entries); ++x) {
      Value looked[2][2];
      for (int64_t h = 0; h < 2; ++h)
        for (int64_t p = 0; p < 2; ++p)
          looked[h][p] = UkLutLookupOp::create(
              b, loc, byteReg, w[h], tables,
              add(at, laneTableOffset(int8Entries, p, x, h)), p == 1);
      for (int64_t half = 0; half < 2; ++half) {
        Value pairs[2];
        for (int64_t h = 0; h < 2; ++h)
          pairs[h] = dot2(UkZipOp::create(b, loc, byteReg, looked[h][0],
                                          looked[h][1], half == 1),
                          multipliers[2 * h + half], wordReg, int8Entries);
        Value &sum = x == 0 ? words[half].low : words[half].high;
        Value both = arith::AddIOp::create(b, loc, pairs[0], pairs[1]);
        sum = sum ? arith::AddIOp::create(b, loc, sum, both) : both;
      }
    }
  }

  /// The bytes per table entry in lane order: int16 tables' low and high
  /// byte, or int8 tables' one.
  static int64_t laneTableBytes(bool int8Entries) {
    return int8Entries ? 1 : 2;
  }
  /// Where the 32 table bytes of register h, nibble p and entry byte x lie
  /// from a block's tables in lane order (64 bytes per nibble and entry
  /// byte, one 16-byte table per lane).
  static int64_t laneTableOffset(bool int8Entries, int64_t p, int64_t x,
                                 int64_t h) {
    return 64 * laneTableBytes(int8Entries) * p + 64 * x + 32 * h;
  }

  /// dot2 of looked-up table bytes and their multipliers: the table bytes
  /// unsigned (int16 tables' low and high bytes), or signed (`int8Entries`,
  /// the multipliers then unsigned).
  Value dot2(Value looked, Value multipliers, VectorType wordReg,
             bool int8Entries) {
    if (int8Entries)
      return UkDot2Op::create(b, loc, wordReg, multipliers, looked);
    return UkDot2Op::create(b, loc, wordReg, looked, multipliers);
  }

  /// The words of the two halves of the rows before their first lookup
  /// (null: the first lookupLanes sets them; a zero constant would stay
  /// behind in the C++ as an unused variable).
  SmallVector<LutAcc, 2> freshWords() { return {LutAcc{}, LutAcc{}}; }

  /// `words` widened (low + 256 high) into the int32 sums of the quarters
  /// of the rows of (tile, activation row) `tileColumn` in `accs` (exact
  /// while the int16 pair sums stay below 2^15). Words with `low` only
  /// (int8 tables) are widened times the words (a, 0) of `multipliers`.
  void widenLanes(ArrayRef<LutAcc> words, MutableArrayRef<LutAcc> accs,
                  int64_t tileColumn, Value multipliers = {}) {
    MutableArrayRef<LutAcc> quarters =
        accs.slice(tileColumn * kLaneQuarters, kLaneQuarters);
    auto i32Reg = cast<VectorType>(quarters[0].low.getType());
    for (int64_t half = 0; half < 2; ++half)
      for (int64_t hi = 0; hi < 2; ++hi) {
        Value &sum = quarters[2 * half + hi].low;
        const LutAcc &w = words[half];
        Value wide = UkExtendOp::create(b, loc, i32Reg, w.low,
                                        w.high ? w.high : w.low, multipliers,
                                        hi == 1);
        // Not 0 + wide: folded late, it would leave the zero unused.
        sum = matchPattern(sum, m_Zero())
                  ? wide
                  : arith::AddIOp::create(b, loc, sum, wide);
      }
  }

  /// Rows [8h, 8h + 8) of (tile, activation row) `tileColumn` in `accs`:
  /// the two lanes (table pairs) of its quarters 2h and 2h + 1 folded.
  Value laneRows(ArrayRef<LutAcc> accs, int64_t tileColumn, int64_t h) {
    ArrayRef<LutAcc> quarters =
        accs.slice(tileColumn * kLaneQuarters, kLaneQuarters);
    return UkLaneFoldOp::create(b, loc, quarters[0].low.getType(),
                                quarters[2 * h].low, quarters[2 * h + 1].low);
  }

  /// A register constant with every lane `value` (integer lanes) or 0.0.
  Value splat(VectorType type, int64_t value) {
    Type element = type.getElementType();
    Attribute lane = isa<FloatType>(element)
                         ? Attribute(b.getFloatAttr(element, double(value)))
                         : Attribute(b.getIntegerAttr(element, value));
    return arith::ConstantOp::create(b, loc,
                                     DenseElementsAttr::get(type, lane));
  }

  Value toIndex(Value v) {
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
  }
  Value constant(int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  }
  Value add(Value lhs, Value rhs) {
    std::optional<int64_t> l = getConstantIntValue(lhs),
                           r = getConstantIntValue(rhs);
    if (l && r)
      return constant(*l + *r);
    if (r && *r == 0)
      return lhs;
    if (l && *l == 0)
      return rhs;
    return arith::AddIOp::create(b, loc, lhs, rhs);
  }
  Value add(Value lhs, int64_t rhs) {
    if (rhs == 0)
      return lhs;
    if (std::optional<int64_t> l = getConstantIntValue(lhs))
      return constant(*l + rhs);
    return arith::AddIOp::create(b, loc, lhs, constant(rhs));
  }
  Value sub(Value lhs, Value rhs) {
    return arith::SubIOp::create(b, loc, lhs, rhs);
  }
  Value mul(Value lhs, int64_t rhs) {
    if (rhs == 1)
      return lhs;
    if (std::optional<int64_t> l = getConstantIntValue(lhs))
      return constant(*l * rhs);
    return arith::MulIOp::create(b, loc, lhs, constant(rhs));
  }
  Value div(Value lhs, int64_t rhs) {
    if (rhs == 1)
      return lhs;
    if (std::optional<int64_t> l = getConstantIntValue(lhs))
      return constant(*l / rhs);
    return arith::DivSIOp::create(b, loc, lhs, constant(rhs));
  }

  OpBuilder &b;
  Location loc;
};

} // namespace mlir::lowbit

#endif // LOWBIT_LIB_DIALECT_LOWBIT_TRANSFORMS_KERNELLOOPBUILDER_H
