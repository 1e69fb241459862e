//===- Pipeline.cpp - from a kernel request to C++ source -----------------===//

#include "lowbit/Pipeline/Pipeline.h"
#include "lowbit/Conversion/LowBitToSPIRV/LowBitToSPIRV.h"
#include "lowbit/Conversion/Passes.h"
#include "lowbit/Dialect/LowBit/IR/LowBitFormats.h"
#include "lowbit/Dialect/LowBit/Transforms/Passes.h"
#include "lowbit/bitserial_abi.h"
#include "lowbit/lut_abi.h"

#include "mlir/Dialect/EmitC/IR/EmitC.h"
#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/Cpp/CppEmitter.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::lowbit;

/// Adds select-config with the pipeline's options.
static void addSelectConfig(OpPassManager &pm,
                            const UpconvertPipelineOptions &options) {
  LowBitSelectConfigOptions select;
  select.target = options.target;
  select.threads = options.threads;
  select.nHint = options.nHint;
  select.schedule = options.schedule;
  select.config = options.config;
  select.strategy = options.strategy;
  if (options.loadedSchedule)
    pm.addPass(createLowBitSelectConfig(select, options.loadedSchedule));
  else
    pm.addPass(createLowBitSelectConfig(select));
}

/// Adds select-config and pack-layout (the steps that choose attributes).
static void addSelectionPasses(OpPassManager &pm,
                               const UpconvertPipelineOptions &options) {
  addSelectConfig(pm, options);
  pm.addNestedPass<func::FuncOp>(createLowBitPackLayout());
}

/// Adds the lowerings (which take the target from the module's
/// lowbit.target, set by select-config) and the target's conversion to
/// EmitC. An unknown target adds no conversion: select-config rejects it.
static void addLoweringPasses(OpPassManager &pm,
                              const UpconvertPipelineOptions &options) {
  pm.addNestedPass<func::FuncOp>(createLowBitLowerUpconvert());
  pm.addNestedPass<func::FuncOp>(createLowBitLowerLutElementwise());
  pm.addNestedPass<func::FuncOp>(createLowBitLowerLutBitserial());
  pm.addPass(createCSEPass());
  if (std::unique_ptr<TargetInfo> target = createTargetInfo(options.target))
    target->addConversionPasses(pm);
}

void mlir::lowbit::buildUpconvertPipeline(
    OpPassManager &pm, const UpconvertPipelineOptions &options) {
  addSelectionPasses(pm, options);
  addLoweringPasses(pm, options);
}

void mlir::lowbit::registerUpconvertPipeline() {
  PassPipelineRegistration<UpconvertPipelineOptions>(
      "lowbit-upconvert-pipeline",
      "Compiles up-convert lowbit.mpgemm functions to EmitC for a target "
      "(then: mlir-translate --mlir-to-cpp)",
      buildUpconvertPipeline);
  PassPipelineRegistration<UpconvertPipelineOptions>(
      "lowbit-lut-elementwise-pipeline",
      "Compiles tl1/tl2 lowbit.mpgemm functions (lut-elementwise strategy) "
      "to EmitC for a target: the same passes as lowbit-upconvert-pipeline, "
      "whose select-config picks lut_elementwise for tl1/tl2 layouts",
      buildUpconvertPipeline);
  PassPipelineRegistration<UpconvertPipelineOptions>(
      "lowbit-lut-bitserial-pipeline",
      "Compiles i2s, w1gG..w4gG lowbit.mpgemm functions with the "
      "lut-bitserial strategy (T-MAC) to EmitC for a target: the passes of "
      "lowbit-upconvert-pipeline with select-config's strategy set to "
      "lut-bitserial",
      [](OpPassManager &pm, const UpconvertPipelineOptions &options) {
        UpconvertPipelineOptions bitserial;
        bitserial.copyOptionValuesFrom(options);
        bitserial.strategy = "lut-bitserial";
        buildUpconvertPipeline(pm, bitserial);
      });
}

/// select-config (a #lowbit.gpu config) -> lowbit-lower-gpu ->
/// canonicalize, cse -> the target's conversion (gpu -> spirv).
static void buildGpuPipeline(OpPassManager &pm,
                             const UpconvertPipelineOptions &options) {
  addSelectConfig(pm, options);
  LowBitLowerGpuOptions lower;
  lower.dtype = options.dtype;
  pm.addPass(createLowBitLowerGpu(lower));
  // The kernel builder spells index arithmetic out; fold it before SPIR-V.
  pm.addNestedPass<gpu::GPUModuleOp>(createCanonicalizerPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createCSEPass());
  // The conversion of the target's kind of code (SPIR-V: the one kind).
  std::unique_ptr<GpuTargetInfo> target = createGpuTargetInfo(options.target);
  if (target && isa<SpirvTargetInfo>(*target))
    addGpuToSpirvPasses(pm);
}

void mlir::lowbit::registerGpuPipeline() {
  PassPipelineRegistration<UpconvertPipelineOptions>(
      "lowbit-spirv-pipeline",
      "Compiles i2s lowbit.mpgemm functions for a GPU target (spirv-vulkan, "
      "spirv-xe2) to a spirv.module (then: mlir-translate --serialize-spirv "
      "on it)",
      buildGpuPipeline);
}

//===----------------------------------------------------------------------===//
// getLayoutDescriptor
//===----------------------------------------------------------------------===//

lowbit_layout_t mlir::lowbit::getLayoutDescriptor(LayoutAttr layout) {
  lowbit_layout_t d = {};
  switch (layout.getKind()) {
  case LayoutKind::VNNI4:
    d.family = LOWBIT_LAYOUT_VNNI4;
    break;
  case LayoutKind::TL1:
  case LayoutKind::TL2:
    if (!isLutInterleaved(layout))
      return d;
    d.family = LOWBIT_LAYOUT_LUT;
    d.panel_blocks = LOWBIT_LUT_PANEL_BLOCKS;
    break;
  case LayoutKind::BitPlanes:
    d.family = LOWBIT_LAYOUT_BITPLANES;
    d.panel_blocks = LOWBIT_BITSERIAL_PANEL_BLOCKS;
    break;
  case LayoutKind::Gguf:
    // Tiled: the TQ2_0 rows of kernel_abi.h's GGML ROWS LAYOUT; untiled
    // gguf blocks are what kernels are packed from, not what they read.
    if (!layout.isTiled())
      return d;
    d.family = LOWBIT_LAYOUT_GGML_ROWS;
    d.block_bytes = uint16_t(layout.getGgmlRowsBlockBytes());
    break;
  case LayoutKind::Canonical:
  case LayoutKind::I2S:
    return d;
  }
  d.lane_order = layout.getLaneOrder() == LaneOrder::Lanes ? LOWBIT_LANE_LANES
                                                           : LOWBIT_LANE_ROWS;
  d.tile_rows = uint16_t(layout.getTileM());
  d.tile_k = uint16_t(layout.getTileK());
  return d;
}

//===----------------------------------------------------------------------===//
// generateKernel
//===----------------------------------------------------------------------===//

static bool isCIdentifier(StringRef name) {
  return !name.empty() && (llvm::isAlpha(name[0]) || name[0] == '_') &&
         llvm::all_of(name,
                      [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

/// func.func @name(%x: tensor<?xKxf32>, %w: tensor<MxRxi8>, [%s]) with one
/// lowbit.mpgemm of `format` (in `layout`, else the format's own) and no
/// config.
static OwningOpRef<ModuleOp> buildInput(MLIRContext &ctx,
                                        const KernelRequest &request,
                                        const WeightFormat &format,
                                        LayoutAttr layout) {
  OpBuilder b(&ctx);
  Location loc = NameLoc::get(b.getStringAttr(request.functionName));
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());

  // Any shape (M = K = 0): every size that depends on M or K is dynamic.
  const int64_t dyn = ShapedType::kDynamic;
  bool anyShape = request.M == 0 && request.K == 0;
  int64_t m = anyShape ? dyn : request.M, k = anyShape ? dyn : request.K;
  WeightAttr weight = format.weight;
  if (!layout)
    layout = LayoutAttr::get(&ctx, format.layout, 0, 0, 1, LaneOrder::Rows);
  Type f16 = b.getF16Type(), f32 = b.getF32Type();
  auto xType = RankedTensorType::get({ShapedType::kDynamic, k}, f32);
  auto yType = RankedTensorType::get({ShapedType::kDynamic, m}, f32);
  int64_t rowBytes =
      anyShape ? dyn : getRowBytes(weight, layout, k).value_or(0);
  SmallVector<Type> inputs = {
      xType, RankedTensorType::get({m, rowBytes}, b.getI8Type())};
  int64_t groups = anyShape                 ? dyn
                   : weight.getGroup() > 0 ? k / weight.getGroup()
                                           : 0;
  switch (weight.getEncoding()) {
  case Encoding::Ternary:
    inputs.push_back(RankedTensorType::get({1}, f32));
    break;
  case Encoding::Binary:
    inputs.push_back(RankedTensorType::get({m, groups}, f16));
    break;
  case Encoding::Unsigned:
    inputs.push_back(RankedTensorType::get({m, groups, 2}, f16));
    break;
  case Encoding::GgufQ4_0:
  case Encoding::Offset:
  case Encoding::Min:
  case Encoding::Codebook:
    break;
  }
  auto func = func::FuncOp::create(b, loc, request.functionName,
                                   b.getFunctionType(inputs, {yType}));
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToEnd(entry);
  Value scales = inputs.size() == 3 ? entry->getArgument(2) : Value();
  auto op = MpGemmOp::create(b, loc, yType, entry->getArgument(0),
                             entry->getArgument(1), scales, weight, layout,
                             /*config=*/nullptr);
  func::ReturnOp::create(b, loc, op.getResult());
  return module;
}

static std::string printAttr(Attribute attr) {
  std::string text;
  llvm::raw_string_ostream os(text);
  attr.print(os);
  return text;
}

/// The GPU path of generateKernel: lowbit-lower-gpu, gpu -> spirv, the
/// binary embedded in C++ (lib/Conversion/LowBitToSPIRV).
static llvm::Error generateGpuKernel(MLIRContext &ctx, ModuleOp module,
                                     const KernelRequest &request,
                                     KernelSource &source) {
  auto fail = [](const Twine &problem) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), problem);
  };
  UpconvertPipelineOptions options;
  options.target = request.target;
  options.threads = request.threads;
  options.loadedSchedule = request.schedule;
  options.config = request.configOverride;
  options.nHint = request.nHint;
  options.dtype = request.dtype;
  // Bits per code of the kernel's weight words: 2 for i2s, else the
  // format's (wbgG: b; the ggml block formats their code bits, repacked by
  // the runtime); the weights word of the kernel info and the sub-scale
  // bits (runtime/include/lowbit/vulkan.h: 6..13 and info[14] describe the
  // ggml block formats by their encoding, scale group and sub-scales).
  int64_t bits = 2, weights = 0, scaleBits = 0;
  module.walk([&](MpGemmOp op) {
    WeightAttr weight = op.getWeight();
    Encoding encoding = weight.getEncoding();
    if (encoding != Encoding::Ternary)
      bits = weight.getBits();
    scaleBits = weight.getScaleBits();
    weights = encoding == Encoding::Ternary ? 0
              : encoding == Encoding::GgufQ4_0 || weight.isBlockEncoding()
                  ? 6 + (encoding == Encoding::Min ? 1 : 0) +
                        (weight.getGroup() == 16 ? 2 : 0) +
                        (encoding == Encoding::Codebook ? 4 : 0)
                  : bits;
  });
  PassManager pm(&ctx);
  buildGpuPipeline(pm, options);
  if (failed(pm.run(module)))
    return fail("");
  GpuAttr config;
  bool preKernel = false;
  module.walk([&](gpu::GPUModuleOp op) {
    config = op->getAttrOfType<GpuAttr>("lowbit.config");
    preKernel = op.lookupSymbol("act_scales") != nullptr;
  });
  // Native 16-bit storage buffers (spirv-xe2 with 16-bit I/O): the device
  // needs storageBuffer16BitAccess and shaderInt16.
  bool storage16 = spirvModuleRequires(module, "StorageBuffer16BitAccess");
  SmallVector<uint32_t> words;
  if (!config || failed(serializeSpirvModule(module, words)))
    return fail("");
  source.config = printAttr(config);
  source.layout = weights == 0   ? "#lowbit.layout<i2s>"
                  : weights >= 6 ? "#lowbit.layout<gguf>"
                                 : "#lowbit.layout<canonical>";
  source.bits = bits;
  source.Mp = request.M;
  source.Kp = llvm::alignTo(request.K, 16);
  // runtime/include/lowbit/vulkan.h, "GENERATED GLOBALS".
  int64_t info[] = {3,
                    request.M,
                    request.K,
                    int64_t(llvm::divideCeil(request.K * bits, 32)),
                    config.getWorkgroupSize(),
                    config.getWgTileM(),
                    config.getWgTileN(),
                    preKernel ? 1 : 0,
                    int64_t(words.size()),
                    config.getIntDot() ? 1 : 0,
                    weights,
                    request.dtype == "f16"    ? 1
                    : request.dtype == "bf16" ? 2
                                              : 0,
                    storage16 ? 1 : 0,
                    config.getMatrix() ? 1 : 0,
                    scaleBits};
  FailureOr<std::string> cpp =
      embedSpirvKernel(&ctx, request.functionName, words, info);
  if (failed(cpp))
    return fail("embedding the SPIR-V binary in C++ failed");
  source.cpp = std::move(*cpp);
  return llvm::Error::success();
}

llvm::Expected<KernelSource>
mlir::lowbit::generateKernel(const KernelRequest &request) {
  const bool anyShape = request.M == 0 && request.K == 0;
  std::string what =
      anyShape ? llvm::formatv("cannot generate the any-shape {0} kernel for "
                               "target {1}: ",
                               request.format, request.target)
                     .str()
               : llvm::formatv("cannot generate the {0} kernel for M = {1}, "
                               "K = {2}, target {3}: ",
                               request.format, request.M, request.K,
                               request.target)
                     .str();
  auto fail = [&](const Twine &problem) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   what + problem);
  };

  DialectRegistry registry;
  registry.insert<LowBitDialect, func::FuncDialect, arith::ArithDialect,
                  scf::SCFDialect, memref::MemRefDialect, vector::VectorDialect,
                  emitc::EmitCDialect, gpu::GPUDialect, math::MathDialect,
                  spirv::SPIRVDialect>();
  MLIRContext ctx(registry, MLIRContext::Threading::DISABLED);
  ctx.loadAllAvailableDialects();

  std::optional<WeightFormat> format = parseFormatName(&ctx, request.format);
  if (!format)
    return fail("unknown format '" + request.format +
                "' (kernels exist for i2s, w1gG, w2gG, w4gG, the ggml block "
                "formats (upconvert) and tl1, tl2 "
                "(lut-elementwise))");
  bool lut =
      format->layout == LayoutKind::TL1 || format->layout == LayoutKind::TL2;
  bool bitserial = request.strategy == "lut-bitserial";
  if (!request.strategy.empty() && !bitserial)
    return fail("unknown strategy '" + request.strategy +
                "' (expected lut-bitserial, or none for the format's "
                "default)");
  if (bitserial && (lut || format->layout == LayoutKind::Gguf))
    return fail("the lut-bitserial strategy has no kernel for " +
                request.format + " (it supports i2s, w1gG, w2gG, w3gG, w4gG)");
  if (format->weight.getEncoding() == Encoding::Unsigned &&
      format->weight.getBits() == 3 && !lut && !bitserial &&
      !isGpuTarget(request.target))
    return fail("the upconvert strategy has no kernel for " + request.format +
                " (it supports i2s, w1gG, w2gG, w4gG and the ggml block formats)");
  std::unique_ptr<TargetInfo> target = createTargetInfo(request.target);
  if (!target && !isGpuTarget(request.target))
    return fail("unknown target; expected one of " +
                llvm::join(getTargetNames(), ", ") + ", " +
                llvm::join(getGpuTargetNames(), ", "));
  if (request.dtype != "f32" &&
      !(isGpuTarget(request.target) &&
        (request.dtype == "f16" || request.dtype == "bf16")))
    return fail("dtype '" + request.dtype + "': " +
                (isGpuTarget(request.target)
                     ? "expected f32, f16 or bf16"
                     : "CPU kernels take f32 activations only (16-bit "
                       "dtypes are for spirv-vulkan, spirv-xe2)"));
  if (!anyShape && (request.M < 1 || request.K < 1))
    return fail("M and K must be at least 1 (or both 0 for an any-shape "
                "kernel)");
  if (anyShape && isGpuTarget(request.target))
    return fail("any-shape kernels (M and K run-time arguments) exist for "
                "the upconvert, lut-elementwise and lut-bitserial strategies "
                "on CPU targets only");
  if (request.threads < 1 || request.nHint < 1)
    return fail("threads and the N hint must be at least 1");
  if (!isCIdentifier(request.functionName))
    return fail("function name '" + request.functionName +
                "' is not a C identifier");

  std::string firstError;
  ScopedDiagnosticHandler capture(&ctx, [&](Diagnostic &d) {
    if (d.getSeverity() == DiagnosticSeverity::Error && firstError.empty())
      firstError = d.str();
    return success();
  });

  // The weights' layout as the request gives them: a tiled gguf layout
  // (kernel_abi.h's GGML ROWS LAYOUT; its block_bytes names the ggml block)
  // for ternary weights.
  LayoutAttr layout;
  if (!request.layout.empty()) {
    layout = dyn_cast_or_null<LayoutAttr>(parseAttribute(request.layout, &ctx));
    if (!layout || layout.getKind() != LayoutKind::Gguf || !layout.isTiled() ||
        format->weight.getEncoding() != Encoding::Ternary)
      return fail("layout '" + request.layout + "': expected a tiled gguf "
                  "layout (#lowbit.layout<gguf, tile_m = 1, tile_k = 256[, "
                  "block_bytes = 54]>) for ternary weights" +
                  (firstError.empty() ? "" : " (" + firstError + ")"));
  }
  OwningOpRef<ModuleOp> module = buildInput(ctx, request, *format, layout);
  if (failed(verify(*module)))
    return fail(firstError);

  if (isGpuTarget(request.target)) {
    KernelSource source;
    source.functionName = request.functionName;
    if (llvm::Error error = generateGpuKernel(ctx, *module, request, source)) {
      std::string message = llvm::toString(std::move(error));
      return fail(message.empty() ? firstError : message);
    }
    return source;
  }

  UpconvertPipelineOptions options;
  options.target = request.target;
  options.threads = request.threads;
  options.nHint = request.nHint;
  options.loadedSchedule = request.schedule;
  options.config = request.configOverride;
  options.strategy = request.strategy;

  PassManager select(&ctx);
  addSelectionPasses(select, options);
  if (failed(select.run(*module)))
    return fail(firstError);

  KernelSource source;
  source.functionName = request.functionName;
  module->walk([&](MpGemmOp op) {
    source.config = printAttr(op.getConfigAttr());
    source.layout = printAttr(op.getLayout());
    source.layoutDescriptor = getLayoutDescriptor(op.getLayout());
    if (source.layoutDescriptor.family == LOWBIT_LAYOUT_GGML_ROWS)
      source.tileRows = 1;
    if (auto upconvert = dyn_cast<UpconvertAttr>(op.getConfigAttr()))
      source.tilesPerGroup = upconvert.getTileM() / source.tileRows;
    if (auto lutConfig = dyn_cast<LutElementwiseAttr>(op.getConfigAttr()))
      source.tilesPerGroup = lutConfig.getBm() / source.tileRows;
    if (auto bitserialConfig = dyn_cast<LutBitserialAttr>(op.getConfigAttr())) {
      source.tilesPerGroup = bitserialConfig.getBm() / source.tileRows;
      if (bitserialConfig.getTableBits() == 8)
        source.tableActGroup = bitserialConfig.getActGroup();
    }
    source.bits = op.getWeight().getBits();
  });
  StringRef expected = bitserial ? "#lowbit.lut_bitserial"
                       : lut     ? "#lowbit.lut_elementwise"
                                 : "#lowbit.upconvert";
  if (!StringRef(source.config).starts_with(expected))
    return fail("config " + source.config + " is not a" +
                (bitserial ? " lut_bitserial config (the requested strategy)"
                 : lut     ? " lut_elementwise config (the strategy of tl1/tl2)"
                           : "n upconvert config") +
                "; only upconvert, lut-elementwise and lut-bitserial kernels "
                "are generated");
  source.Mp = source.tileRows == 1 ? request.M : lowbit_padded_m(request.M);
  source.Kp = lowbit_padded_k(request.K);
  source.anyShape = anyShape;
  source.compileFlags = target->getCompileFlags(/*tableLookups=*/lut ||
                                                bitserial);

  PassManager lower(&ctx);
  addLoweringPasses(lower, options);
  if (failed(lower.run(*module)))
    return fail(firstError);

  llvm::raw_string_ostream os(source.cpp);
  if (failed(emitc::translateToCpp(*module, os)))
    return fail(firstError.empty() ? "translation to C++ failed" : firstError);
  return source;
}
