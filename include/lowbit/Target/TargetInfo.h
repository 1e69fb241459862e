//===- TargetInfo.h - what lowbit lowerings know about a target -*- C++ -*-===//
//
// The one place a lowering learns about the machine it compiles for (in the
// style of Triton's TargetInfoBase). Target-independent passes ask the
// queries (register width, register count, dot-product latency); the
// per-target conversions to EmitC call the hooks, each of which writes the
// EmitC ops of one lowbit.uk.* microkernel op. A pass never asks "is this
// x86?": it asks TargetInfo.
//
// Implementations: X86Avx512Vnni, X86AvxVnni, X86Avx2
// (lib/Conversion/LowBitToX86), Neon with and without dotprod
// (lib/Conversion/LowBitToNEON) and Generic (lib/Conversion/LowBitToGeneric).
// GPU targets answer GpuTargetInfo instead (lib/Conversion/LowBitToSPIRV).
// lib/Target/TargetInfo.cpp is the registry: one line per target, name ->
// factory. A module names its target in its `lowbit.target` attribute
// (lowbit-select-config sets it); the lowerings look it up with
// lookupTargetInfo / lookupGpuTargetInfo.
//
//===----------------------------------------------------------------------===//

#ifndef LOWBIT_TARGET_TARGETINFO_H
#define LOWBIT_TARGET_TARGETINFO_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"

#include <memory>
#include <string>

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace mlir::lowbit {

/// Operands of lowbit.uk.block_combine after type conversion (see its
/// description): result = sums + (dot - zero * sum) * inv, without the zero
/// term when `zero` is null; with `scale` (a register) instead of `inv` (an
/// f32), each lane times its own lane of `scale`.
struct BlockCombineOperands {
  Value sums, dot, inv, scale, zero, sum;
};

/// Operands of lowbit.uk.lut_dot after type conversion: `tables` is an
/// int8_t * to its 128 bytes; `signs` is null without signs.
struct LutDotOperands {
  Value accLow, accHigh, indices, tables, signs;
  bool high = false;
};

/// Operands of lowbit.uk.lut_dot8 after type conversion: `tables` is an
/// int8_t * to its 64 bytes.
struct LutDot8Operands {
  Value acc, indices, tables, multipliers;
  bool high = false;
};

/// The lowbit.uk.tile_* ops (matrix tiles: x86-amx).
enum class TileOpKind { Config, Release, Zero, Load, Store, Dot };

class TargetInfo {
public:
  virtual ~TargetInfo() = default;

  //===--------------------------------------------------------------------===//
  // Queries for target-independent passes
  //===--------------------------------------------------------------------===//

  /// The target's name as the CLI spells it (`x86-avx512vnni`, `generic`).
  virtual StringRef getName() const = 0;
  /// Bytes per register of the microkernel ops: a byte register is
  /// vector<R x i8> and holds R / 4 weight rows x 4 k.
  virtual int64_t getRegisterBytes() const = 0;
  /// Registers the inner loop can keep values in (accumulators, unpacked
  /// codes, broadcast activations, constants).
  virtual int64_t getNumRegisters() const = 0;
  /// Independent lowbit.uk.dot4 accumulation chains needed to hide the
  /// latency of one dot-product accumulate (latency x throughput, rounded).
  virtual int64_t getDotChains() const = 0;
  /// The largest unsigned code lowbit.uk.dot4 multiplies exactly (255 for
  /// a dot-product instruction; less where products are summed in pairs
  /// into saturating int16). Bounds lowbit.uk.unpack's `scale`.
  virtual int64_t getMaxDotCode() const = 0;
  /// How far ahead of the loads (bytes) a streaming kernel should prefetch
  /// its weights; 0 when the target has no prefetch instruction.
  virtual int64_t getPrefetchBytes() const = 0;
  /// Compiler flags the emitted C++ needs (e.g. `-mavx512vnni`);
  /// `tableLookups`: the kernel's lowbit.uk.lut_* ops (AVX512: vpermb,
  /// which needs AVX512-VBMI while the other kernels do not, see
  /// lowbit::runs_on).
  virtual std::vector<std::string>
  getCompileFlags(bool tableLookups) const = 0;
  /// Whether the target has the byte table lookups of lowbit.uk.lut_dot
  /// (vpermb, pshufb, tbl), which lowbit-lower-lut-elementwise needs.
  /// Targets without them leave the lut hooks below at their defaults,
  /// which emit nothing (the conversion fails).
  virtual bool hasByteTableLookup() const { return false; }
  /// Registers the two 64-byte tables (low and high bytes) of one
  /// lowbit.uk.lut_dot occupy while its lookups run; 0 where the lookup
  /// reads its table as a memory operand (vpermb). The LUT lowerings count
  /// them with their accumulators against getNumRegisters().
  virtual int64_t getLutTableRegisters() const { return 0; }
  /// Whether the LUT kernels look lut_abi.h's vectors up in lane order
  /// (byte 16j + r: one table per 16-byte register lane, looked up by
  /// lowbit.uk.lut_lookup and paired per row by lowbit.uk.zip, for an
  /// in-lane byte shuffle on registers of two lanes: pshufb) rather than
  /// row order (byte 4r + j: lowbit.uk.lut_dot): lut-elementwise's packed
  /// tl1/tl2 are in that order (pack-layout records it as the layout's
  /// lane_order, which the kernel entry's descriptor carries to the
  /// runtime), lut-bitserial's int16-table kernels transpose theirs in
  /// registers.
  virtual bool hasLutLaneOrder() const { return false; }
  /// The target whose kernels a bundle for this target also carries, for
  /// CPUs that lack this target's instructions (`generic` for x86 and for
  /// generic itself; `aarch64-neon-nodot` for `aarch64-neon`).
  virtual StringRef getFallbackTarget() const { return "generic"; }
  /// Whether the target has the int8 matrix tiles of the lowbit.uk.tile_*
  /// ops (x86-amx: AMX-TILE and AMX-INT8), which lowbit-lower-upconvert's
  /// GEMM kernels (every up-convert format) then use for blocks of 16
  /// activation rows.
  virtual bool hasMatrixTiles() const { return false; }

  //===--------------------------------------------------------------------===//
  // Conversion to EmitC
  //===--------------------------------------------------------------------===//

  /// Adds the target's conversion of lowered kernels to EmitC (e.g.
  /// `lowbit-convert-to-x86`, which takes the target from the module's
  /// lowbit.target) to `pm`, a pass manager on the module.
  virtual void addConversionPasses(OpPassManager &pm) const = 0;

  /// System headers the emitted C++ includes.
  virtual std::vector<std::string> getIncludes() const = 0;
  /// C++ the emitted file carries after its includes (x86-amx: the tile
  /// wrappers of runtime/include/lowbit/amx_tiles.h); empty for none.
  virtual std::string getPrelude() const { return {}; }
  /// The EmitC type of a register value (vector<64xi8> -> __m512i, ...), or
  /// a null type when `type` is not a register of this target.
  virtual Type convertRegisterType(VectorType type) const = 0;

  // Each hook inserts EmitC ops at the builder's insertion point. Pointers
  // are !emitc.ptr values already offset to the element to access; register
  // values have the types convertRegisterType returns.

  /// lowbit.uk.load: one register of packed codes, int32 lanes or f32
  /// lanes (`ptr`: uint8_t * or int8_t *).
  virtual Value emitLoad(OpBuilder &b, Location loc, Value ptr,
                         VectorType type) const = 0;
  /// lowbit.uk.broadcast4: 4 int8 activations repeated (`ptr`: int8_t *).
  virtual Value emitBroadcast4(OpBuilder &b, Location loc, Value ptr,
                               VectorType type) const = 0;
  /// lowbit.uk.unpack.
  virtual Value emitUnpack(OpBuilder &b, Location loc, Value packed,
                           VectorType type, int64_t bits, int64_t plane,
                           int64_t scale) const = 0;
  /// lowbit.uk.codebook: each byte (below 16) of `codes` mapped through
  /// the 16 bytes of `table` (unsigned).
  virtual Value emitCodebook(OpBuilder &b, Location loc, Value codes,
                             ArrayRef<int8_t> table,
                             VectorType type) const = 0;
  /// The bitwise OR of two byte registers (lowbit.uk.unpack's `into`).
  virtual Value emitOrBytes(OpBuilder &b, Location loc, Value lhs, Value rhs,
                            VectorType type) const = 0;
  /// lowbit.uk.shr_exact.
  virtual Value emitShrExact(OpBuilder &b, Location loc, Value value,
                             int64_t shift, VectorType type) const = 0;
  /// lowbit.uk.dot4.
  virtual Value emitDot4(OpBuilder &b, Location loc, Value acc, Value codes,
                         Value x, VectorType accType) const = 0;
  /// lowbit.uk.load_scales: `ptr` (const uint8_t *) is the byte that
  /// holds the first bit of the register's first row, `shift` (size_t,
  /// registers of one lane only; null otherwise) that bit's place in it;
  /// null when the target cannot read `bits`-bit values.
  virtual Value emitLoadScales(OpBuilder &b, Location loc, Value ptr,
                               Value shift, int64_t bits, bool signExtend,
                               VectorType type) const = 0;
  /// lowbit.uk.dot4 {centred}: codes u stand for u - 128.
  virtual Value emitCentredDot4(OpBuilder &b, Location loc, Value acc,
                                Value codes, Value x,
                                VectorType accType) const = 0;
  /// arith.addi of two int32 registers (lane-wise, wrapping); of int16
  /// registers (lowbit.uk.dot2 sums) on targets with hasLutLaneOrder.
  virtual Value emitAddI(OpBuilder &b, Location loc, Value lhs, Value rhs,
                         VectorType type) const = 0;
  /// A register with every lane equal to `value` (an i32 or f32 attribute;
  /// on targets with byte table lookups also i8: lut_dot multipliers).
  virtual Value emitSplat(OpBuilder &b, Location loc, VectorType type,
                          TypedAttr value) const = 0;
  /// vector.broadcast of an i32 or f32 value to every lane.
  virtual Value emitBroadcast(OpBuilder &b, Location loc, Value scalar,
                              VectorType type) const = 0;
  /// lowbit.uk.load_half (`ptr`: uint16_t *).
  virtual Value emitLoadHalf(OpBuilder &b, Location loc, Value ptr,
                             VectorType type) const = 0;
  /// lowbit.uk.block_combine.
  virtual Value emitBlockCombine(OpBuilder &b, Location loc,
                                 const BlockCombineOperands &operands,
                                 VectorType type) const = 0;
  /// lowbit.uk.group_combine: y + sums * scale.
  virtual Value emitGroupCombine(OpBuilder &b, Location loc, Value y,
                                 Value sums, Value scale,
                                 VectorType type) const = 0;
  /// lowbit.uk.ternary_scale.
  virtual Value emitTernaryScale(OpBuilder &b, Location loc, Value dot,
                                 Value sum, Value wScale, Value xScale,
                                 VectorType type) const = 0;
  /// lowbit.uk.store (`ptr`: float *); `count` (size_t) is null for a
  /// store of every lane.
  virtual void emitStore(OpBuilder &b, Location loc, Value value, Value ptr,
                         Value count, VectorType type) const = 0;
  /// lowbit.uk.prefetch (`ptr`: uint8_t *); may emit nothing.
  virtual void emitPrefetch(OpBuilder &b, Location loc, Value ptr) const = 0;

  /// lowbit.uk.lut_tables (`x`, `tables`: int8_t *, offset); false when the
  /// target has none.
  virtual bool emitLutTables(OpBuilder &b, Location loc, Value x, Value tables,
                             int64_t width) const {
    return false;
  }
  /// lowbit.uk.spill of an int32, f32 or byte register (`ptr`: int8_t *);
  /// false when the target has none.
  virtual bool emitSpill(OpBuilder &b, Location loc, Value value, Value ptr,
                         VectorType type) const {
    return false;
  }
  /// lowbit.uk.lut_dot: the new (acc_low, acc_high).
  virtual std::pair<Value, Value> emitLutDot(OpBuilder &b, Location loc,
                                             const LutDotOperands &operands,
                                             VectorType indicesType) const {
    return {};
  }
  /// lowbit.uk.lut_dot8: the new accumulator.
  virtual Value emitLutDot8(OpBuilder &b, Location loc,
                            const LutDot8Operands &operands,
                            VectorType indicesType) const {
    return {};
  }
  /// lowbit.uk.lut_lookup (`tables`: int8_t *); null when the target has
  /// none.
  virtual Value emitLutLookup(OpBuilder &b, Location loc, Value indices,
                              Value tables, bool high,
                              VectorType type) const {
    return {};
  }
  /// lowbit.uk.zip; null when the target has none.
  virtual Value emitZip(OpBuilder &b, Location loc, Value lhs, Value rhs,
                        bool high, VectorType type) const {
    return {};
  }
  /// lowbit.uk.dot2; null when the target has none.
  virtual Value emitDot2(OpBuilder &b, Location loc, Value codes, Value x,
                         VectorType type) const {
    return {};
  }
  /// lowbit.uk.extend (`highHalf`: its `high_half`; `multipliers` null
  /// for the words 1, 256); null when the target has none.
  virtual Value emitExtend(OpBuilder &b, Location loc, Value low, Value high,
                           Value multipliers, bool highHalf,
                           VectorType type) const {
    return {};
  }
  /// lowbit.uk.lane_fold; null when the target has none.
  virtual Value emitLaneFold(OpBuilder &b, Location loc, Value lhs, Value rhs,
                             VectorType type) const {
    return {};
  }
  /// lowbit.uk.widen; null when the target has none.
  virtual Value emitWiden(OpBuilder &b, Location loc, Value words,
                          Value multipliers, int64_t lane,
                          VectorType type) const {
    return {};
  }
  /// lowbit.uk.lut_signs (`ptr`: uint8_t *); null when the target has
  /// none (or not `byDword`).
  virtual Value emitLutSigns(OpBuilder &b, Location loc, Value ptr,
                             VectorType type, bool byDword) const {
    return {};
  }
  /// lowbit.uk.lut_combine.
  virtual Value emitLutCombine(OpBuilder &b, Location loc, Value low,
                               Value high, VectorType type) const {
    return {};
  }
  /// lowbit.uk.trit: base-3 digit `digit` of every byte; null when the
  /// target has none.
  virtual Value emitTrit(OpBuilder &b, Location loc, Value packed,
                         int64_t digit, VectorType type) const {
    return {};
  }
  /// lowbit.uk.triple: every byte times 3 modulo 256; null when the
  /// target has none.
  virtual Value emitTriple(OpBuilder &b, Location loc, Value packed,
                           VectorType type) const {
    return {};
  }
  /// lowbit.uk.tile_* of `kind`: `tiles` are its tile attributes in
  /// order (tile; acc, lhs, rhs; Config: k), `operands` for Load and Store
  /// the address of the first row and the stride in bytes (size_t); false
  /// when the target has no tiles.
  virtual bool emitTileOp(OpBuilder &b, Location loc, TileOpKind kind,
                          ArrayRef<int64_t> tiles, ValueRange operands) const {
    return false;
  }
  /// lowbit.uk.load {bytes}: the first `bytes` bytes of a byte register,
  /// the rest zero, never touching memory past them; null when the target
  /// has none.
  virtual Value emitLoadPrefix(OpBuilder &b, Location loc, Value ptr,
                               int64_t bytes, VectorType type) const {
    return {};
  }
};

/// Workgroup and subgroup tiles of a #lowbit.gpu config (its parameters of
/// the same names).
struct GpuTiles {
  int64_t wgTileM, wgTileN, sgTileM, sgTileN;
};

/// What lowbit-select-config and lowbit-lower-gpu know about a GPU target:
/// the facts of the default #lowbit.gpu configs and the limits a config must
/// respect. No pass asks for a GPU target's name.
class GpuTargetInfo {
public:
  /// The kind of code the target's kernels become, which chooses their
  /// conversion (Spirv: addGpuToSpirvPasses); LLVM-style RTTI, as in
  /// `dyn_cast<SpirvTargetInfo>`.
  enum class Kind { Spirv };

  explicit GpuTargetInfo(Kind kind) : kind(kind) {}
  virtual ~GpuTargetInfo() = default;

  Kind getKind() const { return kind; }

  /// The target's name as the CLI spells it (`spirv-vulkan`).
  virtual StringRef getName() const = 0;
  /// Invocations per subgroup the default configs are tiled for (the
  /// kernels are correct for any hardware subgroup size).
  virtual int64_t getSubgroupSize() const = 0;
  /// Whether the default configs multiply 4 int8 pairs per instruction
  /// (the integer dot product: #lowbit.gpu int_dot); a target meant for
  /// every device multiplies in int32 instead.
  virtual bool hasIntegerDot() const = 0;
  /// Whether the target has the int8 cooperative matrices of #lowbit.gpu
  /// matrix = true (8 x 16 x 32, Xe2's DPAS shape).
  virtual bool hasCooperativeMatrix() const = 0;
  /// Workgroup and subgroup tiles of the default config for GEMV (N = 1:
  /// the activation scale fused) or GEMM (scales from a pre-kernel).
  virtual GpuTiles getDefaultTiles(bool gemv) const = 0;
  /// Bytes of workgroup memory a kernel may use.
  virtual int64_t getMaxWorkgroupBytes() const = 0;

private:
  Kind kind;
};

//===----------------------------------------------------------------------===//
// The registry (lib/Target/TargetInfo.cpp)
//===----------------------------------------------------------------------===//

/// The CPU targets of the registry (x86 in order of preference, then
/// AArch64, then generic).
ArrayRef<StringRef> getTargetNames();

/// The TargetInfo of a CPU target named as by the CLI, or null for an
/// unknown name (or a GPU target).
std::unique_ptr<TargetInfo> createTargetInfo(StringRef name);

/// The GPU targets of the registry (`spirv-vulkan`, `spirv-xe2`).
ArrayRef<StringRef> getGpuTargetNames();
bool isGpuTarget(StringRef name);

/// The GpuTargetInfo of a GPU target named as by the CLI, or null.
std::unique_ptr<GpuTargetInfo> createGpuTargetInfo(StringRef name);

//===----------------------------------------------------------------------===//
// The module's target
//===----------------------------------------------------------------------===//

/// The discardable attribute that names the target a module is compiled
/// for: `module attributes {lowbit.target = "x86-avx2"}` (a string of
/// getTargetNames() or getGpuTargetNames()). lowbit-select-config sets it;
/// the lowerings and conversions read it, so that they lower for the
/// target the configs were chosen for.
inline constexpr StringLiteral kTargetAttrName = "lowbit.target";

/// Sets `op`'s (a module's) lowbit.target attribute to `name`.
void setTargetAttr(Operation *op, StringRef name);

/// The target named by the lowbit.target attribute of `op` or of its
/// closest ancestor that has one (a func pass may ask for its function).
/// Emits an error at `op` and fails when there is none.
FailureOr<StringRef> lookupTargetName(Operation *op);

/// The TargetInfo of lookupTargetName(op). Emits an error at `op` and fails
/// when the attribute is missing or names no CPU target.
FailureOr<std::unique_ptr<TargetInfo>> lookupTargetInfo(Operation *op);

/// The GpuTargetInfo of lookupTargetName(op). Emits an error at `op` and
/// fails when the attribute is missing or names no GPU target.
FailureOr<std::unique_ptr<GpuTargetInfo>> lookupGpuTargetInfo(Operation *op);

} // namespace mlir::lowbit

#endif // LOWBIT_TARGET_TARGETINFO_H
