//===- Pipeline.h - from a kernel request to C++ source ---------*- C++ -*-===//
//
// The compiler's entry point for the CLI: builds the lowbit.mpgemm of a
// weight format and shape, runs select-config -> pack-layout ->
// lower-upconvert / lower-lut-elementwise -> the target's conversion to
// EmitC, and returns the C++ of one kernel of kernel_abi.h's signature (tl1,
// tl2: in the layout of lut_abi.h), only through
// mlir::emitc::translateToCpp.
//
//===----------------------------------------------------------------------===//

#ifndef LOWBIT_PIPELINE_PIPELINE_H
#define LOWBIT_PIPELINE_PIPELINE_H

#include "lowbit/Pipeline/KernelRequest.h"
#include "lowbit/kernel_abi.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mlir::lowbit {

class LayoutAttr;

/// The runtime's descriptor of a packed layout (kernel_abi.h, LAYOUT
/// DESCRIPTOR) that pack-layout chose: the family of its kind (vnni4, tl1/tl2
/// interleaved, bitplanes), its lane order, tile_m and tile_k, and the panel
/// size of the family's ABI header; a tiled gguf layout (TQ2_0 rows) is
/// LOWBIT_LAYOUT_GGML_ROWS. A layout no generated kernel reads (canonical,
/// row-major i2s/tl1/tl2, untiled gguf) has family LOWBIT_LAYOUT_NONE.
lowbit_layout_t getLayoutDescriptor(LayoutAttr layout);

/// Generates the kernel of `request`. Any problem (unknown format or
/// target, a shape the format does not allow, a bad schedule or config) is
/// one line in the returned error. Every call builds its own MLIRContext.
llvm::Expected<KernelSource> generateKernel(const KernelRequest &request);

/// Options of the `lowbit-upconvert-pipeline` (see buildUpconvertPipeline).
struct UpconvertPipelineOptions
    : public PassPipelineOptions<UpconvertPipelineOptions> {
  Option<std::string> target{*this, "target",
                             llvm::cl::desc("Target to compile for"),
                             llvm::cl::init("generic")};
  Option<int64_t> threads{*this, "threads",
                          llvm::cl::desc("Threads the kernel runs on"),
                          llvm::cl::init(1)};
  Option<int64_t> nHint{*this, "n-hint",
                        llvm::cl::desc("Expected N (1 selects GEMV)"),
                        llvm::cl::init(1)};
  Option<std::string> schedule{*this, "schedule",
                               llvm::cl::desc("JSON schedule file"),
                               llvm::cl::init("")};
  /// A schedule already read (generateKernel's request), which
  /// select-config takes instead of reading `schedule`; not a textual
  /// option.
  std::shared_ptr<const Schedule> loadedSchedule;
  Option<std::string> config{*this, "config",
                             llvm::cl::desc("Config attribute override"),
                             llvm::cl::init("")};
  Option<std::string> dtype{
      *this, "dtype",
      llvm::cl::desc("GPU targets: element type of X and Y (f32, f16, bf16)"),
      llvm::cl::init("f32")};
  Option<std::string> strategy{
      *this, "strategy",
      llvm::cl::desc("Strategy of the heuristic config: empty for the "
                     "format's default, or lut-bitserial"),
      llvm::cl::init("")};
};

/// lowbit-select-config (which sets the module's lowbit.target) ->
/// lowbit-pack-layout -> lowbit-lower-upconvert ->
/// lowbit-lower-lut-elementwise -> lowbit-lower-lut-bitserial -> cse -> the
/// target's conversion to EmitC (TargetInfo::addConversionPasses, e.g.
/// lowbit-convert-to-x86). Each lowering takes the ops of its strategy
/// (select-config picks lut_elementwise for tl1/tl2, upconvert otherwise).
void buildUpconvertPipeline(OpPassManager &pm,
                            const UpconvertPipelineOptions &options);

/// Registers `lowbit-upconvert-pipeline`, its alias for tl1/tl2,
/// `lowbit-lut-elementwise-pipeline`, and `lowbit-lut-bitserial-pipeline`
/// (the same with strategy=lut-bitserial), for lowbit-opt.
void registerUpconvertPipeline();

/// Registers `lowbit-spirv-pipeline` (select-config, lowbit-lower-gpu,
/// canonicalize, cse, then the GPU target's conversion, gpu -> spirv for
/// spirv-vulkan or spirv-xe2; uses target, config, n-hint and dtype).
void registerGpuPipeline();

} // namespace mlir::lowbit

#endif // LOWBIT_PIPELINE_PIPELINE_H
