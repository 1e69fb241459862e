//===- LowBitAttrs.cpp - lowbit attributes ----------------------*- C++ -*-===//
//
// Verifiers of #lowbit.weight and #lowbit.layout, and the strategy configs:
// their own invariants and, through StrategyConfigAttrInterface, which
// weight encodings and layouts each strategy supports and the tuner's search
// space of each strategy (pruned by those same checks).
//
//===----------------------------------------------------------------------===//

#include "lowbit/Dialect/LowBit/IR/LowBitAttrs.h"
#include "lowbit/Dialect/LowBit/IR/LowBitDialect.h"
#include "lowbit/bitserial_abi.h"
#include "lowbit/kernel_abi.h"
#include "lowbit/lut_abi.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"

#include <functional>

using namespace mlir;
using namespace mlir::lowbit;

#include "lowbit/Dialect/LowBit/IR/LowBitEnums.cpp.inc"

#include "lowbit/Dialect/LowBit/IR/LowBitAttrInterfaces.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "lowbit/Dialect/LowBit/IR/LowBitAttrs.cpp.inc"

void LowBitDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "lowbit/Dialect/LowBit/IR/LowBitAttrs.cpp.inc"
      >();
}

using EmitErrorFn = function_ref<InFlightDiagnostic()>;

/// Fails with "<owner> <name> must be positive, got <value>" unless value > 0.
static LogicalResult checkPositive(EmitErrorFn emitError, StringRef owner,
                                   StringRef name, int64_t value) {
  if (value > 0)
    return success();
  return emitError() << owner << " " << name << " must be positive, got "
                     << value;
}

//===----------------------------------------------------------------------===//
// WeightAttr
//===----------------------------------------------------------------------===//

/// Checks that a group size is a positive multiple of 32.
static LogicalResult checkGroupMultipleOf32(EmitErrorFn emitError,
                                            Encoding encoding, int64_t group) {
  if (group > 0 && group % 32 == 0)
    return success();
  return emitError() << stringifyEncoding(encoding)
                     << " encoding requires a group size that is a positive "
                        "multiple of 32, got group = "
                     << group;
}

/// Checks that the scale granularity is `expected`.
static LogicalResult checkScale(EmitErrorFn emitError, Encoding encoding,
                                ScaleGranularity scale,
                                ScaleGranularity expected) {
  if (scale == expected)
    return success();
  return emitError() << stringifyEncoding(encoding)
                     << " encoding requires scale = "
                     << stringifyScaleGranularity(expected)
                     << ", got scale = " << stringifyScaleGranularity(scale);
}

/// Checks that an integer parameter equals `expected`.
static LogicalResult checkEquals(EmitErrorFn emitError, Encoding encoding,
                                 StringRef name, int64_t value,
                                 int64_t expected) {
  if (value == expected)
    return success();
  return emitError() << stringifyEncoding(encoding) << " encoding requires "
                     << name << " = " << expected << ", got " << name << " = "
                     << value;
}

/// Checks the parameters of llama.cpp's block encodings (offset, min,
/// codebook): ggml's blocks of 32 with an fp16 scale, or super-blocks of 256
/// whose scale groups of 16 or 32 have quantized sub-scales.
static LogicalResult verifyBlockEncoding(EmitErrorFn emitError, int64_t bits,
                                         Encoding encoding, int64_t group,
                                         ScaleGranularity scale,
                                         int64_t codeOffset, int64_t superBlock,
                                         int64_t scaleBits,
                                         DenseI8ArrayAttr codebook) {
  StringRef name = stringifyEncoding(encoding);
  if (failed(checkScale(emitError, encoding, scale,
                        ScaleGranularity::PerBlock)))
    return failure();
  if (superBlock != 0 && superBlock != 256)
    return emitError() << name
                       << " encoding requires super_block = 0 or 256 (ggml's "
                          "QK_K), got super_block = "
                       << superBlock;
  if (superBlock == 0) {
    if (group != 32)
      return emitError() << name
                         << " encoding without a super-block requires group "
                            "= 32, got group = "
                         << group;
    if (scaleBits != 0)
      return emitError() << name
                         << " encoding without a super-block stores fp16 "
                            "scales; scale_bits must be 0, got "
                         << scaleBits;
  } else {
    if (group != 16 && group != 32)
      return emitError() << name
                         << " encoding with a super-block requires group = "
                            "16 or 32, got group = "
                         << group;
    if (scaleBits < 4 || scaleBits > 8)
      return emitError() << name
                         << " encoding with a super-block requires "
                            "scale_bits in [4, 8], got "
                         << scaleBits;
  }
  int64_t codes = int64_t(1) << bits;
  switch (encoding) {
  case Encoding::Offset:
    if (codeOffset < 1 || codeOffset >= codes)
      return emitError() << "offset encoding requires code_offset in [1, "
                         << codes - 1 << "] for " << bits
                         << "-bit codes, got " << codeOffset;
    break;
  case Encoding::Min:
    if (codeOffset != 0)
      return emitError() << "min encoding stores its minimum; code_offset "
                            "must be 0, got "
                         << codeOffset;
    break;
  case Encoding::Codebook:
    if (codeOffset != 0)
      return emitError() << "codebook encoding requires code_offset = 0, got "
                         << codeOffset;
    if (superBlock != 0)
      return emitError() << "codebook encoding takes no super-block, got "
                            "super_block = "
                         << superBlock;
    if (bits > 4)
      return emitError() << "codebook encoding requires bits in [1, 4] (a "
                            "table of 2^bits int8 values), got bits = "
                         << bits;
    if (!codebook || int64_t(codebook.size()) != codes)
      return emitError() << "codebook encoding requires a codebook of 2^bits "
                            "= "
                         << codes << " values, got "
                         << (codebook ? int64_t(codebook.size()) : 0);
    return success();
  default:
    llvm_unreachable("not a block encoding");
  }
  if (codebook)
    return emitError() << name << " encoding takes no codebook";
  return success();
}

LogicalResult WeightAttr::verify(EmitErrorFn emitError, int64_t bits,
                                 Encoding encoding, int64_t group,
                                 ScaleGranularity scale, int64_t codeOffset,
                                 int64_t superBlock, int64_t scaleBits,
                                 DenseI8ArrayAttr codebook) {
  if (bits < 1 || bits > 8)
    return emitError() << "bits must be in [1, 8], got " << bits;
  if (group < 0)
    return emitError() << "group size must be non-negative, got " << group;

  switch (encoding) {
  case Encoding::Offset:
  case Encoding::Min:
  case Encoding::Codebook:
    return verifyBlockEncoding(emitError, bits, encoding, group, scale,
                               codeOffset, superBlock, scaleBits, codebook);
  default:
    break;
  }
  if (codeOffset != 0 || superBlock != 0 || scaleBits != 0 || codebook)
    return emitError() << stringifyEncoding(encoding)
                       << " encoding takes no code_offset, super_block, "
                          "scale_bits or codebook (they describe the block "
                          "encodings offset, min and codebook)";

  switch (encoding) {
  case Encoding::Ternary:
    if (failed(checkEquals(emitError, encoding, "bits", bits, 2)) ||
        failed(checkEquals(emitError, encoding, "group", group, 0)))
      return failure();
    return checkScale(emitError, encoding, scale, ScaleGranularity::PerTensor);
  case Encoding::Binary:
    if (failed(checkEquals(emitError, encoding, "bits", bits, 1)) ||
        failed(checkGroupMultipleOf32(emitError, encoding, group)))
      return failure();
    return checkScale(emitError, encoding, scale, ScaleGranularity::PerGroup);
  case Encoding::Unsigned:
    if (bits < 2 || bits > 4)
      return emitError() << "unsigned encoding requires bits in [2, 4], got "
                            "bits = "
                         << bits;
    if (failed(checkGroupMultipleOf32(emitError, encoding, group)))
      return failure();
    return checkScale(emitError, encoding, scale, ScaleGranularity::PerGroup);
  case Encoding::GgufQ4_0:
    if (failed(checkEquals(emitError, encoding, "bits", bits, 4)) ||
        failed(checkEquals(emitError, encoding, "group", group, 32)))
      return failure();
    return checkScale(emitError, encoding, scale, ScaleGranularity::PerBlock);
  default:
    break;
  }
  llvm_unreachable("unknown encoding");
}

bool WeightAttr::isBlockEncoding() const {
  Encoding encoding = getEncoding();
  return encoding == Encoding::Offset || encoding == Encoding::Min ||
         encoding == Encoding::Codebook;
}

int64_t WeightAttr::getGgmlBlockWeights() const {
  return getSuperBlock() > 0 ? getSuperBlock() : getGroup();
}

int64_t WeightAttr::getGgmlBlockBytes() const {
  if (getEncoding() == Encoding::GgufQ4_0)
    return 18;
  // ggml's block structs (ggml-common.h): the codes, the sub-scales (and
  // sub-minimums) of a super-block at scale_bits each, and one fp16 scale
  // (and one fp16 minimum or minimum scale) per block.
  int64_t weights = getGgmlBlockWeights();
  int64_t perScale = getEncoding() == Encoding::Min ? 2 : 1;
  int64_t subScaleBits =
      getSuperBlock() > 0 ? weights / getGroup() * perScale * getScaleBits()
                          : 0;
  return weights * getBits() / 8 + subScaleBits / 8 + 2 * perScale;
}

//===----------------------------------------------------------------------===//
// LayoutAttr
//===----------------------------------------------------------------------===//

/// Weights that the layout packs together along K, which tile_k must be a
/// multiple of; 0 for layouts that take no tile parameters.
static int64_t getTileKQuantum(LayoutKind kind) {
  switch (kind) {
  case LayoutKind::Canonical:
  case LayoutKind::Gguf:
    return 0;
  case LayoutKind::I2S:
  case LayoutKind::VNNI4:
    return 4;
  case LayoutKind::TL1:
    return 2;
  case LayoutKind::TL2:
    return 3;
  case LayoutKind::BitPlanes:
    return 8;
  }
  llvm_unreachable("unknown layout kind");
}

LogicalResult LayoutAttr::verify(EmitErrorFn emitError, LayoutKind kind,
                                 int64_t tileM, int64_t tileK,
                                 int64_t interleave, LaneOrder laneOrder,
                                 int64_t blockBytes) {
  if (tileM < 0)
    return emitError() << "layout tile_m must be non-negative, got " << tileM;
  if (tileK < 0)
    return emitError() << "layout tile_k must be non-negative, got " << tileK;
  if (interleave < 1)
    return emitError() << "layout interleave must be positive, got "
                       << interleave;

  if (laneOrder != LaneOrder::Rows &&
      !((kind == LayoutKind::TL1 || kind == LayoutKind::TL2 ||
         kind == LayoutKind::BitPlanes) &&
        interleave == 16))
    return emitError() << "layout lane_order "
                       << stringifyLaneOrder(laneOrder)
                       << " needs an interleaved tl1/tl2 or bitplanes layout "
                          "(interleave = 16)";

  // The rows of TQ2_0 or TQ1_0 as a GGUF file stores them (kernel_abi.h,
  // GGML ROWS LAYOUT): tiles of one row, K steps of one 256-weight block.
  if (kind == LayoutKind::Gguf && (tileM != 0 || tileK != 0 || blockBytes)) {
    if (tileM != 1 || tileK != LOWBIT_GGML_ROWS_BLOCK || interleave != 1)
      return emitError() << "gguf layout takes no parameters, or tile_m = 1, "
                            "tile_k = "
                         << LOWBIT_GGML_ROWS_BLOCK
                         << " (ternary TQ2_0 or TQ1_0 rows), got tile_m = "
                         << tileM << ", tile_k = " << tileK;
    if (blockBytes != 0 && blockBytes != LOWBIT_GGML_ROWS_TQ1_0_BYTES)
      return emitError() << "gguf layout block_bytes is 0 (TQ2_0's "
                         << LOWBIT_GGML_ROWS_TQ2_0_BYTES << ") or "
                         << LOWBIT_GGML_ROWS_TQ1_0_BYTES
                         << " (TQ1_0), got " << blockBytes;
    return success();
  }
  if (blockBytes != 0)
    return emitError() << "layout block_bytes is for the tiled gguf layout "
                          "only, got "
                       << stringifyLayoutKind(kind);
  int64_t quantum = getTileKQuantum(kind);
  if (quantum == 0) {
    if (tileM != 0 || tileK != 0 || interleave != 1)
      return emitError() << stringifyLayoutKind(kind)
                         << " layout takes no tile or interleave parameters";
    return success();
  }
  if (tileK % quantum != 0)
    return emitError() << stringifyLayoutKind(kind)
                       << " layout requires tile_k to be a multiple of "
                       << quantum << ", got " << tileK;
  if (interleave != 1 && (tileM == 0 || tileM % interleave != 0))
    return emitError() << "layout interleave " << interleave
                       << " does not divide tile_m = " << tileM;
  return success();
}

bool LayoutAttr::isTiled() const {
  return getTileM() != 0 || getTileK() != 0 || getInterleave() != 1 ||
         getLaneOrder() != LaneOrder::Rows || getBlockBytes() != 0;
}

int64_t LayoutAttr::getGgmlRowsBlockBytes() const {
  return getBlockBytes() ? getBlockBytes() : LOWBIT_GGML_ROWS_TQ2_0_BYTES;
}

std::optional<int64_t> mlir::lowbit::getRowBytes(WeightAttr weight,
                                                 LayoutAttr layout, int64_t k) {
  switch (layout.getKind()) {
  case LayoutKind::Canonical:
    return llvm::divideCeil(k * weight.getBits(), 8);
  case LayoutKind::I2S:
  case LayoutKind::TL1:
    return llvm::divideCeil(k, 4);
  case LayoutKind::TL2: {
    // Three weights per 5-bit code (4-bit index nibbles plus one sign bit per
    // code), the remainder K - K3 packed as tl1. The remainder must be even.
    int64_t k3 = 3 * (k / 3);
    if ((k - k3) % 2 != 0)
      k3 -= 3;
    int64_t codes = k3 / 3;
    return llvm::divideCeil(codes, 2) + llvm::divideCeil(codes, 8) +
           llvm::divideCeil(k - k3, 4);
  }
  case LayoutKind::Gguf:
    if (weight.getEncoding() == Encoding::Ternary)
      return k / LOWBIT_GGML_ROWS_BLOCK * layout.getGgmlRowsBlockBytes();
    if (weight.getEncoding() != Encoding::GgufQ4_0 && !weight.isBlockEncoding())
      return std::nullopt;
    return k / weight.getGgmlBlockWeights() * weight.getGgmlBlockBytes();
  case LayoutKind::VNNI4:
  case LayoutKind::BitPlanes:
    return std::nullopt;
  }
  llvm_unreachable("unknown layout kind");
}

//===----------------------------------------------------------------------===//
// Strategy configs
//===----------------------------------------------------------------------===//

/// Fails with "<strategy> strategy does not support <kind> layout" unless the
/// layout kind is one of `supported`.
static LogicalResult checkLayoutSupported(EmitErrorFn emitError,
                                          StringRef strategy, LayoutAttr layout,
                                          ArrayRef<LayoutKind> supported) {
  if (llvm::is_contained(supported, layout.getKind()))
    return success();
  return emitError() << strategy << " strategy does not support "
                     << stringifyLayoutKind(layout.getKind()) << " layout";
}

namespace {
/// Collects the points of a strategy's grid that pass the attribute's
/// `verify` (through getChecked) and `verifyFor` against the query's layout
/// and any `extraLayouts` the strategy repacks into; diagnostics of the
/// pruned points are swallowed.
class SearchSpaceBuilder {
public:
  SearchSpaceBuilder(MLIRContext *ctx, const SearchSpaceQuery &query,
                     SmallVector<LayoutAttr, 2> extraLayouts = {})
      : ctx(ctx), query(query), layouts(std::move(extraLayouts)),
        silence(ctx, [](Diagnostic &) { return success(); }) {
    layouts.insert(layouts.begin(), query.layout);
  }

  /// `emitError` for getChecked.
  EmitErrorFn emitError() const { return emitErrorFn; }

  /// Keeps `attr` (null when getChecked failed) if it fits every layout.
  void add(StrategyConfigAttrInterface attr) {
    if (!attr)
      return;
    for (LayoutAttr layout : layouts)
      if (failed(attr.verifyFor(emitErrorFn, query.weight, layout, query.m,
                                query.k)))
        return;
    space.push_back(attr);
  }

  SmallVector<Attribute> take() { return std::move(space); }

private:
  MLIRContext *ctx;
  const SearchSpaceQuery &query;
  SmallVector<LayoutAttr, 2> layouts;
  ScopedDiagnosticHandler silence;
  std::function<InFlightDiagnostic()> emitErrorFn = [this] {
    return mlir::emitError(UnknownLoc::get(ctx));
  };
  SmallVector<Attribute> space;
};
} // namespace

/// Row tiles worth trying for an M: 16 (one packed tile) up to `largest`,
/// in powers of two, never past M rounded up to 16.
static SmallVector<int64_t> rowTiles(int64_t m, int64_t first,
                                     int64_t largest) {
  SmallVector<int64_t> tiles;
  for (int64_t t = first; t <= largest; t *= 2)
    if (t == first || t <= llvm::divideCeilSigned(m, int64_t(16)) * 16)
      tiles.push_back(t);
  return tiles;
}

SmallVector<StrategyConfigAttrInterface>
mlir::lowbit::getStrategySearchSpace(MLIRContext *context, StringRef strategy,
                                     const SearchSpaceQuery &query) {
  SmallVector<Attribute> space;
  if (strategy == "reference")
    space = ReferenceAttr::getSearchSpace(context, query);
  else if (strategy == "upconvert" && query.subgroupSize > 0)
    space = GpuAttr::getSearchSpace(context, query);
  else if (strategy == "upconvert")
    space = UpconvertAttr::getSearchSpace(context, query);
  else if (strategy == "lut-elementwise")
    space = LutElementwiseAttr::getSearchSpace(context, query);
  else if (strategy == "lut-bitserial")
    space = LutBitserialAttr::getSearchSpace(context, query);
  SmallVector<StrategyConfigAttrInterface> configs;
  for (Attribute attr : space)
    configs.push_back(cast<StrategyConfigAttrInterface>(attr));
  return configs;
}

//===- ReferenceAttr ------------------------------------------------------===//

StringRef ReferenceAttr::getStrategyName() const { return "reference"; }

SmallVector<Attribute> ReferenceAttr::getSearchSpace(MLIRContext *context,
                                                     const SearchSpaceQuery &) {
  return {ReferenceAttr::get(context)};
}

LogicalResult ReferenceAttr::verifyFor(EmitErrorFn, const WeightAttr &,
                                       const LayoutAttr &, int64_t,
                                       int64_t) const {
  return success();
}

//===- UpconvertAttr ------------------------------------------------------===//

LogicalResult UpconvertAttr::verify(EmitErrorFn emitError, int64_t tileM,
                                    int64_t tileK, int64_t tileN,
                                    int64_t unroll, int64_t prefetch) {
  if (failed(checkPositive(emitError, "upconvert", "tile_m", tileM)) ||
      failed(checkPositive(emitError, "upconvert", "tile_k", tileK)) ||
      failed(checkPositive(emitError, "upconvert", "tile_n", tileN)) ||
      failed(checkPositive(emitError, "upconvert", "unroll", unroll)))
    return failure();
  if (tileK % 4 != 0)
    return emitError() << "upconvert tile_k must be a multiple of 4, got "
                       << tileK;
  if (prefetch < 0)
    return emitError() << "upconvert prefetch must be non-negative, got "
                       << prefetch;
  return success();
}

StringRef UpconvertAttr::getStrategyName() const { return "upconvert"; }

LogicalResult UpconvertAttr::verifyFor(EmitErrorFn emitError,
                                       const WeightAttr &weight,
                                       const LayoutAttr &layout, int64_t,
                                       int64_t k) const {
  if (weight.getEncoding() == Encoding::Unsigned && weight.getBits() == 3)
    return emitError()
           << "upconvert strategy does not support 3-bit unsigned weights";
  if (failed(checkLayoutSupported(emitError, "upconvert", layout,
                                  {LayoutKind::Canonical, LayoutKind::I2S,
                                   LayoutKind::Gguf, LayoutKind::VNNI4})))
    return failure();

  int64_t tileK = getTileK();
  if (weight.getEncoding() == Encoding::GgufQ4_0 && tileK % 32 != 0)
    return emitError() << "upconvert tile_k must be a multiple of 32 for "
                          "gguf_q4_0 weights, got "
                       << tileK;
  int64_t group = weight.getGroup();
  if (group > 0 && tileK % group != 0 && group % tileK != 0)
    return emitError() << "upconvert tile_k = " << tileK
                       << " and weight group size " << group
                       << " must divide one another";
  if (layout.getTileM() > 0 && getTileM() % layout.getTileM() != 0)
    return emitError() << "upconvert tile_m = " << getTileM()
                       << " is not a multiple of layout tile_m = "
                       << layout.getTileM();
  if (layout.getTileK() > 0 && tileK % layout.getTileK() != 0)
    return emitError() << "upconvert tile_k = " << tileK
                       << " is not a multiple of layout tile_k = "
                       << layout.getTileK();
  // Fewer than 16 rows: the kernel of the GGML ROWS LAYOUT (kernel_abi.h),
  // tile_m rows of TQ2_0 blocks sharing each activation load.
  if (getTileM() < 16) {
    if (weight.getEncoding() != Encoding::Ternary ||
        tileK != LOWBIT_GGML_ROWS_BLOCK)
      return emitError() << "upconvert tile_m = " << getTileM()
                         << " (below 16: the ggml rows layout) needs ternary "
                            "weights and tile_k = "
                         << LOWBIT_GGML_ROWS_BLOCK;
    if (k > 0 && k % LOWBIT_GGML_ROWS_BLOCK != 0)
      return emitError() << "upconvert tile_m = " << getTileM()
                         << " (the ggml rows layout) needs K to be a "
                            "multiple of "
                         << LOWBIT_GGML_ROWS_BLOCK << ", got K = " << k;
    return success();
  }
  // The kernels of kernel_abi.h work on 16-row tiles and on the 32-k blocks
  // of the activations' scales and sums.
  if (getTileM() % 16 != 0)
    return emitError() << "upconvert tile_m must be a multiple of 16 (rows "
                          "per packed tile), got "
                       << getTileM();
  if (tileK % 32 != 0)
    return emitError() << "upconvert tile_k must be a multiple of 32 (the "
                          "activation block), got "
                       << tileK;
  return success();
}

SmallVector<Attribute>
UpconvertAttr::getSearchSpace(MLIRContext *context,
                              const SearchSpaceQuery &query) {
  // tile_m: 16-row tiles register-blocked together; tile_n: activation rows
  // per weight register (GEMM only); tile_k, unroll: the K-loop step;
  // prefetch: none, or about one or two of the target's prefetch distances
  // (in K tiles). Blocks whose accumulators and broadcasts do not fit the
  // register file (they would spill) are left out, as the heuristic does.
  SearchSpaceBuilder builder(context, query);
  bool ternary = query.weight.getEncoding() == Encoding::Ternary;
  int64_t slices = query.registerBytes > 0
                       ? std::max<int64_t>(1, 64 / query.registerBytes)
                       : 1;
  int64_t slicesInLoop = slices <= 2 ? slices : 1;
  SmallVector<int64_t> tileNs =
      query.gemv ? SmallVector<int64_t>{1} : SmallVector<int64_t>{1, 2, 4, 8};
  for (int64_t tileM : rowTiles(query.m, 16, 64))
    for (int64_t tileK : {32, 64, 128})
      for (int64_t tileN : tileNs) {
        int64_t registers =
            tileM / 16 * slicesInLoop * tileN * (ternary ? 1 : 2) + tileN + 3;
        if (query.numRegisters > 0 && registers > query.numRegisters)
          continue;
        int64_t stepBytes = tileK / 32 * query.weight.getBits() * 64;
        int64_t distance = llvm::divideCeil(query.prefetchBytes, stepBytes);
        SmallVector<int64_t> prefetches = {0};
        if (distance > 0)
          prefetches.append({distance, 2 * distance});
        if (!query.gemv)
          prefetches.resize(std::min<size_t>(prefetches.size(), 2));
        for (int64_t unroll : {1, 2})
          for (int64_t prefetch : prefetches)
            builder.add(UpconvertAttr::getChecked(builder.emitError(), context,
                                                  tileM, tileK, tileN, unroll,
                                                  prefetch));
      }
  return builder.take();
}

//===- LutElementwiseAttr -------------------------------------------------===//

LogicalResult LutElementwiseAttr::verify(EmitErrorFn emitError, int64_t bm,
                                         int64_t bk, int64_t subM, int64_t bn) {
  if (failed(checkPositive(emitError, "lut_elementwise", "bm", bm)) ||
      failed(checkPositive(emitError, "lut_elementwise", "bk", bk)) ||
      failed(checkPositive(emitError, "lut_elementwise", "sub_m", subM)) ||
      failed(checkPositive(emitError, "lut_elementwise", "bn", bn)))
    return failure();
  if (bm % subM != 0)
    return emitError() << "lut_elementwise bm = " << bm
                       << " is not a multiple of sub_m = " << subM;
  return success();
}

StringRef LutElementwiseAttr::getStrategyName() const {
  return "lut-elementwise";
}

LogicalResult LutElementwiseAttr::verifyFor(EmitErrorFn emitError,
                                            const WeightAttr &,
                                            const LayoutAttr &layout, int64_t,
                                            int64_t) const {
  LayoutKind kind = layout.getKind();
  if (kind != LayoutKind::TL1 && kind != LayoutKind::TL2)
    return emitError()
           << "lut_elementwise strategy requires tl1 or tl2 layout, got "
           << stringifyLayoutKind(kind);
  int64_t perIndex = kind == LayoutKind::TL1 ? 2 : 3;
  if (getBk() % perIndex != 0)
    return emitError() << "lut_elementwise bk must be a multiple of "
                       << perIndex << " for " << stringifyLayoutKind(kind)
                       << " layout, got " << getBk();
  if (isLutInterleaved(layout)) {
    int64_t tileK = kind == LayoutKind::TL1 ? LOWBIT_LUT_TL1_VECTOR
                                            : LOWBIT_LUT_TL2_BLOCK;
    int64_t maxBk = kind == LayoutKind::TL1 ? 1008 : 960;
    if (layout.getTileM() != 16 || layout.getTileK() != tileK)
      return emitError() << "interleaved " << stringifyLayoutKind(kind)
                         << " layout needs tile_m = 16 and tile_k = " << tileK
                         << " (lut_abi.h), got tile_m = " << layout.getTileM()
                         << ", tile_k = " << layout.getTileK();
    if (getSubM() != 16)
      return emitError() << "lut_elementwise sub_m must be 16 (rows per "
                            "lookup lane) for the interleaved layout, got "
                         << getSubM();
    if (getBk() % tileK != 0 || getBk() > maxBk)
      return emitError() << "lut_elementwise bk = " << getBk()
                         << " must be a multiple of " << tileK
                         << " and at most " << maxBk << " for "
                         << stringifyLayoutKind(kind)
                         << " (the weights of one unrolled loop iteration)";
    return success();
  }
  if (layout.getTileM() > 0 && layout.getTileM() != getBm())
    return emitError() << "lut_elementwise bm = " << getBm()
                       << " does not match layout tile_m = "
                       << layout.getTileM();
  if (layout.getTileK() > 0 && layout.getTileK() != getBk())
    return emitError() << "lut_elementwise bk = " << getBk()
                       << " does not match layout tile_k = "
                       << layout.getTileK();
  return success();
}

SmallVector<Attribute>
LutElementwiseAttr::getSearchSpace(MLIRContext *context,
                                   const SearchSpaceQuery &query) {
  // The kernels read the interleaved layout of lut_abi.h, so every point
  // must fit it as well as the op's tl1/tl2 layout: sub_m = 16, bk a
  // multiple of the layout's tile_k (TL2 blocks of 96, TL1 vectors of 16)
  // up to the int16 limit; bm the 16-row tiles blocked together, bn the
  // activation rows sharing each weight register (GEMM only).
  LayoutKind kind = query.layout.getKind();
  if (kind != LayoutKind::TL1 && kind != LayoutKind::TL2)
    return {};
  int64_t tileK = kind == LayoutKind::TL1 ? LOWBIT_LUT_TL1_VECTOR
                                          : LOWBIT_LUT_TL2_BLOCK;
  SearchSpaceBuilder builder(
      context, query,
      {LayoutAttr::get(context, kind, /*tileM=*/16, tileK, /*interleave=*/16,
                       LaneOrder::Rows)});
  // Doublings of the tile (verifyFor drops those past the int16 limit:
  // TL1 1024 > 1008) and the largest TL2 chunk, 960.
  SmallVector<int64_t> bks = kind == LayoutKind::TL2
                                 ? SmallVector<int64_t>{192, 384, 768, 960}
                                 : SmallVector<int64_t>{128, 256, 512, 1024};
  SmallVector<int64_t> bns =
      query.gemv ? SmallVector<int64_t>{1} : SmallVector<int64_t>{1, 2, 4};
  for (int64_t bm : rowTiles(query.m, 16, 64))
    for (int64_t bk : bks)
      for (int64_t bn : bns)
        builder.add(LutElementwiseAttr::getChecked(builder.emitError(), context,
                                                   bm, bk, /*subM=*/16, bn));
  return builder.take();
}

bool mlir::lowbit::isLutInterleaved(LayoutAttr layout) {
  LayoutKind kind = layout.getKind();
  return (kind == LayoutKind::TL1 || kind == LayoutKind::TL2) &&
         layout.getInterleave() == 16;
}

int64_t mlir::lowbit::getLutTileBytes(LayoutKind kind, int64_t k) {
  return lowbit_lut_tile_bytes(k, lowbit_lut_k2(k, kind == LayoutKind::TL2));
}

bool mlir::lowbit::isBitserialTiled(LayoutAttr layout) {
  return layout.getKind() == LayoutKind::BitPlanes &&
         layout.getTileM() == LOWBIT_TILE_ROWS &&
         layout.getTileK() == LOWBIT_BITSERIAL_BLOCK &&
         layout.getInterleave() == LOWBIT_TILE_ROWS;
}

//===- LutBitserialAttr ---------------------------------------------------===//

LogicalResult LutBitserialAttr::verify(EmitErrorFn emitError, int64_t bm,
                                       int64_t bn, int64_t kfactor,
                                       int64_t actGroup, int64_t tableBits) {
  if (failed(checkPositive(emitError, "lut_bitserial", "bm", bm)) ||
      failed(checkPositive(emitError, "lut_bitserial", "bn", bn)) ||
      failed(checkPositive(emitError, "lut_bitserial", "kfactor", kfactor)))
    return failure();
  if (actGroup <= 0 || actGroup % 4 != 0)
    return emitError()
           << "lut_bitserial act_group must be a positive multiple of 4, got "
           << actGroup;
  if (tableBits != 8 && tableBits != 16)
    return emitError() << "lut_bitserial table_bits must be 16 (lossless) or "
                          "8 (int8 tables), got "
                       << tableBits;
  return success();
}

StringRef LutBitserialAttr::getStrategyName() const { return "lut-bitserial"; }

LogicalResult LutBitserialAttr::verifyFor(EmitErrorFn emitError,
                                          const WeightAttr &weight,
                                          const LayoutAttr &layout, int64_t,
                                          int64_t) const {
  if (weight.getEncoding() == Encoding::GgufQ4_0 || weight.isBlockEncoding())
    return emitError() << "lut_bitserial strategy does not support "
                       << stringifyEncoding(weight.getEncoding())
                       << " weights";
  if (failed(checkLayoutSupported(
          emitError, "lut_bitserial", layout,
          {LayoutKind::Canonical, LayoutKind::I2S, LayoutKind::BitPlanes})))
    return failure();
  int64_t group = weight.getGroup();
  if (group > 0 && group % getActGroup() != 0)
    return emitError() << "lut_bitserial act_group = " << getActGroup()
                       << " does not divide weight group size " << group;
  if (isBitserialTiled(layout)) {
    if (getBm() % 16 != 0)
      return emitError() << "lut_bitserial bm = " << getBm()
                         << " must be a multiple of the layout's 16-row tiles";
    return success();
  }
  if (layout.getTileM() > 0 && layout.getTileM() != getBm())
    return emitError() << "lut_bitserial bm = " << getBm()
                       << " does not match layout tile_m = "
                       << layout.getTileM();
  return success();
}

SmallVector<Attribute>
LutBitserialAttr::getSearchSpace(MLIRContext *context,
                                 const SearchSpaceQuery &query) {
  // What lowbit-lower-lut-bitserial lowers: bm the 16-row tiles blocked
  // together, bn the activation rows sharing each weight register (GEMM
  // only), kfactor one, two or four 32-k blocks per loop iteration; the
  // lossless int16 tables (act_group 32), and with --allow-lossy the int8
  // tables of the group formats with one scale per 32 or 64 activations
  // (verifyFor keeps the act_groups dividing the weight group). Not searched,
  // because they miss the 1e-2 of lossy modes on verify's data
  // (bitserial_abi.h): int8 tables of ternary weights (up to 1.01e-2; the
  // lossless tables are the point there) and act_group 128.
  SearchSpaceBuilder builder(context, query);
  SmallVector<int64_t> bns =
      query.gemv ? SmallVector<int64_t>{1} : SmallVector<int64_t>{1, 2, 4};
  SmallVector<std::pair<int64_t, int64_t>> tables = {{16, 32}};
  if (query.allowLossy && query.weight.getEncoding() != Encoding::Ternary)
    tables.append({{8, 32}, {8, 64}});
  for (int64_t bm : rowTiles(query.m, 16, 64))
    for (int64_t bn : bns)
      for (int64_t kfactor : {8, 16, 32})
        for (auto [tableBits, actGroup] : tables)
          builder.add(LutBitserialAttr::getChecked(
              builder.emitError(), context, bm, bn, kfactor, actGroup,
              tableBits));
  return builder.take();
}

//===- GpuAttr ------------------------------------------------------------===//

LogicalResult GpuAttr::verify(EmitErrorFn emitError, int64_t wgTileM,
                              int64_t wgTileN, int64_t sgTileM, int64_t sgTileN,
                              int64_t kSplit, bool, bool intDot, bool matrix,
                              int64_t subgroupSize) {
  if (failed(checkPositive(emitError, "gpu", "wg_tile_m", wgTileM)) ||
      failed(checkPositive(emitError, "gpu", "wg_tile_n", wgTileN)) ||
      failed(checkPositive(emitError, "gpu", "sg_tile_m", sgTileM)) ||
      failed(checkPositive(emitError, "gpu", "sg_tile_n", sgTileN)) ||
      failed(checkPositive(emitError, "gpu", "k_split", kSplit)))
    return failure();
  if (!llvm::isPowerOf2_64(subgroupSize) || subgroupSize > 128)
    return emitError() << "gpu subgroup_size must be a power of two up to "
                          "128, got "
                       << subgroupSize;
  if (wgTileM % sgTileM != 0 || wgTileN % sgTileN != 0)
    return emitError() << "gpu wg_tile_m x wg_tile_n = " << wgTileM << " x "
                       << wgTileN << " is not a multiple of sg_tile_m x "
                       << "sg_tile_n = " << sgTileM << " x " << sgTileN;
  // The cooperative-matrix tile is Xe2's DPAS shape (8 x 16 x 32 int8).
  if (matrix && (subgroupSize != 16 || sgTileM != 8 || sgTileN != 16 ||
                 kSplit != 1 || intDot))
    return emitError() << "gpu matrix = true needs Xe2's cooperative-matrix "
                          "shape: subgroup_size = 16, sg_tile_m = 8, "
                          "sg_tile_n = 16, k_split = 1, int_dot = false";
  // Accumulators live in registers: bound the unrolled tile (the matrix
  // path keeps its 8 x 16 tile in one cooperative matrix).
  if (!matrix && sgTileM * sgTileN > 64)
    return emitError() << "gpu sg_tile_m * sg_tile_n must be at most 64 "
                          "accumulators, got "
                       << sgTileM * sgTileN;
  int64_t invocations =
      subgroupSize * (wgTileM / sgTileM) * (wgTileN / sgTileN) * kSplit;
  if (invocations > 1024)
    return emitError() << "gpu workgroup has " << invocations
                       << " invocations, more than 1024";
  return success();
}

int64_t GpuAttr::getWorkgroupSize() const {
  return getSubgroupSize() * (getWgTileM() / getSgTileM()) *
         (getWgTileN() / getSgTileN()) * getKSplit();
}

SmallVector<Attribute> GpuAttr::getSearchSpace(MLIRContext *context,
                                               const SearchSpaceQuery &query) {
  // Workgroup rows, rows per subgroup, K split across subgroups, the integer
  // dot product and the fused activation quantization; activation columns
  // per subgroup only for GEMM. The subgroup size is the target's
  // (GpuTargetInfo); the verifiers prune oversized groups.
  SearchSpaceBuilder builder(context, query);
  SmallVector<int64_t> sgTileNs =
      query.gemv ? SmallVector<int64_t>{1} : SmallVector<int64_t>{1, 4};
  for (int64_t sgTileM : {4, 8, 32})
    for (int64_t subgroups : {1, 4})
      for (int64_t sgTileN : sgTileNs)
        for (int64_t kSplit : {1, 4})
          for (bool fuse : {true, false})
            for (bool intDot : {false, true})
              builder.add(GpuAttr::getChecked(
                  builder.emitError(), context, sgTileM * subgroups, sgTileN,
                  sgTileM, sgTileN, kSplit, fuse, intDot, false,
                  query.subgroupSize));
  return builder.take();
}

StringRef GpuAttr::getStrategyName() const { return "upconvert"; }

LogicalResult GpuAttr::verifyFor(EmitErrorFn emitError,
                                 const WeightAttr &weight,
                                 const LayoutAttr &layout, int64_t,
                                 int64_t) const {
  if (getMatrix() && weight.getEncoding() != Encoding::Ternary)
    return emitError() << "gpu matrix = true supports ternary (i2s) weights "
                          "only";
  switch (weight.getEncoding()) {
  case Encoding::Ternary:
    return checkLayoutSupported(emitError, "gpu", layout, {LayoutKind::I2S});
  case Encoding::Binary:
  case Encoding::Unsigned:
    return checkLayoutSupported(emitError, "gpu", layout,
                                {LayoutKind::Canonical});
  case Encoding::GgufQ4_0:
  case Encoding::Offset:
  case Encoding::Min:
  case Encoding::Codebook:
    return checkLayoutSupported(emitError, "gpu", layout, {LayoutKind::Gguf});
  }
  llvm_unreachable("unknown encoding");
}
