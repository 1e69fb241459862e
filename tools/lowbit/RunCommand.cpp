//===- RunCommand.cpp - `lowbit run` --------------------------------------===//
//
// Quantizes and packs the weights (or loads a packed .lbw file), runs the
// chosen strategy and writes Y = X * W^T. Without --weights/--act it runs a
// built-in deterministic problem, which is what `scripts/setup.sh` shows a
// newcomer.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "Inputs.h"

#include "lowbit/Jit/Jit.h"

#include "lowbit/error.h"
#include "lowbit/format.h"
#include "lowbit/gguf.h"
#include "lowbit/packed_file.h"
#include "lowbit/scheduler.h"
#include "lowbit/target.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>

namespace lowbit::cli {

using namespace lowbit::jit;

static constexpr const char *kDefaultShape = "2560x2560";

static bool isPackedFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  char magic[8] = {};
  return in.read(magic, sizeof(magic)) &&
         std::string(magic, sizeof(magic)) == std::string("LOWBITW\0", 8);
}

static bool isGgufFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  return in.read(magic, sizeof(magic)) &&
         std::string(magic, sizeof(magic)) == "GGUF";
}

/// `--weights M.gguf --tensor NAME`: the tensor of a model file, which must
/// be a matrix (ggml's ne = [K, M], trailing 1s ignored).
struct ModelTensor {
  std::unique_ptr<GgufFile> file;
  const GgufTensor *tensor = nullptr;
};

static ModelTensor openModelTensor(const ParsedOptions &options) {
  const std::string name = *options.get("tensor");
  const auto path = options.get("weights");
  if (!path)
    throw Error("--tensor needs --weights M.gguf (the model file)");
  if (options.has("shape"))
    throw Error("--shape cannot be combined with --weights");
  if (!isGgufFile(*path))
    throw Error(*path + ": --tensor needs a GGUF model file");
  ModelTensor m;
  m.file = GgufFile::open(*path);
  m.tensor = &m.file->tensor(name); // "M.gguf: no tensor 'NAME'"
  std::vector<int64_t> ne = m.tensor->ne;
  while (ne.size() > 2 && ne.back() == 1)
    ne.pop_back();
  if (ne.size() != 2 || ne[1] == 1)
    throw Error(*path + ": tensor '" + name + "' of shape [" +
                [&] {
                  std::string s;
                  for (size_t i = 0; i < m.tensor->ne.size(); ++i)
                    s += (i ? ", " : "") + std::to_string(m.tensor->ne[i]);
                  return s;
                }() +
                "] is not a matrix (a weight of M rows of K values)");
  return m;
}

/// The tensor's lowbit format: --format, else the one it imports into by
/// default (as the engine imports it: gguf_default_format).
static Format modelTensorFormat(const ParsedOptions &options,
                                const ModelTensor &m) {
  if (auto name = options.get("format"))
    return Format::parse(*name);
  const std::string name = gguf_default_format(*m.tensor);
  if (name.empty())
    throw Error(m.file->path() + ": tensor '" + m.tensor->name + "' (" +
                gguf_type_name(m.tensor->type) +
                ") has no lowbit format of its own; give --format to "
                "quantize it");
  return Format::parse(name);
}

static PackedWeights loadWeights(const ParsedOptions &options,
                                 const Format &format,
                                 const ModelTensor &model) {
  if (model.tensor)
    return import_tensor(*model.tensor, format);
  auto path = options.get("weights");
  if (path && isGgufFile(*path))
    throw Error(*path + ": a GGUF model file; name the tensor to run with "
                        "--tensor (see 'lowbit gguf info " +
                *path + "')");
  if (path && isPackedFile(*path)) {
    if (options.has("shape"))
      throw Error("--shape cannot be combined with --weights");
    PackedWeights packed = load_packed(*path);
    if (packed.format.name() != format.name())
      throw Error(*path + ": packed as " + packed.format.name() +
                  ", but --format is " + format.name());
    return packed;
  }
  Matrix W;
  if (path) {
    if (options.has("shape"))
      throw Error("--shape cannot be combined with --weights");
    W = readMatrix(*path, "weights");
    if (W.vector)
      throw Error(*path + ": weights must be a 2-D [M, K] array, got 1-D");
  } else {
    auto [M, K] = parseShape(options.getOr("shape", kDefaultShape));
    format.check_shape(M, K);
    W = syntheticMatrix(M, K, /*seed=*/1);
  }
  format.check_shape(W.rows, W.cols);
  return quantize(format, W.data.data(), W.rows, W.cols);
}

static Matrix loadActivations(const ParsedOptions &options, int64_t K) {
  auto path = options.get("act");
  // The built-in activations only make sense with the built-in weights: a
  // product of the user's W with made-up X would be written and exit 0.
  if (!path && options.has("weights"))
    throw Error("--weights needs --act (the built-in activations go with "
                "the built-in weights only)");
  if (!path)
    return syntheticMatrix(options.getPositive("n", 1), K, /*seed=*/2);
  if (options.has("n"))
    throw Error("--n cannot be combined with --act");
  Matrix X = readMatrix(*path, "activations");
  if (X.cols != K)
    throw Error(
        "shape mismatch: weights are [M, K] with K = " + std::to_string(K) +
        ", but " + *path + " has K = " + std::to_string(X.cols));
  return X;
}

/// ||Y - Y64|| / ||Y64|| where Y64 is the fp64 product of the dequantized
/// weights with the fp32 activations: how far the quantized computation is
/// from the exact product of the weights it actually stores.
static double normalizedError(const PackedWeights &W, const Matrix &X,
                              const Matrix &Y) {
  std::vector<float> deq(static_cast<size_t>(W.M * W.K));
  dequantize(W, deq.data());
  double diff = 0, norm = 0;
  for (int64_t n = 0; n < X.rows; ++n)
    for (int64_t m = 0; m < W.M; ++m) {
      double exact = 0;
      for (int64_t k = 0; k < W.K; ++k)
        exact += double(deq[m * W.K + k]) * double(X.data[n * W.K + k]);
      double d = double(Y.data[n * W.M + m]) - exact;
      diff += d * d;
      norm += exact * exact;
    }
  return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

static int runRun(const ParsedOptions &options) {
  ModelTensor model;
  if (options.has("tensor"))
    model = openModelTensor(options);
  else if (!options.has("format"))
    throw Error("lowbit run: missing --format F");
  Format format = model.tensor ? modelTensorFormat(options, model)
                               : Format::parse(*options.get("format"));
  const Strategy strategy =
      parse_strategy(options.getOr("strategy", "auto"));
  KernelChoice choice = resolveKernelChoice(
      format, strategy, parse_target(options.getOr("target", "native")));
  KernelOptions kernelOptions;
  kernelOptions.threads = options.threads();
  if (auto out = options.get("out"))
    requireWritable(*out);
  kernelOptions.schedule = loadSchedule(options.getOr("schedule", ""));
  kernelOptions.config = options.getOr("config", "");
  const SchedulePolicy policy =
      parse_schedule_policy(options.getOr("schedule-policy", "dynamic"));

  kernelOptions.dtype = parseDtypeFor(options.get("dtype"), choice);
  PackedWeights W = loadWeights(options, format, model);
  Matrix X = loadActivations(options, W.K);
  Matrix Y;
  Y.rows = X.rows;
  Y.cols = W.M;
  Y.vector = X.vector;
  Y.data.resize(static_cast<size_t>(Y.rows * Y.cols));

  // auto per shape: a --schedule entry for this problem names its strategy.
  choice = resolveChoiceFor(format, strategy, choice.target,
                            {W.M, W.K, X.rows}, kernelOptions);
  std::optional<CompiledKernel> kernel;
  KernelShape shape(W.M, W.K, X.rows);
  if (options.has("any-shape"))
    shape = KernelShape::anyShape(X.rows);
  if (choice.strategy != Strategy::Reference)
    kernel = compileKernel(format, choice, shape, kernelOptions);
  PreparedWeights prepared = prepareWeights(W, kernel ? &*kernel : nullptr);
  ThreadPool::Options poolOptions;
  poolOptions.threads = kernelOptions.threads;
  poolOptions.policy = policy;
  ThreadPool pool(poolOptions);

  auto start = std::chrono::steady_clock::now();
  runKernel(kernel ? &*kernel : nullptr, prepared, X.data.data(), X.rows,
            Y.data.data(), pool);
  double us = std::chrono::duration<double, std::micro>(
                  std::chrono::steady_clock::now() - start)
                  .count();

  if (auto out = options.get("out"))
    writeMatrix(*out, Y);
  std::printf("%s  M=%lld K=%lld N=%lld  strategy=%s target=%s threads=%d  "
              "schedule=%s  %.1f us (one call, not a benchmark)  %.3f "
              "bits/weight\n",
              format.name().c_str(), (long long)W.M, (long long)W.K,
              (long long)X.rows, strategy_name(choice.strategy).c_str(),
              target_name(choice.target).c_str(), kernelOptions.threads,
              schedule_policy_name(policy), us, format.bits_per_weight());
  if (kernel)
    std::printf("config: %s\n", kernel->config.c_str());
  if (prepared.gpu)
    std::printf("vulkan: %s, dispatch %.1f us (the time above also builds "
                "the pipeline and uploads W and X), weights %zu bytes on "
                "the device\n",
                vulkan_device_name().c_str(),
                prepared.gpu->last_dispatch_seconds() * 1e6,
                prepared.gpu->weight_bytes());
  if (model.tensor)
    std::printf("tensor %s: %s [%lld x %lld] imported as %s\n",
                model.tensor->name.c_str(), gguf_type_name(model.tensor->type),
                (long long)W.M, (long long)W.K, format.name().c_str());
  if (options.has("check"))
    std::printf("normalized error vs fp64 product of the dequantized "
                "weights: %.3g\n",
                normalizedError(W, X, Y));
  return 0;
}

const Command &runCommand() {
  static const Command command{
      {"run",
       "Quantize and pack the weights W [M, K] in --format, run Y = X * W^T "
       "with the chosen strategy and write Y [N, M].",
       "Arrays are little-endian float32 .npy files in C order. --weights may "
       "also be a .lbw file\nwritten by 'lowbit pack', or a GGUF model with "
       "--tensor NAME: that tensor, imported\nlosslessly into its own lowbit "
       "format (or quantized into --format where it is float),\nso a kernel "
       "can be checked on a model's own weights. --weights needs --act.\n"
       "Without both, a built-in deterministic problem is used (--shape, "
       "default 2560x2560,\nand --n, default 1). Generated kernels are "
       "cached under $XDG_CACHE_HOME/lowbit\n(default ~/.cache/lowbit).\n\n"
       "formats:    i2s, tl1, tl2, w<b>g<G> (b in 1..4, G a multiple of 32),\n"
       "            q4_0, q4_1, q5_0, q5_1, q8_0, q2_k, q3_k, q4_k, q5_k, q6_k, "
       "iq4_nl\nstrategies: auto (default: the --schedule entry's strategy, else "
       "upconvert, tl1/tl2\n            lut-elementwise, w3gG lut-bitserial; "
       "an error where the target has none),\n            upconvert (i2s, "
       "w1gG, w2gG, w4gG, ggml's block formats), lut-elementwise (tl1, tl2),\n"
       "            "
       "lut-bitserial (i2s, w1gG..w4gG), reference (every format, scalar, on "
       "the CPU)\ntargets:    native (default), generic, x86-avx2, x86-avxvnni, "
       "x86-avx512vnni,\n            x86-amx (LOWBIT_AMX=emulate: emulated tiles without AMX), aarch64-neon, aarch64-neon-nodot (on x86: "
       "cross-built, run under qemu),\n            spirv-vulkan, spirv-xe2 "
       "(Vulkan) (see 'lowbit targets')\n",
       {{"format", "F",
         "weight format (required, except with --tensor: the tensor's own "
         "by default)"},
        {"strategy", "S", "kernel strategy (default auto)"},
        {"target", "T", "target ISA (default native)"},
        {"weights", "W.npy",
         "weights [M, K], .npy, a packed .lbw file or a GGUF model (with "
         "--tensor)"},
        {"tensor", "NAME",
         "the tensor of a GGUF --weights file to run, imported as the "
         "engine imports it (e.g. blk.0.attn_q.weight; 'lowbit gguf info' "
         "lists them)"},
        {"act", "X.npy", "activations [N, K] (or [K])"},
        {"out", "Y.npy", "where to write Y [N, M]"},
        {"shape", "MxK", "shape of the built-in weights (no --weights)"},
        {"n", "N", "rows of the built-in activations (no --act)"},
        {"threads", "N", kThreadsHelp},
        {"schedule", "FILE", "tuned schedule to take the kernel config from"},
        {"config", "ATTR",
         "kernel config attribute instead of the heuristic's, e.g. "
         "'#lowbit.gpu<..., matrix = true, ...>'"},
        {"schedule-policy", "P",
         "how threads split M: dynamic (default: in proportion to per-core "
         "performance ratios learned from measured times) or static (equal)"},
        {"dtype", "T",
         "GPU targets: element type of X and Y on the device, f32 (default), "
         "f16 or bf16; the .npy files stay float32 (X rounded to nearest "
         "even, Y widened exactly)"},
        {"any-shape", nullptr,
         "run the any-shape kernel of the format and N class (M and K "
         "run-time arguments, kernel_abi.h; upconvert) instead of one "
         "generated for the shape"},
        {"check", nullptr,
         "also print the error against the fp64 product of the dequantized "
         "weights"}}},
      runRun};
  return command;
}

} // namespace lowbit::cli
