//===- LowBitAttrs.cpp - lowbit attributes ----------------------*- C++ -*-===//
//
// Verifiers of #lowbit.weight and #lowbit.layout, and the strategy configs:
// their own invariants and, through StrategyConfigAttrInterface, which
// weight encodings and layouts each strategy supports.
//
//===----------------------------------------------------------------------===//

#include "lowbit/Dialect/LowBit/IR/LowBitAttrs.h"
#include "lowbit/Dialect/LowBit/IR/LowBitDialect.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"

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

LogicalResult WeightAttr::verify(EmitErrorFn emitError, int64_t bits,
                                 Encoding encoding, int64_t group,
                                 ScaleGranularity scale) {
  if (bits < 1 || bits > 4)
    return emitError() << "bits must be in [1, 4], got " << bits;
  if (group < 0)
    return emitError() << "group size must be non-negative, got " << group;

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
    if (bits < 2)
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
  }
  llvm_unreachable("unknown encoding");
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
                                 int64_t interleave) {
  if (tileM < 0)
    return emitError() << "layout tile_m must be non-negative, got " << tileM;
  if (tileK < 0)
    return emitError() << "layout tile_k must be non-negative, got " << tileK;
  if (interleave < 1)
    return emitError() << "layout interleave must be positive, got "
                       << interleave;

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
  return getTileM() != 0 || getTileK() != 0 || getInterleave() != 1;
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
    return k / 32 * 18;
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

//===- ReferenceAttr ------------------------------------------------------===//

StringRef ReferenceAttr::getStrategyName() const { return "reference"; }

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
                                       int64_t) const {
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
    int64_t tileK = kind == LayoutKind::TL1 ? 16 : 96;
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
                         << " (int16 sums must not overflow)";
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

bool mlir::lowbit::isLutInterleaved(LayoutAttr layout) {
  LayoutKind kind = layout.getKind();
  return (kind == LayoutKind::TL1 || kind == LayoutKind::TL2) &&
         layout.getInterleave() == 16;
}

int64_t mlir::lowbit::getLutTileBytes(LayoutKind kind, int64_t k) {
  int64_t k2 = kind == LayoutKind::TL2 ? k / 96 * 96 : 0;
  return 64 + k2 / 96 * 320 + llvm::divideCeil(k - k2, 16) * 64;
}

bool mlir::lowbit::isBitserialTiled(LayoutAttr layout) {
  return layout.getKind() == LayoutKind::BitPlanes && layout.getTileM() == 16 &&
         layout.getTileK() == 32 && layout.getInterleave() == 16;
}

//===- LutBitserialAttr ---------------------------------------------------===//

LogicalResult LutBitserialAttr::verify(EmitErrorFn emitError, int64_t bm,
                                       int64_t bn, int64_t kfactor,
                                       int64_t actGroup, bool) {
  if (failed(checkPositive(emitError, "lut_bitserial", "bm", bm)) ||
      failed(checkPositive(emitError, "lut_bitserial", "bn", bn)) ||
      failed(checkPositive(emitError, "lut_bitserial", "kfactor", kfactor)))
    return failure();
  if (actGroup <= 0 || actGroup % 4 != 0)
    return emitError()
           << "lut_bitserial act_group must be a positive multiple of 4, got "
           << actGroup;
  return success();
}

StringRef LutBitserialAttr::getStrategyName() const { return "lut-bitserial"; }

LogicalResult LutBitserialAttr::verifyFor(EmitErrorFn emitError,
                                          const WeightAttr &weight,
                                          const LayoutAttr &layout, int64_t,
                                          int64_t) const {
  if (weight.getEncoding() == Encoding::GgufQ4_0)
    return emitError()
           << "lut_bitserial strategy does not support gguf_q4_0 weights";
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
