//===- BenchProbes.h - read-bandwidth and int8-peak probes ------*- C++ -*-===//
//
// The limits a kernel is measured against (docs/design.md "Measuring
// performance"):
//  - the read-bandwidth probe: >= 1 GiB, every byte first written (non-zero)
//    by the thread that later reads it, wide loads into 8 independent
//    accumulators, median of >= 5 reps after a warm-up, on the same thread
//    pool the kernels use;
//  - the int8 compute peak: independent vpdpbusd (zmm or ymm) or
//    vpmaddubsw/vpmaddwd chains on every thread, 2 ops per MAC.
// Bandwidths are in GB/s = 1e9 bytes per second.
//
//===----------------------------------------------------------------------===//
#ifndef LOWBIT_TOOLS_LOWBIT_BENCHPROBES_H
#define LOWBIT_TOOLS_LOWBIT_BENCHPROBES_H

#include "lowbit/target.h"
#include "lowbit/thread_pool.h"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace lowbit::cli {

inline constexpr int64_t kProbeBytes = int64_t(1) << 30;  // 1 GiB
inline constexpr int kMinReps = 5;

/// Median of the values (the mean of the middle two for an even count).
double median(std::vector<double> values);

/// Throws Error unless `reps` >= kMinReps (every measurement's floor).
void check_reps(int reps);

/// The clock of every measurement, and the seconds since `start` on it.
using BenchClock = std::chrono::steady_clock;
double seconds_since(BenchClock::time_point start);

/// Folds a measurement loop's result into a volatile sink so that no loop
/// is optimised away.
void keep_result(uint64_t value);

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
  /// ahead (which way is faster depends on the host's load, see BenchProbes.cpp).
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
                   // "avx2" (vpmaddubsw + vpmaddwd + vpaddd ymm), "amx"
                   // (tdpbsud tiles), "amx-emulated" (no peak)
};

/// The int8 instruction sequence whose peak bounds kernels of `target`:
/// x86-avx512vnni "avx512vnni", x86-avxvnni "avxvnni", x86-avx2 "avx2",
/// x86-amx "amx" ("amx-emulated" where its kernels run emulated); native
/// resolves first; "" for targets without one.
std::string peak_isa_for(Target target);

/// The int8 compute peak of `isa` on every thread of `pool`: independent
/// accumulator chains (16 vpdpbusd zmm, 12 vpdpbusd ymm, 8 AVX2
/// vpmaddubsw/vpmaddwd/vpaddd sequences, or 4 AMX accumulator tiles of
/// tdpbsud), calibrated on construction to about `seconds_per_pass`.
/// Throws Error when the host lacks the ISA. "amx-emulated" runs the loop
/// on the emulation of amx_tiles.h where lowbit::amx_emulated holds
/// (LOWBIT_AMX=emulate): a check of the loop, not a peak.
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

/// The result of `iterations` of `isa`'s peak loop on the calling thread
/// (what a pass keeps so the loop is not optimized away; tests check it).
uint64_t run_int8_peak_loop(const std::string &isa, int64_t iterations);

/// Int8Peak(pool, isa).measure(reps).
PeakResult measure_int8_peak(ThreadPool &pool, const std::string &isa,
                             int reps = kMinReps);

} // namespace lowbit::cli

#endif // LOWBIT_TOOLS_LOWBIT_BENCHPROBES_H
