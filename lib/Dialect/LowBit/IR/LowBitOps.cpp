//===- LowBitOps.cpp - lowbit operations ------------------------*- C++ -*-===//
//
// The lowbit.mpgemm verifier: shapes of activations, packed weights, scales
// and result, the ties between weight encoding and layout, and the strategy
// config's support for both.
//
//===----------------------------------------------------------------------===//

#include "lowbit/Dialect/LowBit/IR/LowBitOps.h"
#include "lowbit/bitserial_abi.h"
#include "lowbit/kernel_abi.h"
#include "lowbit/lut_abi.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::lowbit;

#define GET_OP_CLASSES
#include "lowbit/Dialect/LowBit/IR/LowBitOps.cpp.inc"

/// Spells a dimension size as in a tensor type: `?` when dynamic.
static std::string formatDim(int64_t size) {
  return ShapedType::isDynamic(size) ? "?" : std::to_string(size);
}

/// Checks that the weight encoding can be stored in the layout.
static LogicalResult verifyLayoutEncoding(MpGemmOp op, WeightAttr weight,
                                          LayoutAttr layout) {
  Encoding encoding = weight.getEncoding();
  StringRef kind = stringifyLayoutKind(layout.getKind());
  switch (layout.getKind()) {
  case LayoutKind::I2S:
  case LayoutKind::TL1:
  case LayoutKind::TL2:
    if (encoding == Encoding::Ternary)
      return success();
    if (weight.getBits() != 2)
      return op.emitOpError() << kind
                              << " layout requires 2-bit ternary weights, got "
                                 "bits = "
                              << weight.getBits();
    return op.emitOpError()
           << kind << " layout requires 2-bit ternary weights, got "
           << stringifyEncoding(encoding) << " encoding";
  case LayoutKind::Gguf:
    if (encoding == Encoding::GgufQ4_0 || weight.isBlockEncoding())
      return success();
    // Ternary weights in TQ2_0 rows (kernel_abi.h, GGML ROWS LAYOUT).
    if (encoding == Encoding::Ternary && weight.getBits() == 2 &&
        layout.isTiled())
      return success();
    return op.emitOpError() << "gguf layout requires ggml block weights "
                               "(gguf_q4_0, offset, min or codebook), got "
                            << stringifyEncoding(encoding) << " encoding";
  case LayoutKind::Canonical:
    if (encoding == Encoding::Binary || encoding == Encoding::Unsigned)
      return success();
    return op.emitOpError()
           << "canonical layout requires binary or unsigned weights, got "
           << stringifyEncoding(encoding) << " encoding";
  case LayoutKind::BitPlanes:
    if (encoding != Encoding::GgufQ4_0 && !weight.isBlockEncoding())
      return success();
    return op.emitOpError() << "bitplanes layout does not support "
                            << stringifyEncoding(encoding) << " weights";
  case LayoutKind::VNNI4:
    return success();
  }
  llvm_unreachable("unknown layout kind");
}

/// Checks the constraints that the encoding and layout put on K.
static LogicalResult verifyReductionDim(MpGemmOp op, WeightAttr weight,
                                        LayoutAttr layout, int64_t k) {
  // Ternary kernels accumulate a whole row in int32: |Xq| <= 128, |q| <= 1
  // (the runtime's max_reduction_length()).
  constexpr int64_t kMaxTernaryK = (int64_t(1) << 31) / 128 - 1;
  if (weight.getEncoding() == Encoding::Ternary && k > kMaxTernaryK)
    return op.emitOpError() << "ternary weights require K <= " << kMaxTernaryK
                            << " so that the int32 accumulation cannot "
                               "overflow, got K = "
                            << k;
  if (weight.getEncoding() == Encoding::GgufQ4_0 && k % 32 != 0)
    return op.emitOpError()
           << "gguf_q4_0 weights require K to be a multiple of 32, got K = "
           << k;
  if (weight.isBlockEncoding() && k % weight.getGgmlBlockWeights() != 0)
    return op.emitOpError()
           << stringifyEncoding(weight.getEncoding())
           << " weights require K to be a multiple of their block of "
           << weight.getGgmlBlockWeights() << ", got K = " << k;
  int64_t group = weight.getGroup();
  if (group > 0 && k % group != 0)
    return op.emitOpError()
           << "group size " << group << " does not divide K = " << k;
  LayoutKind kind = layout.getKind();
  if (kind == LayoutKind::Gguf && weight.getEncoding() == Encoding::Ternary &&
      !ShapedType::isDynamic(k) && k % LOWBIT_GGML_ROWS_BLOCK != 0)
    return op.emitOpError() << "ternary weights in the gguf layout (TQ2_0 "
                               "rows) require K to be a multiple of "
                            << LOWBIT_GGML_ROWS_BLOCK << ", got K = " << k;
  if ((kind == LayoutKind::TL1 || kind == LayoutKind::TL2) && k % 2 != 0)
    return op.emitOpError() << stringifyLayoutKind(kind)
                            << " layout requires an even K, got K = " << k;
  return success();
}

/// Checks a tiled vnni4 layout and the packed shape it implies:
/// tensor<ceil(M / tile_m) x Kp * bits / 32 x 4 * tile_m x i8>.
static LogicalResult verifyVnni4Shape(MpGemmOp op, WeightAttr weight,
                                      LayoutAttr layout,
                                      RankedTensorType packedType, int64_t m,
                                      int64_t k) {
  int64_t bits = weight.getBits();
  if (bits == 7)
    return op.emitOpError() << "vnni4 layout packs codes of 1 to 6 or 8 "
                               "bits (whole codes, or two planes of 2 + 1, "
                               "4 + 1, 4 + 2 bits), got "
                            << bits;
  if (layout.getTileM() <= 0)
    return op.emitOpError()
           << "tiled vnni4 layout requires a positive tile_m, got "
           << layout.getTileM();
  if (layout.getTileK() != lowbit_vnni4_tile_k(int(bits)))
    return op.emitOpError()
           << "vnni4 layout requires tile_k = " << lowbit_vnni4_tile_k(int(bits))
           << " for " << bits << "-bit weights (32 / bits, or 32 for codes "
           << "in two planes), got " << layout.getTileK();
  if (layout.getInterleave() != 1)
    return op.emitOpError() << "vnni4 layout keeps the 4 k of a row together; "
                               "interleave must be 1, got "
                            << layout.getInterleave();
  int64_t tileM = layout.getTileM();
  SmallVector<int64_t, 3> expected = {
      llvm::divideCeilSigned(m, tileM),
      llvm::divideCeilSigned(k, int64_t(LOWBIT_K_BLOCK)) * bits, 4 * tileM};
  if (packedType.getShape() != ArrayRef<int64_t>(expected))
    return op.emitOpError()
           << "vnni4 layout with tile_m = " << tileM << " needs packed weights "
           << "of shape " << expected[0] << "x" << expected[1] << "x"
           << expected[2] << " for M = " << m << ", K = " << k
           << ", bits = " << bits << ", got " << packedType;
  return success();
}

/// Checks the shape of the packed weights operand.
static LogicalResult verifyPackedShape(MpGemmOp op, WeightAttr weight,
                                       LayoutAttr layout, int64_t m,
                                       int64_t k) {
  auto packedType = cast<RankedTensorType>(op.getPacked().getType());
  if (!packedType.hasStaticShape())
    return op.emitOpError()
           << "packed weights must have a static shape, got " << packedType;
  if (layout.getKind() == LayoutKind::VNNI4 && layout.isTiled())
    return verifyVnni4Shape(op, weight, layout, packedType, m, k);
  if (isLutInterleaved(layout)) {
    SmallVector<int64_t, 2> expected = {
        llvm::divideCeilSigned(m, int64_t(LOWBIT_TILE_ROWS)),
        getLutTileBytes(layout.getKind(), k)};
    if (packedType.getShape() != ArrayRef<int64_t>(expected))
      return op.emitOpError()
             << "interleaved " << stringifyLayoutKind(layout.getKind())
             << " layout needs packed weights of shape " << expected[0] << "x"
             << expected[1] << " for M = " << m << ", K = " << k << ", got "
             << packedType;
    return success();
  }
  if (isBitserialTiled(layout)) {
    SmallVector<int64_t, 2> expected = {
        llvm::divideCeilSigned(m, int64_t(LOWBIT_TILE_ROWS)),
        llvm::divideCeilSigned(k, int64_t(LOWBIT_BITSERIAL_BLOCK)) *
            weight.getBits() * LOWBIT_BITSERIAL_VECTOR_BYTES};
    if (packedType.getShape() != ArrayRef<int64_t>(expected))
      return op.emitOpError()
             << "bit-plane layout of bitserial_abi.h needs packed weights of "
                "shape "
             << expected[0] << "x" << expected[1] << " for M = " << m
             << ", K = " << k << ", bits = " << weight.getBits() << ", got "
             << packedType;
    return success();
  }
  std::optional<int64_t> rowBytes = getRowBytes(weight, layout, k);
  if (!rowBytes)
    return success();

  StringRef kind = stringifyLayoutKind(layout.getKind());
  if (packedType.getRank() != 2)
    return op.emitOpError()
           << "packed weights for " << kind
           << " layout must be a 2-D tensor<M x R x i8>, got rank "
           << packedType.getRank();
  if (packedType.getDimSize(0) != m)
    return op.emitOpError()
           << "packed weights have " << packedType.getDimSize(0)
           << " rows but the result has M = " << m;
  if (packedType.getDimSize(1) != *rowBytes)
    return op.emitOpError() << kind << " layout needs " << *rowBytes
                            << " bytes per row for K = " << k << ", got "
                            << packedType.getDimSize(1);
  return success();
}

/// Returns the type the scales operand must have, or a null type when the
/// encoding keeps its scales inside the packed weights.
static RankedTensorType getExpectedScalesType(MLIRContext *ctx,
                                              WeightAttr weight, int64_t m,
                                              int64_t k) {
  Type f16 = Float16Type::get(ctx);
  switch (weight.getEncoding()) {
  case Encoding::Ternary:
    return RankedTensorType::get({1}, Float32Type::get(ctx));
  case Encoding::Binary:
    return RankedTensorType::get({m, k / weight.getGroup()}, f16);
  case Encoding::Unsigned:
    return RankedTensorType::get({m, k / weight.getGroup(), 2}, f16);
  case Encoding::GgufQ4_0:
  case Encoding::Offset:
  case Encoding::Min:
  case Encoding::Codebook:
    return {};
  }
  llvm_unreachable("unknown encoding");
}

/// Checks that a scales operand is present exactly when the encoding needs
/// one, with the exact type it needs.
static LogicalResult verifyScales(MpGemmOp op, WeightAttr weight, int64_t m,
                                  int64_t k) {
  RankedTensorType expected =
      getExpectedScalesType(op.getContext(), weight, m, k);
  StringRef encoding = stringifyEncoding(weight.getEncoding());
  Value scales = op.getScales();
  if (!expected) {
    if (!scales)
      return success();
    return op.emitOpError()
           << encoding
           << " weights carry their scales in the packed blocks; unexpected "
              "scales operand of type "
           << scales.getType();
  }
  if (!scales)
    return op.emitOpError()
           << encoding << " weights need a scales operand of type " << expected;
  if (scales.getType() != expected)
    return op.emitOpError() << "scales operand must be " << expected << " for "
                            << encoding << " weights, got " << scales.getType();
  return success();
}

/// The shapes of an any-shape op (M and K dynamic: the kernel takes them as
/// run-time arguments, kernel_abi.h's lowbit_any_kernel_fn): packed weights
/// of the layout's rank whose static sizes are those that do not depend on
/// M or K, and scales whose type is the static form's with ? for M and the
/// group count.
static LogicalResult verifyAnyShape(MpGemmOp op, WeightAttr weight,
                                    LayoutAttr layout) {
  auto packedType = cast<RankedTensorType>(op.getPacked().getType());
  int64_t dyn = ShapedType::kDynamic;
  SmallVector<int64_t, 3> expected = {dyn, dyn};
  if (layout.getKind() == LayoutKind::VNNI4 && layout.isTiled())
    expected.push_back(4 * layout.getTileM());
  if (packedType.getShape() != ArrayRef<int64_t>(expected))
    return op.emitOpError()
           << "with dynamic M and K needs packed weights of shape "
           << (expected.size() == 3
                   ? "?x?x" + std::to_string(expected[2])
                   : std::string("?x?"))
           << ", got " << packedType;
  Type f16 = Float16Type::get(op.getContext());
  RankedTensorType scalesType;
  switch (weight.getEncoding()) {
  case Encoding::Ternary:
    scalesType = RankedTensorType::get({1}, Float32Type::get(op.getContext()));
    break;
  case Encoding::Binary:
    scalesType = RankedTensorType::get({dyn, dyn}, f16);
    break;
  case Encoding::Unsigned:
    scalesType = RankedTensorType::get({dyn, dyn, 2}, f16);
    break;
  case Encoding::GgufQ4_0:
  case Encoding::Offset:
  case Encoding::Min:
  case Encoding::Codebook:
    break;
  }
  Value scales = op.getScales();
  if (!scalesType && scales)
    return op.emitOpError() << "with dynamic M and K needs no scales operand, "
                               "got "
                            << scales.getType();
  if (scalesType && (!scales || scales.getType() != Type(scalesType))) {
    InFlightDiagnostic diag = op.emitOpError()
                              << "with dynamic M and K needs a scales operand "
                                 "of type "
                              << scalesType;
    if (scales)
      diag << ", got " << scales.getType();
    return diag;
  }
  return success();
}

LogicalResult MpGemmOp::verify() {
  auto xType = cast<RankedTensorType>(getX().getType());
  auto resultType = cast<RankedTensorType>(getResult().getType());
  int64_t k = getK();
  int64_t m = getM();
  if (ShapedType::isDynamic(k) && ShapedType::isDynamic(m)) {
    // The any-shape form: both M and K are run-time arguments.
    if (xType.getDimSize(0) != resultType.getDimSize(0))
      return emitOpError() << "result N dimension ("
                           << formatDim(resultType.getDimSize(0))
                           << ") does not match activation N dimension ("
                           << formatDim(xType.getDimSize(0)) << ")";
    WeightAttr weight = getWeight();
    LayoutAttr layout = getLayout();
    if (failed(verifyLayoutEncoding(*this, weight, layout)) ||
        failed(verifyAnyShape(*this, weight, layout)))
      return failure();
    StrategyConfigAttrInterface config = getConfigAttr();
    if (!config)
      return success();
    return config.verifyFor([&] { return emitOpError(); }, weight, layout, m,
                            k);
  }
  if (ShapedType::isDynamic(k))
    return emitOpError() << "activation K dimension must be static (or M "
                            "and K both dynamic)";
  if (k <= 0)
    return emitOpError() << "K must be positive, got K = " << k;
  if (ShapedType::isDynamic(m))
    return emitOpError() << "result M dimension must be static (or M and K "
                            "both dynamic)";
  if (xType.getDimSize(0) != resultType.getDimSize(0))
    return emitOpError() << "result N dimension ("
                         << formatDim(resultType.getDimSize(0))
                         << ") does not match activation N dimension ("
                         << formatDim(xType.getDimSize(0)) << ")";

  WeightAttr weight = getWeight();
  LayoutAttr layout = getLayout();
  if (failed(verifyLayoutEncoding(*this, weight, layout)) ||
      failed(verifyReductionDim(*this, weight, layout, k)) ||
      failed(verifyPackedShape(*this, weight, layout, m, k)) ||
      failed(verifyScales(*this, weight, m, k)))
    return failure();
  StrategyConfigAttrInterface config = getConfigAttr();
  if (!config)
    return success();
  return config.verifyFor([&] { return emitOpError(); }, weight, layout, m, k);
}
