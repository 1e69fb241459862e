// JIT example: compiles the kernel of one weight matrix for this host's best
// target at run time (lib/Jit, no bundle), runs Y = X * W^T on built-in data
// and checks it against the scalar reference strategy as `lowbit verify`
// does: bit-exact for the ternary formats (i2s, tl1, tl2), within the
// format's bounds for the others. Exits 1 on a mismatch or an error.
//
//   lowbit_jit_example [FORMAT [MxK [N]]]     (default: i2s 100x256 3)
#include "lowbit/Jit/Jit.h"

#include "lowbit/error.h"
#include "lowbit/format.h"
#include "lowbit/target.h"
#include "lowbit/thread_pool.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

/// Uniform in [-1, 1): a 32-bit LCG, the same on every platform.
std::vector<float> builtInValues(int64_t count, uint32_t seed) {
  std::vector<float> values(static_cast<size_t>(count));
  for (float &v : values) {
    seed = seed * 1664525u + 1013904223u;
    v = float(seed >> 8) / 16777216.0f * 2.0f - 1.0f;
  }
  return values;
}

int run(const std::string &formatName, int64_t M, int64_t K, int64_t N) {
  using namespace lowbit;
  const Format format = Format::parse(formatName); // throws on a bad name
  format.check_shape(M, K);
  const std::vector<float> W = builtInValues(M * K, 1);
  const std::vector<float> X = builtInValues(N * K, 2);
  const PackedWeights packed = quantize(format, W.data(), M, K);

  // The strategy and target: `auto` on `native` picks the fastest generated
  // kernel this CPU runs (an error if the format has none here).
  const jit::KernelChoice choice =
      jit::resolveKernelChoice(format, Strategy::Auto, Target::Native);
  // Generate the C++ through the compiler pipeline, compile it into a
  // shared object (cached under $XDG_CACHE_HOME/lowbit) and load it. The
  // kernel's config is chosen for this N (GEMV for N = 1, else GEMM).
  jit::KernelOptions options;
  options.threads = 2;
  const jit::CompiledKernel kernel =
      jit::compileKernel(format, choice, {M, K, N}, options);

  ThreadPool pool(options.threads);
  std::vector<float> Y(static_cast<size_t>(N * M));
  std::vector<float> reference(Y.size());
  // Repack the weights once into the kernel's layout, then run.
  jit::PreparedWeights weights = jit::prepareWeights(packed, &kernel);
  jit::runKernel(&kernel, weights, X.data(), N, Y.data(), pool);
  // The reference strategy: no kernel, the canonical weights.
  jit::PreparedWeights canonical = jit::prepareWeights(packed, nullptr);
  jit::runKernel(nullptr, canonical, X.data(), N, reference.data(), pool);

  const std::string problem = jit::compareWithReference(
      packed, X.data(), N, Y, reference, GpuDType::F32, kernel.tableActGroup);
  std::printf("%s M=%lld K=%lld N=%lld  %s on %s  %s\n  config: %s\n",
              format.name().c_str(), (long long)M, (long long)K, (long long)N,
              strategy_name(choice.strategy).c_str(),
              target_name(choice.target).c_str(),
              problem.empty() ? "matches the reference" : "MISMATCH",
              kernel.config.c_str());
  if (!problem.empty()) {
    std::fprintf(stderr, "lowbit_jit_example: %s\n", problem.c_str());
    return 1;
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  try {
    const std::string format = argc > 1 ? argv[1] : "i2s";
    const std::string shape = argc > 2 ? argv[2] : "100x256";
    long long M = 0, K = 0, N = argc > 3 ? std::atoll(argv[3]) : 3;
    if (std::sscanf(shape.c_str(), "%lldx%lld", &M, &K) != 2 || N < 1)
      throw lowbit::Error("usage: lowbit_jit_example [FORMAT [MxK [N]]]");
    return run(format, M, K, N);
  } catch (const lowbit::Error &e) {
    std::fprintf(stderr, "lowbit_jit_example: error: %s\n", e.what());
  }
  return 1;
}
