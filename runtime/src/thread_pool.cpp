//===- thread_pool.cpp - persistent pinned worker threads -----------------===//

#include "lowbit/thread_pool.h"
#include "lowbit/error.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <system_error>

#ifdef __linux__
#include <pthread.h>
#include <sched.h>
#endif

namespace lowbit {

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
  if (!(options.alpha >= 0.0 && options.alpha <= 1.0))
    throw Error("schedule alpha must be in [0, 1], got " +
                std::to_string(options.alpha));
  if (options.grain < 1)
    throw Error("schedule grain must be >= 1 tile, got " +
                std::to_string(options.grain));
  if (options.probe_after < 0)
    throw Error("schedule probe_after must be >= 0, got " +
                std::to_string(options.probe_after));
  if (!(options.stall_factor >= 0.0) || !(options.stall_seconds >= 0.0))
    throw Error("schedule stall_factor and stall_seconds must be >= 0");
  stall_factor_ = options.stall_factor;
  stall_seconds_ = options.stall_seconds;
  if (options.clock)
    now_ = options.clock;
  policy_ = options.policy;
  alpha_ = options.alpha;
  grain_ = options.grain;
  probe_after_ = options.probe_after;
  slots_ = std::make_unique<Slot[]>(size_t(threads_));
  chunks_.resize(size_t(threads_));
  seed_.assign(size_t(threads_), 1.0);
  cores_.resize(size_t(threads_));
  const std::vector<int> cpus = allowed_cpus();
  const int usable = cpus.empty() ? int(std::thread::hardware_concurrency())
                                  : int(cpus.size());
  const bool oversubscribed = threads_ > usable && usable > 0;
  spin_us_ = options.spin_us >= 0 ? options.spin_us : oversubscribed ? 0 : 100;
  wait_spin_us_ = options.wait_spin_us >= 0 ? options.wait_spin_us
                  : oversubscribed          ? 0
                                            : 2000;
  cpus_.assign(size_t(threads_), -1);

  workers_.reserve(size_t(threads_ - 1));
  try {
    for (int t = 1; t < threads_; ++t)
      workers_.emplace_back([this, t] { worker_main(t); });
  } catch (const std::system_error &e) {
    stop_workers();
    throw Error("cannot start thread " + std::to_string(workers_.size() + 1) +
                " of " + std::to_string(threads_) + ": " + e.what());
  }

#ifdef __linux__
  // Pinning is skipped when the process may not use one CPU per thread.
  if (options.pin && int(cpus.size()) >= threads_)
    pin_all(options, cpus);
#endif
  if (options.seed_from_os)
    seed_from_os();
}

void ThreadPool::pin_all(const Options &options, const std::vector<int> &cpus) {
#ifdef __linux__
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
#else
  (void)options;
  (void)cpus;
#endif
}

void ThreadPool::seed_from_os() {
  bool any_pinned = false;
  for (int t = 0; t < threads_; ++t) {
    cores_[size_t(t)].cpu = cpus_[size_t(t)];
    cores_[size_t(t)].capacity = read_cpu_capacity(cpus_[size_t(t)]);
    any_pinned |= cpus_[size_t(t)] >= 0;
  }
  // CPUID 0x1A describes the core that executes it: ask on every thread.
  if (any_pinned)
    run_on_all([&](int thread) {
      if (cpus_[size_t(thread)] >= 0)
        cores_[size_t(thread)].core_type = current_core_type();
    });
  seed_ = lowbit::seed_ratios(cores_, &seed_source_);
}

ThreadPool::~ThreadPool() {
  stop_workers();
#ifdef __linux__
  if (caller_mask_ && pthread_equal(caller_mask_->thread, pthread_self()))
    pthread_setaffinity_np(caller_mask_->thread, sizeof(caller_mask_->mask),
                           &caller_mask_->mask);
#endif
}

void ThreadPool::stop_workers() {
  stop_.store(true, std::memory_order_relaxed);
  ++generation_;
  for (size_t w = 0; w < workers_.size(); ++w)
    slots_[w + 1].job.store(generation_, std::memory_order_release);
  wake_sleepers();
  for (std::thread &w : workers_)
    w.join();
}

void ThreadPool::wake_sleepers() {
  // Pairs with the sleeper's seq_cst increment and job load in worker_main:
  // either it sees its job, or this load sees it asleep.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_relaxed) > 0) {
    std::lock_guard<std::mutex> lock(mutex_);
    work_cv_.notify_all();
  }
}

int ThreadPool::cpu_of(int thread) const {
  return thread >= 0 && thread < threads_ ? cpus_[size_t(thread)] : -1;
}

void ThreadPool::execute(int thread) noexcept {
  Slot &slot = slots_[size_t(thread)];
  // The times go to the slot together with done, after the job: a store to
  // the line while the caller spins on it would cost a transfer each way.
  const Clock::time_point start = now_();
  try {
    slot.invoke(slot.ctx, thread, slot.chunk);
  } catch (...) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!error_)
      error_ = std::current_exception();
    failed_.store(true, std::memory_order_relaxed);
  }
  const Clock::time_point end = now_();
  slot.start = start;
  slot.end = end;
}

void ThreadPool::worker_main(int thread) {
  Slot &slot = slots_[size_t(thread)];
  uint64_t seen = 0;
  for (;;) {
    auto published = [&] {
      return slot.job.load(std::memory_order_acquire) != seen;
    };
    if (!spin_until(spin_us_, published)) {
      std::unique_lock<std::mutex> lock(mutex_);
      // seq_cst pairs with wake_sleepers(): either it sees this sleeper and
      // notifies under the mutex, or this load sees the job.
      sleepers_.fetch_add(1, std::memory_order_seq_cst);
      while (slot.job.load(std::memory_order_seq_cst) == seen)
        work_cv_.wait(lock);
      sleepers_.fetch_sub(1, std::memory_order_relaxed);
    }
    uint64_t job = slot.job.load(std::memory_order_acquire);
    if (stop_.load(std::memory_order_relaxed))
      return;
    if (job & kWithdrawn) { // the caller finished the job without this thread
      seen = job;
      continue;
    }
    if ((job & kElastic) &&
        !slot.job.compare_exchange_strong(job, job | kStarted,
                                          std::memory_order_acquire))
      continue; // withdrawn just now (job holds what the caller stored)
    seen = job | ((job & kElastic) ? kStarted : 0);
    execute(thread);
    slot.done.store(job & ~kJobFlags, std::memory_order_release);
    // Pairs with the caller's seq_cst store of caller_sleeping_ and its
    // loads of done in dispatch(): either it sees this job done, or this
    // load sees it asleep. The fence waits for the store above to leave
    // this core, which the caller, spinning on the line, has already seen.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (caller_sleeping_.load(std::memory_order_relaxed)) {
      std::lock_guard<std::mutex> lock(mutex_);
      done_cv_.notify_one();
    }
  }
}

void ThreadPool::dispatch(Invoke invoke, const void *ctx,
                          const std::vector<TileRange> *chunks, bool elastic) {
  const uint64_t job = generation_ + 1;
  const uint64_t published = job | (elastic ? kElastic : 0);
  last_withdrawn_ = 0;
  auto takes_part = [&](int t) {
    return !chunks || !(*chunks)[size_t(t)].empty();
  };
  int participants = 0;
  for (int t = 1; t < threads_; ++t) {
    if (!takes_part(t))
      continue;
    Slot &slot = slots_[size_t(t)];
    slot.invoke = invoke;
    slot.ctx = ctx;
    slot.chunk = chunks ? (*chunks)[size_t(t)] : TileRange{};
    slot.job.store(published, std::memory_order_release);
    ++participants;
  }
  Slot &own = slots_[0];
  own.invoke = invoke;
  own.ctx = ctx;
  own.chunk = chunks ? (*chunks)[0] : TileRange{};
  const bool own_part = takes_part(0);
  if (participants == 0) { // the caller alone: no one to wake or wait for
    if (own_part)
      execute(0);
  } else {
    generation_ = job;
    // A sleeping worker is woken before the caller's own chunk; the check
    // after it covers a worker that went to sleep just now. No fence (no
    // wait for the slot stores to reach the workers) before that chunk.
    const bool woken = sleepers_.load(std::memory_order_relaxed) > 0;
    if (woken)
      wake_sleepers();
    if (own_part)
      execute(0);
    if (!woken)
      wake_sleepers();

    // Elastic: a worker that has not taken the job up yet is withdrawn (the
    // caller's part left nothing for it); one that has is waited for.
    withdrawn_.assign(size_t(threads_), 0);
    if (elastic)
      for (int t = 1; t < threads_; ++t) {
        uint64_t expected = published;
        if (slots_[size_t(t)].job.load(std::memory_order_relaxed) == expected &&
            slots_[size_t(t)].job.compare_exchange_strong(
                expected, published | kWithdrawn, std::memory_order_relaxed)) {
          withdrawn_[size_t(t)] = 1;
          ++last_withdrawn_;
        }
      }
    auto finished = [&](std::memory_order order) {
      for (int t = 1; t < threads_; ++t)
        if (takes_part(t) && !withdrawn_[size_t(t)] &&
            slots_[size_t(t)].done.load(order) != job)
          return false;
      return true;
    };
    if (!spin_until(wait_spin_us_,
                    [&] { return finished(std::memory_order_acquire); })) {
      std::unique_lock<std::mutex> lock(mutex_);
      caller_sleeping_.store(true, std::memory_order_seq_cst);
      while (!finished(std::memory_order_seq_cst))
        done_cv_.wait(lock);
      caller_sleeping_.store(false, std::memory_order_relaxed);
    }
  }

  // (The acquire loads of done ordered the workers' failed_ stores.)
  if (!failed_.load(std::memory_order_relaxed))
    return;
  std::exception_ptr error;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    error = std::exchange(error_, nullptr);
    failed_.store(false, std::memory_order_relaxed);
  }
  std::rethrow_exception(error);
}

//===----------------------------------------------------------------------===//
// Scheduled runs
//===----------------------------------------------------------------------===//

void ThreadPool::check_class(int kernel_class) const {
  if (kernel_class < 0 || size_t(kernel_class) >= tables_.size())
    throw Error("unknown kernel class " + std::to_string(kernel_class) +
                " (the pool has " + std::to_string(tables_.size()) + ")");
}

int ThreadPool::kernel_class(const std::string &key) {
  if (key.empty())
    throw Error("a kernel class needs a non-empty key");
  for (size_t i = 0; i < tables_.size(); ++i)
    if (tables_[i].key == key)
      return int(i);
  RatioTable table;
  table.key = key;
  table.ratios = seed_;
  table.idle_runs.assign(size_t(threads_), 0);
  tables_.push_back(std::move(table));
  return int(tables_.size() - 1);
}

std::vector<std::string> ThreadPool::kernel_classes() const {
  std::vector<std::string> keys;
  for (const RatioTable &t : tables_)
    keys.push_back(t.key);
  return keys;
}

const std::vector<double> &ThreadPool::ratios(int kernel_class) const {
  check_class(kernel_class);
  return tables_[size_t(kernel_class)].ratios;
}

int64_t ThreadPool::updates(int kernel_class) const {
  check_class(kernel_class);
  return tables_[size_t(kernel_class)].updates;
}

int64_t ThreadPool::runs(int kernel_class) const {
  check_class(kernel_class);
  return tables_[size_t(kernel_class)].runs;
}

int64_t ThreadPool::stalls(int kernel_class) const {
  check_class(kernel_class);
  return tables_[size_t(kernel_class)].stalls;
}

void ThreadPool::set_ratios(int kernel_class,
                            const std::vector<double> &ratios) {
  check_class(kernel_class);
  if (int(ratios.size()) != threads_)
    throw Error("set_ratios: " + std::to_string(ratios.size()) +
                " ratios for " + std::to_string(threads_) + " threads");
  double sum = 0.0;
  for (double r : ratios) {
    if (!std::isfinite(r) || r < 0.0)
      throw Error("set_ratios: ratios must be finite and >= 0");
    sum += r;
  }
  if (!(sum > 0.0))
    throw Error("set_ratios: the ratios sum to 0");
  tables_[size_t(kernel_class)].ratios = ratios;
}

void ThreadPool::set_alpha(double alpha) {
  if (!(alpha >= 0.0 && alpha <= 1.0))
    throw Error("schedule alpha must be in [0, 1], got " +
                std::to_string(alpha));
  alpha_ = alpha;
}

const std::vector<TileRange> &ThreadPool::begin_scheduled(int kernel_class,
                                                          int64_t num_tiles) {
  check_class(kernel_class);
  num_tiles = std::max<int64_t>(num_tiles, 0);
  last_num_tiles_ = num_tiles;
  if (policy_ == SchedulePolicy::Static || threads_ == 1) {
    for (int t = 0; t < threads_; ++t)
      chunks_[size_t(t)] = split_tiles(num_tiles, threads_, t);
    return chunks_;
  }
  RatioTable &table = tables_[size_t(kernel_class)];
  split_tiles_weighted(num_tiles, table.ratios, grain_, chunks_);
  // Probe a thread that has been left out for a while: one grain, taken from
  // the largest chunk (chunks stay contiguous and in thread order).
  const int64_t units = num_tiles / grain_ + (num_tiles % grain_ ? 1 : 0);
  if (probe_after_ > 0 && units >= threads_) {
    bool probe = false;
    for (int t = 0; t < threads_; ++t)
      probe |= chunks_[size_t(t)].empty() &&
               table.idle_runs[size_t(t)] >= probe_after_;
    if (probe) {
      std::vector<int64_t> count(static_cast<size_t>(threads_));
      for (int t = 0; t < threads_; ++t) {
        const TileRange r = chunks_[size_t(t)];
        count[size_t(t)] =
            r.empty() ? 0 : (r.end + grain_ - 1) / grain_ - r.begin / grain_;
      }
      for (int t = 0; t < threads_; ++t) {
        if (count[size_t(t)] != 0 || table.idle_runs[size_t(t)] < probe_after_)
          continue;
        const size_t largest = size_t(
            std::max_element(count.begin(), count.end()) - count.begin());
        if (count[largest] < 2)
          break;
        --count[largest];
        count[size_t(t)] = 1;
      }
      int64_t unit = 0;
      for (int t = 0; t < threads_; ++t) {
        const int64_t begin = std::min(unit * grain_, num_tiles);
        unit += count[size_t(t)];
        chunks_[size_t(t)] = {begin, std::min(unit * grain_, num_tiles)};
      }
    }
  }
  return chunks_;
}

void ThreadPool::end_scheduled(int kernel_class, Clock::time_point published) {
  last_.wall_seconds =
      std::chrono::duration<double>(now_() - published).count();
  last_.kernel_class = kernel_class;
  last_.policy = policy_;
  last_.chunks = chunks_;
  last_.start_seconds.assign(size_t(threads_), 0.0);
  last_.seconds.assign(size_t(threads_), 0.0);
  work_scratch_.assign(size_t(threads_), 0);
  for (int t = 0; t < threads_; ++t) {
    const TileRange r = chunks_[size_t(t)];
    if (r.empty())
      continue;
    const Slot &slot = slots_[size_t(t)];
    last_.start_seconds[size_t(t)] =
        std::chrono::duration<double>(slot.start - published).count();
    // A clock tick is the least a thread with work can have taken.
    last_.seconds[size_t(t)] = std::max(
        std::chrono::duration<double>(slot.end - published).count(), 1e-9);
    work_scratch_[size_t(t)] = r.size();
  }
  last_.updated = false;
  last_.stalled = false;
  if (policy_ != SchedulePolicy::Dynamic || threads_ == 1)
    return;
  RatioTable &table = tables_[size_t(kernel_class)];
  ++table.runs;

  int participants = 0;
  for (int t = 0; t < threads_; ++t) {
    const bool idle = chunks_[size_t(t)].empty();
    participants += idle ? 0 : 1;
    int &runs = table.idle_runs[size_t(t)];
    if (idle && last_num_tiles_ >= int64_t(threads_) * grain_)
      runs = runs < (1 << 30) ? runs + 1 : runs;
    else if (!idle)
      runs = 0;
  }
  if (participants < 2)
    return;
  // A preemption is not a speed (see Options::stall_factor).
  if (stall_factor_ > 0.0) {
    for (int t = 0; t < threads_ && !last_.stalled; ++t) {
      if (work_scratch_[size_t(t)] == 0)
        continue;
      double others = 0.0;
      for (int j = 0; j < threads_; ++j)
        if (j != t && work_scratch_[size_t(j)] > 0)
          others = std::max(others, last_.seconds[size_t(j)]);
      const double mine = last_.seconds[size_t(t)];
      last_.stalled =
          mine > stall_factor_ * others && mine - others > stall_seconds_;
    }
    const bool previous = table.last_stalled;
    table.last_stalled = last_.stalled;
    if (last_.stalled) {
      ++table.stalls;
      if (!previous)
        return;
    }
  }
  update_ratios(table.ratios, work_scratch_, last_.seconds, alpha_);
  ++table.updates;
  last_.updated = true;
}

} // namespace lowbit
