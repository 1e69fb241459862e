//===- TuneMeasurer.h - what `lowbit tune` measures with --------*- C++ -*-===//
//
// The Measurer of lib/Tuning implemented with lib/Jit's kernel cache and
// `lowbit bench`'s timing: candidates are compiled in batches (one shared
// object per batch), verified against the reference in a child process (a
// crashing or hanging kernel is reported, never kept) and timed as `lowbit
// bench` times them (GEMV cold, each rep paired with a read-bandwidth
// probe; GEMM warm, paired with the int8 peak).
//
//===----------------------------------------------------------------------===//

#ifndef LOWBIT_TOOLS_LOWBIT_TUNEMEASURER_H
#define LOWBIT_TOOLS_LOWBIT_TUNEMEASURER_H

#include "Bench.h"

#include "lowbit/Jit/Jit.h"
#include "lowbit/Tuning/Tuner.h"

#include <csignal>
#include <map>
#include <memory>

namespace lowbit::cli {

class KernelMeasurer : public mlir::lowbit::Measurer {
public:
  /// Kernels run on `pool` (the problems' thread count), timed with `reps`
  /// reps; GEMV on one L3-resident matrix with `warm`. `stop` is the flag a
  /// SIGINT handler sets.
  KernelMeasurer(ThreadPool &pool, ReadProbe &probe, Int8Peak *peak, int reps,
                 bool warm, const volatile std::sig_atomic_t &stop);
  ~KernelMeasurer() override;

  std::string prepare(const mlir::lowbit::TuningProblem &problem,
                      size_t index) override;
  std::vector<std::string>
  compile(const std::vector<mlir::lowbit::Candidate> &batch) override;
  std::string verify(const mlir::lowbit::Candidate &candidate,
                     double deadline) override;
  mlir::lowbit::Measurement
  time(const mlir::lowbit::Candidate &candidate) override;
  /// time_contenders: one set of cold copies, a timed rep of each in every
  /// round, each rep paired with its own probe (or peak) pass.
  std::vector<std::pair<mlir::lowbit::Measurement, mlir::lowbit::Measurement>>
  timeRounds(const mlir::lowbit::Candidate &a,
             const mlir::lowbit::Candidate &b, int rounds) override;
  bool stopRequested() override { return stop_ != 0; }

private:
  struct Problem;
  /// The problem's weights packed for `kernel` (once per strategy).
  jit::PreparedWeights &weightsFor(const jit::CompiledKernel &kernel);
  /// GPU targets: the candidate's kernel with the problem's weights
  /// uploaded (made on first use).
  VulkanKernel &gpuKernel(const mlir::lowbit::Candidate &candidate);
  /// GPU targets: one dispatch of the candidate, its microseconds.
  double gpuDispatch(const mlir::lowbit::Candidate &candidate);
  /// GPU targets: the median of reps_ warm dispatches.
  mlir::lowbit::Measurement gpuMedian(const mlir::lowbit::Candidate &candidate);
  Contender contender(const mlir::lowbit::Candidate &candidate);

  ThreadPool &pool_;
  ReadProbe &probe_;
  Int8Peak *peak_;
  int reps_;
  bool warm_;
  const volatile std::sig_atomic_t &stop_;
  std::unique_ptr<Problem> problem_;
  std::map<std::string, jit::CompiledKernel> kernels_; // by config
  std::map<std::string, std::unique_ptr<VulkanKernel>> gpuKernels_; // by config
};

} // namespace lowbit::cli

#endif // LOWBIT_TOOLS_LOWBIT_TUNEMEASURER_H
