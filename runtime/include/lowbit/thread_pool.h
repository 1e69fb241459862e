//===- thread_pool.h - persistent pinned worker threads ---------*- C++ -*-===//
//
// A fixed set of worker threads created once and pinned one per core; the
// calling thread is thread 0 and does its share of every job. A job is
// published to each taking part worker in that worker's own cache line (the
// function, its context, the chunk and the job's number), which the idle
// worker spins on for a short while (spin_us) before it sleeps on a
// condition variable; the worker reports back in the same line (done, and
// its chunk's start and end times). So a job costs one cache-line transfer
// each way per worker plus the caller's context, and the caller never waits
// for another core's cache line before it starts its own chunk. This matters
// when the threads sit on different core complexes (Zen CCDs, sockets),
// where each transfer costs hundreds of nanoseconds: a back-to-back
// sequence of jobs (a model's GEMVs) costs well under a microsecond each,
// while an idle pool does not burn its cores.
//
// run() splits work along M evenly (split_tiles). run_scheduled() is the
// dynamic parallel method of the hybrid-CPU scheduling paper (lowbit/scheduler.h): the pool keeps a
// per-thread performance-ratio table per kernel class, splits each kernel's
// tiles in proportion to it, times every thread's chunk and updates the
// table after every kernel. A thread with an empty chunk is not part of the
// job: it is not even told about it, so a core that is busy with other
// work and has been given nothing does not delay the kernel.
//
//===----------------------------------------------------------------------===//
#ifndef LOWBIT_THREAD_POOL_H
#define LOWBIT_THREAD_POOL_H

#include "lowbit/scheduler.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace lowbit {

class ThreadPool {
public:
  using Clock = std::chrono::steady_clock;
  /// A clock run_scheduled() times the threads with (see Options::clock).
  using ClockFn = Clock::time_point (*)();

  struct Options {
    int threads = 1;        // including the calling thread
    bool pin = true;        // pin worker w to the w-th CPU this process may use
    bool pin_caller = true; // and the constructing thread to the 0-th
    /// How long an idle thread spins before it sleeps; -1: 100 us, or 0 when
    /// there are more threads than usable CPUs (spinning would steal the
    /// core a sleeping thread needs).
    int spin_us = -1;
    /// How long the caller, done with its own chunk, spins for the workers
    /// before it sleeps; -1: 2000 us, or 0 when oversubscribed. Longer than
    /// spin_us because a job is in flight: waking a sleeping thread costs
    /// 100 to 300 us on this VM, more than most GEMVs.
    int wait_spin_us = -1;

    // Scheduling of run_scheduled() (lowbit/scheduler.h).
    SchedulePolicy policy = SchedulePolicy::Dynamic;
    /// Filter gain: pr = alpha * pr + (1 - alpha) * measured, in [0, 1].
    double alpha = 0.3;
    /// Chunks are whole multiples of this many tiles (>= 1).
    int64_t grain = 1;
    /// Seed new ratio tables from cpu_capacity / CPUID 0x1A of the pinned
    /// CPUs (see seed_ratios); false: 1 per thread.
    bool seed_from_os = true;
    /// A thread left without tiles by `probe_after` consecutive dynamic runs
    /// of a class (whose kernels had a grain per thread) gets one grain in
    /// the next, so that its ratio is measured again after its core was
    /// busy; 0: never.
    int probe_after = 64;
    /// A dynamic run in which a thread finished more than stall_factor
    /// times later than the slowest other thread, and more than
    /// stall_seconds later, measured a preemption, not a speed: a process
    /// that shares the core took it for a scheduler time slice
    /// (milliseconds), and the thread's share made no difference. Such a
    /// run leaves the table alone, unless the class's previous run stalled
    /// as well (then the core is that slow, and the run counts). 0: every
    /// run updates the table, as in the paper.
    double stall_factor = 8.0;
    double stall_seconds = 500e-6;
    /// The clock of run_scheduled()'s times, read on the calling thread at
    /// publication and at the end of the job, and on each participant at the
    /// start and end of its chunk; null: steady_clock::now. Tests give one
    /// their chunks advance, so that what the table learns does not depend
    /// on how busy the host is.
    ClockFn clock = nullptr;
  };

  /// Throws Error when threads < 1 or a thread cannot be created. Pinning
  /// that fails (or a CPU set smaller than needed) is skipped, see pinned().
  explicit ThreadPool(int threads);
  explicit ThreadPool(const Options &options);
  /// Joins the workers; restores the constructing thread's CPU mask when it
  /// runs on that thread.
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  int size() const { return threads_; }
  /// Whether every thread (the caller when pin_caller) was pinned.
  bool pinned() const { return pinned_; }
  /// The CPU of thread i (-1 when not pinned).
  int cpu_of(int thread) const;

  /// Runs fn(thread) once on every thread (the calling thread is 0) and
  /// returns when all have finished. An exception thrown by fn is rethrown
  /// here after every thread has finished (the first one, if several).
  /// Jobs must not be nested or run from two threads at once.
  template <typename F> void run_on_all(F &&fn) {
    using Fn = std::remove_reference_t<F>;
    dispatch(
        [](const void *ctx, int thread, TileRange) {
          (*static_cast<Fn *>(const_cast<void *>(ctx)))(thread);
        },
        static_cast<const void *>(&fn), nullptr);
  }

  /// Runs fn(thread) on the calling thread (0) and on every worker that
  /// takes the job up before the caller's fn returned; a worker that had not
  /// started by then is withdrawn from the job: it never runs fn and is not
  /// waited for. So fn must share its work dynamically (each thread claims
  /// the next part until none is left; the caller alone may do all of it),
  /// and a worker that another process keeps off its core costs the job
  /// nothing, where run_on_all waits for it (a scheduler time slice,
  /// milliseconds, on a busy host). An exception is rethrown as by
  /// run_on_all.
  template <typename F> void run_elastic(F &&fn) {
    using Fn = std::remove_reference_t<F>;
    dispatch(
        [](const void *ctx, int thread, TileRange) {
          (*static_cast<Fn *>(const_cast<void *>(ctx)))(thread);
        },
        static_cast<const void *>(&fn), nullptr, /*elastic=*/true);
  }
  /// Workers withdrawn from the last run_elastic job (for tests).
  int last_withdrawn() const { return last_withdrawn_; }

  /// Runs fn(begin, end, thread) on the non-empty chunks split_tiles gives
  /// each thread for [0, num_tiles).
  template <typename F> void run(int64_t num_tiles, F &&fn) {
    const int parts = threads_;
    run_on_all([&](int thread) {
      const TileRange r = split_tiles(num_tiles, parts, thread);
      if (!r.empty())
        fn(r.begin, r.end, thread);
    });
  }

  //===--------------------------------------------------------------------===//
  // Scheduled runs: the dynamic parallel method (hybrid CPUs)
  //===--------------------------------------------------------------------===//

  /// Runs fn(begin, end, thread) once on every non-empty chunk of
  /// [0, num_tiles) as the policy splits it: Static as run(); Dynamic in
  /// proportion to the ratio table of `kernel_class` (split_tiles_weighted
  /// with the pool's grain). Every thread's time is measured with
  /// steady_clock (Options::clock), from the moment the job is published to the end of its
  /// chunk (so a thread whose core was taken by another process and started
  /// late counts as slow), and under Dynamic the table is then updated with
  /// update_ratios(alpha). Threads with an empty chunk take no part and are
  /// not waited for. When fn throws, the exception is rethrown after every
  /// participating thread finished and the table is left unchanged.
  template <typename F>
  void run_scheduled(int kernel_class, int64_t num_tiles, F &&fn) {
    const std::vector<TileRange> &chunks =
        begin_scheduled(kernel_class, num_tiles);
    const Clock::time_point published = now_();
    using Fn = std::remove_reference_t<F>;
    dispatch(
        [](const void *ctx, int thread, TileRange r) {
          (*static_cast<Fn *>(const_cast<void *>(ctx)))(r.begin, r.end,
                                                         thread);
        },
        static_cast<const void *>(&fn), &chunks);
    end_scheduled(kernel_class, published);
  }
  /// run_scheduled(kernel_class(key), num_tiles, fn).
  template <typename F>
  void run_scheduled(const std::string &key, int64_t num_tiles, F &&fn) {
    run_scheduled(kernel_class(key), num_tiles, std::forward<F>(fn));
  }

  /// The index of the ratio table of `key` (e.g. "upconvert x86-avx512vnni
  /// i2s"), created from seed_ratios() on first use. Keys are free-form,
  /// non-empty strings.
  int kernel_class(const std::string &key);
  /// Every key, in order of index.
  std::vector<std::string> kernel_classes() const;
  /// The current ratios of a class (one per thread, mean 1 when untouched
  /// by set_ratios), its dynamic runs that updated the table, and its
  /// dynamic runs so far. Throw Error for an unknown index.
  const std::vector<double> &ratios(int kernel_class) const;
  int64_t updates(int kernel_class) const;
  int64_t runs(int kernel_class) const;
  /// Dynamic runs of the class that stalled (see Options::stall_factor).
  int64_t stalls(int kernel_class) const;
  /// Replaces a class's ratios (size() values, finite, >= 0, sum > 0).
  void set_ratios(int kernel_class, const std::vector<double> &ratios);

  /// The initial table of every class and where it came from
  /// ("cpu_capacity", "cpuid-0x1a" or "uniform"), and what the OS said about
  /// each thread's CPU.
  const std::vector<double> &seed_ratios() const { return seed_; }
  const std::string &seed_source() const { return seed_source_; }
  const std::vector<CoreInfo> &cores() const { return cores_; }

  SchedulePolicy policy() const { return policy_; }
  void set_policy(SchedulePolicy policy) { policy_ = policy; }
  double alpha() const { return alpha_; }
  /// Throws Error outside [0, 1].
  void set_alpha(double alpha);
  int64_t grain() const { return grain_; }

  /// The last scheduled run: its class, chunks, and per-thread seconds from
  /// publication to the start and to the end of each chunk (0 for a thread
  /// without tiles).
  struct JobStats {
    int kernel_class = -1;
    SchedulePolicy policy = SchedulePolicy::Static;
    std::vector<TileRange> chunks;
    std::vector<double> start_seconds, seconds;
    double wall_seconds = 0; // publication to the end of the whole job
    bool updated = false;    // whether the ratios were updated
    bool stalled = false;    // a thread stalled (see Options::stall_factor)
  };
  const JobStats &last_job() const { return last_; }

private:
  using Invoke = void (*)(const void *ctx, int thread, TileRange chunk);
  /// Runs invoke on thread 0 and on every worker t whose chunks[t] is
  /// non-empty, each with its chunk and timed into its slot (every worker,
  /// with an empty chunk, when chunks is null). elastic: workers that have
  /// not started when thread 0 is done are withdrawn (run_elastic).
  void dispatch(Invoke invoke, const void *ctx,
                const std::vector<TileRange> *chunks, bool elastic = false);
  const std::vector<TileRange> &begin_scheduled(int kernel_class,
                                                int64_t num_tiles);
  void end_scheduled(int kernel_class, Clock::time_point published);
  void pin_all(const Options &options, const std::vector<int> &cpus);
  void seed_from_os();
  void check_class(int kernel_class) const;
  void worker_main(int thread);
  /// Runs the job in thread's slot, timed; an exception goes to error_.
  void execute(int thread) noexcept;
  /// Notifies the workers if any sleeps (after a seq_cst fence).
  void wake_sleepers();
  void stop_workers();

  int threads_ = 1;
  ClockFn now_ = &Clock::now;
  int spin_us_ = 0, wait_spin_us_ = 0;
  bool pinned_ = false;
  std::vector<int> cpus_; // per thread, -1 when unpinned
  std::vector<std::thread> workers_;

  // The number of the last job published (the calling thread's only).
  uint64_t generation_ = 0;
  std::atomic<bool> stop_{false};
  // Read by every job and written only when a thread goes to sleep or a job
  // throws, so that both sides keep a shared copy: the workers asleep on
  // work_cv_, whether the caller sleeps on done_cv_, whether error_ is set.
  alignas(64) std::atomic<int> sleepers_{0};
  std::atomic<bool> caller_sleeping_{false};
  std::atomic<bool> failed_{false};
  alignas(64) std::mutex mutex_;
  std::condition_variable work_cv_, done_cv_;
  std::exception_ptr error_; // guarded by mutex_

  struct CallerMask;
  std::unique_ptr<CallerMask> caller_mask_;

  // Per thread, on its own cache line, everything a job exchanges with it.
  // The caller writes invoke, ctx and chunk, then job (release): the number
  // of the job the thread is to run. The thread writes its chunk's start and
  // end times, then done (release): the number of the job it finished. An
  // elastic job's number carries kElastic; the thread takes it up by setting
  // kStarted and the caller withdraws it by setting kWithdrawn, both by a
  // compare-exchange of the published value, so exactly one of them does.
  struct alignas(64) Slot {
    std::atomic<uint64_t> job{0};
    Invoke invoke = nullptr;
    const void *ctx = nullptr;
    TileRange chunk{};
    std::atomic<uint64_t> done{0};
    Clock::time_point start{}, end{};
  };
  static_assert(sizeof(Slot) == 64, "a slot is one cache line");
  static constexpr uint64_t kElastic = uint64_t(1) << 61;
  static constexpr uint64_t kStarted = uint64_t(1) << 62;
  static constexpr uint64_t kWithdrawn = uint64_t(1) << 63;
  static constexpr uint64_t kJobFlags = kElastic | kStarted | kWithdrawn;
  std::vector<char> withdrawn_; // per thread, in the current elastic job
  int last_withdrawn_ = 0;
  std::unique_ptr<Slot[]> slots_;

  // Scheduling state, touched by the calling thread only.
  struct RatioTable {
    std::string key;
    std::vector<double> ratios;
    std::vector<int> idle_runs; // consecutive dynamic runs without tiles
    int64_t updates = 0, runs = 0, stalls = 0;
    bool last_stalled = false;
  };
  SchedulePolicy policy_ = SchedulePolicy::Dynamic;
  double alpha_ = 0.3;
  int64_t grain_ = 1;
  int probe_after_ = 64;
  double stall_factor_ = 8.0, stall_seconds_ = 500e-6;
  std::vector<double> seed_;
  std::string seed_source_ = "uniform";
  std::vector<CoreInfo> cores_;
  std::vector<RatioTable> tables_;
  std::vector<TileRange> chunks_;
  int64_t last_num_tiles_ = 0;
  JobStats last_;
  std::vector<int64_t> work_scratch_;
  std::vector<double> seconds_scratch_;
};

} // namespace lowbit

#endif // LOWBIT_THREAD_POOL_H
