//===- VerifyCommand.cpp - `lowbit verify` --------------------------------===//
//
// Differential testing of generated kernels against the scalar reference on
// ragged shapes: every (format, target, M, K, N) case is run through the same
// path as `lowbit run` and compared with reference_mpgemm. Ternary formats
// must match bit for bit (the int32 accumulation is exact); group formats
// must agree with the reference to 1e-5 (normalized) and stay within the
// documented 1e-2 of the fp64 product of the dequantized weights (or be no
// worse than the reference where a tiny case makes the reference miss it).
// Lossy kernels (lut-bitserial table_bits = 8) must instead stay within the
// bound of bitserial_abi.h of the reference, element by element, computed
// from its formula, and within the same 1e-2 of the fp64 product.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "Inputs.h"
#include "Progress.h"

#include "lowbit/Jit/Jit.h"

#include "lowbit/error.h"
#include "lowbit/reference.h"

#include <cstdio>

namespace lowbit::cli {

using namespace lowbit::jit;

/// Smallest legal K, one past a few blocks, and (ternary) a ragged large K.
static std::string defaultKs(const Format &format) {
  // tl1/tl2 need an even K; 194 and 2600 are not multiples of the TL2
  // block (96), so they exercise the TL1 remainder of the split.
  if (format.kind == FormatKind::TL1 || format.kind == FormatKind::TL2)
    return "2,194,2600";
  if (format.is_ternary())
    return "1,100,2600";
  int64_t g = format.group;
  return std::to_string(g) + "," + std::to_string(5 * g);
}

static int runVerify(const ParsedOptions &options) {
  Strategy strategy = parse_strategy(options.getOr("strategy", "auto"));
  std::vector<int64_t> ms = options.getPositiveList("m", "1,31,33,257");
  std::vector<int64_t> ns = options.getPositiveList("n", "1,3,16,128");
  const int threads = options.threads();
  ThreadPool pool(threads);
  KernelOptions kernelOptions;
  kernelOptions.threads = threads;
  kernelOptions.config = options.getOr("config", "");
  kernelOptions.layout = options.getOr("layout", "");
  const bool anyShape = options.has("any-shape");

  const std::vector<std::string> formatNames =
      splitList(*options.get("format"));
  const std::vector<std::string> targetNames =
      splitList(options.getOr("target", "native"));
  // Progress in shapes: each has a GEMV and a GEMM kernel.
  size_t totalShapes = 0, doneShapes = 0;
  for (const std::string &formatName : formatNames)
    totalShapes += 2 * ms.size() * targetNames.size() *
                   options.getPositiveList("k", defaultKs(Format::parse(formatName)))
                       .size();
  Progress progress("verify");

  int passed = 0, failed = 0;
  for (const std::string &formatName : formatNames) {
    Format format = Format::parse(formatName);
    std::vector<int64_t> ks = options.getPositiveList("k", defaultKs(format));
    for (const std::string &targetName : targetNames) {
      KernelChoice choice =
          resolveKernelChoice(format, strategy, parse_target(targetName));
      // x86-amx runs natively or, with LOWBIT_AMX=emulate on a host
      // without AMX, through the emulation of amx_tiles.h: say which.
      if (choice.target == Target::X86Amx) {
        progress.clear();
        std::printf("AMX: %s\n",
                    host_runs(Target::X86Amx) ? "native" : "emulated");
      }
      kernelOptions.dtype = parseDtypeFor(options.get("dtype"), choice);
      const GpuDType dtype = kernelOptions.dtype;
      // One GEMV-configured and one GEMM-configured kernel per shape, all
      // compiled in one batch.
      std::vector<KernelShape> shapes;
      for (int64_t M : ms)
        for (int64_t K : ks) {
          format.check_shape(M, K);
          shapes.push_back({M, K, 1});
          shapes.push_back({M, K, 16});
        }
      const std::string combo = format.name() + " " +
                                strategy_name(choice.strategy) + " " +
                                target_name(choice.target);
      if (choice.strategy != Strategy::Reference)
        progress.update(doneShapes, totalShapes,
                        "compiling " + std::to_string(shapes.size()) +
                            " kernels (" + combo + ")");
      std::vector<CompiledKernel> kernels;
      if (choice.strategy != Strategy::Reference && anyShape) {
        // --any-shape: one GEMV and one GEMM any-shape kernel run every
        // shape.
        std::vector<CompiledKernel> any = compileKernels(
            format, choice, {KernelShape::anyShape(1), KernelShape::anyShape(16)},
            kernelOptions);
        for (const KernelShape &shape : shapes)
          kernels.push_back(any[shape.nHint == 1 ? 0 : 1]);
      } else if (choice.strategy != Strategy::Reference) {
        kernels = compileKernels(format, choice, shapes, kernelOptions);
      }
      int casePassed = 0, caseFailed = 0;
      for (size_t s = 0; s < shapes.size(); ++s) {
        const KernelShape &shape = shapes[s];
        progress.update(doneShapes++, totalShapes,
                        combo + " M=" + std::to_string(shape.M) +
                            " K=" + std::to_string(shape.K));
        Matrix Wf = syntheticMatrix(shape.M, shape.K, 100 + s);
        PackedWeights W = quantize(format, Wf.data.data(), shape.M, shape.K);
        PreparedWeights prepared =
            prepareWeights(W, kernels.empty() ? nullptr : &kernels[s]);
        for (int64_t N : ns) {
          // The GEMV config runs N = 1 (and a small N); GEMM the rest.
          if ((shape.nHint == 1) != (N < 4) && !(shape.nHint == 1 && N == 3))
            continue;
          Matrix X = syntheticMatrix(N, shape.K, 1000 + s * 7 + N);
          std::vector<float> got(size_t(N * shape.M)), want(got.size());
          runKernel(kernels.empty() ? nullptr : &kernels[s], prepared,
                    X.data.data(), N, got.data(), pool);
          // 16-bit I/O: the reference of the rounded X (what the kernel
          // reads); ternary Y rounded as the kernel rounds it.
          for (float &x : X.data)
            x = round_to_dtype(dtype, x);
          reference_mpgemm(W, X.data.data(), N, want.data());
          if (W.format.is_ternary())
            for (float &y : want)
              y = round_to_dtype(dtype, y);
          std::string problem = compareWithReference(
              W, X.data.data(), N, got, want, dtype,
              kernels.empty() ? 0 : kernels[s].tableActGroup);
          if (problem.empty()) {
            ++casePassed;
            continue;
          }
          ++caseFailed;
          progress.clear();
          std::printf("FAIL %s %s %s M=%lld K=%lld N=%lld (config %s): %s\n",
                      format.name().c_str(),
                      strategy_name(choice.strategy).c_str(),
                      target_name(choice.target).c_str(),
                      (long long)shape.M, (long long)shape.K, (long long)N,
                      kernels.empty() ? "-" : kernels[s].config.c_str(),
                      problem.c_str());
        }
      }
      progress.clear();
      std::printf("%-7s %-10s %-15s %s%s%d passed, %d failed\n",
                  format.name().c_str(),
                  strategy_name(choice.strategy).c_str(),
                  target_name(choice.target).c_str(),
                  dtype == GpuDType::F32
                      ? ""
                      : (gpu_dtype_name(dtype) + " I/O  ").c_str(),
                  anyShape ? "any-shape  " : "", casePassed, caseFailed);
      std::fflush(stdout);
      passed += casePassed;
      failed += caseFailed;
    }
  }
  std::printf("verify: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}

const Command &verifyCommand() {
  static const Command command{
      {"verify",
       "Check generated kernels against the scalar reference on ragged "
       "shapes.",
       "Every (format, target, M, K, N) case runs the kernel through the same "
       "path as 'lowbit run'\nand compares Y with the reference strategy: "
       "bit-exact for i2s/tl1/tl2, otherwise within\n1e-5 of the reference "
       "and 1e-2 of the fp64 product of the dequantized weights; lossy\n"
       "configs (lut-bitserial table_bits = 8) within the documented bound of "
       "the\nreference instead of 1e-5 (bitserial_abi.h). Each shape "
       "gets a GEMV-configured kernel (run with N = 1 and 3) and a GEMM-"
       "configured\none (run with the N >= 3 in --n); with --any-shape one "
       "GEMV and one GEMM any-shape\nkernel (M and K run-time arguments, "
       "kernel_abi.h) run every shape. Exit status 1 if\nany case fails.\n",
       {{"format", "F[,F...]", "weight formats", true},
        {"strategy", "S", "strategy to check (default auto, as 'lowbit run')"},
        {"target", "T[,T...]", "targets (default native)"},
        {"m", "LIST", "M values (default 1,31,33,257)"},
        {"k", "LIST", "K values (default: smallest legal and a few blocks "
                      "past it)"},
        {"n", "LIST", "N values (default 1,3,16,128)"},
        {"threads", "N", kThreadsHelp},
        {"config", "ATTR", "config attribute for every kernel instead of "
                           "the heuristic's"},
        {"layout", "ATTR",
         "the weights' layout for every kernel instead of the format's: "
         "'#lowbit.layout<gguf, tile_m = 1, tile_k = 256, block_bytes = "
         "54>' is i2s weights as TQ1_0 rows (kernel_abi.h's GGML ROWS "
         "LAYOUT), for a config of tile_m below 16"},
        {"any-shape", nullptr, "check the any-shape kernels (one per N "
                               "class, M and K run-time arguments; "
                               "upconvert) on every shape"},
        {"dtype", "T", "GPU targets: element type of X and Y, f32 "
                       "(default), f16 or bf16 (the reference gets X "
                       "rounded to T; i2s Y must equal its result rounded "
                       "to T, group formats get T's roundoff on the bounds)"}}},
      runVerify};
  return command;
}

} // namespace lowbit::cli
