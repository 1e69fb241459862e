//===- GenericTargetInfo.cpp - lowbit microkernels as scalar C++ ----------===//
//
// A register is 4 bytes: one weight row x 4 k of codes, or 4 activations, in
// a uint32_t whose byte r (bits 8r..8r+7) is element r. int32/f32 registers
// have one lane: int32_t and float. Everything is portable C++17 with
// well-defined behaviour (bytes are assembled with shifts, so the host's
// endianness does not matter; sign extension is (v ^ 0x80) - 0x80).
//
//===----------------------------------------------------------------------===//

#include "lowbit/Conversion/LowBitToEmitC/EmitCBuilder.h"
#include "lowbit/Conversion/LowBitToGeneric/LowBitToGeneric.h"
#include "lowbit/Conversion/Passes.h"

#include "mlir/Pass/PassManager.h"

using namespace mlir;
using namespace mlir::lowbit;
using namespace mlir::lowbit::emitc_builder;

namespace {

class GenericTargetInfo final : public TargetInfo {
public:
  StringRef getName() const override { return "generic"; }
  int64_t getRegisterBytes() const override { return 4; }
  int64_t getNumRegisters() const override { return 16; }
  int64_t getDotChains() const override { return 1; }
  int64_t getMaxDotCode() const override { return 255; }
  int64_t getPrefetchBytes() const override { return 0; }
  void addConversionPasses(OpPassManager &pm) const override {
    pm.addPass(createLowBitConvertToGeneric());
  }
  std::vector<std::string> getCompileFlags(bool) const override {
    return {};
  }
  std::vector<std::string> getIncludes() const override {
    return {"math.h", "stddef.h", "stdint.h"};
  }

  Type convertRegisterType(VectorType type) const override {
    Type element = type.getElementType();
    if (type.getRank() != 1)
      return {};
    if (element.isInteger(8) && type.getNumElements() == 4)
      return u32(type.getContext());
    if ((element.isInteger(32) || element.isF32()) &&
        type.getNumElements() == 1)
      return element;
    return {};
  }

  Value emitLoad(OpBuilder &b, Location loc, Value ptr,
                 VectorType type) const override {
    return loadWord(b, loc, ptr);
  }

  Value emitBroadcast4(OpBuilder &b, Location loc, Value ptr,
                       VectorType type) const override {
    return loadWord(b, loc, ptr);
  }

  Value emitUnpack(OpBuilder &b, Location loc, Value packed, VectorType type,
                   int64_t bits, int64_t plane, int64_t scale) const override {
    Type t = u32(b.getContext());
    Value shifted = packed;
    int64_t shift = bits * plane - scale;
    if (shift > 0)
      shifted = emitc::BitwiseRightShiftOp::create(
          b, loc, t, packed, intConstant(b, loc, t, shift));
    else if (shift < 0)
      shifted = emitc::BitwiseLeftShiftOp::create(
          b, loc, t, packed, intConstant(b, loc, t, -shift));
    int64_t mask = (((int64_t(1) << bits) - 1) << scale) * 0x01010101;
    return emitc::BitwiseAndOp::create(b, loc, t, shifted,
                                       intConstant(b, loc, t, mask));
  }

  /// Per byte i (< 16) of the word: byte i % 8 of the table's first or
  /// second 8 bytes, held as two uint64_t (a table in two words: no array
  /// to declare).
  Value emitCodebook(OpBuilder &b, Location loc, Value codes,
                     ArrayRef<int8_t> table, VectorType type) const override {
    MLIRContext *ctx = b.getContext();
    Type t = u32(ctx), u64 = IntegerType::get(ctx, 64, IntegerType::Unsigned);
    Value words[2];
    for (int64_t h = 0; h < 2; ++h) {
      uint64_t word = 0;
      for (int64_t i = 0; i < 8; ++i)
        word |= uint64_t(uint8_t(table[8 * h + i])) << (8 * i);
      // An int64_t literal converted: a uint64_t one above 2^63 would need
      // a suffix.
      words[h] = castTo(b, loc, u64,
                        intConstant(b, loc, b.getI64Type(), int64_t(word)));
    }
    Value result;
    for (int64_t r = 0; r < 4; ++r) {
      Value code = byteOf(b, loc, codes, r);
      Value high = emitc::CmpOp::create(b, loc, b.getI1Type(),
                                        emitc::CmpPredicate::ge, code,
                                        intConstant(b, loc, t, 8));
      Value word = emitc::ConditionalOp::create(b, loc, u64, high, words[1],
                                                words[0]);
      Value shift = emitc::MulOp::create(
          b, loc, t,
          emitc::BitwiseAndOp::create(b, loc, t, code,
                                      intConstant(b, loc, t, 7)),
          intConstant(b, loc, t, 8));
      Value entry = emitc::BitwiseAndOp::create(
          b, loc, t,
          castTo(b, loc, t,
                 emitc::BitwiseRightShiftOp::create(b, loc, u64, word,
                                                    castTo(b, loc, u64, shift))),
          intConstant(b, loc, t, 0xff));
      if (r > 0)
        entry = emitc::BitwiseLeftShiftOp::create(
            b, loc, t, entry, intConstant(b, loc, t, 8 * r));
      result = result ? emitc::BitwiseOrOp::create(b, loc, t, result, entry)
                      : entry;
    }
    return result;
  }

  Value emitDot4(OpBuilder &b, Location loc, Value acc, Value codes, Value x,
                 VectorType accType) const override {
    return dot4(b, loc, acc, codes, x, /*centred=*/false);
  }

  Value emitCentredDot4(OpBuilder &b, Location loc, Value acc, Value codes,
                        Value x, VectorType accType) const override {
    return dot4(b, loc, acc, codes, x, /*centred=*/true);
  }

  /// acc + sum_r c_r * x_r over the 4 bytes: x_r signed (its byte with
  /// 0x80 flipped, less 0x80), c_r unsigned, or less 0x80 when `centred`.
  static Value dot4(OpBuilder &b, Location loc, Value acc, Value codes,
                    Value x, bool centred) {
    Type i32 = b.getI32Type();
    Value sum = acc;
    Value centre = centred ? intConstant(b, loc, i32, 0x80) : Value();
    for (int64_t r = 0; r < 4; ++r) {
      Value c = castTo(b, loc, i32, byteOf(b, loc, codes, r));
      if (centred)
        c = emitc::SubOp::create(b, loc, i32, c, centre);
      Value xs = castTo(b, loc, i32, byteOf(b, loc, x, r));
      Value bias = centred ? centre : intConstant(b, loc, i32, 0x80);
      xs = emitc::SubOp::create(
          b, loc, i32, emitc::BitwiseXorOp::create(b, loc, i32, xs, bias),
          bias);
      sum = emitc::AddOp::create(b, loc, i32, sum,
                                 emitc::MulOp::create(b, loc, i32, c, xs));
    }
    return sum;
  }

  /// An exact division (well defined for negative values, unlike >>).
  Value emitShrExact(OpBuilder &b, Location loc, Value value, int64_t shift,
                     VectorType type) const override {
    Type i32 = b.getI32Type();
    return emitc::DivOp::create(b, loc, i32, value,
                                intConstant(b, loc, i32, int64_t(1) << shift));
  }

  Value emitBroadcast(OpBuilder &b, Location loc, Value scalar,
                      VectorType type) const override {
    return scalar;
  }

  Value emitAddI(OpBuilder &b, Location loc, Value lhs, Value rhs,
                   VectorType type) const override {
    return emitc::AddOp::create(b, loc, b.getI32Type(), lhs, rhs);
  }

  Value emitSplat(OpBuilder &b, Location loc, VectorType type,
                  TypedAttr value) const override {
    return emitc::ConstantOp::create(b, loc, value.getType(), value);
  }

  /// Exact fp16 -> f32 for finite values: ldexpf(mantissa, exponent - 25).
  Value emitOrBytes(OpBuilder &b, Location loc, Value lhs, Value rhs,
                    VectorType type) const override {
    return emitc::BitwiseOrOp::create(b, loc, u32(b.getContext()), lhs, rhs);
  }

  /// The two bytes from `ptr`, shifted down by `shift`, the low `bits`
  /// kept; two's complement with sign_extend ((v ^ h) - h, h = 2^(bits-1)).
  Value emitLoadScales(OpBuilder &b, Location loc, Value ptr, Value shift,
                       int64_t bits, bool signExtend,
                       VectorType type) const override {
    MLIRContext *ctx = b.getContext();
    Type t = u32(ctx), i32 = b.getI32Type();
    Type u8 = IntegerType::get(ctx, 8, IntegerType::Unsigned);
    Value low = castTo(b, loc, t, castTo(b, loc, u8, loadElement(b, loc, ptr, 0)));
    Value high = emitc::BitwiseLeftShiftOp::create(
        b, loc, t,
        castTo(b, loc, t, castTo(b, loc, u8, loadElement(b, loc, ptr, 1))),
        intConstant(b, loc, t, 8));
    Value v = emitc::BitwiseRightShiftOp::create(
        b, loc, t, emitc::BitwiseOrOp::create(b, loc, t, low, high),
        castTo(b, loc, t, shift));
    v = emitc::BitwiseAndOp::create(b, loc, t, v,
                                    intConstant(b, loc, t, (1 << bits) - 1));
    Value n = castTo(b, loc, i32, v);
    if (signExtend) {
      Value half = intConstant(b, loc, i32, int64_t(1) << (bits - 1));
      n = emitc::SubOp::create(
          b, loc, i32, emitc::BitwiseXorOp::create(b, loc, i32, n, half), half);
    }
    return castTo(b, loc, b.getF32Type(), n);
  }

  Value emitLoadHalf(OpBuilder &b, Location loc, Value ptr,
                     VectorType type) const override {
    Type t = u32(b.getContext()), i32 = b.getI32Type(), f32 = b.getF32Type();
    Value h = castTo(b, loc, t, loadElement(b, loc, ptr, 0));
    Value exponent = emitc::BitwiseAndOp::create(
        b, loc, t,
        emitc::BitwiseRightShiftOp::create(b, loc, t, h,
                                           intConstant(b, loc, t, 10)),
        intConstant(b, loc, t, 31));
    Value fraction =
        emitc::BitwiseAndOp::create(b, loc, t, h, intConstant(b, loc, t, 1023));
    Value subnormal =
        emitc::CmpOp::create(b, loc, b.getI1Type(), emitc::CmpPredicate::eq,
                             exponent, intConstant(b, loc, t, 0));
    Value normal = emitc::BitwiseOrOp::create(b, loc, t, fraction,
                                              intConstant(b, loc, t, 1024));
    Value mantissa =
        emitc::ConditionalOp::create(b, loc, t, subnormal, fraction, normal);
    Value scaleExp = emitc::ConditionalOp::create(
        b, loc, t, subnormal, intConstant(b, loc, t, 1), exponent);
    Value e = emitc::SubOp::create(b, loc, i32, castTo(b, loc, i32, scaleExp),
                                   intConstant(b, loc, i32, 25));
    Value magnitude =
        call(b, loc, f32, "ldexpf", {castTo(b, loc, f32, mantissa), e});
    Value sign = emitc::BitwiseAndOp::create(b, loc, t, h,
                                             intConstant(b, loc, t, 0x8000));
    Value negative =
        emitc::CmpOp::create(b, loc, b.getI1Type(), emitc::CmpPredicate::ne,
                             sign, intConstant(b, loc, t, 0));
    Value negated = emitc::UnaryMinusOp::create(b, loc, f32, magnitude);
    return emitc::ConditionalOp::create(b, loc, f32, negative, negated,
                                        magnitude);
  }

  Value emitBlockCombine(OpBuilder &b, Location loc,
                         const BlockCombineOperands &o,
                         VectorType type) const override {
    Type f32 = b.getF32Type();
    Value t = castTo(b, loc, f32, o.dot);
    if (o.zero)
      t = emitc::SubOp::create(
          b, loc, f32, t,
          emitc::MulOp::create(b, loc, f32, o.zero,
                               castTo(b, loc, f32, o.sum)));
    Value by = o.scale ? o.scale : o.inv;
    return emitc::AddOp::create(b, loc, f32, o.sums,
                                emitc::MulOp::create(b, loc, f32, t, by));
  }

  Value emitGroupCombine(OpBuilder &b, Location loc, Value y, Value sums,
                         Value scale, VectorType type) const override {
    Type f32 = b.getF32Type();
    return emitc::AddOp::create(b, loc, f32, y,
                                emitc::MulOp::create(b, loc, f32, sums, scale));
  }

  Value emitTernaryScale(OpBuilder &b, Location loc, Value dot, Value sum,
                         Value wScale, Value xScale,
                         VectorType type) const override {
    Type f32 = b.getF32Type();
    Value acc = emitc::SubOp::create(b, loc, b.getI32Type(), dot, sum);
    Value scaled =
        emitc::MulOp::create(b, loc, f32, castTo(b, loc, f32, acc), wScale);
    return emitc::DivOp::create(b, loc, f32, scaled, xScale);
  }

  void emitStore(OpBuilder &b, Location loc, Value value, Value ptr,
                 Value count, VectorType type) const override {
    auto store = [&](OpBuilder &b) {
      Value zero = emitc::ConstantOp::create(
          b, loc, emitc::SizeTType::get(b.getContext()), b.getIndexAttr(0));
      Value lvalue = emitc::SubscriptOp::create(
          b, loc, cast<TypedValue<emitc::PointerType>>(ptr), zero);
      emitc::AssignOp::create(b, loc, lvalue, value);
    };
    if (!count) {
      store(b);
      return;
    }
    Value zero =
        emitc::ConstantOp::create(b, loc, count.getType(), b.getIndexAttr(0));
    Value any = emitc::CmpOp::create(b, loc, b.getI1Type(),
                                     emitc::CmpPredicate::ne, count, zero);
    emitc::IfOp::create(b, loc, any, [&](OpBuilder &then, Location loc) {
      store(then);
      emitc::YieldOp::create(then, loc);
    });
  }

  void emitPrefetch(OpBuilder &, Location, Value) const override {}

private:
  static Type u32(MLIRContext *ctx) {
    return IntegerType::get(ctx, 32, IntegerType::Unsigned);
  }

  /// bytes ptr[0..3] as a uint32_t, byte r in bits 8r..8r+7.
  static Value loadWord(OpBuilder &b, Location loc, Value ptr) {
    Type t = u32(b.getContext());
    Type u8 = IntegerType::get(b.getContext(), 8, IntegerType::Unsigned);
    Value word;
    for (int64_t r = 0; r < 4; ++r) {
      Value byte =
          castTo(b, loc, t, castTo(b, loc, u8, loadElement(b, loc, ptr, r)));
      if (r > 0)
        byte = emitc::BitwiseLeftShiftOp::create(b, loc, t, byte,
                                                 intConstant(b, loc, t, 8 * r));
      word = word ? emitc::BitwiseOrOp::create(b, loc, t, word, byte) : byte;
    }
    return word;
  }

  /// Byte r of a uint32_t register, as a uint32_t in [0, 255].
  static Value byteOf(OpBuilder &b, Location loc, Value word, int64_t r) {
    Type t = u32(b.getContext());
    Value v = word;
    if (r > 0)
      v = emitc::BitwiseRightShiftOp::create(b, loc, t, word,
                                             intConstant(b, loc, t, 8 * r));
    return emitc::BitwiseAndOp::create(b, loc, t, v,
                                       intConstant(b, loc, t, 0xff));
  }
};

} // namespace

std::unique_ptr<TargetInfo> mlir::lowbit::createGenericTargetInfo() {
  return std::make_unique<GenericTargetInfo>();
}
