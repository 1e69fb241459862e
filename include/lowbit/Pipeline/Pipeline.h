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

#include "lowbit/kernel_abi.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mlir::lowbit {

class Schedule;

/// What to generate.
struct KernelRequest {
  std::string format;         // i2s, w1gG, w2gG, w4gG, q4_0 (upconvert),
                              // tl1 or tl2 (lut-elementwise)
  int64_t M = 0, K = 0;       // weight rows and reduction depth; both 0:
                              // an any-shape kernel (lowbit_any_kernel_fn,
                              // M and K run-time arguments; upconvert only)
  std::string target;         // x86-avx2, x86-avxvnni, x86-avx512vnni, generic,
                              // spirv-vulkan, spirv-xe2 (C++ embedding SPIR-V)
  int threads = 1;            // threads the kernel will be split over
  int64_t nHint = 1;          // expected activation rows: 1 = GEMV config
  /// The schedule to look the config up in, or null: read once by the
  /// caller (a command's --schedule) and shared by its kernels.
  std::shared_ptr<const Schedule> schedule;
  std::string configOverride; // config attribute to use instead, or ""
  std::string strategy;       // "lut-bitserial", or "" for the format's
                              // default (upconvert, tl1/tl2 lut-elementwise)
  std::string functionName;   // C symbol of the kernel (a C identifier)
  std::string dtype = "f32";  // GPU targets: element type of X and Y (f32,
                              // f16, bf16); CPU targets take f32 only
};

/// What came out.
struct KernelSource {
  std::string cpp;           // one translation unit: includes + the kernel
  std::string functionName;  // extern "C", type lowbit_kernel_fn, or
                             // lowbit_any_kernel_fn when anyShape
  bool anyShape = false;     // M and K are arguments (Mp = Kp = 0 below)
  std::string config;        // e.g. "#lowbit.upconvert<tile_m = 64, ...>"
  std::string layout;        // e.g. "#lowbit.layout<vnni4, tile_m = 16, ...>"
  lowbit_layout_t layoutDescriptor = {}; // `layout` for the runtime's packers
                                         // (getLayoutDescriptor)
  int64_t tileRows = 16;     // rows per tile: the unit of tile_begin/tile_end
                             // (1 for the ggml rows layout)
  int64_t tilesPerGroup = 1; // config tile_m / 16: split work in multiples
  int64_t Mp = 0, Kp = 0;    // M rounded up to 16 (M for the ggml rows
                             // layout), K rounded up to 32
                             // (0 for an any-shape kernel)
  int64_t bits = 0;          // bits per weight code in the layout
  int64_t tableActGroup = 0; // lut-bitserial int8 tables (lossy): the
                             // activations per table scale; 0: exact
  std::vector<std::string> compileFlags; // e.g. {"-mavx512vnni", ...}
};

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
