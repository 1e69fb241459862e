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
    return call(b, loc, bytes(ctx), "vld1q_u8",
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
    Type i16x8 = opaqueType(ctx, "int16x8_t"), s8x8 = opaqueType(ctx, "int8x8_t");
    Value low = call(b, loc, i16x8, "vmull_s8",
                     {call(b, loc, s8x8, "vget_low_s8", c),
                      call(b, loc, s8x8, "vget_low_s8", xs)});
    Value high = call(b, loc, i16x8, "vmull_high_s8", {c, xs});
    Value pairs = call(b, loc, i16x8, "vpaddq_s16", {low, high});
    return call(b, loc, i32x4(ctx), "vpadalq_s16", {acc, pairs});
  }

  Value emitAddI32(OpBuilder &b, Location loc, Value lhs, Value rhs,
                   VectorType type) const override {
    return call(b, loc, i32x4(b.getContext()), "vaddq_s32", {lhs, rhs});
  }

  Value emitSplat(OpBuilder &b, Location loc, VectorType type,
                  TypedAttr value) const override {
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
    Value half =
        call(b, loc, opaqueType(ctx, "float16x4_t"), "vreinterpret_f16_u16", raw);
    return call(b, loc, f32x4(ctx), "vcvt_f32_f16", half);
  }

  Value emitBlockCombine(OpBuilder &b, Location loc,
                         const BlockCombineOperands &o,
                         VectorType type) const override {
    Type reg = f32x4(b.getContext());
    Value t = call(b, loc, reg, "vcvtq_f32_s32", o.dot);
    if (o.zero) {
      Value sums =
          call(b, loc, reg, "vdupq_n_f32", castTo(b, loc, b.getF32Type(), o.sum));
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
      Value inside =
          emitc::CmpOp::create(b, loc, b.getI1Type(), emitc::CmpPredicate::gt,
                               count, index);
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

private:
  static Type bytes(MLIRContext *ctx) { return opaqueType(ctx, "uint8x16_t"); }
  static Type i32x4(MLIRContext *ctx) { return opaqueType(ctx, "int32x4_t"); }
  static Type f32x4(MLIRContext *ctx) { return opaqueType(ctx, "float32x4_t"); }

  bool dotprod;
};

} // namespace

std::unique_ptr<TargetInfo> mlir::lowbit::createNeonTargetInfo(bool dotprod) {
  return std::make_unique<NeonTargetInfo>(dotprod);
}
