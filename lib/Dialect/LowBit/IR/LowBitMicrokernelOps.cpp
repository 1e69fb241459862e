//===- LowBitMicrokernelOps.cpp - lowbit.uk.* verifiers ---------*- C++ -*-===//
//
// Verifiers of the register-level microkernel ops: bit widths and planes,
// and the lane counts that tie byte registers to int32/f32 registers.
//
//===----------------------------------------------------------------------===//

#include "lowbit/Dialect/LowBit/IR/LowBitOps.h"

using namespace mlir;
using namespace mlir::lowbit;

static int64_t getLanes(Value v) {
  return cast<VectorType>(v.getType()).getNumElements();
}

/// Checks that a byte register has 4 bytes per lane of a 32-bit register.
static LogicalResult verifyBytesPerLane(Operation *op, Value bytes,
                                        Value lanes) {
  if (getLanes(bytes) == 4 * getLanes(lanes))
    return success();
  return op->emitOpError() << "byte register " << bytes.getType()
                           << " must hold 4 bytes per lane of "
                           << lanes.getType();
}

LogicalResult UkUnpackOp::verify() {
  if (getLow() && getLow().getType() != getType())
    return emitOpError() << "into " << getLow().getType()
                         << " must have the type of the result " << getType();
  int64_t bits = int64_t(getBits());
  if (bits != 1 && bits != 2 && bits != 4)
    return emitOpError() << "bits must be 1, 2 or 4, got " << bits;
  int64_t plane = int64_t(getPlane()), scale = int64_t(getScale());
  if (plane >= 8 / bits)
    return emitOpError() << "plane must be below " << 8 / bits << " for "
                         << bits << "-bit codes, got " << plane;
  if (((int64_t(1) << bits) - 1) << scale > 255)
    return emitOpError() << "scale " << scale << " makes " << bits
                         << "-bit codes exceed a byte";
  return success();
}

LogicalResult UkCodebookOp::verify() {
  if (getTable().size() != 16)
    return emitOpError() << "table must have 16 entries, got "
                         << getTable().size();
  return success();
}

LogicalResult UkLoadScalesOp::verify() {
  int64_t lanes = getLanes(getResult()), bits = int64_t(getBits());
  if (lanes > 1 && lanes * bits % 8 != 0)
    return emitOpError() << lanes << " lanes of " << bits
                         << "-bit values are not a whole number of bytes";
  return success();
}

LogicalResult UkDot4Op::verify() {
  return verifyBytesPerLane(*this, getCodes(), getAcc());
}

LogicalResult UkBlockCombineOp::verify() {
  if (getLanes(getDot()) != getLanes(getSums()))
    return emitOpError() << "dot " << getDot().getType() << " and sums "
                         << getSums().getType()
                         << " must have the same number of lanes";
  if (!getInv() == !getScale())
    return emitOpError() << "takes one multiplier: inv or scale";
  if (getScale() && getScale().getType() != getSums().getType())
    return emitOpError() << "scale " << getScale().getType()
                         << " must have the type of the sums "
                         << getSums().getType();
  if (!getZero() != !getSum())
    return emitOpError() << "takes the zero points and the activation sum "
                            "together";
  if (getZero() && getZero().getType() != getSums().getType())
    return emitOpError() << "zero " << getZero().getType()
                         << " must have the type of the sums "
                         << getSums().getType();
  return success();
}

LogicalResult UkTernaryScaleOp::verify() {
  if (getLanes(getDot()) != getLanes(getResult()))
    return emitOpError() << "dot " << getDot().getType() << " and result "
                         << getResult().getType()
                         << " must have the same number of lanes";
  return success();
}

LogicalResult UkLutDotOp::verify() {
  int64_t bytes = getLanes(getIndices());
  if (getLanes(getAccLow()) * 4 != bytes)
    return emitOpError() << "accumulator " << getAccLow().getType()
                         << " must hold one int32 per 4 bytes of "
                         << getIndices().getType();
  if (getSigns() && getSigns().getType() != getIndices().getType())
    return emitOpError() << "signs " << getSigns().getType()
                         << " must have the type of the indices "
                         << getIndices().getType();
  return success();
}

LogicalResult UkDot2Op::verify() {
  if (getLanes(getCodes()) != 2 * getLanes(getResult()))
    return emitOpError() << "needs two bytes of " << getCodes().getType()
                         << " per int16 lane of " << getResult().getType();
  return success();
}

LogicalResult UkExtendOp::verify() {
  if (getLanes(getLow()) != 2 * getLanes(getResult()))
    return emitOpError() << "widens half the int16 lanes of "
                         << getLow().getType() << ", not to "
                         << getResult().getType();
  if (getMultipliers() &&
      getLanes(getMultipliers()) != 4 * getLanes(getResult()))
    return emitOpError() << "needs a word pair per int32 lane of "
                         << getResult().getType() << " in its multipliers, got "
                         << getMultipliers().getType();
  return success();
}

LogicalResult UkLaneFoldOp::verify() {
  auto type = cast<VectorType>(getLhs().getType());
  if (type.getNumElements() * type.getElementTypeBitWidth() != 256)
    return emitOpError() << "folds registers of two 16-byte lanes "
                            "(vector<8xi32> or vector<16xi16>), got "
                         << getLhs().getType();
  return success();
}

LogicalResult UkWidenOp::verify() {
  if (getLanes(getWords()) != 16 || getLanes(getResult()) != 8 ||
      getLanes(getMultipliers()) != 32)
    return emitOpError() << "widens a 16-byte lane of vector<16xi16> into "
                            "vector<8xi32> with vector<32xi8> multipliers, "
                            "got "
                         << getWords().getType() << ", "
                         << getMultipliers().getType() << " -> "
                         << getResult().getType();
  if (getLane() != 0 && getLane() != 1)
    return emitOpError() << "lane must be 0 or 1, got " << getLane();
  return success();
}

LogicalResult UkLutDot8Op::verify() {
  if (getLanes(getAcc()) * 4 != getLanes(getIndices()))
    return emitOpError() << "accumulator " << getAcc().getType()
                         << " must hold one int32 per 4 bytes of "
                         << getIndices().getType();
  return success();
}

LogicalResult UkTileDotOp::verify() {
  if (getAcc() == getLhs() || getAcc() == getRhs() || getLhs() == getRhs())
    return emitOpError() << "needs three different tiles, got acc = "
                         << getAcc() << ", lhs = " << getLhs()
                         << ", rhs = " << getRhs();
  return success();
}
