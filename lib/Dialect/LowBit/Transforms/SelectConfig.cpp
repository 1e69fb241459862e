//===- SelectConfig.cpp - choose a strategy config per lowbit.mpgemm ------===//
//
// The config comes from, in order: the `config` option, the schedule file's
// entry for the op, the heuristic of the target (up-convert, lut-elementwise
// or lut-bitserial from its TargetInfo; #lowbit.gpu from a GPU target's
// GpuTargetInfo). Whatever its source, it must pass the op's
// StrategyConfigAttrInterface::verifyFor. The module gets the target as its
// lowbit.target attribute, which the lowerings read.
//
//===----------------------------------------------------------------------===//

#include "lowbit/Dialect/LowBit/IR/LowBitFormats.h"
#include "lowbit/Dialect/LowBit/Transforms/Passes.h"
#include "lowbit/Tuning/Schedule.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringExtras.h"

namespace mlir::lowbit {
#define GEN_PASS_DEF_LOWBITSELECTCONFIG
#include "lowbit/Dialect/LowBit/Transforms/Passes.h.inc"
} // namespace mlir::lowbit

using namespace mlir;
using namespace mlir::lowbit;

/// Largest power of two <= value (value >= 1).
static int64_t floorPowerOf2(int64_t value) {
  int64_t p = 1;
  while (p * 2 <= value)
    p *= 2;
  return p;
}

UpconvertAttr mlir::lowbit::selectUpconvertConfig(MLIRContext *ctx,
                                                  const TargetInfo &target,
                                                  WeightAttr weight, int64_t m,
                                                  int64_t k, bool gemv,
                                                  int64_t threads) {
  bool ternary = weight.getEncoding() == Encoding::Ternary;
  int64_t slices = std::max<int64_t>(1, 64 / target.getRegisterBytes());
  // Any shape (M dynamic): as many tiles as any thread count wants, so the
  // tiles depend on the target and N class alone.
  int64_t tiles = ShapedType::isDynamic(m) ? int64_t(1) << 40
                                           : llvm::divideCeil(m, 16);
  // Leave at least one tile group per thread.
  int64_t maxGroup = floorPowerOf2(
      std::max<int64_t>(1, tiles / std::max<int64_t>(1, threads)));
  // A (tiles, columns) block fits when its accumulators, tile_n broadcasts
  // and 3 working registers fit the register file, with every register
  // slice of a tile in one K loop (each 64-byte vector is read once) for
  // SIMD registers; narrow registers (generic: 16 slices of one row) walk
  // the slices one at a time anyway.
  int64_t slicesInLoop = slices <= 2 ? slices : 1;
  auto fits = [&](int64_t group, int64_t tileN) {
    return group * slicesInLoop * tileN * (ternary ? 1 : 2) + tileN + 3 <=
           target.getNumRegisters();
  };
  const int64_t tileK = 64;

  if (gemv) {
    // GEMV is bound by memory: one 16-row tile, i.e. one sequential stream
    // of weights per thread (two or four interleaved streams measured 10-20%
    // slower on Zen 5), prefetched getPrefetchBytes() ahead. The lowering
    // keeps the dot product busy inside the tile (independent accumulators
    // per bit plane for ternary, per 32-k block for group formats).
    int64_t stepBytes = tileK / 32 * weight.getBits() * 64;
    int64_t prefetch = llvm::divideCeil(target.getPrefetchBytes(), stepBytes);
    return UpconvertAttr::get(ctx, /*tileM=*/16, tileK, /*tileN=*/1,
                              /*unroll=*/1, prefetch);
  }
  // GEMM is bound by compute: the largest block of tiles x activation rows
  // (at least 2 rows, so that every unpacked weight register is reused)
  // whose accumulators fit the register file; on a tie, more tiles, which
  // share each broadcast activation. Measured on Zen 5, N = 128: AVX512
  // q4_0 64 x 2 beats 32 x 4 by 15%, i2s 64 x 4 and 32 x 8 are level at
  // ~2 TOPS; AVX-VNNI i2s 32 x 2 and 16 x 4 are level, 64 x 1 is 25% slower.
  int64_t group = 1, tileN = 1;
  for (int64_t g : {1, 2, 4})
    for (int64_t n : {2, 4, 8})
      if (g <= maxGroup && fits(g, n) && g * n >= group * tileN) {
        group = g;
        tileN = n;
      }
  return UpconvertAttr::get(ctx, /*tileM=*/16 * group, tileK, tileN,
                            /*unroll=*/1, /*prefetch=*/0);
}

LutElementwiseAttr mlir::lowbit::selectLutElementwiseConfig(
    MLIRContext *ctx, const TargetInfo &target, LayoutKind kind, bool gemv) {
  // GEMV is bound by memory: one 16-row tile, i.e. one sequential stream of
  // weights per thread, prefetched line by line (measured on Zen 5, 2
  // threads, cold tl2 6912x2560: 1 tile 0.92 of the read bandwidth, 2 tiles
  // 0.63). GEMM: per tile and activation row the kernel keeps 4 int32
  // accumulators per register of a 64-byte vector (low/high table bytes x
  // nibble), 256 bytes, and reads the tables as memory operands: 2 KiB of
  // registers (32 zmm) fit 2 tiles x 2 rows, 512 bytes (16 ymm, 32 q
  // registers) 1 x 1.
  bool wideFile = target.getNumRegisters() * target.getRegisterBytes() >= 2048;
  int64_t tiles = !gemv && wideFile ? 2 : 1;
  int64_t bn = gemv || !wideFile ? 1 : 2;
  // Weights per loop iteration: one TL2 block (4 index vectors) or 4 TL1
  // vectors; more unrolling made clang hoist loads and spill (Zen 5, warm
  // tl2 6912x2560: 768 weights per iteration 1.6x slower than 96). Where
  // the tables of a vector's lookups take registers (getLutTableRegisters
  // per nibble: 16 of 32 on NEON), one TL1 vector: clang hoists the table
  // loads of the next vectors and spills them.
  int64_t tl1Vectors = target.getLutTableRegisters() > 0 ? 1 : 4;
  int64_t bk = kind == LayoutKind::TL2 ? 96 : 16 * tl1Vectors;
  return LutElementwiseAttr::get(ctx, /*bm=*/16 * tiles, bk, /*subM=*/16, bn);
}

LutBitserialAttr
mlir::lowbit::selectLutBitserialConfig(MLIRContext *ctx,
                                       const TargetInfo &target, bool gemv) {
  // GEMV is bound by memory: one 16-row tile, one sequential stream of
  // weights per thread. GEMM: per activation row the kernel keeps its
  // lut_dot accumulator pairs (2 per nibble and register half, times the
  // sets that hide the dot latency), so 32 zmm hold 2 rows; where the
  // tables take registers (NEON: 16 of 32), one row.
  int64_t bn = !gemv && target.getNumRegisters() >= 32 &&
                       target.getLutTableRegisters() == 0
                   ? 2
                   : 1;
  // Two 32-k blocks per loop iteration; one where the tables take
  // registers (getLutTableRegisters: NEON tbl), as for tl1 above.
  int64_t kfactor = target.getLutTableRegisters() > 0 ? 8 : 16;
  return LutBitserialAttr::get(ctx, /*bm=*/16, bn, kfactor,
                               /*actGroup=*/32, /*tableBits=*/16);
}

GpuAttr mlir::lowbit::selectGpuConfig(MLIRContext *ctx,
                                      const GpuTargetInfo &target, bool gemv) {
  // GEMV: one activation row per workgroup with its scale fused (the Xe2
  // paper's finding for GEMV). GEMM: subgroup tiles that reuse every
  // quantized activation, scales from the pre-kernel (the paper's GEMM
  // finding).
  GpuTiles tiles = target.getDefaultTiles(gemv);
  return GpuAttr::get(ctx, tiles.wgTileM, tiles.wgTileN, tiles.sgTileM,
                      tiles.sgTileN, /*kSplit=*/1, /*fuseActQuant=*/gemv,
                      target.hasIntegerDot(), /*matrix=*/false,
                      target.getSubgroupSize());
}

namespace {

class SelectConfigPass
    : public lowbit::impl::LowBitSelectConfigBase<SelectConfigPass> {
public:
  using LowBitSelectConfigBase::LowBitSelectConfigBase;
  SelectConfigPass(LowBitSelectConfigOptions options,
                   std::shared_ptr<const Schedule> schedule)
      : LowBitSelectConfigBase(std::move(options)),
        loadedSchedule(std::move(schedule)) {}

  void runOnOperation() override {
    ModuleOp module = getOperation();
    targetInfo = createTargetInfo(target);
    gpuTargetInfo = createGpuTargetInfo(target);
    if (!targetInfo && !gpuTargetInfo) {
      module.emitError() << "lowbit-select-config: unknown target '" << target
                         << "'; expected one of "
                         << llvm::join(getTargetNames(), ", ") << ", "
                         << llvm::join(getGpuTargetNames(), ", ");
      return signalPassFailure();
    }
    // The lowerings take the target from the module: the one the configs
    // are chosen for.
    if (auto named = module->getAttrOfType<StringAttr>(kTargetAttrName);
        named && named.getValue() != target) {
      module.emitError() << "lowbit-select-config: the module is for target '"
                         << named.getValue() << "' (its " << kTargetAttrName
                         << "), not '" << target << "'";
      return signalPassFailure();
    }
    setTargetAttr(module, target);
    if (gpuTargetInfo && !strategy.empty()) {
      module.emitError() << "lowbit-select-config: GPU target '" << target
                         << "' has one strategy (#lowbit.gpu), not '"
                         << strategy << "'";
      return signalPassFailure();
    }
    scheduleFile = loadedSchedule;
    if (!scheduleFile && !schedule.empty()) {
      llvm::Expected<Schedule> loaded = Schedule::load(schedule);
      if (!loaded) {
        module.emitError() << llvm::toString(loaded.takeError());
        return signalPassFailure();
      }
      scheduleFile = std::make_shared<const Schedule>(std::move(*loaded));
    }
    if (!strategy.empty() && strategy != "lut-bitserial") {
      module.emitError() << "lowbit-select-config: unknown strategy '"
                         << strategy << "'; expected lut-bitserial or none";
      return signalPassFailure();
    }
    if (!config.empty() &&
        failed(parseConfig(module, config, "config option", overrideConfig)))
      return signalPassFailure();

    WalkResult result = module.walk([&](MpGemmOp op) {
      if (op.getConfigAttr())
        return WalkResult::advance();
      return WalkResult(selectFor(op));
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }

private:
  /// Parses `text` as a strategy config. Errors are attached to `anchor`
  /// and name `what` the text came from.
  LogicalResult parseConfig(Operation *anchor, StringRef text,
                            const Twine &what,
                            StrategyConfigAttrInterface &out) {
    std::string diagnostic;
    Attribute attr;
    {
      ScopedDiagnosticHandler capture(anchor->getContext(), [&](Diagnostic &d) {
        if (diagnostic.empty())
          diagnostic = d.str();
        return success();
      });
      attr = parseAttribute(text, anchor->getContext());
    }
    if (!attr)
      return anchor->emitError() << what << ": cannot parse config '" << text
                                 << "': " << diagnostic;
    out = dyn_cast<StrategyConfigAttrInterface>(attr);
    if (!out)
      return anchor->emitError()
             << what << ": '" << text << "' is not a strategy config";
    return success();
  }

  LogicalResult selectFor(MpGemmOp op) {
    WeightAttr weight = op.getWeight();
    LayoutAttr layout = op.getLayout();
    int64_t m = op.getM(), k = op.getK();
    int64_t n = cast<RankedTensorType>(op.getX().getType()).getDimSize(0);
    if (ShapedType::isDynamic(n))
      n = nHint;
    bool gemv = n == 1;

    StrategyConfigAttrInterface chosen;
    std::string source;
    if (overrideConfig) {
      chosen = overrideConfig;
      source = "config option";
    } else if (scheduleFile && !ShapedType::isDynamic(m) &&
               !ShapedType::isDynamic(k)) {
      // Schedule entries are per shape; an any-shape op (dynamic M and K)
      // takes the heuristic.
      ScheduleKey key;
      key.format = getFormatName(weight, layout.getKind());
      key.m = m;
      key.k = k;
      key.nClass = gemv ? "gemv" : "gemm";
      key.target = target;
      key.threads = threads;
      if (const ScheduleEntry *entry = scheduleFile->lookup(key)) {
        source = ("schedule '" + scheduleFile->getName() + "': entries[" +
                  Twine(entry->index) + "]")
                     .str();
        if (failed(parseConfig(op, entry->config, source, chosen)))
          return failure();
      }
    }
    if (!chosen && gpuTargetInfo) {
      source = "heuristic";
      chosen = selectGpuConfig(op.getContext(), *gpuTargetInfo, gemv);
    }
    if (!chosen && strategy == "lut-bitserial") {
      source = "heuristic";
      chosen = selectLutBitserialConfig(op.getContext(), *targetInfo, gemv);
    }
    if (!chosen) {
      source = "heuristic";
      if (weight.getEncoding() == Encoding::Unsigned && weight.getBits() == 3)
        return op.emitOpError()
               << "has no heuristic config for "
               << getFormatName(weight, layout.getKind())
               << " weights (the upconvert strategy needs 1, 2 or 4 bits); "
                  "give a config or a schedule entry";
      LayoutKind kind = layout.getKind();
      if (kind == LayoutKind::TL1 || kind == LayoutKind::TL2)
        chosen = selectLutElementwiseConfig(op.getContext(), *targetInfo, kind,
                                            gemv);
      else
        chosen = selectUpconvertConfig(op.getContext(), *targetInfo, weight, m,
                                       k, gemv, threads);
    }
    if (isa<GpuAttr>(chosen) != bool(gpuTargetInfo))
      return op.emitOpError()
             << source << ": config " << chosen << " is "
             << (gpuTargetInfo ? "not a #lowbit.gpu config, which GPU target '"
                               : "a #lowbit.gpu config, which CPU target '")
             << target << "' " << (gpuTargetInfo ? "needs" : "cannot run");
    if (failed(chosen.verifyFor(
            [&] {
              return op.emitOpError() << source << ": config " << chosen
                                      << " does not fit this op: ";
            },
            weight, layout, m, k)))
      return failure();
    op.setConfigAttr(chosen);
    return success();
  }

  std::shared_ptr<const TargetInfo> targetInfo;
  std::shared_ptr<const GpuTargetInfo> gpuTargetInfo;
  std::shared_ptr<const Schedule> loadedSchedule; // or null: `schedule`
  std::shared_ptr<const Schedule> scheduleFile;   // this run's, or null
  StrategyConfigAttrInterface overrideConfig;
};

} // namespace

std::unique_ptr<Pass>
mlir::lowbit::createLowBitSelectConfig(LowBitSelectConfigOptions options,
                                       std::shared_ptr<const Schedule> schedule) {
  return std::make_unique<SelectConfigPass>(std::move(options),
                                            std::move(schedule));
}
