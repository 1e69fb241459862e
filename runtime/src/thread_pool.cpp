//===- thread_pool.cpp - persistent pinned worker threads -----------------===//

#include "lowbit/thread_pool.h"
#include "lowbit/error.h"

#include <chrono>
#include <string>
#include <system_error>

#ifdef __linux__
#include <pthread.h>
#include <sched.h>
#endif

namespace lowbit {

TileRange split_tiles(int64_t num_tiles, int parts, int index) {
  if (num_tiles <= 0 || parts < 1 || index < 0 || index >= parts)
    return {};
  const int64_t base = num_tiles / parts, extra = num_tiles % parts;
  const int64_t begin = index * base + (index < extra ? index : extra);
  return {begin, begin + base + (index < extra ? 1 : 0)};
}

static inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// Spins until done() or spin_us microseconds have passed; returns done().
template <typename Done> static bool spin_until(int spin_us, Done done) {
  if (spin_us <= 0)
    return done();
  const auto limit =
      std::chrono::steady_clock::now() + std::chrono::microseconds(spin_us);
  for (;;) {
    for (int i = 0; i < 32; ++i) {
      if (done())
        return true;
      cpu_relax();
    }
    if (std::chrono::steady_clock::now() > limit)
      return done();
  }
}

#ifdef __linux__
struct ThreadPool::CallerMask {
  pthread_t thread;
  cpu_set_t mask;
};

static std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) != 0)
    return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set))
      cpus.push_back(c);
  return cpus;
}

static bool pin_thread(pthread_t thread, int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(thread, sizeof(set), &set) == 0;
}
#else
struct ThreadPool::CallerMask {};
static std::vector<int> allowed_cpus() { return {}; }
#endif

ThreadPool::ThreadPool(int threads) : ThreadPool(Options{threads}) {}

ThreadPool::ThreadPool(const Options &options) : threads_(options.threads) {
  if (threads_ < 1)
    throw Error("thread count must be >= 1, got " + std::to_string(threads_));
  const std::vector<int> cpus = allowed_cpus();
  const int usable = cpus.empty() ? int(std::thread::hardware_concurrency())
                                  : int(cpus.size());
  spin_us_ = options.spin_us >= 0              ? options.spin_us
             : threads_ > usable && usable > 0 ? 0
                                               : 100;
  cpus_.assign(size_t(threads_), -1);

  workers_.reserve(size_t(threads_ - 1));
  try {
    for (int t = 1; t < threads_; ++t)
      workers_.emplace_back([this, t] { worker_main(t); });
  } catch (const std::system_error &e) {
    stop_.store(true);
    generation_.fetch_add(1);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      work_cv_.notify_all();
    }
    for (std::thread &w : workers_)
      w.join();
    throw Error("cannot start thread " + std::to_string(workers_.size() + 1) +
                " of " + std::to_string(threads_) + ": " + e.what());
  }

#ifdef __linux__
  // Pinning is skipped when the process may not use one CPU per thread.
  if (!options.pin || int(cpus.size()) < threads_)
    return;
  bool ok = true;
  for (int t = 1; t < threads_; ++t) {
    if (pin_thread(workers_[size_t(t - 1)].native_handle(), cpus[size_t(t)]))
      cpus_[size_t(t)] = cpus[size_t(t)];
    else
      ok = false;
  }
  if (options.pin_caller) {
    auto saved = std::make_unique<CallerMask>();
    saved->thread = pthread_self();
    if (pthread_getaffinity_np(saved->thread, sizeof(saved->mask),
                               &saved->mask) == 0 &&
        pin_thread(saved->thread, cpus[0])) {
      cpus_[0] = cpus[0];
      caller_mask_ = std::move(saved);
    } else {
      ok = false;
    }
  }
  pinned_ = ok;
#endif
}

ThreadPool::~ThreadPool() {
  stop_.store(true);
  generation_.fetch_add(1);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    work_cv_.notify_all();
  }
  for (std::thread &w : workers_)
    w.join();
#ifdef __linux__
  if (caller_mask_ && pthread_equal(caller_mask_->thread, pthread_self()))
    pthread_setaffinity_np(caller_mask_->thread, sizeof(caller_mask_->mask),
                           &caller_mask_->mask);
#endif
}

int ThreadPool::cpu_of(int thread) const {
  return thread >= 0 && thread < threads_ ? cpus_[size_t(thread)] : -1;
}

void ThreadPool::execute(int thread) noexcept {
  try {
    invoke_(ctx_, thread);
  } catch (...) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!error_)
      error_ = std::current_exception();
  }
}

void ThreadPool::worker_main(int thread) {
  uint64_t seen = 0;
  for (;;) {
    auto published = [&] {
      return generation_.load(std::memory_order_acquire) != seen;
    };
    if (!spin_until(spin_us_, published)) {
      std::unique_lock<std::mutex> lock(mutex_);
      // seq_cst pairs with dispatch(): either it sees this sleeper and
      // notifies under the mutex, or this load sees its generation.
      sleepers_.fetch_add(1, std::memory_order_seq_cst);
      while (generation_.load(std::memory_order_seq_cst) == seen)
        work_cv_.wait(lock);
      sleepers_.fetch_sub(1, std::memory_order_relaxed);
    }
    seen = generation_.load(std::memory_order_acquire);
    if (stop_.load(std::memory_order_acquire))
      return;
    execute(thread);
    if (pending_.fetch_sub(1, std::memory_order_seq_cst) == 1 &&
        caller_sleeping_.load(std::memory_order_seq_cst)) {
      std::lock_guard<std::mutex> lock(mutex_);
      done_cv_.notify_one();
    }
  }
}

void ThreadPool::dispatch(Invoke invoke, const void *ctx) {
  if (threads_ == 1) {
    invoke(ctx, 0);
    return;
  }
  invoke_ = invoke;
  ctx_ = ctx;
  pending_.store(threads_ - 1, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_seq_cst) > 0) {
    std::lock_guard<std::mutex> lock(mutex_);
    work_cv_.notify_all();
  }

  std::exception_ptr own;
  try {
    invoke(ctx, 0);
  } catch (...) {
    own = std::current_exception();
  }

  auto finished = [&] { return pending_.load(std::memory_order_acquire) == 0; };
  if (!spin_until(spin_us_, finished)) {
    std::unique_lock<std::mutex> lock(mutex_);
    caller_sleeping_.store(true, std::memory_order_seq_cst);
    while (pending_.load(std::memory_order_seq_cst) != 0)
      done_cv_.wait(lock);
    caller_sleeping_.store(false, std::memory_order_relaxed);
  }

  std::exception_ptr error;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    error = own ? own : error_;
    error_ = nullptr;
  }
  if (error)
    std::rethrow_exception(error);
}

} // namespace lowbit
