//===- KernelRequest.h - what the compiler generates ------------*- C++ -*-===//
//
// The request of one kernel and the source that comes out: plain C++ (no
// LLVM or MLIR header), shared by the compiler (Pipeline.h's generateKernel)
// and lib/Jit, which asks for kernels through lowbit/Jit/Codegen.h without
// linking the compiler.
//
//===----------------------------------------------------------------------===//

#ifndef LOWBIT_PIPELINE_KERNELREQUEST_H
#define LOWBIT_PIPELINE_KERNELREQUEST_H

#include "lowbit/kernel_abi.h"

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
  std::string layout;         // the weights' layout attribute, "" for the
                              // format's: a tiled gguf one for ternary
                              // weights in TQ1_0 or TQ2_0 rows (kernel_abi.h
                              // GGML ROWS LAYOUT; with a tile_m < 16 config)
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

} // namespace mlir::lowbit

#endif // LOWBIT_PIPELINE_KERNELREQUEST_H
