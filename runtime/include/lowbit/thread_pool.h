//===- thread_pool.h - persistent pinned worker threads ---------*- C++ -*-===//
//
// A fixed set of worker threads created once and pinned one per core; the
// calling thread is thread 0 and does its share of every job. A job is
// published by bumping a generation counter that idle workers spin on for a
// short while (spin_us) before they sleep on a condition variable, so a
// back-to-back sequence of jobs (a model's GEMVs) costs well under a
// microsecond each, while an idle pool does not burn its cores.
//
// Work along M is split by split_tiles: contiguous, balanced chunks of whole
// tiles, one per thread (the scheduler of issue 7 will replace the even
// split by per-core ratios; it stays a separate function for that reason).
//
//===----------------------------------------------------------------------===//
#ifndef LOWBIT_THREAD_POOL_H
#define LOWBIT_THREAD_POOL_H

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
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
/// extra one). Chunks are empty when num_tiles < parts.
TileRange split_tiles(int64_t num_tiles, int parts, int index);

class ThreadPool {
public:
  struct Options {
    int threads = 1;        // including the calling thread
    bool pin = true;        // pin worker w to the w-th CPU this process may use
    bool pin_caller = true; // and the constructing thread to the 0-th
    /// How long an idle thread spins before it sleeps; -1: 100 us, or 0 when
    /// there are more threads than usable CPUs (spinning would steal the
    /// core a sleeping thread needs).
    int spin_us = -1;
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
        [](const void *ctx, int thread) {
          (*static_cast<Fn *>(const_cast<void *>(ctx)))(thread);
        },
        static_cast<const void *>(&fn));
  }

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

private:
  using Invoke = void (*)(const void *ctx, int thread);
  void dispatch(Invoke invoke, const void *ctx);
  void worker_main(int thread);
  void execute(int thread) noexcept;
  void pin_current(int thread);

  int threads_ = 1;
  int spin_us_ = 0;
  bool pinned_ = false;
  std::vector<int> cpus_; // per thread, -1 when unpinned
  std::vector<std::thread> workers_;

  // The job being run; written by the caller before the generation bump.
  Invoke invoke_ = nullptr;
  const void *ctx_ = nullptr;
  // Written by the caller, read by spinning workers; on its own cache line.
  alignas(64) std::atomic<uint64_t> generation_{0};
  std::atomic<bool> stop_{false};
  std::atomic<int> sleepers_{0};
  // Written by the workers, read by the spinning caller.
  alignas(64) std::atomic<int> pending_{0}; // workers still on the job
  std::atomic<bool> caller_sleeping_{false};
  alignas(64) std::mutex mutex_;
  std::condition_variable work_cv_, done_cv_;
  std::exception_ptr error_; // guarded by mutex_

  struct CallerMask;
  std::unique_ptr<CallerMask> caller_mask_;
};

} // namespace lowbit

#endif // LOWBIT_THREAD_POOL_H
