//===- BenchTiming.cpp - timing kernels on a noisy host -------------------===//

#include "BenchTiming.h"

#include "lowbit/error.h"
#include "lowbit/run_kernel.h"

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

#include <sched.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace lowbit::cli {

//===----------------------------------------------------------------------===//
// Kernel timing
//===----------------------------------------------------------------------===//

int64_t cold_copy_count(int64_t bytes_per_matrix, int64_t min_total) {
  if (bytes_per_matrix <= 0)
    return 1;
  return std::max<int64_t>(1, (min_total + bytes_per_matrix - 1) /
                                  bytes_per_matrix);
}

// Effective bandwidth, GOPS and the medians of the paired per-rep ratios.
static void summarize(KernelTiming &result, const UpconvertWeights &W,
                      const PreparedActivations &A) {
  const double ops = 2.0 * double(W.M) * double(W.K) * double(A.N);
  const double ns = result.timing.us * 1e3;
  result.gbps = double(result.packed_bytes) / ns;
  result.gops = ops / ns;
  std::vector<double> ratios, gops_ratios;
  for (size_t r = 0; r < result.timing.rep_us.size(); ++r) {
    const double rep_ns = result.timing.rep_us[r] * 1e3;
    if (r < result.probe_gbps.size())
      ratios.push_back(double(result.packed_bytes) / rep_ns /
                       result.probe_gbps[r]);
    if (r < result.peak_gops.size())
      gops_ratios.push_back(ops / rep_ns / result.peak_gops[r]);
  }
  result.roofline_gbps = median(result.probe_gbps);
  result.ratio = median(ratios);
  result.peak_gops_median = median(result.peak_gops);
  result.gops_ratio = median(gops_ratios);
}

KernelTiming time_kernel(lowbit_kernel_fn kernel, const UpconvertWeights &W,
                         const PreparedActivations &A, ThreadPool &pool,
                         bool cold, int reps, const Pairing &pairing) {
  const Contender only{kernel, &W, &A, /*kernel_class=*/-1, pool.policy()};
  return time_contenders({only}, pool, cold, reps, pairing,
                         /*trace_limit=*/0)
      .front();
}

/// One call of a contender's kernel on weights `W` (the contender's or a
/// cold copy of them).
static void runContender(const Contender &c, const UpconvertWeights &W,
                         const PreparedActivations &A, float *y,
                         ThreadPool &pool) {
  if (c.any_kernel)
    run_any_kernel(c.any_kernel, W, A, y, pool, c.kernel_class);
  else
    run_kernel(c.kernel, W, A, y, W.M, pool, c.kernel_class);
}

std::vector<KernelTiming>
time_contenders(const std::vector<Contender> &contenders, ThreadPool &pool,
                bool cold, int reps, const Pairing &pairing,
                size_t trace_limit) {
  check_reps(reps);
  if (contenders.empty())
    throw Error("time_contenders: nothing to time");
  const SchedulePolicy saved = pool.policy();
  const size_t count = contenders.size();
  std::vector<KernelTiming> results(count);
  // One set of cold copies per distinct matrix; copy_set[c] is contender
  // c's.
  std::vector<std::vector<UpconvertWeights>> copy_sets;
  std::vector<size_t> copy_set(count);
  for (size_t c = 0; c < count; ++c) {
    size_t same = c;
    for (size_t d = 0; d < c; ++d)
      if (contenders[d].W == contenders[c].W) {
        same = d;
        break;
      }
    if (same != c) {
      copy_set[c] = copy_set[same];
      continue;
    }
    copy_set[c] = copy_sets.size();
    copy_sets.emplace_back();
    if (cold) {
      const int64_t copies = cold_copy_count(contenders[c].W->packed_bytes());
      copy_sets.back().reserve(size_t(copies));
      for (int64_t i = 0; i < copies; ++i) // deep copies: distinct buffers
        copy_sets.back().push_back(*contenders[c].W);
    }
  }
  const int threads = pool.size();
  int64_t most_outputs = 0;
  for (const Contender &c : contenders)
    most_outputs = std::max(most_outputs, c.A->N * c.W->M);
  std::vector<float> y(static_cast<size_t>(most_outputs));
  KernelTiming *current = nullptr;
  bool timed = false;
  std::vector<std::vector<double>> tiles(count), seconds(count);
  std::vector<int64_t> timed_calls(count, 0), calls_per_rep(count, 1);
  std::vector<double> job_seconds(count, 0.0);
  size_t p = 0; // the contender being run
  std::vector<uint64_t> read_sums(size_t(pool.size()) * 8); // a line each
  auto call = [&](int64_t i) {
    const Contender &c = contenders[p];
    const UpconvertWeights &W = cold ? copy_sets[copy_set[p]][size_t(i)] : *c.W;
    if (c.read_probe)
      pool.run_scheduled(
          c.kernel_class, W.num_tiles(), [&](int64_t begin, int64_t end, int t) {
            uint64_t sum = 0;
            for (auto [data, bytes] :
                 {std::pair(W.codes.data(), W.codes.bytes()),
                  std::pair(reinterpret_cast<const uint8_t *>(W.scales.data()),
                            W.scales.bytes()),
                  std::pair(reinterpret_cast<const uint8_t *>(W.zeros.data()),
                            W.zeros.bytes())}) {
              const ReadSlice slice =
                  read_slice(int64_t(bytes), W.num_tiles(), begin, end);
              if (slice.bytes > 0)
                sum ^= c.read_probe->read(data + slice.offset,
                                          size_t(slice.bytes));
            }
            read_sums[size_t(t) * 8] ^= sum;
          });
    else
      runContender(c, W, *c.A, y.data(), pool);
    const ThreadPool::JobStats &job = pool.last_job();
    if (timed) {
      for (int t = 0; t < threads; ++t) {
        tiles[p][size_t(t)] += double(job.chunks[size_t(t)].size());
        seconds[p][size_t(t)] += job.seconds[size_t(t)];
      }
      job_seconds[p] += job.wall_seconds;
      ++timed_calls[p];
    }
    if (c.policy == SchedulePolicy::Dynamic && c.kernel_class >= 0 &&
        current->ratio_trace.size() < trace_limit)
      current->ratio_trace.push_back(pool.ratios(c.kernel_class));
  };
  try {
    for (p = 0; p < count; ++p) {
      current = &results[p];
      current->policy = schedule_policy_name(contenders[p].policy);
      current->packed_bytes = contenders[p].W->packed_bytes();
      current->timing.cold = cold;
      current->timing.copies =
          cold ? int64_t(copy_sets[copy_set[p]].size()) : 1;
      if (pairing.peak)
        current->peak_isa = pairing.peak->isa();
      tiles[p].assign(size_t(threads), 0.0);
      seconds[p].assign(size_t(threads), 0.0);
      pool.set_policy(contenders[p].policy);
      if (cold) {
        calls_per_rep[p] = current->timing.copies;
        for (int64_t i = 0; i < calls_per_rep[p]; ++i) // warm-up pass
          call(i);
      } else {
        call(0);
        const BenchClock::time_point start = BenchClock::now();
        call(0);
        const double one = std::max(seconds_since(start), 1e-7);
        calls_per_rep[p] =
            std::clamp<int64_t>(int64_t(std::ceil(0.02 / one)), 1, 1000000);
      }
    }
    timed = true;
    for (int r = 0; r < reps; ++r) {
      for (p = 0; p < count; ++p) {
        current = &results[p];
        pool.set_policy(contenders[p].policy);
        if (pairing.probe) {
          current->probe_gbps.push_back(pairing.probe->pass());
          current->probe_handoff_us.push_back(pairing.probe->handoff_us());
        }
        if (pairing.peak)
          current->peak_gops.push_back(pairing.peak->pass());
        if (!cold && (pairing.probe || pairing.peak)) // it evicted W
          runContender(contenders[p], *contenders[p].W, *contenders[p].A,
                       y.data(), pool);
        const BenchClock::time_point start = BenchClock::now();
        for (int64_t i = 0; i < calls_per_rep[p]; ++i)
          call(cold ? i : 0);
        current->timing.rep_us.push_back(seconds_since(start) * 1e6 /
                                         double(calls_per_rep[p]));
      }
    }
  } catch (...) {
    pool.set_policy(saved);
    throw;
  }
  pool.set_policy(saved);
  for (uint64_t v : read_sums)
    keep_result(v);
  for (p = 0; p < count; ++p) {
    KernelTiming &result = results[p];
    result.timing.calls_per_rep = calls_per_rep[p];
    result.timing.us = median(result.timing.rep_us);
    result.thread_tiles.resize(size_t(threads));
    result.thread_us.resize(size_t(threads));
    result.job_us =
        job_seconds[p] * 1e6 / double(std::max<int64_t>(timed_calls[p], 1));
    for (int t = 0; t < threads; ++t) {
      const double n = double(std::max<int64_t>(timed_calls[p], 1));
      result.thread_tiles[size_t(t)] = tiles[p][size_t(t)] / n;
      result.thread_us[size_t(t)] = seconds[p][size_t(t)] * 1e6 / n;
    }
    if (contenders[p].policy == SchedulePolicy::Dynamic &&
        contenders[p].kernel_class >= 0) {
      result.ratios = pool.ratios(contenders[p].kernel_class);
      result.ratio_updates = pool.updates(contenders[p].kernel_class);
    }
    summarize(result, *contenders[p].W, *contenders[p].A);
  }
  return results;
}

std::vector<KernelTiming>
time_kernel_policies(lowbit_kernel_fn kernel, const UpconvertWeights &W,
                     const PreparedActivations &A, ThreadPool &pool,
                     const std::vector<SchedulePolicy> &policies,
                     int kernel_class, bool cold, int reps,
                     const Pairing &pairing, size_t trace_limit) {
  if (policies.empty())
    throw Error("time_kernel_policies: no schedule policy");
  std::vector<Contender> contenders;
  for (SchedulePolicy policy : policies)
    contenders.push_back({kernel, &W, &A, kernel_class, policy});
  return time_contenders(contenders, pool, cold, reps, pairing, trace_limit);
}

//===----------------------------------------------------------------------===//
// The slow core
//===----------------------------------------------------------------------===//

namespace {
lowbit_kernel_fn slow_inner = nullptr;
int slow_cpu = -1;
double slow_factor = 1.0;

extern "C" void slow_core_trampoline(
    const uint8_t *codes, const uint16_t *scales, const uint16_t *zeros,
    const int8_t *xq, const float *x_scales, const int32_t *x_sums, float *y,
    int64_t n, int64_t tile_begin, int64_t tile_end, float w_scale) {
  const bool slow = sched_getcpu() == slow_cpu;
  const BenchClock::time_point start = BenchClock::now();
  slow_inner(codes, scales, zeros, xq, x_scales, x_sums, y, n, tile_begin,
             tile_end, w_scale);
  if (!slow)
    return;
  const BenchClock::time_point end = BenchClock::now();
  const BenchClock::time_point until =
      start +
      std::chrono::duration_cast<BenchClock::duration>((end - start) * slow_factor);
  while (BenchClock::now() < until)
    asm volatile("" ::: "memory");
}
} // namespace

lowbit_kernel_fn slow_core_kernel(lowbit_kernel_fn inner, int cpu,
                                  double factor) {
  if (!std::isfinite(factor))
    throw Error("--slow-core: the factor must be finite");
  if (cpu < 0 || factor <= 1.0)
    return inner;
  slow_inner = inner;
  slow_cpu = cpu;
  slow_factor = factor;
  return slow_core_trampoline;
}

//===----------------------------------------------------------------------===//
// The loaded core
//===----------------------------------------------------------------------===//

bool cpu_allowed(int cpu) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  return cpu >= 0 && cpu < CPU_SETSIZE &&
         sched_getaffinity(0, sizeof(allowed), &allowed) == 0 &&
         CPU_ISSET(cpu, &allowed);
}

CoreLoad::CoreLoad(int cpu) : cpu_(cpu) {
  // (The calling thread may already be pinned by a pool, so its mask says
  // nothing; the child reports a CPU it may not use by exiting at once.)
  if (cpu < 0 || cpu >= CPU_SETSIZE)
    throw Error("--load-core: no CPU " + std::to_string(cpu));
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0)
    throw Error("--load-core: cannot start the load process");
  if (pid == 0) {
    // The child: only async-signal-safe calls, then spin on registers.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
      _exit(0);
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (sched_setaffinity(0, sizeof(one), &one) != 0)
      _exit(1);
    uint64_t x = 1;
    for (;;) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      asm volatile("" : "+r"(x));
    }
  }
  pid_ = pid;
  started_ =
      std::chrono::duration<double>(BenchClock::now().time_since_epoch()).count();
  // Let it reach its CPU before anything is measured.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) != 0) {
    pid_ = -1;
    throw Error("--load-core: the load process cannot run on CPU " +
                std::to_string(cpu));
  }
}

CoreLoad::~CoreLoad() {
  if (pid_ <= 0)
    return;
  kill(pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
}

double CoreLoad::cpu_seconds() const {
  std::ifstream in("/proc/" + std::to_string(pid_) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  // Fields after the parenthesised command name: state is field 3, utime
  // and stime are fields 14 and 15.
  const size_t close = text.rfind(')');
  if (close == std::string::npos)
    return -1.0;
  std::istringstream rest(text.substr(close + 1));
  std::string field;
  double utime = 0, stime = 0;
  for (int f = 3; f <= 15 && rest >> field; ++f) {
    if (f == 14)
      utime = std::atof(field.c_str());
    if (f == 15)
      stime = std::atof(field.c_str());
  }
  const long ticks = sysconf(_SC_CLK_TCK);
  return ticks > 0 ? (utime + stime) / double(ticks) : -1.0;
}

double CoreLoad::wall_seconds() const {
  return std::chrono::duration<double>(BenchClock::now().time_since_epoch())
             .count() -
         started_;
}
} // namespace lowbit::cli
