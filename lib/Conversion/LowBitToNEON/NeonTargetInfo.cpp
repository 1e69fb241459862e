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
//                   shift alone clears the other bits; into: + vorrq_u8)
//   codebook        vqtbl1q_u8 (tbl) of vcombine_u8 of two vcreate_u8
//   dot4            vdotq_s32 (sdot)          vmull_s8 + vmull_high_s8 +
//                                             vpaddq_s16 + vpadalq_s16
//   dot4 {centred}  veorq_u8 0x80, then dot4 (the codes as signed bytes)
//   shr_exact       vshrq_n_s32
//   load_half       vcvt_f32_f16(vld1_u16)
//   load_scales     vld1q_dup_u32; 8 bits: vmovl_s8 (u8), vmovl_s16 (u16);
//                   else vqtbl1q_u8, vshlq_u32, vshrq_n_s32 (u32); then
//                   vcvtq_f32_s32
//   block_combine   vcvtq_f32_s32, vfmsq_f32, vmulq_f32, vfmaq_f32
//   ternary_scale   vsubq_s32, vcvtq_f32_s32, vmulq_f32, vdivq_f32 (no FMA)
//   store (partial) vst1q_f32 / vst1q_lane_f32 per lane below the count
//   prefetch        __builtin_prefetch (prfm pldl1keep)
//   splat (bytes)   vdupq_n_u8 (lut_dot multipliers)
//   lut_tables      vmulq_n_s16 / vmlaq_n_s16 of digit vectors (TL1, TL2,
//                   bit-serial ±1), vuzp1q_u8 / vuzp2q_u8 byte split,
//                   veorq_u8 (high byte + 128)
//   lut_dot         vbslq_u8 / vsriq_n_u8 (nibble | 16 x table), 2 x
//                   vqtbl4q_u8 (tbl of the 64-byte tables), then per table:
//     no signs, or  vdotq_u32 (udot) with     vpaddlq_u8 (x vmovl_u8 of the
//     a splat 0..127  ones / the multipliers  multipliers) + vpadalq_u16
//     signs         veorq_u8 0x80 + dot4 (above) with the signs + vaddq_s32,
//                   plus 128 x the sum of the signs (dot4 with ones, shl)
//   lut_signs       vld1q_dup_u16, vqtbl1q_u8 (byte i / 8), vtstq_u8, vorrq_u8
//   lut_dot8        the index of lut_dot, one vqtbl4q_u8 (the 4 int8 tables
//                   of 16 entries), dot4 of the multipliers and entries;
//   lut_combine     vshlq_n_s32 + vaddq_s32
//   spill           vst1q_s32, vst1q_f32 (f32), vst1q_u8 (bytes)
//   trit            vmulq_u8 by 3^digit (wraps modulo 256), then x 3 >> 8
//                   as vmull_u8 / vmull_high_u8 by 3 and vshrn_n_u16 /
//                   vshrn_high_n_u16 by 8 (the row kernels' TQ1_0 digits;
//                   no triple: sdot takes codes below 128 only, so the
//                   digits' fractions are not dotted)
//
// A 64-byte table is 4 q registers, so the LUT lowerings learn that the
// two tables of a lut_dot take 8 (getLutTableRegisters) and keep fewer
// accumulators and smaller loop bodies.
//
// Codes are unsigned and activations signed (lowbit.uk.dot4): NEON has no
// unsigned x signed dot product before Armv8.6 (usdot, i8mm), but every
// code the lowerings produce is below 128 when getMaxDotCode() says 127, so
// reading the codes as signed bytes is exact and sdot does the job.
//
//===----------------------------------------------------------------------===//

#include "lowbit/Conversion/LowBitToEmitC/EmitCBuilder.h"
#include "lowbit/Conversion/LowBitToNEON/LowBitToNEON.h"
#include "lowbit/Conversion/Passes.h"

#include "mlir/Pass/PassManager.h"

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
  /// Without dotprod, a bundle's kernels for CPUs that lack it.
  StringRef getFallbackTarget() const override {
    return dotprod ? "aarch64-neon-nodot" : "generic";
  }
  void addConversionPasses(OpPassManager &pm) const override {
    pm.addPass(createLowBitConvertToNEON());
  }
  std::vector<std::string> getCompileFlags(bool) const override {
    return {dotprod ? "-march=armv8.2-a+dotprod" : "-march=armv8-a"};
  }
  std::vector<std::string> getIncludes() const override {
    return {"arm_neon.h", "stddef.h", "stdint.h"};
  }

  Type convertRegisterType(VectorType type) const override {
    Type element = type.getElementType();
    if (type.getRank() != 1 ||
        type.getNumElements() * element.getIntOrFloatBitWidth() != 128)
      return {};
    MLIRContext *ctx = type.getContext();
    if (element.isInteger(8))
      return opaqueType(ctx, "uint8x16_t");
    if (element.isInteger(16))
      return opaqueType(ctx, "int16x8_t");
    if (element.isInteger(32))
      return opaqueType(ctx, "int32x4_t");
    if (element.isF32())
      return opaqueType(ctx, "float32x4_t");
    return {};
  }

  Value emitLoad(OpBuilder &b, Location loc, Value ptr,
                 VectorType type) const override {
    MLIRContext *ctx = b.getContext();
    if (type.getElementType().isInteger(32))
      return call(b, loc, convertRegisterType(type), "vld1q_s32",
                  castTo(b, loc, constPointerType(ctx, "int32_t"), ptr));
    if (type.getElementType().isF32())
      return call(b, loc, convertRegisterType(type), "vld1q_f32",
                  castTo(b, loc, constPointerType(ctx, "float"), ptr));
    return call(b, loc, convertRegisterType(type), "vld1q_u8",
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

  /// ((v * 3^digit) mod 256) * 3 >> 8 per byte (lowbit.uk.trit): the
  /// fraction by a wrapping byte multiply, its top bits by a widening one.
  Value emitTrit(OpBuilder &b, Location loc, Value packed, int64_t digit,
                 VectorType type) const override {
    MLIRContext *ctx = b.getContext();
    Type reg = bytes(ctx), half = opaqueType(ctx, "uint8x8_t"),
         words = opaqueType(ctx, "uint16x8_t");
    int64_t power = 1;
    for (int64_t i = 0; i < digit; ++i)
      power = power * 3 % 256;
    Value fraction = packed;
    if (power != 1)
      fraction = call(b, loc, reg, "vmulq_u8",
                      {packed, call(b, loc, reg, "vdupq_n_u8", {},
                                    {b.getI32IntegerAttr(int32_t(power))})});
    Value three = call(b, loc, half, "vdup_n_u8", {}, {b.getI32IntegerAttr(3)});
    Value low = call(b, loc, words, "vmull_u8",
                     {call(b, loc, half, "vget_low_u8", fraction), three});
    Value high = call(b, loc, words, "vmull_high_u8",
                      {fraction, call(b, loc, reg, "vdupq_n_u8", {},
                                      {b.getI32IntegerAttr(3)})});
    Value narrow = call(b, loc, half, "vshrn_n_u16", low,
                        {b.getI32IntegerAttr(8)});
    return call(b, loc, reg, "vshrn_high_n_u16", {narrow, high},
                {b.getI32IntegerAttr(8)});
  }

  /// One tbl (vqtbl1q_u8) of the table (byteConstant).
  Value emitCodebook(OpBuilder &b, Location loc, Value codes,
                     ArrayRef<int8_t> table, VectorType type) const override {
    uint8_t entries[16];
    for (int64_t i = 0; i < 16; ++i)
      entries[i] = uint8_t(table[i]);
    return call(b, loc, bytes(b.getContext()), "vqtbl1q_u8",
                {byteConstant(b, loc, entries), codes});
  }

  Value emitOrBytes(OpBuilder &b, Location loc, Value lhs, Value rhs,
                    VectorType type) const override {
    return call(b, loc, bytes(b.getContext()), "vorrq_u8", {lhs, rhs});
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

  /// u - 128 is u ^ 0x80 read as a signed byte: sdot (or its nodot
  /// sequence) of the flipped codes.
  Value emitCentredDot4(OpBuilder &b, Location loc, Value acc, Value codes,
                        Value x, VectorType accType) const override {
    Value flipped = call(b, loc, opaqueType(b.getContext(), "uint8x16_t"),
                         "veorq_u8", {codes, splatByte(b, loc, 0x80)});
    return emitDot4(b, loc, acc, flipped, x, accType);
  }

  Value emitAddI(OpBuilder &b, Location loc, Value lhs, Value rhs,
                   VectorType type) const override {
    return call(b, loc, i32x4(b.getContext()), "vaddq_s32", {lhs, rhs});
  }

  Value emitSplat(OpBuilder &b, Location loc, VectorType type,
                  TypedAttr value) const override {
    // Bytes: the lut_dot multipliers (bit-serial plane weights).
    if (value.getType().isInteger(8))
      return splatByte(b, loc, cast<IntegerAttr>(value).getInt() & 0xFF);
    Value scalar = emitc::ConstantOp::create(b, loc, value.getType(), value);
    return emitBroadcast(b, loc, scalar, type);
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

  /// lowbit.uk.load_scales: the 32-bit word at `ptr` in every lane
  /// (ld1r). 8-bit values: its bytes widened twice (sxtl / uxtl).
  /// Narrower ones: tbl puts the two bytes that hold lane l's value (bits *
  /// l / 8 and the next) in its top 16 bits, ushl moves the value's top bit
  /// to bit 31 and a shift right by 32 - bits (arithmetic for sign_extend)
  /// leaves the value. Then scvtf.
  Value emitLoadScales(OpBuilder &b, Location loc, Value ptr, Value shift,
                       int64_t bits, bool signExtend,
                       VectorType type) const override {
    MLIRContext *ctx = b.getContext();
    Type u32x4 = opaqueType(ctx, "uint32x4_t");
    Value word = call(b, loc, u32x4, "vld1q_dup_u32",
                      castTo(b, loc, constPointerType(ctx, "uint32_t"), ptr));
    Value four = call(b, loc, bytes(ctx), "vreinterpretq_u8_u32", word);
    Value ints;
    if (bits == 8) {
      Value low = call(b, loc, opaqueType(ctx, "uint8x8_t"), "vget_low_u8",
                       four);
      if (signExtend) {
        Value shorts = call(
            b, loc, opaqueType(ctx, "int16x8_t"), "vmovl_s8",
            call(b, loc, opaqueType(ctx, "int8x8_t"), "vreinterpret_s8_u8",
                 low));
        ints = call(b, loc, i32x4(ctx), "vmovl_s16",
                    call(b, loc, opaqueType(ctx, "int16x4_t"), "vget_low_s16",
                         shorts));
      } else {
        Value shorts =
            call(b, loc, opaqueType(ctx, "uint16x8_t"), "vmovl_u8", low);
        ints = call(b, loc, i32x4(ctx), "vreinterpretq_s32_u32",
                    call(b, loc, u32x4, "vmovl_u16",
                         call(b, loc, opaqueType(ctx, "uint16x4_t"),
                              "vget_low_u16", shorts)));
      }
    } else {
      // tbl index bytes from 16 on write 0.
      uint8_t pick[16], counts[16];
      for (int64_t q = 0; q < 16; ++q) {
        int64_t lane = q / 4, part = q % 4;
        pick[q] = part < 2 ? 0xFF : uint8_t(bits * lane / 8 + part - 2);
        // Lane l's count, a little-endian int32 (below 16).
        counts[q] = part == 0 ? uint8_t(16 - bits * lane % 8 - bits) : 0;
      }
      Value gathered = call(b, loc, bytes(ctx), "vqtbl1q_u8",
                            {four, byteConstant(b, loc, pick)});
      Value top = call(
          b, loc, u32x4, "vshlq_u32",
          {call(b, loc, u32x4, "vreinterpretq_u32_u8", gathered),
           call(b, loc, i32x4(ctx), "vreinterpretq_s32_u8",
                byteConstant(b, loc, counts))});
      IntegerAttr right = b.getI32IntegerAttr(int32_t(32 - bits));
      ints = signExtend
                 ? call(b, loc, i32x4(ctx), "vshrq_n_s32",
                        call(b, loc, i32x4(ctx), "vreinterpretq_s32_u32", top),
                        {right})
                 : call(b, loc, i32x4(ctx), "vreinterpretq_s32_u32",
                        call(b, loc, u32x4, "vshrq_n_u32", top, {right}));
    }
    return call(b, loc, f32x4(ctx), "vcvtq_f32_s32", ints);
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
    Value by = o.scale ? o.scale : call(b, loc, reg, "vdupq_n_f32", o.inv);
    return call(b, loc, reg, "vfmaq_f32", {o.sums, t, by});
  }

  Value emitGroupCombine(OpBuilder &b, Location loc, Value y, Value sums,
                         Value scale, VectorType type) const override {
    return call(b, loc, f32x4(b.getContext()), "vfmaq_f32", {y, sums, scale});
  }

  Value emitTernaryScale(OpBuilder &b, Location loc, Value dot, Value sum,
                         Value wScale, Value xScale,
                         VectorType type) const override {
    MLIRContext *ctx = b.getContext();
    Type ireg = i32x4(ctx), freg = f32x4(ctx);
    Value acc = call(b, loc, ireg, "vsubq_s32",
                     {dot, call(b, loc, ireg, "vdupq_n_s32", sum)});
    Value f = call(b, loc, freg, "vcvtq_f32_s32", acc);
    f = call(b, loc, freg, "vmulq_f32",
             {f, call(b, loc, freg, "vdupq_n_f32", wScale)});
    return call(b, loc, freg, "vdivq_f32",
                {f, call(b, loc, freg, "vdupq_n_f32", xScale)});
  }

  void emitStore(OpBuilder &b, Location loc, Value value, Value ptr,
                 Value count, VectorType type) const override {
    if (!count) {
      callVoid(b, loc, "vst1q_f32", {ptr, value});
      return;
    }
    // No masked store: lane i when i < count.
    for (int64_t lane = 0; lane < 4; ++lane) {
      Value index = emitc::ConstantOp::create(b, loc, count.getType(),
                                              b.getIndexAttr(lane));
      Value inside = emitc::CmpOp::create(
          b, loc, b.getI1Type(), emitc::CmpPredicate::gt, count, index);
      emitc::IfOp::create(b, loc, inside, [&](OpBuilder &then, Location loc) {
        callVoid(then, loc, "vst1q_lane_f32",
                 {elementAddress(then, loc, ptr, lane), value},
                 {then.getI32IntegerAttr(int32_t(lane))});
        emitc::YieldOp::create(then, loc);
      });
    }
  }

  void emitPrefetch(OpBuilder &b, Location loc, Value ptr) const override {
    callVoid(b, loc, "__builtin_prefetch", ptr);
  }

  //===--- lut-elementwise ------------------------------------------------===//

  bool hasByteTableLookup() const override { return true; }
  // tbl reads its table from registers only: the low and high 64-byte
  // tables of a lut_dot are 2 x 4 q registers (vld1q_u8_x4).
  int64_t getLutTableRegisters() const override { return 8; }

  bool emitSpill(OpBuilder &b, Location loc, Value value, Value ptr,
                 VectorType type) const override {
    MLIRContext *ctx = b.getContext();
    bool f32 = type.getElementType().isF32();
    bool byte = type.getElementType().isInteger(8);
    Value p = castTo(b, loc,
                     emitc::PointerType::get(opaqueType(
                         ctx, f32 ? "float" : byte ? "uint8_t" : "int32_t")),
                     ptr);
    callVoid(b, loc, f32 ? "vst1q_f32" : byte ? "vst1q_u8" : "vst1q_s32",
             {p, value});
    return true;
  }

  /// Per group: the 16 int16 entries d0 x0 + d1 x1 (+ d2 x2 (+ d3 x3)) as
  /// two int16x8_t (vmulq_n_s16 / vmlaq_n_s16 with the digit vectors,
  /// exact: |d| <= 1, |entry| <= 512), split into low and high bytes by
  /// vuzp1q_u8 / vuzp2q_u8, the high bytes biased by 128 (veorq_u8 0x80).
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
    Value bias = splatByte(b, loc, 0x80);
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
      Value high = call(
          b, loc, reg, "veorq_u8",
          {call(b, loc, reg, "vuzp2q_u8", {entries[0], entries[1]}), bias});
      int64_t at = (g / 4) * 128 + (g % 4) * 16;
      callVoid(b, loc, "vst1q_u8", {elementAddress(b, loc, out, at), low});
      callVoid(b, loc, "vst1q_u8",
               {elementAddress(b, loc, out, at + 64), high});
    }
    return true;
  }

  /// The index nibble | 16 * (byte mod 4) in one instruction (bsl for the
  /// low nibble, sri for the high one), tbl of the 64-byte low and high
  /// tables (vqtbl4q_u8, the vpermb of NEON), then per table 4 bytes into
  /// each int32 lane: without signs an unsigned sum (udot with ones;
  /// nodot: uaddlp + uadalp), the same with multipliers that are a splat
  /// this target emitted of a constant below 128 (a bit plane's weight
  /// 2^p: udot with them; nodot: the pair sums times the widened
  /// multipliers); with other signs the bytes less 128 (eor 0x80, so
  /// they are int8) times the signs by dot4 (sdot or its nodot sequence),
  /// plus 128 x the lane's sum of signs (dot4 of the signs with ones,
  /// shifted; the same for both tables and every column).
  std::pair<Value, Value> emitLutDot(OpBuilder &b, Location loc,
                                     const LutDotOperands &o,
                                     VectorType type) const override {
    MLIRContext *ctx = b.getContext();
    Type reg = bytes(ctx), acc = i32x4(ctx),
         u32x4 = opaqueType(ctx, "uint32x4_t");
    Value index = tableIndex(b, loc, o.indices, o.high);
    Value low = lookup(b, loc, o.tables, 0, index);
    Value high = lookup(b, loc, o.tables, 64, index);
    VectorType accType = VectorType::get({4}, b.getI32Type());
    // Without signs, or with one multiplier 0..127 in every byte (the
    // splatted weight of a bit plane): unsigned sums, udot with the
    // multipliers (nodot: uaddlp, times the widened multipliers, uadalp;
    // 510 x 127 fits uint16).
    std::optional<int64_t> multiplier =
        o.signs ? splatValue(o.signs) : std::optional<int64_t>(1);
    if (multiplier && *multiplier < 128) {
      Type u16x8 = opaqueType(ctx, "uint16x8_t");
      auto sum = [&](Value accumulator, Value bytesValue) {
        Value a = call(b, loc, u32x4, "vreinterpretq_u32_s32", accumulator);
        Value r;
        if (dotprod) {
          Value multipliers = o.signs ? o.signs : splatByte(b, loc, 1);
          r = call(b, loc, u32x4, "vdotq_u32", {a, bytesValue, multipliers});
        } else {
          Value pairs = call(b, loc, u16x8, "vpaddlq_u8", bytesValue);
          if (o.signs)
            pairs = call(b, loc, u16x8, "vmulq_u16",
                         {pairs, call(b, loc, u16x8, "vmovl_u8",
                                      call(b, loc, opaqueType(ctx, "uint8x8_t"),
                                           "vget_low_u8", o.signs))});
          r = call(b, loc, u32x4, "vpadalq_u16", {a, pairs});
        }
        return call(b, loc, acc, "vreinterpretq_s32_u32", r);
      };
      return {sum(o.accLow, low), sum(o.accHigh, high)};
    }
    Value zero = call(b, loc, acc, "vdupq_n_s32", {}, {b.getI32IntegerAttr(0)});
    Value signSums =
        emitDot4(b, loc, zero, o.signs, splatByte(b, loc, 1), accType);
    Value correction =
        call(b, loc, acc, "vshlq_n_s32", signSums, {b.getI32IntegerAttr(7)});
    auto signedSum = [&](Value accumulator, Value bytesValue) {
      Value centred =
          call(b, loc, reg, "veorq_u8", {bytesValue, splatByte(b, loc, 0x80)});
      Value dot = emitDot4(b, loc, correction, centred, o.signs, accType);
      return call(b, loc, acc, "vaddq_s32", {accumulator, dot});
    };
    return {signedSum(o.accLow, low), signedSum(o.accHigh, high)};
  }

  /// One tbl of the 64 int8 tables as lut_dot's, then the multipliers
  /// times the entries (both below 128 in magnitude, so signed) by dot4.
  Value emitLutDot8(OpBuilder &b, Location loc, const LutDot8Operands &o,
                    VectorType type) const override {
    Value entries =
        lookup(b, loc, o.tables, 0, tableIndex(b, loc, o.indices, o.high));
    return emitDot4(b, loc, o.acc, o.multipliers, entries,
                    VectorType::get({4}, b.getI32Type()));
  }

  /// 16 sign bits: byte i takes byte i / 8 of the word (tbl), tests bit
  /// i mod 8 (cmtst), and the 0x00 / 0xFF mask or 1 is +1 / -1.
  Value emitLutSigns(OpBuilder &b, Location loc, Value ptr, VectorType type,
                     bool byDword) const override {
    if (byDword)
      return {};
    MLIRContext *ctx = b.getContext();
    Type reg = bytes(ctx);
    Value word =
        call(b, loc, reg, "vreinterpretq_u8_u16",
             call(b, loc, opaqueType(ctx, "uint16x8_t"), "vld1q_dup_u16",
                  castTo(b, loc, constPointerType(ctx, "uint16_t"), ptr)));
    SmallVector<Attribute> spread, bits;
    for (int32_t i = 0; i < 16; ++i) {
      spread.push_back(b.getI32IntegerAttr(i / 8));
      bits.push_back(b.getI32IntegerAttr(1 << (i % 8)));
    }
    Value spreadBytes =
        call(b, loc, reg, "vqtbl1q_u8",
             {word, loadConstant(b, loc, "uint8_t", spread, "vld1q_u8", reg)});
    Value set = call(
        b, loc, reg, "vtstq_u8",
        {spreadBytes, loadConstant(b, loc, "uint8_t", bits, "vld1q_u8", reg)});
    return call(b, loc, reg, "vorrq_u8", {set, splatByte(b, loc, 1)});
  }

  Value emitLutCombine(OpBuilder &b, Location loc, Value low, Value high,
                       VectorType type) const override {
    Type reg = i32x4(b.getContext());
    Value shifted =
        call(b, loc, reg, "vshlq_n_s32", high, {b.getI32IntegerAttr(8)});
    return call(b, loc, reg, "vaddq_s32", {low, shifted});
  }

private:
  /// Digit i (-1, 0, 1) of table entry e: TL1 (width 2) e = 3 d0 + d1 + 4
  /// for e <= 8, TL2 (width 3) e = 9 d0 + 3 d1 + d2 + 13 for e <= 13, 0
  /// past the last entry; bit-serial (width 4) the sign of bit i of e
  /// (lowbit.uk.lut_tables).
  static int64_t tableDigit(int64_t width, int64_t i, int64_t e) {
    if (width == 4)
      return (e >> i) & 1 ? 1 : -1;
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

  /// The byte of a register splatByte wrote (vdupq_n_u8 of a constant),
  /// else none.
  static std::optional<int64_t> splatValue(Value value) {
    auto dup = value.getDefiningOp<emitc::CallOpaqueOp>();
    if (!dup || dup.getCallee() != "vdupq_n_u8" || dup.getNumOperands() != 0 ||
        !dup.getArgs() || dup.getArgs()->size() != 1)
      return std::nullopt;
    auto literal = dyn_cast<IntegerAttr>((*dup.getArgs())[0]);
    if (!literal)
      return std::nullopt;
    return literal.getInt() & 0xFF;
  }

  /// The tbl index of lut_dot and lut_dot8: the index nibble | 16 * (byte
  /// mod 4) in one instruction (bsl for the low nibble, sri for the high).
  static Value tableIndex(OpBuilder &b, Location loc, Value indices,
                          bool high) {
    MLIRContext *ctx = b.getContext();
    Type reg = bytes(ctx);
    Value selectors = call(b, loc, reg, "vreinterpretq_u8_u32",
                           call(b, loc, opaqueType(ctx, "uint32x4_t"),
                                "vdupq_n_u32", {},
                                {b.getI32IntegerAttr(0x30201000)}));
    return high ? call(b, loc, reg, "vsriq_n_u8", {selectors, indices},
                       {b.getI32IntegerAttr(4)})
                : call(b, loc, reg, "vbslq_u8",
                       {splatByte(b, loc, 0x0F), indices, selectors});
  }

  /// vqtbl4q_u8 of the 64 bytes at `tables` + `offset` (4 tables of 16).
  static Value lookup(OpBuilder &b, Location loc, Value tables,
                      int64_t offset, Value index) {
    MLIRContext *ctx = b.getContext();
    Value p = castTo(b, loc, constPointerType(ctx, "uint8_t"),
                     elementAddress(b, loc, tables, offset));
    return call(b, loc, bytes(ctx), "vqtbl4q_u8",
                {call(b, loc, opaqueType(ctx, "uint8x16x4_t"), "vld1q_u8_x4",
                      p),
                 index});
  }

  /// A register of 16 constant bytes: two 64-bit halves (vcreate_u8,
  /// little-endian: byte i in bits 8i..8i+7, written as int64 literals,
  /// which convert to uint64_t modulo 2^64) joined by vcombine_u8.
  static Value byteConstant(OpBuilder &b, Location loc,
                            const uint8_t (&values)[16]) {
    MLIRContext *ctx = b.getContext();
    SmallVector<Value, 2> halves;
    for (int64_t h = 0; h < 2; ++h) {
      uint64_t word = 0;
      for (int64_t i = 0; i < 8; ++i)
        word |= uint64_t(values[8 * h + i]) << (8 * i);
      halves.push_back(call(b, loc, opaqueType(ctx, "uint8x8_t"), "vcreate_u8",
                            {}, {b.getI64IntegerAttr(int64_t(word))}));
    }
    return call(b, loc, bytes(ctx), "vcombine_u8", halves);
  }

  /// vdupq_n_u8(value).
  static Value splatByte(OpBuilder &b, Location loc, int64_t value) {
    return call(b, loc, bytes(b.getContext()), "vdupq_n_u8", {},
                {b.getI32IntegerAttr(int32_t(value))});
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
