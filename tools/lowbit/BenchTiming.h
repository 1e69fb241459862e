//===- BenchTiming.h - timing kernels on a noisy host -----------*- C++ -*-===//
//
// How `lowbit bench` and `lowbit tune` time kernels (docs/design.md
// "Measuring performance"): GEMV timing over distinct weight copies
// totalling >= 256 MiB ("cold": each rep is one pass over all copies, as a
// model goes layer after layer), or one matrix repeated ("warm", labelled
// as such); contenders timed in alternating rounds, each rep right after
// its own probe pass (BenchProbes.h); and the controlled loads of the
// scheduling experiments (a competing process on one core, a slowed core).
//
//===----------------------------------------------------------------------===//
#ifndef LOWBIT_TOOLS_LOWBIT_BENCHTIMING_H
#define LOWBIT_TOOLS_LOWBIT_BENCHTIMING_H

#include "BenchProbes.h"

#include "lowbit/kernel_abi.h"
#include "lowbit/scheduler.h"
#include "lowbit/thread_pool.h"
#include "lowbit/upconvert.h"

#include <cstdint>
#include <string>
#include <vector>

namespace lowbit::cli {

inline constexpr int64_t kColdBytes = int64_t(256) << 20; // 256 MiB

/// Copies needed for `bytes_per_matrix`-byte matrices to total
/// >= min_total bytes (at least 1).
int64_t cold_copy_count(int64_t bytes_per_matrix,
                        int64_t min_total = kColdBytes);

struct Timing {
  bool cold = true;
  int64_t copies = 0;         // distinct matrices (1 when warm)
  int64_t calls_per_rep = 0;  // cold: copies; warm: calibrated to >= 20 ms
  std::vector<double> rep_us; // per call, every timed rep
  double us = 0.0;            // median of rep_us
};

/// Roofline measurements taken right before every timed rep of a kernel, so
/// that each rep is compared with the limit of its own moment. This host's
/// limit moves while a benchmark runs (the 2-thread read bandwidth of this VM
/// switches between about 44 and about 88 GB/s within seconds), so a single
/// probe at the start of a run can be off by 2x for a later case.
struct Pairing {
  ReadProbe *probe = nullptr;
  Int8Peak *peak = nullptr;
};

struct KernelTiming {
  Timing timing;
  // How the pool split the kernel.
  std::string policy;
  // Dynamic: the class's ratio table after the last timed rep, its updates
  // so far, and the table after every call of this measurement (warm-up
  // pass first), up to the trace limit.
  std::vector<double> ratios;
  int64_t ratio_updates = 0;
  std::vector<std::vector<double>> ratio_trace;
  // Per thread, over the timed calls: mean tiles per call, and mean seconds
  // from the job's publication to the end of the thread's chunk (0 for a
  // thread that never had tiles).
  std::vector<double> thread_tiles, thread_us;
  double job_us = 0.0; // mean time from publication until all were done

  int64_t packed_bytes = 0; // codes + scales + zeros of one matrix
  double gbps = 0.0;        // packed_bytes / median time
  double gops = 0.0;        // 2 * M * K * N / median time, in 1e9 per s
  // With a Pairing: the probe / peak pass before each rep, their medians,
  // and the medians of the per-rep ratios (empty / 0 without).
  std::vector<double> probe_gbps, peak_gops;
  std::vector<double> probe_handoff_us; // ReadProbe::handoff_us per rep
  double roofline_gbps = 0.0, ratio = 0.0;
  double peak_gops_median = 0.0, gops_ratio = 0.0;
  std::string peak_isa;
};

/// Times run_kernel(kernel, W, A, ...) on `pool` under its policy: cold
/// over cold_copy_count(W.packed_bytes()) deep copies of W (every page
/// written, distinct allocations; one untimed pass, then every rep calls
/// copies 0..copies-1 once), or warm on W itself (calls per rep calibrated
/// to >= 20 ms). time_contenders with this one kernel.
KernelTiming time_kernel(lowbit_kernel_fn kernel, const UpconvertWeights &W,
                         const PreparedActivations &A, ThreadPool &pool,
                         bool cold, int reps = kMinReps,
                         const Pairing &pairing = {});

/// Like time_kernel, for several schedule policies of `pool` at once: one
/// set of matrix copies, one untimed pass per policy, then `reps` rounds in
/// which every policy gets one timed rep in turn (each right after its own
/// pairing pass), so that all policies see the same moments of a noisy host.
/// Kernels run as run_kernel(..., pool, kernel_class); the pool's policy is
/// restored afterwards. The dynamic policy keeps learning across calls and
/// across cases of the same class, as in a model; the static one neither
/// reads nor changes the table. Returns one timing per policy, in order.
std::vector<KernelTiming>
time_kernel_policies(lowbit_kernel_fn kernel, const UpconvertWeights &W,
                     const PreparedActivations &A, ThreadPool &pool,
                     const std::vector<SchedulePolicy> &policies,
                     int kernel_class, bool cold, int reps = kMinReps,
                     const Pairing &pairing = {}, size_t trace_limit = 4096);

/// One kernel of time_contenders: the kernel, its matrix and activations
/// (borrowed; contenders with the same W share one set of cold copies), the
/// pool's kernel class and the schedule policy it runs under.
///
/// With `read_probe` set, the contender is no kernel but a pure read of W's
/// packed arrays (codes, scales, zero points) with that probe's loads: the
/// pool splits W's tiles as for a kernel and each thread reads its tiles'
/// share of every array (read_slice). Timed cold beside the kernels of W's
/// size, it is the floor a memory-bound kernel of that size meets on this
/// host, per-call costs (the threads' handoff, the first misses) included.
struct Contender {
  lowbit_kernel_fn kernel = nullptr;
  const UpconvertWeights *W = nullptr;
  const PreparedActivations *A = nullptr;
  int kernel_class = -1;
  SchedulePolicy policy = SchedulePolicy::Dynamic;
  const ReadProbe *read_probe = nullptr;
  /// An any-shape kernel (kernel_abi.h) instead of `kernel`: run by
  /// run_any_kernel with the weights' M and K.
  lowbit_any_kernel_fn any_kernel = nullptr;
};

/// The general form of time_kernel_policies: any kernels (of one shape or
/// not), one untimed pass each (warm: each calibrates its own calls per
/// rep), then `reps` rounds in which every contender gets one timed rep in
/// turn, right after its own pairing pass. Contenders of one round see the
/// same moment of a noisy host, so the per-round ratio of two contenders'
/// times is a fair comparison even when the host's limits move. Returns
/// one timing per contender, in order.
std::vector<KernelTiming>
time_contenders(const std::vector<Contender> &contenders, ThreadPool &pool,
                bool cold, int reps = kMinReps, const Pairing &pairing = {},
                size_t trace_limit = 4096);

/// Whether the calling thread may run on `cpu` (its affinity mask; call it
/// before a pool pins the thread).
bool cpu_allowed(int cpu);

/// A competing CPU-bound process pinned to one CPU, for the loaded-core
/// experiment of `lowbit bench --load-core`: a child process that spins on
/// registers only (no memory traffic, so it takes the core's time and
/// nothing else) from construction until destruction (SIGKILL, then
/// waitpid; it also dies with the parent). Throws Error when the CPU is not
/// one this process may use or the process cannot be started.
class CoreLoad {
public:
  explicit CoreLoad(int cpu);
  ~CoreLoad();
  CoreLoad(const CoreLoad &) = delete;
  CoreLoad &operator=(const CoreLoad &) = delete;
  int cpu() const { return cpu_; }
  /// CPU seconds the load process has used so far (/proc/PID/stat), -1 when
  /// unknown.
  double cpu_seconds() const;
  /// Seconds since the load started.
  double wall_seconds() const;

private:
  int cpu_ = -1;
  int pid_ = -1;
  double started_ = 0.0;
};

/// The deliberately slow core of `lowbit bench --slow-core CPU:F`: returns a
/// kernel that calls `inner` and, when it runs on `cpu`, then spins until
/// its call has taken `factor` times as long as `inner` took. A pool thread
/// pinned to that CPU thus behaves like a core `factor` times slower (an
/// E-core, or a P-core at a lower clock) while the other threads run at full
/// speed. One wrapped kernel at a time (the state is global); cpu < 0 or
/// factor <= 1 returns `inner` unchanged. Throws Error for a factor that is
/// not finite.
lowbit_kernel_fn slow_core_kernel(lowbit_kernel_fn inner, int cpu,
                                  double factor);
} // namespace lowbit::cli

#endif // LOWBIT_TOOLS_LOWBIT_BENCHTIMING_H
