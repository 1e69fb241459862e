//===- lowbit_cross_main.cpp - runs one bundle kernel for the host --------===//
//
// The driver that CrossRunner.cpp builds together with a `lowbit compile`
// bundle into an executable for another architecture (AArch64 under
// qemu-aarch64). It exchanges everything through files, so the host's
// quantization stays the single source of truth:
//
//   lowbit_cross_main TARGET MIN_N THREADS W.lbw X.npy Y.npy
//
// loads the packed weights (`lowbit pack` format) and the fp32 activations,
// runs the bundle's TARGET kernel for W's (format, M, K) with the largest
// min_n <= MIN_N on a pool of THREADS threads (weights packed for the
// layout of the kernel's strategy), writes Y [N][M] and prints
// "kernel TARGET CONFIG". Exit status 2 with one line on stderr when the
// CPU lacks TARGET's ISA, the bundle has no such kernel or a file is bad.
//
//===----------------------------------------------------------------------===//

#include "lowbit_kernels.h"

#include "lowbit/error.h"
#include "lowbit/npy.h"
#include "lowbit/packed_file.h"
#include "lowbit/run_kernel.h"
#include "lowbit/target.h"
#include "lowbit/thread_pool.h"
#include "lowbit/upconvert.h"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

namespace {

int run(int argc, char **argv) {
  if (argc != 7)
    throw lowbit::Error("usage: lowbit_cross_main TARGET MIN_N THREADS W.lbw "
                        "X.npy Y.npy");
  const std::string target = argv[1];
  const long long minN = std::atoll(argv[2]);
  const int threads = std::atoi(argv[3]);
  if (minN < 1 || threads < 1)
    throw lowbit::Error("MIN_N and THREADS must be at least 1");
  if (!lowbit::host_runs(lowbit::parse_target(target)))
    throw lowbit::Error("this CPU cannot run " + target + " kernels");

  const lowbit::PackedWeights W = lowbit::load_packed(argv[4]);
  const lowbit::NpyArray X = lowbit::read_npy(argv[5]);
  const int64_t K = X.shape.back();
  const int64_t N = X.shape.size() == 2 ? X.shape[0] : 1;
  if (K != W.K)
    throw lowbit::Error(std::string(argv[5]) + ": K = " + std::to_string(K) +
                        ", the weights have K = " + std::to_string(W.K));

  size_t count = 0;
  const lowbit_kernel_entry_t *entries =
      lowbit_bundle_kernels(target.c_str(), &count);
  const lowbit_kernel_entry_t *kernel = nullptr;
  for (size_t i = 0; i < count; ++i) {
    const lowbit_kernel_entry_t &e = entries[i];
    if (W.format.name() == e.format && e.M == W.M && e.K == W.K &&
        e.min_n <= minN && (!kernel || e.min_n > kernel->min_n))
      kernel = &e;
  }
  if (!kernel)
    throw lowbit::Error("the bundle has no " + target + " kernel for " +
                        W.format.name() + " M = " + std::to_string(W.M) +
                        ", K = " + std::to_string(W.K));

  // The layout of the kernel, as the C API packs it.
  const lowbit::UpconvertWeights packed =
      lowbit::pack_for_kernel(W, kernel->layout);
  const lowbit::PreparedActivations A =
      lowbit::prepare_activations(W.format, X.data.data(), N, K);
  lowbit::ThreadPool::Options options;
  options.threads = threads;
  options.pin = false; // qemu's threads are the host's business
  options.pin_caller = false;
  lowbit::ThreadPool pool(options);
  std::vector<float> Y(size_t(N * W.M));
  lowbit::run_kernel(kernel->fn, packed, A, Y.data(), W.M, pool);
  lowbit::write_npy(argv[6], {N, W.M}, Y.data());
  std::printf("kernel %s %s\n", kernel->target, kernel->config);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}
