//===- scheduler.h - performance-ratio work split for hybrid CPUs -*- C++ -*-=//
//
// The math of the dynamic parallel method of "A dynamic parallel method for
// performance optimization on hybrid CPUs" (Luo, Liu, Shen), used
// by ThreadPool::run_scheduled:
//
//  - every thread i has a performance ratio pr_i per kernel class (a key such
//    as "upconvert x86-avx512vnni i2s": the paper keeps one table per ISA /
//    kernel, because P- and E-cores differ by instruction mix);
//  - a kernel's M tiles are split into contiguous chunks proportional to the
//    ratios, in whole multiples of a grain of tiles (eq. 3,
//    s_i = pr_i / sum(pr) * s);
//  - after the kernel, the measured per-thread times t_i update the ratios
//    (eq. 2, pr_i' = pr_i / sum_j (t_i * pr_j / t_j)) through the filter
//    pr_i = alpha * pr_i + (1 - alpha) * pr_i' (alpha = 0.3 in the paper);
//  - the table starts at 1 per thread, or from what the OS says about the
//    cores (Linux cpu_capacity, Intel's CPUID hybrid leaf 0x1A).
//
// The functions here are pure (no threads); the pool owns the tables.
//
//===----------------------------------------------------------------------===//
#ifndef LOWBIT_SCHEDULER_H
#define LOWBIT_SCHEDULER_H

#include <cstdint>
#include <string>
#include <vector>

namespace lowbit {

/// Tiles [begin, end) of one thread.
struct TileRange {
  int64_t begin = 0, end = 0;
  int64_t size() const { return end - begin; }
  bool empty() const { return end <= begin; }
};

/// Thread `index` of `parts` gets a contiguous chunk of [0, num_tiles); the
/// chunks are in thread order, cover every tile exactly once, and differ in
/// size by at most one tile (the first num_tiles % parts threads get the
/// extra one). Chunks are empty when num_tiles < parts. This is the split of
/// SchedulePolicy::Static.
TileRange split_tiles(int64_t num_tiles, int parts, int index);

/// How ThreadPool::run_scheduled splits a kernel's tiles.
enum class SchedulePolicy {
  Static,  // split_tiles: equal chunks, nothing measured or learned
  Dynamic, // split_tiles_weighted by the kernel class's ratio table, which
           // every run updates from the measured per-thread times
};

/// "static" or "dynamic"; anything else throws Error naming both.
SchedulePolicy parse_schedule_policy(const std::string &name);
const char *schedule_policy_name(SchedulePolicy policy);

/// Splits [0, num_tiles) into ratios.size() contiguous chunks in thread
/// order whose sizes are proportional to the ratios (eq. 3), in whole
/// multiples of `grain` tiles: the boundary after thread i is
/// num_tiles * sum_{j<=i} ratios[j] / sum(ratios) rounded to the nearest
/// multiple of grain (halves up) and capped at num_tiles (num_tiles itself
/// once only zero ratios follow). So every tile is in exactly one chunk,
/// every chunk starts on a whole grain and is within one grain of its exact
/// share (the ragged last grain goes with the chunk that reaches num_tiles),
/// a zero ratio gets an empty chunk and so does a share below about half a
/// grain. Equal ratios give chunks that differ by at most one grain.
/// Throws Error when ratios is empty, a ratio is negative or not finite, the
/// ratios sum to 0, grain < 1 or num_tiles < 0.
std::vector<TileRange> split_tiles_weighted(int64_t num_tiles,
                                            const std::vector<double> &ratios,
                                            int64_t grain = 1);
/// The same into `out` (resized to ratios.size()), without allocating once
/// `out` has that size.
void split_tiles_weighted(int64_t num_tiles, const std::vector<double> &ratios,
                          int64_t grain, std::vector<TileRange> &out);

/// The paper's eq. (2) as written: pr_i' = pr_i / sum_j (t_i * pr_j / t_j)
/// for every i, which is (pr_i / t_i) / sum_j (pr_j / t_j): the measured
/// speeds normalised to sum 1, valid when thread i was given a share
/// proportional to pr_i. Throws Error for sizes that differ, a ratio <= 0 or
/// a time <= 0 (or either not finite).
std::vector<double> seed_measured_ratios(const std::vector<double> &ratios,
                                         const std::vector<double> &seconds);

/// One update of a ratio table from one parallel run, in place:
///
///   P     = the threads with work[i] > 0 (the others keep their ratio)
///   S     = sum_{j in P} ratios[j]
///   pr_i' = S * (work_i / t_i) / sum_{j in P} (work_j / t_j)      (i in P)
///   pr_i  = alpha * pr_i + (1 - alpha) * pr_i'
///
/// When work_i is proportional to pr_i (the split of eq. 3 before rounding
/// to whole tiles) pr_i' is exactly S times the paper's eq. (2); using the
/// work each thread really did keeps the estimate right when rounding to
/// whole tiles (or the static split) gave a thread more or less than its
/// share. The factor S keeps the table's sum, so the filter mixes like with
/// like (eq. (2) alone sums to 1, the table starts at 1 per thread). Nothing
/// changes when fewer than two threads had work. `work` is in any unit (tiles
/// here), `seconds` > 0 where work > 0. alpha in [0, 1]: 0 keeps only the
/// new measurement, 1 never changes the table. Throws Error for sizes that
/// differ, alpha outside [0, 1], or a ratio, work or time that is negative
/// or not finite (or a zero time or ratio for a thread with work).
void update_ratios(std::vector<double> &ratios,
                   const std::vector<int64_t> &work,
                   const std::vector<double> &seconds, double alpha);

/// What the OS says about one CPU, for seeding a ratio table.
struct CoreInfo {
  int cpu = -1;
  double capacity = 0.0; // /sys/devices/system/cpu/cpuN/cpu_capacity, 0 if
                         // absent (1024 is the biggest core)
  int core_type = 0;     // CPUID leaf 0x1A EAX[31:24] on hybrid Intel parts:
                         // 0x40 Core (P-core), 0x20 Atom (E-core); 0 unknown
};

/// Linux's cpu_capacity of `cpu` (0 when the file is absent or unreadable).
double read_cpu_capacity(int cpu);

/// The hybrid core type of the CPU the calling thread runs on (CPUID leaf
/// 0x1A, only when CPUID.07H:EDX[15] says the part is hybrid); 0 elsewhere.
int current_core_type();

/// "P-core", "E-core" or "" for a CoreInfo::core_type.
const char *core_type_name(int core_type);

/// Relative E-core speed used to seed the table from CPUID core types when
/// the OS gives no capacities: a first guess the measurements replace within
/// a few kernels (the paper saw P/E ratios of 3 to 3.5 per core pair on an
/// Ultra-125H and started from 5).
inline constexpr double kECoreSeedRatio = 0.5;

/// The initial ratios for threads on `cores`: capacities when every core has
/// one and they differ, else core types when every core has one and they
/// differ (P = 1, E = kECoreSeedRatio), else 1 each; scaled to mean 1.
/// `source` (optional) gets "cpu_capacity", "cpuid-0x1a" or "uniform".
std::vector<double> seed_ratios(const std::vector<CoreInfo> &cores,
                                std::string *source = nullptr);

} // namespace lowbit

#endif // LOWBIT_SCHEDULER_H
