//===- Bench.h - honest roofline measurements -------------------*- C++ -*-===//
//
// The measurement side of `lowbit bench`, following docs/design.md "Measuring
// performance":
//  - the read-bandwidth probe: >= 1 GiB, every byte first written (non-zero)
//    by the thread that later reads it, wide loads into 8 independent
//    accumulators, median of >= 5 reps after a warm-up, on the same thread
//    pool the kernels use;
//  - GEMV timing over distinct weight copies totalling >= 256 MiB ("cold":
//    each rep is one pass over all copies, as a model goes layer after
//    layer), or one matrix repeated ("warm", labelled as such);
//  - the int8 compute peak: independent vpdpbusd (zmm or ymm) or
//    vpmaddubsw/vpmaddwd chains on every thread, 2 ops per MAC;
//  - one JSON record per case, ratios taken in one run.
// Bandwidths are in GB/s = 1e9 bytes per second.
//
//===----------------------------------------------------------------------===//
#ifndef LOWBIT_TOOLS_LOWBIT_BENCH_H
#define LOWBIT_TOOLS_LOWBIT_BENCH_H

#include "lowbit/kernel_abi.h"
#include "lowbit/scheduler.h"
#include "lowbit/target.h"
#include "lowbit/thread_pool.h"
#include "lowbit/upconvert.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace lowbit::cli {

inline constexpr int64_t kProbeBytes = int64_t(1) << 30;  // 1 GiB
inline constexpr int64_t kColdBytes = int64_t(256) << 20; // 256 MiB
inline constexpr int kMinReps = 5;

/// Median of the values (the mean of the middle two for an even count).
double median(std::vector<double> values);

struct BandwidthResult {
  double gbps = 0.0;            // median over the reps
  std::vector<double> rep_gbps; // every timed rep
  // The pool's handoff after each rep (ReadProbe::handoff_us) and its median.
  double handoff_us = 0.0;
  std::vector<double> rep_handoff_us;
  int64_t bytes = 0;            // buffer size
  int threads = 0;
  std::string loads; // "avx512", "avx2" or "scalar"
};

/// The read-bandwidth probe: a buffer of `bytes` (whole pages) that every
/// thread of `pool` first writes (non-zero, distinct values) in its own
/// contiguous part and later reads alone. `loads`: "auto" (AVX-512 when the
/// host has it, else AVX2, else 64-bit scalar loads), "avx512", "avx2" or
/// "scalar". The constructor writes the buffer and runs one untimed pass;
/// the object keeps the buffer so that single passes can be interleaved with
/// kernel reps (see Pairing). Throws Error for bytes < 1 MiB or loads the
/// host lacks.
class ReadProbe {
public:
  explicit ReadProbe(ThreadPool &pool, int64_t bytes = kProbeBytes,
                     const std::string &loads = "auto");
  ~ReadProbe();
  ReadProbe(const ReadProbe &) = delete;
  ReadProbe &operator=(const ReadProbe &) = delete;

  /// One timed pass over the whole buffer on every thread, in GB/s: the
  /// faster of a pass with plain loads and one that also prefetches 4 KiB
  /// ahead (which way is faster depends on the host's load, see Bench.cpp).
  double pass();
  /// The handoff measured by the last pass(): the median time of 31 empty
  /// jobs on every thread of the pool, in us (0 with one thread). It tells
  /// where the threads run: a cache line moves between two cores of one
  /// core complex (a Zen CCD) in tens of ns and between complexes in
  /// hundreds, so this VM shows ~0.2 us or ~0.65 us, and a kernel's per-call
  /// cost grows with it (see runtime/README.md, ThreadPool).
  double handoff_us() const { return handoff_us_; }
  /// `reps` (>= 5) timed passes.
  BandwidthResult measure(int reps = kMinReps);
  /// Reads [data, data + bytes) once with the probe's loads, prefetching
  /// 4 KiB ahead as the kernels do, and returns a checksum; data is 64-byte
  /// aligned and bytes a multiple of kReadGrain.
  uint64_t read(const uint8_t *data, size_t bytes) const;
  const std::string &loads() const { return loads_; }
  int64_t bytes() const { return bytes_; }

private:
  ThreadPool &pool_;
  std::string loads_;
  uint64_t (*read_)(const uint8_t *, size_t, bool prefetch) = nullptr;
  uint8_t *data_ = nullptr;
  int64_t bytes_ = 0;
  double handoff_us_ = 0.0;
  std::vector<uint64_t> sums_;
};

/// Reads are in whole steps of the widest probe loop (8 zmm loads).
inline constexpr int64_t kReadGrain = 512;

/// The part of an array of `bytes` bytes that tiles [begin, end) of
/// `tiles` read in a pure read of a matrix (see Contender::read_probe): the
/// same share of the bytes, contiguous, bounds rounded down to kReadGrain.
/// Consecutive chunks of tiles get consecutive, non-overlapping slices that
/// together cover the array but for its last, partial grain.
struct ReadSlice {
  int64_t offset = 0, bytes = 0;
};
ReadSlice read_slice(int64_t bytes, int64_t tiles, int64_t begin,
                     int64_t end);

/// ReadProbe(pool, bytes, loads).measure(reps).
BandwidthResult measure_read_bandwidth(ThreadPool &pool,
                                       int64_t bytes = kProbeBytes,
                                       int reps = kMinReps,
                                       const std::string &loads = "auto");

struct PeakResult {
  double gops = 0.0; // median, 2 ops per MAC, all threads
  std::vector<double> rep_gops;
  int threads = 0;
  std::string isa; // "avx512vnni" (vpdpbusd zmm), "avxvnni" (vpdpbusd ymm),
                   // "avx2" (vpmaddubsw + vpmaddwd + vpaddd ymm)
};

/// The int8 instruction sequence whose peak bounds kernels of `target`:
/// x86-avx512vnni "avx512vnni", x86-avxvnni "avxvnni", x86-avx2 "avx2";
/// native resolves first; "" for targets without one.
std::string peak_isa_for(Target target);

/// The int8 compute peak of `isa` on every thread of `pool`: independent
/// accumulator chains (16 vpdpbusd zmm, 12 vpdpbusd ymm, or 8 AVX2
/// vpmaddubsw/vpmaddwd/vpaddd sequences), calibrated on construction to
/// about `seconds_per_pass`. Throws Error when the host lacks the ISA.
class Int8Peak {
public:
  Int8Peak(ThreadPool &pool, const std::string &isa,
           double seconds_per_pass = 0.05);
  /// One timed pass on every thread, in GOPS (2 ops per MAC).
  double pass();
  /// `reps` (>= 5) timed passes after an untimed one.
  PeakResult measure(int reps = kMinReps);
  const std::string &isa() const { return isa_; }

private:
  ThreadPool &pool_;
  std::string isa_;
  uint64_t (*run_)(int64_t iterations) = nullptr;
  double macs_per_iteration_ = 0;
  int64_t iterations_ = 0;
  std::vector<uint64_t> sums_;
};

/// Int8Peak(pool, isa).measure(reps).
PeakResult measure_int8_peak(ThreadPool &pool, const std::string &isa,
                             int reps = kMinReps);

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

/// One benchmark case as `lowbit bench --json` writes it.
struct BenchRecord {
  int64_t M = 0, K = 0, N = 1;
  std::string format, strategy, target;
  int threads = 1;
  bool cold = true;
  double us = 0.0;            // median per call
  double gbps = 0.0;          // effective: packed weight bytes / us
  double roofline_gbps = 0.0; // measured read bandwidth (see `paired`)
  double ratio = 0.0;         // effective / measured read bandwidth
  bool paired = false; // roofline and ratio from probe passes before each
                       // rep (median of per-rep ratios), else the run's probe
  int64_t packed_bytes = 0;
  int64_t copies = 0;
  int reps = 0;
  // N > 1 only (0 otherwise):
  double gops = 0.0, peak_gops = 0.0, gops_ratio = 0.0;
  std::string peak_isa;
  // Scheduling: the policy, the CPU a competing process loaded (-1: none),
  // and every timed rep; for dynamic, the ratio table and its history (see
  // KernelTiming).
  std::string schedule_policy;
  int load_core = -1;
  int slow_core = -1;
  double slow_factor = 1.0;
  std::vector<double> rep_us;
  std::vector<double> rep_probe_gbps; // the read probe right before each rep
  std::vector<double> rep_handoff_us; // and the pool's handoff with it
  std::vector<double> thread_tiles, thread_us;
  double job_us = 0.0; // mean publication-to-done time of the pool's jobs
  std::vector<double> ratios;
  int64_t ratio_updates = 0;
  std::vector<std::vector<double>> ratio_trace;
  // bench --read-floor: the median over rounds of this case's rep time /
  // a pure read of its matrix (0: not measured).
  double read_floor_ratio = 0.0;
};

/// Fills a record from a timing: roofline figures from its pairing when it
/// has one, else from the run's `bandwidth` and `peak` (peak may be null).
BenchRecord make_record(int64_t M, int64_t K, int64_t N,
                        const std::string &format, const std::string &strategy,
                        const std::string &target, int threads,
                        const KernelTiming &timing,
                        const BandwidthResult &bandwidth,
                        const PeakResult *peak);

nlohmann::ordered_json to_json(const BenchRecord &record);
nlohmann::ordered_json to_json(const BandwidthResult &bandwidth);
nlohmann::ordered_json to_json(const PeakResult &peak);

/// Writes {"host": ..., "read_bandwidth": ..., "int8_peak": ... (when
/// given), "records": [...]} to `path` (pretty-printed); throws Error when
/// the file cannot be written.
void write_bench_json(const std::string &path,
                      const std::vector<BenchRecord> &records,
                      const BandwidthResult &bandwidth, const PeakResult *peak);

} // namespace lowbit::cli

#endif // LOWBIT_TOOLS_LOWBIT_BENCH_H
