//===- Jit.cpp - choosing, compiling and running kernels ------------------===//

#include "lowbit/Jit/Jit.h"
#include "lowbit/Jit/Codegen.h"

#include "lowbit/bitserial.h"
#include "lowbit/error.h"
#include "lowbit/lut.h"
#include "lowbit/reference.h"
#include "lowbit/run_kernel.h"

// LLVM's version as a compile-time constant (macros only: nothing of
// libLLVM is linked).
#include "llvm/Config/llvm-config.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <optional>


namespace lowbit::jit {

bool isEmulatedTarget(Target t) { return emulated_on(host_cpu_features(), t); }

/// The builder setEmulatedBuilder installed.
static EmulatedBuilder &emulatedBuilder() {
  static EmulatedBuilder builder;
  return builder;
}

void setEmulatedBuilder(EmulatedBuilder builder) {
  emulatedBuilder() = std::move(builder);
}

bool isGpuTarget(Target t) { return is_gpu_target(t); }

bool hasGpuKernel(const Format &format) { return has_gpu_kernel(format); }

KernelChoice resolveChoice(const Format &format, Strategy strategy,
                           Target target) {
  return choose_kernel(format, strategy, target);
}

KernelChoice resolveKernelChoice(const Format &format, Strategy strategy,
                                 Target target) {
  const KernelChoice choice = resolveChoice(format, strategy, target);
  if (strategy == Strategy::Auto && choice.strategy == Strategy::Reference)
    throw Error("target '" + target_name(choice.target) +
                "' has no generated kernel for " + format.name() +
                " ('--strategy reference' runs the scalar reference on the "
                "CPU)");
  return choice;
}

Strategy strategyOfConfig(const std::string &config) {
  const std::string prefix = "#lowbit.";
  if (config.compare(0, prefix.size(), prefix) != 0)
    throw Error("schedule config '" + config + "' is not a #lowbit attribute");
  std::string name = config.substr(prefix.size(),
                                   config.find('<') - prefix.size());
  std::replace(name.begin(), name.end(), '_', '-');
  return name == "gpu" ? Strategy::Upconvert : parse_strategy(name);
}

std::shared_ptr<const mlir::lowbit::Schedule>
loadSchedule(const std::string &path) {
  if (path.empty())
    return nullptr;
  return codegen().loadSchedule(path);
}

/// The schedule of `options` that decides the strategy (and target) of
/// kernels for `target`: none for GPU targets (one strategy; their configs
/// come from the schedule in the compiler) and emulated ones (the bundle
/// they are built from reads it).
static const mlir::lowbit::Schedule *
strategySchedule(Target target, const KernelOptions &options) {
  if (isGpuTarget(target) || isEmulatedTarget(target))
    return nullptr;
  return options.schedule.get();
}

/// `schedule`'s entry for (format, shape, target, threads), if any (a
/// schedule was read by the compiler, which is therefore loaded).
static std::optional<ScheduledConfig>
scheduledEntry(const mlir::lowbit::Schedule &schedule, const Format &format,
               Target target, const KernelShape &shape, int threads) {
  return codegen().lookup(schedule, format.name(), shape.M, shape.K,
                          shape.nHint > 1 ? "gemm" : "gemv",
                          target_name(target), threads);
}

KernelChoice resolveChoiceFor(const Format &format, Strategy strategy,
                              Target target, const KernelShape &shape,
                              const KernelOptions &options) {
  KernelChoice choice = resolveChoice(format, strategy, target);
  if (strategy != Strategy::Auto || choice.strategy == Strategy::Reference)
    return choice;
  const mlir::lowbit::Schedule *schedule =
      strategySchedule(choice.target, options);
  if (!schedule)
    return choice;
  // The targets an entry may name: the chosen one and, for `native`, every
  // other CPU target this host runs natively (tune writes each --target's
  // entries into the same file). Of their entries whose strategy the host
  // runs on the entry's target (not a LUT kernel on x86-avx512vnni without
  // AVX512-VBMI), the fastest measured one (ScheduleEntry::us) wins; an
  // entry without a time (a version-1 file) counts on the chosen target
  // alone.
  std::vector<Target> targets = {choice.target};
  if (target == Target::Native)
    for (Target t : all_targets())
      if (t != choice.target && t != Target::Native && !isGpuTarget(t) &&
          host_runs(t))
        targets.push_back(t);
  std::optional<KernelChoice> best;
  double bestUs = 0;
  for (Target t : targets) {
    const std::optional<ScheduledConfig> entry =
        scheduledEntry(*schedule, format, t, shape, options.threads);
    if (!entry || !host_runs(t, strategyOfConfig(entry->config)))
      continue;
    const bool timed = entry->us > 0;
    if ((!timed && t != choice.target) ||
        (best && !(timed && entry->us < bestUs)))
      continue;
    best = resolveChoice(format, strategyOfConfig(entry->config), t);
    bestUs = entry->us;
  }
  return best ? *best : choice;
}

//===----------------------------------------------------------------------===//
// Generated sources kept in the kernel cache
//===----------------------------------------------------------------------===//
//
// The cache of compiled objects (KernelCache.cpp) is keyed by the C++ a
// kernel's generation wrote, so finding a compiled kernel first ran the
// compiler's passes (10-30 ms a kernel, most of a model's first token once
// the weights are read in place). The generated source is therefore kept
// too, under a key of the request and of the program that generated it: the
// compiler's file (codegenFile: liblowbit-codegen.so, or the executable that
// links it; device, inode, size, modification time) and LLVM's version, so
// a rebuilt compiler never reads another build's output. Finding an entry
// does not load the compiler. An unreadable or malformed entry is generated
// again; one that cannot be written is skipped.

namespace {

using mlir::lowbit::KernelRequest;
using mlir::lowbit::KernelSource;

/// "" where the compiler's file cannot be identified: then nothing is kept.
const std::string &generatorIdentity() {
  static const std::string identity = [] {
    const std::string file =
        codegenFile().empty() ? std::string() : file_identity(codegenFile());
    return file.empty() ? file
                        : "llvm " LLVM_VERSION_STRING " codegen " + file;
  }();
  return identity;
}

std::filesystem::path sourcePath(const KernelRequest &r) {
  if (generatorIdentity().empty())
    return {};
  std::string key = "lowbit kernel source v2\n";
  for (const std::string &part :
       {generatorIdentity(), r.format, std::to_string(r.M),
        std::to_string(r.K), r.target, std::to_string(r.threads),
        std::to_string(r.nHint),
        r.schedule ? "schedule " + codegen().scheduleText(*r.schedule)
                   : std::string("none"),
        r.configOverride, r.strategy, r.functionName, r.dtype})
    append_key_part(key, part);
  if (!r.layout.empty()) // the other kernels keep their keys
    append_key_part(key, "layout " + r.layout);
  std::string dir;
  try {
    dir = kernel_cache_dir();
  } catch (const Error &) {
    return {}; // no cache: generate (compile_and_load says why, if it runs)
  }
  return std::filesystem::path(dir) / "sources" / (sha256_hex(key) + ".kernel");
}

std::string encodeSource(const KernelSource &s) {
  std::string out;
  for (const std::string &part :
       {s.cpp, s.functionName, std::string(s.anyShape ? "1" : "0"), s.config,
        s.layout,
        std::string(reinterpret_cast<const char *>(&s.layoutDescriptor),
                    sizeof s.layoutDescriptor)})
    append_key_part(out, part);
  for (int64_t v :
       {s.tileRows, s.tilesPerGroup, s.Mp, s.Kp, s.bits, s.tableActGroup})
    append_key_part(out, std::to_string(v));
  append_key_part(out, std::to_string(s.compileFlags.size()));
  for (const std::string &flag : s.compileFlags)
    append_key_part(out, flag);
  return out;
}

std::optional<KernelSource> decodeSource(const std::string &in) {
  size_t pos = 0;
  // The parts of append_key_part: "<length>:<part>\n".
  auto part = [&](std::string &out) {
    const size_t colon = in.find(':', pos);
    uint64_t n = 0;
    if (colon == std::string::npos)
      return false;
    auto [end, ec] = std::from_chars(in.data() + pos, in.data() + colon, n);
    if (ec != std::errc() || end != in.data() + colon ||
        n >= in.size() - colon - 1 || in[colon + 1 + n] != '\n')
      return false;
    out = in.substr(colon + 1, n);
    pos = colon + 2 + n;
    return true;
  };
  auto number = [&](int64_t &out) {
    std::string text;
    if (!part(text))
      return false;
    auto [end, ec] =
        std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() && end == text.data() + text.size();
  };
  KernelSource s;
  std::string anyShape, descriptor;
  int64_t flags = 0;
  if (!part(s.cpp) || !part(s.functionName) || !part(anyShape) ||
      !part(s.config) || !part(s.layout) || !part(descriptor) ||
      descriptor.size() != sizeof s.layoutDescriptor || !number(s.tileRows) ||
      !number(s.tilesPerGroup) || !number(s.Mp) || !number(s.Kp) ||
      !number(s.bits) || !number(s.tableActGroup) || !number(flags) ||
      flags < 0 || (anyShape != "0" && anyShape != "1"))
    return std::nullopt;
  s.anyShape = anyShape == "1";
  std::memcpy(&s.layoutDescriptor, descriptor.data(), descriptor.size());
  s.compileFlags.resize(size_t(flags));
  for (std::string &flag : s.compileFlags)
    if (!part(flag))
      return std::nullopt;
  if (pos != in.size())
    return std::nullopt;
  return s;
}

std::optional<KernelSource> readSource(const std::filesystem::path &path) {
  if (path.empty())
    return std::nullopt;
  return decodeSource(read_file(path));
}

/// A whole entry or none (keep_file); one that cannot be written is
/// generated again next time.
void writeSource(const std::filesystem::path &path, const KernelSource &s) {
  if (!path.empty())
    keep_file(path, encodeSource(s));
}

} // namespace

mlir::lowbit::KernelSource generateKernelSource(const Format &format,
                                                const std::string &target,
                                                const KernelShape &shape,
                                                const KernelOptions &options,
                                                const std::string &functionName) {
  mlir::lowbit::KernelRequest request;
  request.format = format.name();
  request.M = shape.M;
  request.K = shape.K;
  request.target = target;
  request.threads = options.threads;
  request.nHint = shape.nHint;
  request.schedule = options.schedule;
  request.configOverride = options.config;
  request.layout = shape.layout.empty() ? options.layout : shape.layout;
  request.strategy = options.strategy == Strategy::LutBitserial
                         ? strategy_name(options.strategy)
                         : "";
  request.functionName = functionName;
  request.dtype = gpu_dtype_name(options.dtype);
  const std::filesystem::path kept = sourcePath(request);
  if (std::optional<KernelSource> source = readSource(kept))
    return std::move(*source);
  KernelSource source = codegen().generateKernel(request);
  writeSource(kept, source);
  return source;
}

std::vector<CompiledKernel>
compileKernels(const Format &format, KernelChoice choice,
               const std::vector<KernelShape> &shapes,
               const KernelOptions &options) {
  if (isEmulatedTarget(choice.target)) {
    for (const KernelShape &shape : shapes)
      if (shape.isAnyShape())
        throw Error("any-shape kernels run on this host's targets only "
                    "(not under qemu: " + target_name(choice.target) + ")");
    if (!emulatedBuilder())
      throw Error("target '" + target_name(choice.target) +
                  "' runs only under an emulator on this host, and this "
                  "program installed none (lowbit::jit::setEmulatedBuilder)");
    return emulatedBuilder()(format, choice, shapes, options);
  }
  std::vector<bool> anyShape(shapes.size());
  std::vector<CompiledKernel> kernels(shapes.size());
  std::vector<std::string> sources, symbols;
  std::vector<std::string> flags;
  KernelOptions chosen = options;
  chosen.strategy = choice.strategy;
  const mlir::lowbit::Schedule *schedule =
      strategySchedule(choice.target, options);
  for (size_t i = 0; i < shapes.size(); ++i) {
    KernelOptions kernelOptions = chosen;
    if (!shapes[i].config.empty())
      kernelOptions.config = shapes[i].config;
    // A schedule entry of another strategy than the chosen one (an explicit
    // strategy, where the tuner measured another fastest) is not this
    // kernel's: it takes its strategy's heuristic.
    const std::optional<ScheduledConfig> scheduled =
        schedule ? scheduledEntry(*schedule, format, choice.target, shapes[i],
                                  options.threads)
                 : std::nullopt;
    if (scheduled && strategyOfConfig(scheduled->config) != choice.strategy)
      kernelOptions.schedule.reset();
    mlir::lowbit::KernelSource source = generateKernelSource(
        format, target_name(choice.target), shapes[i], kernelOptions,
        "lowbit_kernel_" + std::to_string(i));
    kernels[i].choice = choice;
    kernels[i].format = format;
    kernels[i].M = shapes[i].M;
    kernels[i].K = shapes[i].K;
    kernels[i].config = source.config;
    kernels[i].layout = source.layoutDescriptor;
    kernels[i].tableActGroup = source.tableActGroup;
    anyShape[i] = source.anyShape;
    sources.push_back(std::move(source.cpp));
    symbols.push_back(source.functionName);
    flags = source.compileFlags; // the same for every kernel of a target
  }
  // x86-amx on a host without AMX (LOWBIT_AMX=emulate): the tile wrappers
  // of amx_tiles.h emulate the instructions; no -mamx-* code is generated.
  if (choice.target == Target::X86Amx && amx_emulated(host_cpu_features())) {
    flags.erase(std::remove_if(flags.begin(), flags.end(),
                               [](const std::string &flag) {
                                 return flag.rfind("-mamx-", 0) == 0;
                               }),
                flags.end());
    flags.push_back("-DLOWBIT_AMX_EMULATE");
  }
  if (shapes.empty())
    return kernels;
  std::shared_ptr<KernelLibrary> library = compile_and_load(sources, flags);
  for (size_t i = 0; i < shapes.size(); ++i) {
    kernels[i].loaded.library = library;
    if (isGpuTarget(choice.target))
      kernels[i].spirv = {
          static_cast<const uint32_t *>(library->symbol(symbols[i] + "_spirv")),
          static_cast<const int64_t *>(library->symbol(symbols[i] + "_info"))};
    else if (anyShape[i])
      kernels[i].anyFn = reinterpret_cast<lowbit_any_kernel_fn>(
          library->symbol(symbols[i]));
    else
      kernels[i].loaded.fn = library->kernel(symbols[i]);
  }
  return kernels;
}

CompiledKernel compileKernel(const Format &format, KernelChoice choice,
                             const KernelShape &shape,
                             const KernelOptions &options) {
  return std::move(compileKernels(format, choice, {shape}, options).front());
}

PreparedWeights prepareWeights(const PackedWeights &W,
                               const CompiledKernel *kernel) {
  if (kernel) {
    const bool anyShape = kernel->M == 0 && kernel->K == 0;
    if (kernel->format.name() != W.format.name() ||
        (!anyShape && (kernel->M != W.M || kernel->K != W.K)))
      throw Error("the kernel was compiled for " + kernel->format.name() +
                  (anyShape ? std::string(" (any shape)")
                            : " " + std::to_string(kernel->M) + "x" +
                                  std::to_string(kernel->K)) +
                  ", the weights are " + W.format.name() + " " +
                  std::to_string(W.M) + "x" + std::to_string(W.K));
  }
  PreparedWeights prepared;
  prepared.canonical = &W;
  // The GPU kernels read the canonical weights (VulkanKernel packs them),
  // and so do emulated kernels (the CLI's bundle driver packs them there).
  if (kernel && !isGpuTarget(kernel->choice.target) && !kernel->emulated)
    prepared.upconvert = pack_for_kernel(W, kernel->layout);
  return prepared;
}

static double normDiff(const std::vector<float> &a,
                       const std::vector<double> &b) {
  double diff = 0, norm = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff += (a[i] - b[i]) * (a[i] - b[i]);
    norm += b[i] * b[i];
  }
  return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

std::string compareWithReference(const PackedWeights &W, const float *X,
                                 int64_t N, const std::vector<float> &got,
                                 const std::vector<float> &want,
                                 GpuDType dtype, int64_t tableActGroup) {
  const double roundoff = dtype == GpuDType::F16    ? 0x1p-11
                          : dtype == GpuDType::BF16 ? 0x1p-8
                                                    : 0.0;
  // Lossy kernels (lut-bitserial int8 tables) are held to the bound of
  // bitserial_abi.h, from the formula.
  std::optional<std::vector<double>> bound;
  if (tableActGroup > 0)
    bound = bitserial_int8_table_bound(W, X, N, tableActGroup);
  if (bound) {
    // A lossy kernel: within its documented bound of the reference (plus
    // float rounding), then the 1e-2 of the fp64 product below.
    double largest = 0;
    for (float w : want)
      largest = std::max(largest, double(std::fabs(w)));
    for (size_t i = 0; i < got.size(); ++i) {
      double error = std::fabs(double(got[i]) - want[i]);
      double allowed = (*bound)[i] + 1e-4 * std::fabs(want[i]) + 1e-5 * largest;
      if (!(error <= allowed))
        return "Y[" + std::to_string(i / W.M) + "][" + std::to_string(i % W.M) +
               "] = " + std::to_string(got[i]) + ", reference " +
               std::to_string(want[i]) + ": error " + std::to_string(error) +
               " > the documented bound " + std::to_string((*bound)[i]);
    }
  } else if (W.format.is_ternary()) {
    for (size_t i = 0; i < got.size(); ++i)
      if (!(got[i] == want[i]))
        return "Y[" + std::to_string(i / W.M) + "][" + std::to_string(i % W.M) +
               "] = " + std::to_string(got[i]) + ", reference " +
               std::to_string(want[i]) + " (must be exact)";
    return "";
  } else if (double vsRef = normDiff(got, {want.begin(), want.end()});
             vsRef > 1e-5 + roundoff) {
    return "normalized difference to the reference " + std::to_string(vsRef) +
           " > " + std::to_string(1e-5 + roundoff);
  }
  std::vector<float> deq(static_cast<size_t>(W.M * W.K));
  dequantize(W, deq.data());
  std::vector<double> exact(got.size());
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < W.M; ++m) {
      double sum = 0;
      for (int64_t k = 0; k < W.K; ++k)
        sum += double(deq[m * W.K + k]) * X[n * W.K + k];
      exact[n * W.M + m] = sum;
    }
  // The 1e-2 bound is the format's (activation and weight quantization): on
  // a tiny case with cancellation the reference itself can exceed it, and
  // then the kernel must simply be no worse than the reference. A lossy
  // kernel is held to 1e-2 too (docs/design.md), a norm over many outputs: on
  // fewer than kFewOutputs outputs, where one output near zero decides it,
  // to the reference's error plus its bound (checked above) instead.
  constexpr size_t kFewOutputs = 256;
  double vsExact = normDiff(got, exact);
  double referenceError = normDiff(want, exact);
  if (bound && got.size() < kFewOutputs) {
    double boundNorm = 0, exactNorm = 0;
    for (size_t i = 0; i < exact.size(); ++i) {
      boundNorm += (*bound)[i] * (*bound)[i];
      exactNorm += exact[i] * exact[i];
    }
    referenceError +=
        exactNorm > 0 ? std::sqrt(boundNorm / exactNorm) : std::sqrt(boundNorm);
  }
  if (vsExact > 1e-2 + roundoff &&
      vsExact > referenceError * (1 + 1e-3) + roundoff)
    return "normalized error to the fp64 product " + std::to_string(vsExact) +
           " > 1e-2 (reference: " + std::to_string(referenceError) + ")";
  return "";
}

void runKernel(const CompiledKernel *kernel, PreparedWeights &W,
               const float *X, int64_t N, float *Y, ThreadPool &pool) {
  const PackedWeights &canonical = *W.canonical;
  if (!kernel) {
    reference_mpgemm(canonical, X, N, Y);
    return;
  }
  if (isGpuTarget(kernel->choice.target)) {
    if (!W.gpu)
      W.gpu = std::make_shared<VulkanKernel>(kernel->spirv, canonical);
    W.gpu->run(X, N, Y);
    return;
  }
  if (kernel->emulated) {
    kernel->emulated->run(canonical, X, N, Y, pool.size());
    return;
  }
  PreparedActivations A =
      prepare_activations(canonical.format, X, N, canonical.K);
  if (kernel->anyFn) {
    run_any_kernel(kernel->anyFn, *W.upconvert, A, Y, pool);
    return;
  }
  run_kernel(kernel->loaded.fn, *W.upconvert, A, Y, canonical.M, pool);
}

} // namespace lowbit::jit
