//===- X86TargetInfo.cpp - lowbit microkernels as x86 intrinsics ----------===//
//
// TargetInfo for AMX (AVX512-VNNI with int8 tiles), AVX512-VNNI (zmm),
// AVX-VNNI and AVX2 (ymm). One 64-byte
// vnni4 vector is one zmm register (16 rows) or two ymm registers (8 rows
// each). Every hook writes intrinsic calls of <immintrin.h>:
//
//   op              AVX512-VNNI               AVX-VNNI / AVX2
//   load            _mm512_loadu_si512        _mm256_loadu_si256
//   broadcast4      vpbroadcastd of _mm_loadu_si32
//   unpack          _mm*_srli_epi16 + _mm*_and_si*  (one shift per plane > 0)
//                   (into: + _mm*_or_si*)
//   codebook        _mm*_shuffle_epi8 (vpshufb) of the table in every lane
//   trit            mullo_epi16 / slli_epi16, mulhi_epu16, and, or (words)
//   load {bytes}    _mm512_maskz_loadu_epi8   (none)
//   triple          2 x add_epi8
//   dot4            _mm512_dpbusd_epi32       _mm256_dpbusd_avx_epi32 /
//                                             maddubs + madd(ones) + add
//   dot4 {centred}  2 x dpbusd (0x80 bytes)   VNNI: as AVX-512; AVX2: xor
//                   + sub_epi32               0x80, 2 x sign_epi8, then dot4
//   load_half       _mm512_cvtph_ps           _mm256_cvtph_ps (F16C)
//   load_scales     8 bits: _mm_loadu_si128 / _mm_loadl_epi64, cvtepi8_epi32
//                   (cvtepu8_epi32); else _mm_loadu_si128, broadcast to every
//                   128-bit lane, shuffle_epi8, sllv_epi32, srai (srli)_epi32;
//                   then cvtepi32_ps
//   block_combine   cvtepi32_ps, fnmadd, mul, fmadd
//   ternary_scale   sub_epi32, cvtepi32_ps, mul_ps, div_ps (no FMA: exact)
//   store (partial) _mm512_mask_storeu_ps     _mm256_maskstore_ps
//   lut_tables      per 2 groups width - 1 x (broadcastd, xor, maddubs_epi16,
//                   add_epi16: 1 zmm, 2 ymm); permutex2var_epi8 /
//                   shuffle_epi8, permutevar8x32, unpacklo/hi_epi64
//   lut_dot         ternarylogic +            and, 4 x (or, 2 shuffle_epi8
//                   2 _mm512_permutexvar_epi8 of broadcast 16-byte tables),
//                   (vpermb, AVX512-VBMI)     ors; then 2 x dot4 as above
//                   + 2 x dpbusd
//   lut_signs       _load_mask64 +            broadcastd, shuffle_epi8, and,
//                   mask_blend_epi8           cmpeq_epi8, or
//   lut_dot8        as lut_dot with one lookup and one dot4 (multipliers
//                   unsigned, entries signed)
//   lut_combine     slli_epi32 + add_epi32
//   spill           _mm*_storeu_si512 / si256, _mm*_storeu_ps (f32)
//
//===----------------------------------------------------------------------===//

#include "lowbit/Conversion/LowBitToEmitC/EmitCBuilder.h"
#include "lowbit/Conversion/LowBitToX86/LowBitToX86.h"
#include "lowbit/Conversion/Passes.h"

#include "mlir/Pass/PassManager.h"

#include "AmxTilesText.h"

using namespace mlir;
using namespace mlir::lowbit;
using namespace mlir::lowbit::emitc_builder;

namespace {

/// The digit of activation i (< width) in the table entry e (0..15) of
/// lowbit.uk.lut_tables: balanced ternary (width 3: e = 9 d0 + 3 d1 + d2,
/// entries 14 and 15 zero; width 2: e = 3 d0 + d1, entries 9.. zero) or
/// the bit-serial signs (width 4: +1 where bit i of e is set, else -1).
int64_t lutDigit(int64_t width, int64_t i, int64_t e) {
  if (width == 3)
    return e > 13   ? 0
           : i == 0 ? (e + 13) / 9 - 1
           : i == 1 ? (e + 13) / 3 % 3 - 1
                    : (e + 13) % 3 - 1;
  if (width == 2)
    return e > 8 ? 0 : i == 0 ? e / 3 - 1 : e % 3 - 1;
  return (e >> i) & 1 ? 1 : -1;
}

/// What AVX512 and AVX2 share: the same hooks with `_mm512` / `_mm256`
/// names; the subclasses add what differs (dot product, partial stores).
class X86TargetInfoBase : public TargetInfo {
public:
  explicit X86TargetInfoBase(int64_t registerBytes)
      : registerBytes(registerBytes) {}

  int64_t getRegisterBytes() const override { return registerBytes; }
  // Measured on Zen 5 (2 threads, cold GEMV): prefetcht0 4 KiB ahead of a
  // single stream of weights per thread reaches the read bandwidth; the
  // hardware prefetchers alone stay at ~90%.
  int64_t getPrefetchBytes() const override { return 4096; }
  /// lowbit-convert-to-x86, for the module's lowbit.target.
  void addConversionPasses(OpPassManager &pm) const override {
    pm.addPass(createLowBitConvertToX86());
  }
  std::vector<std::string> getIncludes() const override {
    return {"immintrin.h", "stddef.h", "stdint.h"};
  }

  Type convertRegisterType(VectorType type) const override {
    Type element = type.getElementType();
    int64_t bits = type.getNumElements() * element.getIntOrFloatBitWidth();
    if (type.getRank() != 1 || bits != registerBytes * 8)
      return {};
    if (element.isInteger())
      return intType(type.getContext());
    if (element.isF32())
      return floatType(type.getContext());
    return {};
  }

  Value emitBroadcast4(OpBuilder &b, Location loc, Value ptr,
                       VectorType type) const override {
    Value four = call(b, loc, opaqueType(b.getContext(), "__m128i"),
                      "_mm_loadu_si32", ptr);
    return call(b, loc, intType(b.getContext()), name("broadcastd_epi32"),
                four);
  }

  Value emitUnpack(OpBuilder &b, Location loc, Value packed, VectorType type,
                   int64_t bits, int64_t plane, int64_t scale) const override {
    Type reg = intType(b.getContext());
    Value shifted = packed;
    int64_t shift = bits * plane - scale;
    if (shift != 0)
      shifted = call(b, loc, reg, name(shift > 0 ? "srli_epi16" : "slli_epi16"),
                     packed, {b.getI32IntegerAttr(int32_t(std::abs(shift)))});
    // The mask is a signed char: 0xC0 is written -64.
    int64_t mask = ((int64_t(1) << bits) - 1) << scale;
    Value masks = call(b, loc, reg, name("set1_epi8"), {},
                       {b.getI32IntegerAttr(int32_t(int8_t(mask)))});
    return call(b, loc, reg, name("and_" + siSuffix()), {shifted, masks});
  }

  /// Digit i of every byte v, ((v * 3^i) mod 256) * 3 >> 8, on 16-bit
  /// words (x86 has no byte multiply): the low byte times 3^i << 8 leaves
  /// (v * 3^i) mod 256 in the word's high byte, whose product with 3 by
  /// mulhi_epu16 is the digit in the low byte; the high byte, masked in
  /// place, times 3^i, and by mulhi with 3 << 8, leaves its digit in the
  /// high byte over bits to mask off. 6-7 instructions per register, the
  /// count of ggml's own AVX2 shift-and-average sequence (vec_dot_tq1_0).
  Value emitTrit(OpBuilder &b, Location loc, Value packed, int64_t digit,
                 VectorType type) const override {
    Type reg = intType(b.getContext());
    int64_t power = 1;
    for (int64_t i = 0; i < digit; ++i)
      power *= 3;
    auto words = [&](int64_t value) {
      return call(b, loc, reg, name("set1_epi16"), {},
                  {b.getI32IntegerAttr(int32_t(int16_t(value)))});
    };
    Value low =
        power == 1
            ? call(b, loc, reg, name("slli_epi16"), packed,
                   {b.getI32IntegerAttr(8)})
            : call(b, loc, reg, name("mullo_epi16"), {packed, words(power << 8)});
    low = call(b, loc, reg, name("mulhi_epu16"), {low, words(3)});
    Value highMask = words(0xFF00);
    Value high = call(b, loc, reg, name("and_" + siSuffix()), {packed, highMask});
    if (power != 1)
      high = call(b, loc, reg, name("mullo_epi16"), {high, words(power)});
    high = call(b, loc, reg, name("mulhi_epu16"), {high, words(3 << 8)});
    high = call(b, loc, reg, name("and_" + siSuffix()), {high, highMask});
    return call(b, loc, reg, name("or_" + siSuffix()), {low, high});
  }

  /// 3v as v + v + v in bytes (add_epi8 wraps modulo 256).
  Value emitTriple(OpBuilder &b, Location loc, Value packed,
                   VectorType type) const override {
    Type reg = intType(b.getContext());
    Value twice = call(b, loc, reg, name("add_epi8"), {packed, packed});
    return call(b, loc, reg, name("add_epi8"), {twice, packed});
  }

  /// The table in every 16-byte lane, one vpshufb (AVX2 and AVX512-BW
  /// alike: the codes are below 16, so the lane's table is the whole
  /// table).
  Value emitCodebook(OpBuilder &b, Location loc, Value codes,
                     ArrayRef<int8_t> table, VectorType type) const override {
    Value lookup = lanes(b, loc, name("set_epi8"), registerBytes,
                         [&](int64_t byte) { return table[byte % 16]; });
    return call(b, loc, intType(b.getContext()), name("shuffle_epi8"),
                {lookup, codes});
  }

  Value emitOrBytes(OpBuilder &b, Location loc, Value lhs, Value rhs,
                    VectorType type) const override {
    return call(b, loc, intType(b.getContext()), name("or_" + siSuffix()),
                {lhs, rhs});
  }

  Value emitShrExact(OpBuilder &b, Location loc, Value value, int64_t shift,
                     VectorType type) const override {
    return call(b, loc, intType(b.getContext()), name("srai_epi32"), value,
                {b.getI32IntegerAttr(int32_t(shift))});
  }

  Value emitBroadcast(OpBuilder &b, Location loc, Value scalar,
                      VectorType type) const override {
    bool isFloat = isa<FloatType>(scalar.getType());
    Type reg = isFloat ? floatType(b.getContext()) : intType(b.getContext());
    return call(b, loc, reg, name(isFloat ? "set1_ps" : "set1_epi32"), scalar);
  }

  Value emitAddI(OpBuilder &b, Location loc, Value lhs, Value rhs,
                 VectorType type) const override {
    bool words = type.getElementType().isInteger(16);
    return call(b, loc, intType(b.getContext()),
                name(words ? "add_epi16" : "add_epi32"), {lhs, rhs});
  }

  Value emitSplat(OpBuilder &b, Location loc, VectorType type,
                  TypedAttr value) const override {
    bool isFloat = isa<FloatType>(value.getType());
    Type reg = isFloat ? floatType(b.getContext()) : intType(b.getContext());
    if (auto zero = dyn_cast<IntegerAttr>(value); zero && zero.getInt() == 0)
      return call(b, loc, reg, name("setzero_" + siSuffix()), {});
    if (auto zero = dyn_cast<FloatAttr>(value);
        zero && zero.getValue().isPosZero())
      return call(b, loc, reg, name("setzero_ps"), {});
    if (value.getType().isInteger(8))
      return splatByte(b, loc, int8_t(cast<IntegerAttr>(value).getInt()));
    Value scalar = emitc::ConstantOp::create(b, loc, value.getType(), value);
    return call(b, loc, reg, name(isFloat ? "set1_ps" : "set1_epi32"), scalar);
  }

  Value emitBlockCombine(OpBuilder &b, Location loc,
                         const BlockCombineOperands &o,
                         VectorType type) const override {
    Type reg = floatType(b.getContext());
    Value t = call(b, loc, reg, name("cvtepi32_ps"), o.dot);
    if (o.zero) {
      Value sums = call(b, loc, reg, name("set1_ps"),
                        castTo(b, loc, b.getF32Type(), o.sum));
      t = call(b, loc, reg, name("fnmadd_ps"), {o.zero, sums, t});
    }
    Value by = o.scale ? o.scale : call(b, loc, reg, name("set1_ps"), o.inv);
    return call(b, loc, reg, name("fmadd_ps"), {t, by, o.sums});
  }

  Value emitGroupCombine(OpBuilder &b, Location loc, Value y, Value sums,
                         Value scale, VectorType type) const override {
    return call(b, loc, floatType(b.getContext()), name("fmadd_ps"),
                {sums, scale, y});
  }

  Value emitTernaryScale(OpBuilder &b, Location loc, Value dot, Value sum,
                         Value wScale, Value xScale,
                         VectorType type) const override {
    Type ireg = intType(b.getContext()), freg = floatType(b.getContext());
    Value acc = call(b, loc, ireg, name("sub_epi32"),
                     {dot, call(b, loc, ireg, name("set1_epi32"), sum)});
    Value f = call(b, loc, freg, name("cvtepi32_ps"), acc);
    f = call(b, loc, freg, name("mul_ps"),
             {f, call(b, loc, freg, name("set1_ps"), wScale)});
    return call(b, loc, freg, name("div_ps"),
                {f, call(b, loc, freg, name("set1_ps"), xScale)});
  }

  void emitPrefetch(OpBuilder &b, Location loc, Value ptr) const override {
    Value p = castTo(b, loc, constPointerType(b.getContext(), "char"), ptr);
    callVoid(b, loc, "_mm_prefetch", p,
             {emitc::OpaqueAttr::get(b.getContext(), "_MM_HINT_T0")});
  }

  bool hasByteTableLookup() const override { return true; }

  bool emitSpill(OpBuilder &b, Location loc, Value value, Value ptr,
                 VectorType type) const override {
    MLIRContext *ctx = b.getContext();
    if (type.getElementType().isF32()) {
      Value p = castTo(b, loc, emitc::PointerType::get(opaqueType(ctx, "float")),
                       ptr);
      callVoid(b, loc, name("storeu_ps"), {p, value});
      return true;
    }
    Type reg = intType(ctx);
    Value p = castTo(b, loc, emitc::PointerType::get(reg), ptr);
    callVoid(b, loc, name("storeu_" + siSuffix()), {p, value});
    return true;
  }

  /// Per pair of groups (AVX2; AVX512 overrides it) two registers of
  /// tablePair (entries 0..7, 8..15); per 128-bit lane pshufb to the low
  /// bytes of the first group, of the second, then their high bytes
  /// (4 entries each), vpermd (dwords 0 4 1 5 2 6 3 7) and unpacklo /
  /// unpackhi_epi64 of the two: the first group's low | high bytes, the
  /// second's; 16-byte stores.
  bool emitLutTables(OpBuilder &b, Location loc, Value x, Value tables,
                     int64_t width) const override {
    MLIRContext *ctx = b.getContext();
    Type ymm = intType(ctx), xmm = opaqueType(ctx, "__m128i");
    TablePairConstants halves[2] = {tablePairConstants(b, loc, width, 0),
                                    tablePairConstants(b, loc, width, 16)};
    Value split = lanes(b, loc, "_mm256_set_epi8", 32, [](int64_t byte) {
      int64_t part = byte % 16 / 4, i = byte % 4;
      return 2 * (2 * i + part % 2) + part / 2;
    });
    Value order = lanes(b, loc, "_mm256_set_epi32", 8,
                        [](int64_t dword) { return dword % 2 * 4 + dword / 2; });
    Type xmmPtr = emitc::PointerType::get(xmm);
    for (int64_t q = 0; q < 4; ++q) {
      SmallVector<Value, 2> parts = tablePair(b, loc, x, width, q, halves);
      for (Value &part : parts)
        part = call(b, loc, ymm, "_mm256_permutevar8x32_epi32",
                    {call(b, loc, ymm, "_mm256_shuffle_epi8", {part, split}),
                     order});
      for (int64_t s = 0; s < 2; ++s) {
        Value group = call(b, loc, ymm,
                           s == 0 ? "_mm256_unpacklo_epi64"
                                  : "_mm256_unpackhi_epi64",
                           {parts[0], parts[1]});
        int64_t g = 2 * q + s, at = (g / 4) * 128 + (g % 4) * 16;
        callVoid(b, loc, "_mm_storeu_si128",
                 {castTo(b, loc, xmmPtr, elementAddress(b, loc, tables, at)),
                  call(b, loc, xmm, "_mm256_castsi256_si128", group)});
        callVoid(
            b, loc, "_mm_storeu_si128",
            {castTo(b, loc, xmmPtr, elementAddress(b, loc, tables, at + 64)),
             call(b, loc, xmm, "_mm256_extracti128_si256", group,
                  {b.getI32IntegerAttr(1)})});
      }
    }
    return true;
  }

  Value emitLutCombine(OpBuilder &b, Location loc, Value low, Value high,
                       VectorType type) const override {
    Type reg = intType(b.getContext());
    Value shifted =
        call(b, loc, reg, name("slli_epi32"), high, {b.getI32IntegerAttr(8)});
    return call(b, loc, reg, name("add_epi32"), {low, shifted});
  }

protected:
  /// lut_tables in pairs of groups (A, B: the 2 * width activations from
  /// x + 2 width q): entry e of A in int16 lane 2e of a pair, of B in
  /// 2e + 1. A register holds the pair lanes [first, first +
  /// registerBytes / 2): the bias 32768 - 128 (sum of the entry's digits)
  /// and per k < width - 1 the digit bytes by which pmaddubsw multiplies
  /// the dword at x + 2 width q + 2k: in an even lane A's activations 2k,
  /// 2k + 1, in an odd lane B's (the pair's bytes 2k + 2, 2k + 3), zero
  /// past the group.
  struct TablePairConstants {
    Value bias;
    SmallVector<Value, 3> digits;
  };
  TablePairConstants tablePairConstants(OpBuilder &b, Location loc,
                                        int64_t width, int64_t first) const {
    int64_t words = registerBytes / 2;
    TablePairConstants c;
    c.bias = lanes(b, loc, name("set_epi16"), words, [&](int64_t lane) {
      int64_t sum = 0;
      for (int64_t i = 0; i < width; ++i)
        sum += lutDigit(width, i, (first + lane) / 2);
      return int16_t(32768 - 128 * sum);
    });
    for (int64_t k = 0; k + 1 < width; ++k)
      c.digits.push_back(
          lanes(b, loc, name("set_epi8"), registerBytes, [&](int64_t byte) {
            int64_t lane = first + byte / 2, e = lane / 2;
            int64_t at = 2 * k + 2 * (lane % 2) + byte % 2;
            if (lane % 2 == 0)
              return at < width ? lutDigit(width, at, e) : 0;
            return at >= width && at < 2 * width
                       ? lutDigit(width, at - width, e)
                       : 0;
          }));
    return c;
  }
  /// The registers of pair q, one per element of `parts`: the bias plus,
  /// per k, pmaddubsw of the dword at x + 2 width q + 2k (broadcast, xor
  /// 0x80: the activations + 128 as unsigned bytes) with the digit bytes:
  /// entry + 32768 per lane (|each pmaddubsw sum| <= 2 * 255: no
  /// saturation). The last dword ends at the pair's last byte: nothing
  /// past the 8 groups is read.
  SmallVector<Value, 2> tablePair(OpBuilder &b, Location loc, Value x,
                                  int64_t width, int64_t q,
                                  ArrayRef<TablePairConstants> parts) const {
    Type reg = intType(b.getContext());
    SmallVector<Value, 2> sums;
    for (const TablePairConstants &c : parts)
      sums.push_back(c.bias);
    for (int64_t k = 0; k + 1 < width; ++k) {
      Value four = emitBroadcast4(
          b, loc, elementAddress(b, loc, x, 2 * width * q + 2 * k), {});
      Value xs = call(b, loc, reg, name("xor_" + siSuffix()),
                      {four, splatByte(b, loc, -128)});
      for (auto [sum, c] : llvm::zip_equal(sums, parts))
        sum = call(b, loc, reg, name("add_epi16"),
                   {sum, call(b, loc, reg, name("maddubs_epi16"),
                              {xs, c.digits[k]})});
    }
    return sums;
  }
  /// `fn` (a _set_ intrinsic, lanes from the highest down) of `count`
  /// lanes value(count - 1), ..., value(0).
  template <typename Fn>
  Value lanes(OpBuilder &b, Location loc, StringRef fn, int64_t count,
              Fn value) const {
    SmallVector<Attribute> attrs;
    for (int64_t i = count - 1; i >= 0; --i)
      attrs.push_back(b.getI32IntegerAttr(int32_t(value(i))));
    return call(b, loc, intType(b.getContext()), fn, {}, attrs);
  }

  /// The high nibbles of `indices` moved to the low ones.
  Value nibbleDown(OpBuilder &b, Location loc, Value indices) const {
    return call(b, loc, intType(b.getContext()), name("srli_epi16"), indices,
                {b.getI32IntegerAttr(4)});
  }

  /// The int32 register of a byte register's lanes.
  static VectorType accTypeOf(VectorType bytes) {
    return VectorType::get({bytes.getNumElements() / 4},
                           IntegerType::get(bytes.getContext(), 32));
  }

  /// lowbit.uk.dot4 {centred} with an unsigned x signed dot product
  /// (vpdpbusd): dot4(u) - dot4(0x80 bytes).
  Value centredByVnni(OpBuilder &b, Location loc, Value acc, Value codes,
                      Value x, VectorType accType) const {
    Type reg = intType(b.getContext());
    Value zero =
        call(b, loc, reg, name("setzero_si" + Twine(registerBytes * 8)), {});
    Value bias = emitDot4(b, loc, zero, splatByte(b, loc, -128), x, accType);
    return call(b, loc, reg, name("sub_epi32"),
                {emitDot4(b, loc, acc, codes, x, accType), bias});
  }

  Value splatByte(OpBuilder &b, Location loc, int8_t value) const {
    return call(b, loc, intType(b.getContext()), name("set1_epi8"), {},
                {b.getI32IntegerAttr(value)});
  }

  /// `_mm512_<op>` or `_mm256_<op>`.
  std::string name(const Twine &op) const {
    return ((registerBytes == 64 ? "_mm512_" : "_mm256_") + op).str();
  }
  std::string siSuffix() const {
    return registerBytes == 64 ? "si512" : "si256";
  }
  Type intType(MLIRContext *ctx) const {
    return opaqueType(ctx, registerBytes == 64 ? "__m512i" : "__m256i");
  }
  Type floatType(MLIRContext *ctx) const {
    return opaqueType(ctx, registerBytes == 64 ? "__m512" : "__m256");
  }
  /// lowbit.uk.load_scales. 8-bit values: 16 or 8 bytes widened to int32
  /// lanes (vpmovsxbd, vpmovzxbd). Narrower ones: the 16 bytes from `ptr`
  /// in every 128-bit lane (vbroadcasti32x4 / vbroadcasti128); vpshufb puts
  /// the two bytes that hold lane l's value (bits * l / 8 and the next) in
  /// its top 16 bits, vpsllvd moves the value's top bit to bit 31, and a
  /// shift right by 32 - bits (vpsrad for sign_extend, else vpsrld) leaves
  /// the value. Then vcvtdq2ps.
  Value emitLoadScales(OpBuilder &b, Location loc, Value ptr, Value shift,
                       int64_t bits, bool signExtend,
                       VectorType type) const override {
    MLIRContext *ctx = b.getContext();
    Type xmm = opaqueType(ctx, "__m128i"), reg = intType(ctx);
    Value p = castTo(b, loc, constPointerType(ctx, "__m128i"), ptr);
    Value ints;
    if (bits == 8) {
      Value bytes = call(b, loc, xmm,
                         registerBytes == 64 ? "_mm_loadu_si128"
                                             : "_mm_loadl_epi64",
                         p);
      ints = call(b, loc, reg,
                  name(signExtend ? "cvtepi8_epi32" : "cvtepu8_epi32"), bytes);
    } else {
      Value bytes = call(b, loc, xmm, "_mm_loadu_si128", p);
      Value wide = call(b, loc, reg,
                        registerBytes == 64 ? "_mm512_broadcast_i32x4"
                                            : "_mm256_broadcastsi128_si256",
                        bytes);
      // pshufb index bytes with the top bit set write 0.
      Value pick = lanes(b, loc, name("set_epi8"), registerBytes,
                         [&](int64_t byte) -> int64_t {
                           int64_t lane = byte / 4, part = byte % 4;
                           return part < 2 ? -1 : bits * lane / 8 + part - 2;
                         });
      Value counts = lanes(b, loc, name("set_epi32"), registerBytes / 4,
                           [&](int64_t lane) {
                             return 16 - bits * lane % 8 - bits;
                           });
      Value top = call(b, loc, reg, name("sllv_epi32"),
                       {call(b, loc, reg, name("shuffle_epi8"), {wide, pick}),
                        counts});
      ints = call(b, loc, reg, name(signExtend ? "srai_epi32" : "srli_epi32"),
                  top, {b.getI32IntegerAttr(int32_t(32 - bits))});
    }
    return call(b, loc, floatType(ctx), name("cvtepi32_ps"), ints);
  }

  /// lowbit.uk.load of f32 lanes (a spilled partial sum).
  Value loadFloats(OpBuilder &b, Location loc, Value ptr) const {
    MLIRContext *ctx = b.getContext();
    return call(b, loc, floatType(ctx), name("loadu_ps"),
                castTo(b, loc, constPointerType(ctx, "float"), ptr));
  }

  int64_t registerBytes;
};

class X86Avx512VnniTargetInfo : public X86TargetInfoBase {
public:
  X86Avx512VnniTargetInfo() : X86TargetInfoBase(64) {}

  StringRef getName() const override { return "x86-avx512vnni"; }
  int64_t getNumRegisters() const override { return 32; }
  int64_t getMaxDotCode() const override { return 255; }
  // vpdpbusd: latency 4-5, two per cycle on Zen 4/5 and Ice Lake+.
  int64_t getDotChains() const override { return 4; }
  std::vector<std::string> getCompileFlags(bool tableLookups) const override {
    std::vector<std::string> flags = {"-mavx512f",   "-mavx512bw", "-mavx512vl",
                                      "-mavx512vnni", "-mavx2",     "-mfma",
                                      "-mf16c"};
    if (tableLookups)
      flags.push_back("-mavx512vbmi");
    return flags;
  }

  Value emitLoad(OpBuilder &b, Location loc, Value ptr,
                 VectorType type) const override {
    if (type.getElementType().isF32())
      return loadFloats(b, loc, ptr);
    return call(b, loc, intType(b.getContext()), "_mm512_loadu_si512", ptr);
  }

  Value emitDot4(OpBuilder &b, Location loc, Value acc, Value codes, Value x,
                 VectorType accType) const override {
    return call(b, loc, intType(b.getContext()), "_mm512_dpbusd_epi32",
                {acc, codes, x});
  }

  /// vpdpbusd of the codes, less 128 x the activations' sum (vpdpbusd of
  /// 0x80 bytes).
  Value emitCentredDot4(OpBuilder &b, Location loc, Value acc, Value codes,
                        Value x, VectorType accType) const override {
    return centredByVnni(b, loc, acc, codes, x, accType);
  }

  Value emitLoadHalf(OpBuilder &b, Location loc, Value ptr,
                     VectorType type) const override {
    MLIRContext *ctx = b.getContext();
    Value p = castTo(b, loc, constPointerType(ctx, "__m256i"), ptr);
    Value half =
        call(b, loc, opaqueType(ctx, "__m256i"), "_mm256_loadu_si256", p);
    return call(b, loc, floatType(ctx), "_mm512_cvtph_ps", half);
  }

  /// Per pair of groups one tablePair register (all 32 pair lanes); one
  /// vpermt2b of two pairs picks the low or the high bytes of 4 groups:
  /// the 64-byte table of a nibble.
  bool emitLutTables(OpBuilder &b, Location loc, Value x, Value tables,
                     int64_t width) const override {
    Type zmm = intType(b.getContext());
    TablePairConstants constants = tablePairConstants(b, loc, width, 0);
    SmallVector<Value, 4> pairs;
    for (int64_t q = 0; q < 4; ++q)
      pairs.push_back(tablePair(b, loc, x, width, q, constants)[0]);
    for (int64_t p = 0; p < 2; ++p)
      for (int64_t high = 0; high < 2; ++high) {
        // Table j, entry e: lane 2e + j mod 2 of pair 2p + j / 2 (the
        // second 64 bytes of vpermt2b).
        Value pick = lanes(b, loc, "_mm512_set_epi8", 64, [&](int64_t byte) {
          int64_t j = byte / 16, e = byte % 16;
          return 64 * (j / 2) + 2 * (2 * e + j % 2) + high;
        });
        Value half = call(b, loc, zmm, "_mm512_permutex2var_epi8",
                          {pairs[2 * p], pick, pairs[2 * p + 1]});
        callVoid(b, loc, "_mm512_storeu_si512",
                 {elementAddress(b, loc, tables, 128 * p + 64 * high), half});
      }
    return true;
  }

  /// One 64-bit sign word as a mask register, blended to +1 / -1.
  Value emitLutSigns(OpBuilder &b, Location loc, Value ptr, VectorType type,
                     bool byDword) const override {
    if (byDword)
      return {};
    MLIRContext *ctx = b.getContext();
    Type maskType = opaqueType(ctx, "__mmask64");
    Value word = castTo(b, loc, emitc::PointerType::get(maskType), ptr);
    Value mask = call(b, loc, maskType, "_load_mask64", word);
    return call(b, loc, intType(ctx), "_mm512_mask_blend_epi8",
                {mask, splatByte(b, loc, 1), splatByte(b, loc, -1)});
  }

  /// The nibbles (shifted down for `high`), the lookups (emitLookup),
  /// then the low and high bytes times the signs into the two sums.
  std::pair<Value, Value> emitLutDot(OpBuilder &b, Location loc,
                                     const LutDotOperands &o,
                                     VectorType type) const override {
    Value indices = o.high ? nibbleDown(b, loc, o.indices) : o.indices;
    SmallVector<Value, 2> bytes = emitLookup(b, loc, indices, o.tables, {0, 64});
    Value low = bytes[0], high = bytes[1];
    Value signs = o.signs ? o.signs : splatByte(b, loc, 1);
    VectorType accType = accTypeOf(type);
    return {emitDot4(b, loc, o.accLow, low, signs, accType),
            emitDot4(b, loc, o.accHigh, high, signs, accType)};
  }

  /// One lookup of the int8 tables, then the multipliers (unsigned) times
  /// the entries (signed) into the sum: dot4 with the operands of lut_dot
  /// swapped, so the entries need no bias.
  Value emitLutDot8(OpBuilder &b, Location loc, const LutDot8Operands &o,
                    VectorType type) const override {
    Value indices = o.high ? nibbleDown(b, loc, o.indices) : o.indices;
    Value entries = emitLookup(b, loc, indices, o.tables, {0})[0];
    return emitDot4(b, loc, o.acc, o.multipliers, entries, accTypeOf(type));
  }

private:
  /// Per offset o, byte i of a result: byte 16 (i mod 4) + n of the 64
  /// bytes at `tables` + o (table i mod 4), n the low nibble of `indices`
  /// byte i (lut_dot: the low and high bytes at 0 and 64; lut_dot8: 0):
  /// vpermb of the 64-byte tables with index nibble | 16 * (i mod 4), one
  /// ternary-logic op: (indices & 0x0F) | selectors.
  SmallVector<Value, 2> emitLookup(OpBuilder &b, Location loc, Value indices,
                                   Value tables,
                                   ArrayRef<int64_t> offsets) const {
    MLIRContext *ctx = b.getContext();
    Type reg = intType(ctx);
    Value selectors = call(b, loc, reg, "_mm512_set1_epi32", {},
                           {b.getI32IntegerAttr(0x30201000)});
    Value index = call(b, loc, reg, "_mm512_ternarylogic_epi32",
                       {indices, splatByte(b, loc, 15), selectors},
                       {b.getI32IntegerAttr(0xEA)});
    SmallVector<Value, 2> results;
    for (int64_t offset : offsets) {
      Value table = call(b, loc, reg, "_mm512_loadu_si512",
                         elementAddress(b, loc, tables, offset));
      results.push_back(
          call(b, loc, reg, "_mm512_permutexvar_epi8", {index, table}));
    }
    return results;
  }

public:
  /// A zero-masked byte load: AVX-512 suppresses faults on masked-off
  /// bytes.
  Value emitLoadPrefix(OpBuilder &b, Location loc, Value ptr, int64_t bytes,
                       VectorType type) const override {
    Type u64 = b.getIntegerType(64, /*isSigned=*/false);
    Value mask = castTo(b, loc, opaqueType(b.getContext(), "__mmask64"),
                        intConstant(b, loc, u64,
                                    int64_t((uint64_t(1) << bytes) - 1)));
    return call(b, loc, intType(b.getContext()), "_mm512_maskz_loadu_epi8",
                {mask, ptr});
  }

  void emitStore(OpBuilder &b, Location loc, Value value, Value ptr,
                 Value count, VectorType type) const override {
    if (!count) {
      callVoid(b, loc, "_mm512_storeu_ps", {ptr, value});
      return;
    }
    // (__mmask16)((1u << count) - 1u), count in [0, 16].
    Type u32 = b.getIntegerType(32, /*isSigned=*/false);
    Value one = intConstant(b, loc, u32, 1);
    Value bits = emitc::BitwiseLeftShiftOp::create(b, loc, u32, one,
                                                   castTo(b, loc, u32, count));
    Value lanes = emitc::SubOp::create(b, loc, u32, bits, one);
    Value mask = castTo(b, loc, opaqueType(b.getContext(), "__mmask16"), lanes);
    callVoid(b, loc, "_mm512_mask_storeu_ps", {ptr, mask, value});
  }
};

/// AVX512-VNNI plus AMX-TILE and AMX-INT8 (Sapphire Rapids and later): the
/// kernels of x86-avx512vnni, whose upconvert GEMM kernels (i2s, w1gG,
/// w2gG, w4gG, ggml's block formats) multiply blocks of 16 activation rows
/// with int8 tiles (lowbit.uk.tile_*, lowbit-lower-upconvert's
/// KernelPlan::amxTiles). Each tile op is a call of a wrapper of
/// runtime/include/lowbit/amx_tiles.h, whose text every kernel carries
/// (getPrelude), with its tiles as template arguments:
///
///   op           wrapper                    instruction
///   tile_config  lowbit_amx_config<k>()     LDTILECFG (products of k bytes)
///   tile_release lowbit_amx_release()       TILERELEASE
///   tile_zero    lowbit_amx_zero<t>()       TILEZERO
///   tile_load    lowbit_amx_load<t>(p, s)   TILELOADD
///   tile_store   lowbit_amx_store<t>(p, s)  TILESTORED
///   tile_dot     lowbit_amx_dot_su<c,a,b>() TDPBSUD
///
/// Compiled with -DLOWBIT_AMX_EMULATE instead of -mamx-*, the wrappers
/// emulate the instructions (lowbit verify on hosts without AMX).
class X86AmxTargetInfo final : public X86Avx512VnniTargetInfo {
public:
  StringRef getName() const override { return "x86-amx"; }
  StringRef getFallbackTarget() const override { return "x86-avx512vnni"; }
  bool hasMatrixTiles() const override { return true; }
  std::vector<std::string> getCompileFlags(bool tableLookups) const override {
    std::vector<std::string> flags =
        X86Avx512VnniTargetInfo::getCompileFlags(tableLookups);
    flags.push_back("-mamx-tile");
    flags.push_back("-mamx-int8");
    return flags;
  }
  std::string getPrelude() const override { return kAmxTilesText; }

  bool emitTileOp(OpBuilder &b, Location loc, TileOpKind kind,
                  ArrayRef<int64_t> tiles,
                  ValueRange operands) const override {
    StringRef callee;
    switch (kind) {
    case TileOpKind::Config:
      callee = "lowbit_amx_config";
      break;
    case TileOpKind::Release:
      callee = "lowbit_amx_release";
      break;
    case TileOpKind::Zero:
      callee = "lowbit_amx_zero";
      break;
    case TileOpKind::Load:
      callee = "lowbit_amx_load";
      break;
    case TileOpKind::Store:
      callee = "lowbit_amx_store";
      break;
    case TileOpKind::Dot:
      callee = "lowbit_amx_dot_su";
      break;
    }
    SmallVector<Attribute> templateArgs;
    for (int64_t tile : tiles)
      templateArgs.push_back(b.getI32IntegerAttr(int32_t(tile)));
    emitc::CallOpaqueOp::create(
        b, loc, TypeRange{}, callee, operands, /*args=*/ArrayAttr(),
        templateArgs.empty() ? ArrayAttr() : b.getArrayAttr(templateArgs));
    return true;
  }
};

class X86Avx2TargetInfo : public X86TargetInfoBase {
public:
  X86Avx2TargetInfo() : X86TargetInfoBase(32) {}

  StringRef getName() const override { return "x86-avx2"; }
  int64_t getNumRegisters() const override { return 16; }
  // vpmaddubsw sums two u8 x s8 products into a saturating int16:
  // 2 * 127 * 128 < 2^15.
  int64_t getMaxDotCode() const override { return 127; }
  // The accumulate is a 1-cycle vpaddd; maddubs/madd chains are independent.
  int64_t getDotChains() const override { return 1; }
  std::vector<std::string> getCompileFlags(bool) const override {
    return {"-mavx2", "-mfma", "-mf16c"};
  }

  Value emitLoad(OpBuilder &b, Location loc, Value ptr,
                 VectorType type) const override {
    if (type.getElementType().isF32())
      return loadFloats(b, loc, ptr);
    Value p = castTo(b, loc, constPointerType(b.getContext(), "__m256i"), ptr);
    return call(b, loc, intType(b.getContext()), "_mm256_loadu_si256", p);
  }

  /// No dot-product instruction: u8 x s8 pairs to saturating int16
  /// (|2 * 15 * 128| < 2^15, so never saturates), pairs of int16 to int32.
  Value emitDot4(OpBuilder &b, Location loc, Value acc, Value codes, Value x,
                 VectorType accType) const override {
    Type reg = intType(b.getContext());
    Value pairs = call(b, loc, reg, "_mm256_maddubs_epi16", {codes, x});
    Value ones =
        call(b, loc, reg, "_mm256_set1_epi16", {}, {b.getI32IntegerAttr(1)});
    Value quads = call(b, loc, reg, "_mm256_madd_epi16", {pairs, ones});
    return call(b, loc, reg, "_mm256_add_epi32", {acc, quads});
  }

  /// The signed codes c = u ^ 0x80 as |c| (unsigned) times x with c's sign
  /// (vpsignb), ggml's AVX2 int8 dot product: |c x| <= 128 * 127, so a
  /// pair fits vpmaddubsw's int16 (x is never -128).
  Value emitCentredDot4(OpBuilder &b, Location loc, Value acc, Value codes,
                        Value x, VectorType accType) const override {
    Type reg = intType(b.getContext());
    Value c = call(b, loc, reg, "_mm256_xor_si256",
                   {codes, splatByte(b, loc, -128)});
    Value magnitude = call(b, loc, reg, "_mm256_sign_epi8", {c, c});
    Value signedX = call(b, loc, reg, "_mm256_sign_epi8", {x, c});
    return X86Avx2TargetInfo::emitDot4(b, loc, acc, magnitude, signedX,
                                       accType);
  }

  Value emitLoadHalf(OpBuilder &b, Location loc, Value ptr,
                     VectorType type) const override {
    MLIRContext *ctx = b.getContext();
    Value p = castTo(b, loc, constPointerType(ctx, "__m128i"), ptr);
    Value half = call(b, loc, opaqueType(ctx, "__m128i"), "_mm_loadu_si128", p);
    return call(b, loc, floatType(ctx), "_mm256_cvtph_ps", half);
  }

  /// 32 sign bits broadcast, byte i takes byte i / 8 (shuffle_epi8; with
  /// `byDword` byte i mod 4 is already there), tests bit i mod 8 (i / 4),
  /// and the 0x00 / 0xFF mask or 1 is +1 / -1.
  Value emitLutSigns(OpBuilder &b, Location loc, Value ptr, VectorType type,
                     bool byDword) const override {
    Type reg = intType(b.getContext());
    Value bytes = emitBroadcast4(b, loc, ptr, type);
    SmallVector<Attribute> spread, bits;
    for (int32_t i = 0; i < 32; ++i) {
      spread.push_back(b.getI32IntegerAttr(i / 8));
      bits.push_back(
          b.getI32IntegerAttr(int8_t(1 << (byDword ? i / 4 : i % 8))));
    }
    if (!byDword)
      bytes = call(b, loc, reg, "_mm256_shuffle_epi8",
                   {bytes, call(b, loc, reg, "_mm256_setr_epi8", {}, spread)});
    Value bit = call(b, loc, reg, "_mm256_setr_epi8", {}, bits);
    Value set =
        call(b, loc, reg, "_mm256_cmpeq_epi8",
             {call(b, loc, reg, "_mm256_and_si256", {bytes, bit}), bit});
    return call(b, loc, reg, "_mm256_or_si256", {set, splatByte(b, loc, 1)});
  }

  /// Lane order (lut_abi.h): the lut-elementwise kernels look each slot's
  /// table up in its own 128-bit lane with one pshufb.
  bool hasLutLaneOrder() const override { return true; }

  /// pshufb of the 32 bytes at `tables` (lane l: the table at 16 l) with
  /// the nibbles.
  Value emitLutLookup(OpBuilder &b, Location loc, Value indices, Value tables,
                      bool high, VectorType type) const override {
    MLIRContext *ctx = b.getContext();
    Type reg = intType(ctx);
    Value nibbles = call(b, loc, reg, "_mm256_and_si256",
                         {high ? nibbleDown(b, loc, indices) : indices,
                          splatByte(b, loc, 15)});
    Value table =
        call(b, loc, reg, "_mm256_loadu_si256",
             castTo(b, loc, constPointerType(ctx, "__m256i"), tables));
    return call(b, loc, reg, "_mm256_shuffle_epi8", {table, nibbles});
  }

  /// punpck{l,h}bw.
  Value emitZip(OpBuilder &b, Location loc, Value lhs, Value rhs, bool high,
                VectorType type) const override {
    return call(b, loc, intType(b.getContext()),
                high ? "_mm256_unpackhi_epi8" : "_mm256_unpacklo_epi8",
                {lhs, rhs});
  }

  /// pmaddubsw.
  Value emitDot2(OpBuilder &b, Location loc, Value codes, Value x,
                 VectorType type) const override {
    return call(b, loc, intType(b.getContext()), "_mm256_maddubs_epi16",
                {codes, x});
  }

  /// punpck{l,h}wd of the low and high sums, pmaddwd with the multiplier
  /// words (1, 256 without them).
  Value emitExtend(OpBuilder &b, Location loc, Value low, Value high,
                   Value multipliers, bool highHalf,
                   VectorType type) const override {
    Type reg = intType(b.getContext());
    Value pairs = call(
        b, loc, reg,
        highHalf ? "_mm256_unpackhi_epi16" : "_mm256_unpacklo_epi16",
        {low, high});
    Value weights = multipliers
                        ? multipliers
                        : call(b, loc, reg, "_mm256_set1_epi32", {},
                               {b.getI32IntegerAttr((256 << 16) | 1)});
    return call(b, loc, reg, "_mm256_madd_epi16", {pairs, weights});
  }

  /// [lhs.0 | rhs.0] + [lhs.1 | rhs.1] (vperm2i128), by int32 or int16
  /// lanes.
  Value emitLaneFold(OpBuilder &b, Location loc, Value lhs, Value rhs,
                     VectorType type) const override {
    Type reg = intType(b.getContext());
    auto pick = [&](int32_t selector) {
      return call(b, loc, reg, "_mm256_permute2x128_si256", {lhs, rhs},
                  {b.getI32IntegerAttr(selector)});
    };
    return call(b, loc, reg,
                type.getElementTypeBitWidth() == 16 ? "_mm256_add_epi16"
                                                    : "_mm256_add_epi32",
                {pick(0x20), pick(0x31)});
  }

  /// vpmovsxwd of the lane (vextracti128 for lane 1), vpmulld.
  Value emitWiden(OpBuilder &b, Location loc, Value words, Value multipliers,
                  int64_t lane, VectorType type) const override {
    MLIRContext *ctx = b.getContext();
    Type reg = intType(ctx), xmm = opaqueType(ctx, "__m128i");
    Value half = lane == 0
                     ? call(b, loc, xmm, "_mm256_castsi256_si128", words)
                     : call(b, loc, xmm, "_mm256_extracti128_si256", words,
                            {b.getI32IntegerAttr(1)});
    return call(b, loc, reg, "_mm256_mullo_epi32",
                {call(b, loc, reg, "_mm256_cvtepi16_epi32", half),
                 multipliers});
  }

  void emitStore(OpBuilder &b, Location loc, Value value, Value ptr,
                 Value count, VectorType type) const override {
    if (!count) {
      callVoid(b, loc, "_mm256_storeu_ps", {ptr, value});
      return;
    }
    // Lanes i < count: set1(count) > (0, 1, ..., 7).
    Type reg = intType(b.getContext());
    Value n = castTo(b, loc, b.getI32Type(), count);
    SmallVector<Attribute> lanes;
    for (int32_t i = 0; i < 8; ++i)
      lanes.push_back(b.getI32IntegerAttr(i));
    Value iota = call(b, loc, reg, "_mm256_setr_epi32", {}, lanes);
    Value mask = call(b, loc, reg, "_mm256_cmpgt_epi32",
                      {call(b, loc, reg, "_mm256_set1_epi32", n), iota});
    callVoid(b, loc, "_mm256_maskstore_ps", {ptr, mask, value});
  }
};

class X86AvxVnniTargetInfo final : public X86Avx2TargetInfo {
public:
  StringRef getName() const override { return "x86-avxvnni"; }
  int64_t getDotChains() const override { return 4; }
  int64_t getMaxDotCode() const override { return 255; }
  std::vector<std::string> getCompileFlags(bool) const override {
    return {"-mavx2", "-mfma", "-mf16c", "-mavxvnni"};
  }

  Value emitDot4(OpBuilder &b, Location loc, Value acc, Value codes, Value x,
                 VectorType accType) const override {
    return call(b, loc, intType(b.getContext()), "_mm256_dpbusd_avx_epi32",
                {acc, codes, x});
  }

  Value emitCentredDot4(OpBuilder &b, Location loc, Value acc, Value codes,
                        Value x, VectorType accType) const override {
    return centredByVnni(b, loc, acc, codes, x, accType);
  }
};

} // namespace

std::unique_ptr<TargetInfo> mlir::lowbit::createX86TargetInfo(X86Isa isa) {
  switch (isa) {
  case X86Isa::Avx2:
    return std::make_unique<X86Avx2TargetInfo>();
  case X86Isa::AvxVnni:
    return std::make_unique<X86AvxVnniTargetInfo>();
  case X86Isa::Avx512Vnni:
    return std::make_unique<X86Avx512VnniTargetInfo>();
  case X86Isa::Amx:
    return std::make_unique<X86AmxTargetInfo>();
  }
  llvm_unreachable("unknown x86 ISA");
}

SmallVector<std::unique_ptr<TargetInfo>> mlir::lowbit::createX86TargetInfos() {
  SmallVector<std::unique_ptr<TargetInfo>> targets;
  for (X86Isa isa :
       {X86Isa::Amx, X86Isa::Avx512Vnni, X86Isa::AvxVnni, X86Isa::Avx2})
    targets.push_back(createX86TargetInfo(isa));
  return targets;
}
