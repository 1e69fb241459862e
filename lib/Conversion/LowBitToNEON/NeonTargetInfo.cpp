//===- NeonTargetInfo.cpp - lowbit microkernels as AArch64 NEON -----------===//
//
// TargetInfo for AArch64 Advanced SIMD, with (aarch64-neon, Armv8.2-A +
// dotprod) and without (aarch64-neon-nodot, any Armv8-A) the dot-product
// instructions. Registers are 128 bits: a 64-byte vnni4 vector of
// kernel_abi.h is four byte registers of 4 rows x 4 k (x 8 / b planes), so
// every int32 lane of a dot product is one weight row and the vnni4 layout
// needs no NEON variant. Every hook writes <arm_neon.h> intrinsics:
//
//   op              aarch64-neon              aarch64-neon-nodot
//   load            vld1q_u8 (vld1q_s32 for int32 lanes)
//   broadcast4      vld1q_dup_s32 (ld1r)
//   unpack          vshrq_n_u8 / vshlq_n_u8 + vandq_u8 (no AND when the
//                   shift alone clears the other bits)
//   dot4            vdotq_s32 (sdot)          vmull_s8 + vmull_high_s8 +
//                                             vpaddq_s16 + vpadalq_s16
//   shr_exact       vshrq_n_s32
//   load_half       vcvt_f32_f16(vld1_u16)
//   block_combine   vcvtq_f32_s32, vfmsq_f32, vmulq_f32, vfmaq_f32
//   ternary_scale   vsubq_s32, vcvtq_f32_s32, vmulq_f32, vdivq_f32 (no FMA)
//   store (partial) vst1q_f32 / vst1q_lane_f32 per lane below the count
//   prefetch        __builtin_prefetch (prfm pldl1keep)
//
// Codes are unsigned and activations signed (lowbit.uk.dot4): NEON has no
// unsigned x signed dot product before Armv8.6 (usdot, i8mm), but every
// code the lowerings produce is below 128 when getMaxDotCode() says 127, so
// reading the codes as signed bytes is exact and sdot does the job.
//
//===----------------------------------------------------------------------===//

#include "lowbit/Conversion/LowBitToEmitC/EmitCBuilder.h"
#include "lowbit/Conversion/LowBitToNEON/LowBitToNEON.h"

using namespace mlir;
using namespace mlir::lowbit;
using namespace mlir::lowbit::emitc_builder;

namespace {

class NeonTargetInfo final : public TargetInfo {
public:
  explicit NeonTargetInfo(bool dotprod) : dotprod(dotprod) {}

  StringRef getName() const override {
    return dotprod ? "aarch64-neon" : "aarch64-neon-nodot";
  }
  int64_t getRegisterBytes() const override { return 16; }
  int64_t getNumRegisters() const override { return 32; }
  // sdot: latency 2-3, 2 per cycle (Neoverse N1/V1, Cortex-A76/X1); the
  // fallback's accumulate is sadalp, latency 3-4.
  int64_t getDotChains() const override { return 4; }
  // Codes are read as signed bytes (sdot, smull).
  int64_t getMaxDotCode() const override { return 127; }
  // No software prefetch: the weights are one sequential stream per thread,
  // which the stream prefetchers of AArch64 cores follow (nothing here can
  // measure a distance on ARM hardware).
  int64_t getPrefetchBytes() const override { return 0; }
  std::vector<std::string> getCompileFlags() const override {
    return {dotprod ? "-march=armv8.2-a+dotprod" : "-march=armv8-a"};
  }
  std::vector<std::string> getIncludes() const override {
    return {"arm_neon.h", "stddef.h", "stdint.h"};
  }

  Type convertRegisterType(VectorType type) const override {
    Type element = type.getElementType();
    int64_t bits = type.getNumElements() * element.getIntOrFloatBitWidth();
    if (type.getRank() != 1 || (bits != 128 && bits != 256))
      return {};
    std::string name = element.isInteger(8)    ? "uint8x16"
                       : element.isInteger(16) ? "int16x8"
                       : element.isInteger(32) ? "int32x4"
                       : element.isF32()       ? "float32x4"
                                               : "";
    if (name.empty())
      return {};
    return opaqueType(type.getContext(), name + (bits == 256 ? "x2_t" : "_t"));
  }

  Value emitLoad(OpBuilder &b, Location loc, Value ptr,
                 VectorType type) const override {
    MLIRContext *ctx = b.getContext();
    std::string suffix = isPair(type) ? "_x2" : "";
    if (type.getElementType().isInteger(32))
      return call(b, loc, convertRegisterType(type), "vld1q_s32" + suffix,
                  castTo(b, loc, constPointerType(ctx, "int32_t"), ptr));
    return call(b, loc, convertRegisterType(type), "vld1q_u8" + suffix,
                castTo(b, loc, constPointerType(ctx, "uint8_t"), ptr));
  }

  Value emitBroadcast4(OpBuilder &b, Location loc, Value ptr,
                       VectorType type) const override {
    MLIRContext *ctx = b.getContext();
    Value four = call(b, loc, i32x4(ctx), "vld1q_dup_s32",
                      castTo(b, loc, constPointerType(ctx, "int32_t"), ptr));
    return call(b, loc, bytes(ctx), "vreinterpretq_u8_s32", four);
  }

  Value emitUnpack(OpBuilder &b, Location loc, Value packed, VectorType type,
                   int64_t bits, int64_t plane, int64_t scale) const override {
    Type reg = bytes(b.getContext());
    int64_t shift = bits * plane - scale;
    int64_t mask = ((int64_t(1) << bits) - 1) << scale;
    Value shifted = packed;
    if (shift != 0)
      shifted = call(b, loc, reg, shift > 0 ? "vshrq_n_u8" : "vshlq_n_u8",
                     packed, {b.getI32IntegerAttr(int32_t(std::abs(shift)))});
    // A byte shift right by s leaves exactly the low 8 - s bits: no mask
    // when those are the plane (the top plane, unscaled).
    if (shift > 0 && mask == (0xFF >> shift))
      return shifted;
    Value masks = call(b, loc, reg, "vdupq_n_u8", {},
                       {b.getI32IntegerAttr(int32_t(mask))});
    return call(b, loc, reg, "vandq_u8", {shifted, masks});
  }

  Value emitShrExact(OpBuilder &b, Location loc, Value value, int64_t shift,
                     VectorType type) const override {
    return call(b, loc, i32x4(b.getContext()), "vshrq_n_s32", value,
                {b.getI32IntegerAttr(int32_t(shift))});
  }

  Value emitDot4(OpBuilder &b, Location loc, Value acc, Value codes, Value x,
                 VectorType accType) const override {
    MLIRContext *ctx = b.getContext();
    Type s8 = opaqueType(ctx, "int8x16_t");
    Value c = call(b, loc, s8, "vreinterpretq_s8_u8", codes);
    Value xs = call(b, loc, s8, "vreinterpretq_s8_u8", x);
    if (dotprod)
      return call(b, loc, i32x4(ctx), "vdotq_s32", {acc, c, xs});
    // |c x| <= 127 * 128, so a pair of products fits int16 exactly.
    Type i16x8 = opaqueType(ctx, "int16x8_t"),
         s8x8 = opaqueType(ctx, "int8x8_t");
    Value low = call(b, loc, i16x8, "vmull_s8",
                     {call(b, loc, s8x8, "vget_low_s8", c),
                      call(b, loc, s8x8, "vget_low_s8", xs)});
    Value high = call(b, loc, i16x8, "vmull_high_s8", {c, xs});
    Value pairs = call(b, loc, i16x8, "vpaddq_s16", {low, high});
    return call(b, loc, i32x4(ctx), "vpadalq_s16", {acc, pairs});
  }

  Value emitAddI32(OpBuilder &b, Location loc, Value lhs, Value rhs,
                   VectorType type) const override {
    return perHalf(b, loc, type, {lhs, rhs}, [&](ValueRange h) {
      return call(b, loc, i32x4(b.getContext()), "vaddq_s32", h);
    });
  }

  /// vdupq_n_<t>; a pair is zip(s, s) of the splat s (the same splat).
  Value emitSplat(OpBuilder &b, Location loc, VectorType type,
                  TypedAttr value) const override {
    Value scalar = emitc::ConstantOp::create(b, loc, value.getType(), value);
    Type element = type.getElementType();
    std::string t = element.isF32()         ? "f32"
                    : element.isInteger(16) ? "s16"
                    : element.isInteger(8)  ? "u8"
                                            : "s32";
    Type single = convertRegisterType(
        VectorType::get({128 / element.getIntOrFloatBitWidth()}, element));
    Value splat = call(b, loc, single, "vdupq_n_" + t, scalar);
    if (!isPair(type))
      return splat;
    return call(b, loc, convertRegisterType(type), "vzipq_" + t,
                {splat, splat});
  }

  Value emitBroadcast(OpBuilder &b, Location loc, Value scalar,
                      VectorType type) const override {
    MLIRContext *ctx = b.getContext();
    if (isa<FloatType>(scalar.getType()))
      return call(b, loc, f32x4(ctx), "vdupq_n_f32", scalar);
    return call(b, loc, i32x4(ctx), "vdupq_n_s32", scalar);
  }

  Value emitLoadHalf(OpBuilder &b, Location loc, Value ptr,
                     VectorType type) const override {
    MLIRContext *ctx = b.getContext();
    Value raw = call(b, loc, opaqueType(ctx, "uint16x4_t"), "vld1_u16",
                     castTo(b, loc, constPointerType(ctx, "uint16_t"), ptr));
    Value half = call(b, loc, opaqueType(ctx, "float16x4_t"),
                      "vreinterpret_f16_u16", raw);
    return call(b, loc, f32x4(ctx), "vcvt_f32_f16", half);
  }

  Value emitBlockCombine(OpBuilder &b, Location loc,
                         const BlockCombineOperands &o,
                         VectorType type) const override {
    Type reg = f32x4(b.getContext());
    Value t = call(b, loc, reg, "vcvtq_f32_s32", o.dot);
    if (o.zero) {
      Value sums = call(b, loc, reg, "vdupq_n_f32",
                        castTo(b, loc, b.getF32Type(), o.sum));
      t = call(b, loc, reg, "vfmsq_f32", {t, o.zero, sums});
    }
    Value inv = call(b, loc, reg, "vdupq_n_f32", o.inv);
    Value factor = call(b, loc, reg, "vmulq_f32", {o.scale, inv});
    return call(b, loc, reg, "vfmaq_f32", {o.y, t, factor});
  }

  Value emitTernaryScale(OpBuilder &b, Location loc, Value dot, Value sum,
                         Value wScale, Value xScale,
                         VectorType type) const override {
    MLIRContext *ctx = b.getContext();
    Type ireg = i32x4(ctx), freg = f32x4(ctx);
    Value sums = call(b, loc, ireg, "vdupq_n_s32", sum);
    Value w = call(b, loc, freg, "vdupq_n_f32", wScale);
    Value x = call(b, loc, freg, "vdupq_n_f32", xScale);
    VectorType out = VectorType::get(type.getShape(), b.getF32Type());
    return perHalf(b, loc, out, {dot}, [&](ValueRange h) {
      Value acc = call(b, loc, ireg, "vsubq_s32", {h[0], sums});
      Value f = call(b, loc, freg, "vcvtq_f32_s32", acc);
      f = call(b, loc, freg, "vmulq_f32", {f, w});
      return call(b, loc, freg, "vdivq_f32", {f, x});
    });
  }

  void emitStore(OpBuilder &b, Location loc, Value value, Value ptr,
                 Value count, VectorType type) const override {
    SmallVector<Value, 2> halves = splitHalves(b, loc, value);
    if (!count) {
      for (auto [i, half] : llvm::enumerate(halves))
        callVoid(b, loc, "vst1q_f32",
                 {elementAddress(b, loc, ptr, 4 * int64_t(i)), half});
      return;
    }
    // No masked store: lane i when i < count.
    for (int64_t lane = 0; lane < 4 * int64_t(halves.size()); ++lane) {
      Value index = emitc::ConstantOp::create(b, loc, count.getType(),
                                              b.getIndexAttr(lane));
      Value inside = emitc::CmpOp::create(
          b, loc, b.getI1Type(), emitc::CmpPredicate::gt, count, index);
      emitc::IfOp::create(b, loc, inside, [&](OpBuilder &then, Location loc) {
        callVoid(then, loc, "vst1q_lane_f32",
                 {elementAddress(then, loc, ptr, lane), halves[lane / 4]},
                 {then.getI32IntegerAttr(int32_t(lane % 4))});
        emitc::YieldOp::create(then, loc);
      });
    }
  }

  void emitPrefetch(OpBuilder &b, Location loc, Value ptr) const override {
    callVoid(b, loc, "__builtin_prefetch", ptr);
  }

  //===--- lut-elementwise: pairs of registers (two 16-byte table lanes)
  //---===//

  bool hasByteTableLookup() const override { return true; }
  int64_t getLutRegisterBytes() const override { return 32; }

  bool emitStoreI32(OpBuilder &b, Location loc, Value value,
                    Value ptr) const override {
    MLIRContext *ctx = b.getContext();
    Value p = castTo(b, loc,
                     emitc::PointerType::get(opaqueType(ctx, "int32_t")), ptr);
    for (auto [i, half] : llvm::enumerate(splitHalves(b, loc, value)))
      callVoid(b, loc, "vst1q_s32",
               {elementAddress(b, loc, p, 4 * int64_t(i)), half});
    return true;
  }

  /// Per group: the 16 int16 entries d0 x0 + d1 x1 (+ d2 x2) as two
  /// int16x8_t (vmulq_n_s16 / vmlaq_n_s16 with the digit vectors, exact:
  /// |d| <= 1), split into low and high bytes by vuzp1q_u8 / vuzp2q_u8.
  bool emitLutTables(OpBuilder &b, Location loc, Value x, Value tables,
                     int64_t width) const override {
    MLIRContext *ctx = b.getContext();
    Type i16x8 = opaqueType(ctx, "int16x8_t"), reg = bytes(ctx);
    Type i16 = b.getIntegerType(16);
    // digits[i][h]: digit i of entries 8h .. 8h + 7.
    SmallVector<std::array<Value, 2>, 3> digits;
    for (int64_t i = 0; i < width; ++i) {
      std::array<Value, 2> halves;
      for (int64_t h = 0; h < 2; ++h) {
        SmallVector<Attribute> lanes;
        for (int64_t e = 8 * h; e < 8 * h + 8; ++e)
          lanes.push_back(
              b.getI32IntegerAttr(int32_t(tableDigit(width, i, e))));
        halves[h] = loadConstant(b, loc, "int16_t", lanes, "vld1q_s16", i16x8);
      }
      digits.push_back(halves);
    }
    Type u8Ptr = emitc::PointerType::get(opaqueType(ctx, "uint8_t"));
    Value out = castTo(b, loc, u8Ptr, tables);
    for (int64_t g = 0; g < 8; ++g) {
      std::array<Value, 2> entries;
      for (int64_t h = 0; h < 2; ++h) {
        Value sum;
        for (int64_t i = 0; i < width; ++i) {
          Value xi = castTo(b, loc, i16, loadElement(b, loc, x, width * g + i));
          sum =
              sum ? call(b, loc, i16x8, "vmlaq_n_s16", {sum, digits[i][h], xi})
                  : call(b, loc, i16x8, "vmulq_n_s16", {digits[i][h], xi});
        }
        entries[h] = call(b, loc, reg, "vreinterpretq_u8_s16", sum);
      }
      Value low = call(b, loc, reg, "vuzp1q_u8", {entries[0], entries[1]});
      Value high = call(b, loc, reg, "vuzp2q_u8", {entries[0], entries[1]});
      int64_t at = (g % 2) * 128 + (g / 2) * 16;
      callVoid(b, loc, "vst1q_u8", {elementAddress(b, loc, out, at), low});
      callVoid(b, loc, "vst1q_u8",
               {elementAddress(b, loc, out, at + 64), high});
    }
    return true;
  }

  /// Per table lane: vqtbl1q_u8 of the low and high bytes of both tables
  /// (tbl), veorq_u8 with the sign masks, bytes -> int16 by vzip1q_u8 /
  /// vzip2q_u8 (rows 0..7 / 8..15), vaddq_s16.
  std::pair<Value, Value> emitLutLookup(OpBuilder &b, Location loc,
                                        const LutLookupOperands &o,
                                        VectorType type) const override {
    MLIRContext *ctx = b.getContext();
    Type reg = bytes(ctx), i16x8 = opaqueType(ctx, "int16x8_t");
    VectorType i16Type = VectorType::get({16}, b.getIntegerType(16));
    auto halves = [&](Value v) { return splitHalves(b, loc, v); };
    auto idx = halves(o.indices), el = halves(o.evenLow),
         eh = halves(o.evenHigh), ol = halves(o.oddLow), oh = halves(o.oddHigh),
         accLow = halves(o.accLow), accHigh = halves(o.accHigh);
    SmallVector<Value, 2> es, os;
    if (o.evenSign) {
      es = halves(o.evenSign);
      os = halves(o.oddSign);
    }
    Value nibble =
        call(b, loc, reg, "vdupq_n_u8", {}, {b.getI32IntegerAttr(15)});
    SmallVector<Value, 2> lows, highs;
    for (int64_t l = 0; l < 2; ++l) {
      Value i0 = call(b, loc, reg, "vandq_u8", {idx[l], nibble});
      Value i1 =
          call(b, loc, reg, "vshrq_n_u8", idx[l], {b.getI32IntegerAttr(4)});
      Value e0 = call(b, loc, reg, "vqtbl1q_u8", {el[l], i0});
      Value e1 = call(b, loc, reg, "vqtbl1q_u8", {eh[l], i0});
      Value d0 = call(b, loc, reg, "vqtbl1q_u8", {ol[l], i1});
      Value d1 = call(b, loc, reg, "vqtbl1q_u8", {oh[l], i1});
      if (o.evenSign) {
        e0 = call(b, loc, reg, "veorq_u8", {e0, es[l]});
        e1 = call(b, loc, reg, "veorq_u8", {e1, es[l]});
        d0 = call(b, loc, reg, "veorq_u8", {d0, os[l]});
        d1 = call(b, loc, reg, "veorq_u8", {d1, os[l]});
      }
      auto rows = [&](StringRef zip) {
        Value even = call(b, loc, i16x8, "vreinterpretq_s16_u8",
                          call(b, loc, reg, zip, {e0, e1}));
        Value odd = call(b, loc, i16x8, "vreinterpretq_s16_u8",
                         call(b, loc, reg, zip, {d0, d1}));
        return call(b, loc, i16x8, "vaddq_s16", {even, odd});
      };
      lows.push_back(
          call(b, loc, i16x8, "vaddq_s16", {accLow[l], rows("vzip1q_u8")}));
      highs.push_back(
          call(b, loc, i16x8, "vaddq_s16", {accHigh[l], rows("vzip2q_u8")}));
    }
    Type pair = convertRegisterType(i16Type);
    return {joinHalves(b, loc, lows, pair), joinHalves(b, loc, highs, pair)};
  }

  Value emitLutSignMask(OpBuilder &b, Location loc, Value signs, int64_t bit,
                        VectorType type) const override {
    Type reg = bytes(b.getContext());
    Value bits = call(b, loc, reg, "vdupq_n_u8", {},
                      {b.getI32IntegerAttr(int32_t(1 << bit))});
    return perHalf(b, loc, type, {signs}, [&](ValueRange h) {
      return call(b, loc, reg, "vtstq_u8", {h[0], bits});
    });
  }

  /// result[j] = acc[j] + values[j] + values[j + 8]: the int16 lanes of both
  /// table lanes, widened and added (vaddl_s16, vaddl_high_s16).
  Value emitWidenAdd(OpBuilder &b, Location loc, Value acc, Value values,
                     VectorType accType) const override {
    MLIRContext *ctx = b.getContext();
    Type i16x4 = opaqueType(ctx, "int16x4_t"), reg = i32x4(ctx);
    SmallVector<Value, 2> v = splitHalves(b, loc, values);
    SmallVector<Value, 2> a = splitHalves(b, loc, acc);
    Value low = call(b, loc, reg, "vaddl_s16",
                     {call(b, loc, i16x4, "vget_low_s16", v[0]),
                      call(b, loc, i16x4, "vget_low_s16", v[1])});
    Value high = call(b, loc, reg, "vaddl_high_s16", {v[0], v[1]});
    return joinHalves(b, loc,
                      {call(b, loc, reg, "vaddq_s32", {a[0], low}),
                       call(b, loc, reg, "vaddq_s32", {a[1], high})},
                      convertRegisterType(accType));
  }

  /// 8 int32 lanes: lane j is already row j of its half.
  Value emitFoldRows(OpBuilder &b, Location loc, Value low, Value high,
                     int64_t part, VectorType type) const override {
    return part == 0 ? low : high;
  }

private:
  static bool isPair(VectorType type) {
    return type.getNumElements() *
               type.getElementType().getIntOrFloatBitWidth() ==
           256;
  }

  /// Digit i (-1, 0, 1) of table entry e: TL1 (width 2) e = 3 d0 + d1 + 4
  /// for e <= 8, TL2 (width 3) e = 9 d0 + 3 d1 + d2 + 13 for e <= 13; 0
  /// past the last entry (lowbit.uk.lut_tables).
  static int64_t tableDigit(int64_t width, int64_t i, int64_t e) {
    if (width == 3 && e <= 13)
      return i == 0   ? (e + 13) / 9 - 1
             : i == 1 ? (e + 13) / 3 % 3 - 1
                      : (e + 13) % 3 - 1;
    if (width == 2 && e <= 8)
      return i == 0 ? e / 3 - 1 : e % 3 - 1;
    return 0;
  }

  /// `const T name[] = {...};` loaded with `load` into a register.
  static Value loadConstant(OpBuilder &b, Location loc, StringRef element,
                            ArrayRef<Attribute> values, StringRef load,
                            Type reg) {
    MLIRContext *ctx = b.getContext();
    Type constElement = opaqueType(ctx, ("const " + element).str());
    auto array = emitc::ArrayType::get({int64_t(values.size())}, constElement);
    std::string init = "{";
    for (auto [i, v] : llvm::enumerate(values))
      init += (i ? ", " : "") + std::to_string(cast<IntegerAttr>(v).getInt());
    init += "}";
    auto variable = emitc::VariableOp::create(
        b, loc, array, emitc::OpaqueAttr::get(ctx, init));
    Value zero = emitc::ConstantOp::create(b, loc, emitc::SizeTType::get(ctx),
                                           b.getIndexAttr(0));
    auto first = emitc::SubscriptOp::create(
        b, loc, cast<TypedValue<emitc::ArrayType>>(variable.getResult()),
        ValueRange{zero});
    Value address = emitc::AddressOfOp::create(
        b, loc, emitc::PointerType::get(constElement), first);
    return call(b, loc, reg, load, address);
  }

  /// The 16-byte halves of a register pair (`.val[0]`, `.val[1]` of a
  /// `...x2_t`), or the register itself.
  static SmallVector<Value, 2> splitHalves(OpBuilder &b, Location loc,
                                           Value value) {
    auto pair = cast<emitc::OpaqueType>(value.getType());
    StringRef name = pair.getValue();
    if (!name.ends_with("x2_t"))
      return {value};
    MLIRContext *ctx = b.getContext();
    Type half = opaqueType(ctx, (name.drop_back(4) + "_t").str());
    auto variable = emitc::VariableOp::create(
        b, loc, emitc::LValueType::get(pair), emitc::OpaqueAttr::get(ctx, ""));
    emitc::AssignOp::create(b, loc, variable, value);
    Value array = emitc::MemberOp::create(
        b, loc, emitc::ArrayType::get({2}, half), "val", variable);
    SmallVector<Value, 2> halves;
    for (int64_t i = 0; i < 2; ++i) {
      Value index = emitc::ConstantOp::create(
          b, loc, emitc::SizeTType::get(ctx), b.getIndexAttr(i));
      auto element = emitc::SubscriptOp::create(
          b, loc, cast<TypedValue<emitc::ArrayType>>(array), ValueRange{index});
      halves.push_back(emitc::LoadOp::create(b, loc, half, element));
    }
    return halves;
  }

  /// A register pair of type `pair` from its two halves.
  static Value joinHalves(OpBuilder &b, Location loc, ArrayRef<Value> halves,
                          Type pair) {
    MLIRContext *ctx = b.getContext();
    auto variable = emitc::VariableOp::create(
        b, loc, emitc::LValueType::get(pair), emitc::OpaqueAttr::get(ctx, ""));
    Value array = emitc::MemberOp::create(
        b, loc, emitc::ArrayType::get({2}, halves[0].getType()), "val",
        variable);
    for (int64_t i = 0; i < 2; ++i) {
      Value index = emitc::ConstantOp::create(
          b, loc, emitc::SizeTType::get(ctx), b.getIndexAttr(i));
      auto element = emitc::SubscriptOp::create(
          b, loc, cast<TypedValue<emitc::ArrayType>>(array), ValueRange{index});
      emitc::AssignOp::create(b, loc, element, halves[i]);
    }
    return emitc::LoadOp::create(b, loc, pair, variable);
  }

  /// `op` on each half of the operands (registers or pairs of `type`'s
  /// width), joined into the result type of `type`.
  Value perHalf(OpBuilder &b, Location loc, VectorType type,
                ArrayRef<Value> operands,
                function_ref<Value(ValueRange)> op) const {
    if (!isPair(type))
      return op(operands);
    SmallVector<SmallVector<Value, 2>> split;
    for (Value v : operands)
      split.push_back(splitHalves(b, loc, v));
    SmallVector<Value, 2> results;
    for (int64_t i = 0; i < 2; ++i) {
      SmallVector<Value> args;
      for (auto &halves : split)
        args.push_back(halves[i]);
      results.push_back(op(args));
    }
    return joinHalves(b, loc, results, convertRegisterType(type));
  }

  static Type bytes(MLIRContext *ctx) { return opaqueType(ctx, "uint8x16_t"); }
  static Type i32x4(MLIRContext *ctx) { return opaqueType(ctx, "int32x4_t"); }
  static Type f32x4(MLIRContext *ctx) { return opaqueType(ctx, "float32x4_t"); }

  bool dotprod;
};

} // namespace

std::unique_ptr<TargetInfo> mlir::lowbit::createNeonTargetInfo(bool dotprod) {
  return std::make_unique<NeonTargetInfo>(dotprod);
}
