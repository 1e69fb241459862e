//===- Bench.cpp - honest roofline measurements ---------------------------===//

#include "Bench.h"

#include "lowbit/error.h"
#include "lowbit/run_kernel.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <thread>

#include <csignal>
#include <cstdlib>
#include <iterator>
#include <sstream>

#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace lowbit::cli {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Results of the measurement loops end here so that no loop is optimised
// away.
volatile uint64_t sink;

void check_reps(int reps) {
  if (reps < kMinReps)
    throw Error("benchmarks need at least " + std::to_string(kMinReps) +
                " timed reps, got " + std::to_string(reps));
}

//===----------------------------------------------------------------------===//
// Read loops: 8 independent accumulators of the widest loads.
//===----------------------------------------------------------------------===//

uint64_t read_scalar(const uint8_t *p, size_t bytes, bool) {
  const uint64_t *q = reinterpret_cast<const uint64_t *>(p);
  uint64_t a[8] = {};
  for (size_t i = 0; i < bytes / 8; i += 8)
    for (int j = 0; j < 8; ++j)
      a[j] += q[i + size_t(j)];
  return a[0] ^ a[1] ^ a[2] ^ a[3] ^ a[4] ^ a[5] ^ a[6] ^ a[7];
}

#if defined(__x86_64__)
// Optional software prefetch 4 KiB ahead, as the generated kernels do. On
// this VM neither way always wins: with the host busy, plain loads read 44
// GB/s with 2 threads while prefetching loads (and a prefetching kernel on
// distinct cold weights) streamed 51-53 GB/s; with the host quiet, plain
// loads read 84 GB/s and prefetching ones 76-79. So every probe pass times
// both and keeps the faster: the probe must measure the real limit.
constexpr size_t kProbePrefetch = 4096;
inline void prefetch_chunk(const uint8_t *p, size_t i, size_t bytes,
                           size_t chunk) {
  if (i + kProbePrefetch + chunk <= bytes)
    for (size_t line = 0; line < chunk; line += 64)
      _mm_prefetch(
          reinterpret_cast<const char *>(p + i + kProbePrefetch + line),
          _MM_HINT_T0);
}

__attribute__((target("avx2"))) uint64_t
read_avx2(const uint8_t *p, size_t bytes, bool prefetch) {
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0, a4 = a0,
          a5 = a0, a6 = a0, a7 = a0;
  for (size_t i = 0; i < bytes; i += 256) {
    if (prefetch)
      prefetch_chunk(p, i, bytes, 256);
    const __m256i *v = reinterpret_cast<const __m256i *>(p + i);
    a0 = _mm256_add_epi64(a0, _mm256_load_si256(v + 0));
    a1 = _mm256_add_epi64(a1, _mm256_load_si256(v + 1));
    a2 = _mm256_add_epi64(a2, _mm256_load_si256(v + 2));
    a3 = _mm256_add_epi64(a3, _mm256_load_si256(v + 3));
    a4 = _mm256_add_epi64(a4, _mm256_load_si256(v + 4));
    a5 = _mm256_add_epi64(a5, _mm256_load_si256(v + 5));
    a6 = _mm256_add_epi64(a6, _mm256_load_si256(v + 6));
    a7 = _mm256_add_epi64(a7, _mm256_load_si256(v + 7));
  }
  const __m256i s = _mm256_add_epi64(
      _mm256_add_epi64(_mm256_add_epi64(a0, a1), _mm256_add_epi64(a2, a3)),
      _mm256_add_epi64(_mm256_add_epi64(a4, a5), _mm256_add_epi64(a6, a7)));
  return uint64_t(_mm256_extract_epi64(s, 0) ^ _mm256_extract_epi64(s, 1) ^
                  _mm256_extract_epi64(s, 2) ^ _mm256_extract_epi64(s, 3));
}

__attribute__((target("avx512f"))) uint64_t
read_avx512(const uint8_t *p, size_t bytes, bool prefetch) {
  __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0, a4 = a0,
          a5 = a0, a6 = a0, a7 = a0;
  for (size_t i = 0; i < bytes; i += 512) {
    if (prefetch)
      prefetch_chunk(p, i, bytes, 512);
    const uint8_t *v = p + i;
    a0 = _mm512_add_epi64(a0, _mm512_load_si512(v + 0));
    a1 = _mm512_add_epi64(a1, _mm512_load_si512(v + 64));
    a2 = _mm512_add_epi64(a2, _mm512_load_si512(v + 128));
    a3 = _mm512_add_epi64(a3, _mm512_load_si512(v + 192));
    a4 = _mm512_add_epi64(a4, _mm512_load_si512(v + 256));
    a5 = _mm512_add_epi64(a5, _mm512_load_si512(v + 320));
    a6 = _mm512_add_epi64(a6, _mm512_load_si512(v + 384));
    a7 = _mm512_add_epi64(a7, _mm512_load_si512(v + 448));
  }
  const __m512i s = _mm512_add_epi64(
      _mm512_add_epi64(_mm512_add_epi64(a0, a1), _mm512_add_epi64(a2, a3)),
      _mm512_add_epi64(_mm512_add_epi64(a4, a5), _mm512_add_epi64(a6, a7)));
  alignas(64) uint64_t lanes[8];
  _mm512_store_si512(lanes, s);
  return lanes[0] ^ lanes[1] ^ lanes[2] ^ lanes[3] ^ lanes[4] ^ lanes[5] ^
         lanes[6] ^ lanes[7];
}
#endif

using ReadFn = uint64_t (*)(const uint8_t *, size_t, bool);

ReadFn read_function(std::string &loads) {
  const CpuFeatures &cpu = host_cpu_features();
  if (loads == "auto")
    loads = cpu.avx512f ? "avx512" : cpu.avx2 ? "avx2" : "scalar";
  if (loads == "scalar")
    return read_scalar;
#if defined(__x86_64__)
  if (loads == "avx512" && cpu.avx512f)
    return read_avx512;
  if (loads == "avx2" && cpu.avx2)
    return read_avx2;
#endif
  if (loads == "avx512" || loads == "avx2")
    throw Error("this host cannot run " + loads + " loads");
  throw Error("unknown load width '" + loads +
              "' (expected auto, avx512, avx2 or scalar)");
}

//===----------------------------------------------------------------------===//
// int8 peak loops: independent accumulator chains. Each chain starts from a
// different value (identical chains could be merged by the compiler) and
// the inputs pass through an empty asm so they are opaque.
//===----------------------------------------------------------------------===//

#if defined(__x86_64__)
#define LOWBIT_OPAQUE(v) asm volatile("" : "+v"(v))

// vpdpbusd zmm: 16 chains of 64 MACs.
__attribute__((target("avx512f,avx512bw,avx512vnni"))) uint64_t
peak_avx512vnni(int64_t iterations) {
  __m512i a = _mm512_set1_epi8(3), b = _mm512_set1_epi8(-2);
  LOWBIT_OPAQUE(a);
  LOWBIT_OPAQUE(b);
  __m512i acc[16];
  for (int j = 0; j < 16; ++j)
    acc[j] = _mm512_set1_epi32(j);
  for (int64_t i = 0; i < iterations; ++i) {
#pragma GCC unroll 16
    for (int j = 0; j < 16; ++j)
      acc[j] = _mm512_dpbusd_epi32(acc[j], a, b);
  }
  __m512i s = acc[0];
  for (int j = 1; j < 16; ++j)
    s = _mm512_add_epi32(s, acc[j]);
  alignas(64) uint32_t lanes[16];
  _mm512_store_si512(lanes, s);
  return uint64_t(lanes[0]) + lanes[5] + lanes[10] + lanes[15];
}

// vpdpbusd ymm (VEX, 16 registers): 12 chains of 32 MACs.
__attribute__((target("avx2,avxvnni"))) uint64_t
peak_avxvnni(int64_t iterations) {
  __m256i a = _mm256_set1_epi8(3), b = _mm256_set1_epi8(-2);
  LOWBIT_OPAQUE(a);
  LOWBIT_OPAQUE(b);
  __m256i acc[12];
  for (int j = 0; j < 12; ++j)
    acc[j] = _mm256_set1_epi32(j);
  for (int64_t i = 0; i < iterations; ++i) {
#pragma GCC unroll 12
    for (int j = 0; j < 12; ++j)
      acc[j] = _mm256_dpbusd_avx_epi32(acc[j], a, b);
  }
  __m256i s = acc[0];
  for (int j = 1; j < 12; ++j)
    s = _mm256_add_epi32(s, acc[j]);
  return uint64_t(_mm256_extract_epi32(s, 0) + _mm256_extract_epi32(s, 5));
}

// AVX2 has no int8 dot product: vpmaddubsw, vpmaddwd (by ones), vpaddd per
// 32 MACs. 8 chains from 2 x 4 distinct operand pairs, re-made opaque every
// iteration so the products cannot be hoisted or shared.
__attribute__((target("avx2"))) uint64_t peak_avx2(int64_t iterations) {
  __m256i a0 = _mm256_set1_epi8(3), a1 = _mm256_set1_epi8(5);
  __m256i b0 = _mm256_set1_epi8(-2), b1 = _mm256_set1_epi8(7),
          b2 = _mm256_set1_epi8(-9), b3 = _mm256_set1_epi8(11);
  __m256i ones = _mm256_set1_epi16(1);
  LOWBIT_OPAQUE(b0);
  LOWBIT_OPAQUE(b1);
  LOWBIT_OPAQUE(b2);
  LOWBIT_OPAQUE(b3);
  LOWBIT_OPAQUE(ones);
  __m256i acc[8];
  for (int j = 0; j < 8; ++j)
    acc[j] = _mm256_set1_epi32(j);
#define LOWBIT_STEP(j, a, b)                                                   \
  acc[j] = _mm256_add_epi32(                                                   \
      acc[j], _mm256_madd_epi16(_mm256_maddubs_epi16(a, b), ones))
  for (int64_t i = 0; i < iterations; ++i) {
    LOWBIT_OPAQUE(a0);
    LOWBIT_OPAQUE(a1);
    LOWBIT_STEP(0, a0, b0);
    LOWBIT_STEP(1, a0, b1);
    LOWBIT_STEP(2, a0, b2);
    LOWBIT_STEP(3, a0, b3);
    LOWBIT_STEP(4, a1, b0);
    LOWBIT_STEP(5, a1, b1);
    LOWBIT_STEP(6, a1, b2);
    LOWBIT_STEP(7, a1, b3);
  }
#undef LOWBIT_STEP
  __m256i s = acc[0];
  for (int j = 1; j < 8; ++j)
    s = _mm256_add_epi32(s, acc[j]);
  return uint64_t(_mm256_extract_epi32(s, 0) + _mm256_extract_epi32(s, 5));
}
#undef LOWBIT_OPAQUE
#endif

struct PeakLoop {
  uint64_t (*run)(int64_t iterations) = nullptr;
  double macs_per_iteration = 0;
};

PeakLoop peak_loop(const std::string &isa) {
  const CpuFeatures &cpu = host_cpu_features();
#if defined(__x86_64__)
  if (isa == "avx512vnni" && cpu.avx512f && cpu.avx512bw && cpu.avx512vnni)
    return {peak_avx512vnni, 16 * 64};
  if (isa == "avxvnni" && cpu.avxvnni && cpu.avx2)
    return {peak_avxvnni, 12 * 32};
  if (isa == "avx2" && cpu.avx2)
    return {peak_avx2, 8 * 32};
#endif
  if (isa == "avx512vnni" || isa == "avxvnni" || isa == "avx2")
    throw Error("this host cannot run the " + isa + " int8 peak loop");
  throw Error("unknown int8 peak ISA '" + isa +
              "' (expected avx512vnni, avxvnni or avx2)");
}

} // namespace

double median(std::vector<double> values) {
  if (values.empty())
    return 0.0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

//===----------------------------------------------------------------------===//
// Read bandwidth
//===----------------------------------------------------------------------===//

constexpr int64_t kPage = 4096;

ReadProbe::ReadProbe(ThreadPool &pool, int64_t bytes, const std::string &loads)
    : pool_(pool), loads_(loads) {
  if (bytes < (int64_t(1) << 20))
    throw Error("the read-bandwidth probe needs at least 1 MiB, got " +
                std::to_string(bytes) + " bytes");
  read_ = read_function(loads_);
  bytes_ = bytes / kPage * kPage;
  // Anonymous memory that no one has touched yet, so that the probe decides
  // which thread writes each page first.
  void *p = mmap(nullptr, size_t(bytes_), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    throw Error("cannot map a " + std::to_string(bytes_ >> 20) +
                " MiB probe buffer");
  data_ = static_cast<uint8_t *>(p);
  sums_.assign(size_t(pool_.size()), 0);
  // Thread t owns the same whole pages in every pass: it writes them first
  // (non-zero, distinct values) and is the only one to read them.
  const int64_t pages = bytes_ / kPage;
  pool_.run(pages, [&](int64_t first, int64_t end, int) {
    uint64_t *words = reinterpret_cast<uint64_t *>(data_ + first * kPage);
    const uint64_t base = uint64_t(first * kPage / 8);
    const size_t count = size_t((end - first) * kPage / 8);
    for (size_t i = 0; i < count; ++i)
      words[i] = ((base + i) * 0x9E3779B97F4A7C15ull) | 1u;
  });
  pass(); // warm-up
}

ReadProbe::~ReadProbe() { munmap(data_, size_t(bytes_)); }

double ReadProbe::pass() {
  double best = 0.0;
  for (bool prefetch : {false, true}) {
    const Clock::time_point start = Clock::now();
    pool_.run(bytes_ / kPage, [&](int64_t first, int64_t end, int thread) {
      sums_[size_t(thread)] =
          read_(data_ + first * kPage, size_t((end - first) * kPage), prefetch);
    });
    best = std::max(best, double(bytes_) / seconds_since(start) / 1e9);
    for (uint64_t v : sums_)
      sink = sink ^ v;
  }
  handoff_us_ = 0.0;
  if (pool_.size() > 1) {
    std::vector<double> us;
    for (int i = 0; i < 31; ++i) {
      const Clock::time_point start = Clock::now();
      pool_.run_on_all([](int) {});
      us.push_back(seconds_since(start) * 1e6);
    }
    handoff_us_ = median(us);
  }
  return best;
}

BandwidthResult ReadProbe::measure(int reps) {
  check_reps(reps);
  BandwidthResult result;
  result.loads = loads_;
  result.bytes = bytes_;
  result.threads = pool_.size();
  for (int r = 0; r < reps; ++r) {
    result.rep_gbps.push_back(pass());
    result.rep_handoff_us.push_back(handoff_us_);
  }
  result.gbps = median(result.rep_gbps);
  result.handoff_us = median(result.rep_handoff_us);
  return result;
}

uint64_t ReadProbe::read(const uint8_t *data, size_t bytes) const {
  return read_(data, bytes, /*prefetch=*/true);
}

ReadSlice read_slice(int64_t bytes, int64_t tiles, int64_t begin,
                     int64_t end) {
  auto at = [&](int64_t tile) {
    // bytes * tile / tiles without overflow for any array this host holds.
    const int64_t share = int64_t((__int128)bytes * tile / tiles);
    return share / kReadGrain * kReadGrain;
  };
  if (tiles <= 0 || begin >= end)
    return {};
  return {at(begin), at(end) - at(begin)};
}

BandwidthResult measure_read_bandwidth(ThreadPool &pool, int64_t bytes,
                                       int reps, const std::string &loads) {
  check_reps(reps);
  ReadProbe probe(pool, bytes, loads);
  return probe.measure(reps);
}

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
        const Clock::time_point start = Clock::now();
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
        const Clock::time_point start = Clock::now();
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
    sink = sink ^ v;
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
  const Clock::time_point start = Clock::now();
  slow_inner(codes, scales, zeros, xq, x_scales, x_sums, y, n, tile_begin,
             tile_end, w_scale);
  if (!slow)
    return;
  const Clock::time_point end = Clock::now();
  const Clock::time_point until =
      start +
      std::chrono::duration_cast<Clock::duration>((end - start) * slow_factor);
  while (Clock::now() < until)
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
      std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
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
  return std::chrono::duration<double>(Clock::now().time_since_epoch())
             .count() -
         started_;
}

//===----------------------------------------------------------------------===//
// int8 peak
//===----------------------------------------------------------------------===//

std::string peak_isa_for(Target target) {
  switch (target) {
  case Target::X86Avx512Vnni:
    return "avx512vnni";
  case Target::X86AvxVnni:
    return "avxvnni";
  case Target::X86Avx2:
    return "avx2";
  case Target::Native:
    return peak_isa_for(native_target());
  default:
    return "";
  }
}

Int8Peak::Int8Peak(ThreadPool &pool, const std::string &isa,
                   double seconds_per_pass)
    : pool_(pool), isa_(isa) {
  const PeakLoop loop = peak_loop(isa);
  run_ = loop.run;
  macs_per_iteration_ = loop.macs_per_iteration;
  sums_.assign(size_t(pool_.size()), 0);
  // Calibrate on the calling thread.
  int64_t iterations = 1 << 12;
  for (;;) {
    const Clock::time_point start = Clock::now();
    sink = sink ^ run_(iterations);
    const double s = seconds_since(start);
    if (s > 0.002) {
      iterations_ = std::max<int64_t>(
          1, int64_t(double(iterations) * seconds_per_pass / s));
      break;
    }
    iterations *= 4;
  }
  pass(); // warm-up (and the frequency settles)
}

double Int8Peak::pass() {
  const Clock::time_point start = Clock::now();
  pool_.run_on_all(
      [&](int thread) { sums_[size_t(thread)] = run_(iterations_); });
  const double s = seconds_since(start);
  for (uint64_t v : sums_)
    sink = sink ^ v;
  return 2.0 * macs_per_iteration_ * double(iterations_) *
         double(pool_.size()) / s / 1e9;
}

PeakResult Int8Peak::measure(int reps) {
  check_reps(reps);
  PeakResult result;
  result.isa = isa_;
  result.threads = pool_.size();
  for (int r = 0; r < reps; ++r)
    result.rep_gops.push_back(pass());
  result.gops = median(result.rep_gops);
  return result;
}

PeakResult measure_int8_peak(ThreadPool &pool, const std::string &isa,
                             int reps) {
  check_reps(reps);
  Int8Peak peak(pool, isa);
  return peak.measure(reps);
}

//===----------------------------------------------------------------------===//
// Records
//===----------------------------------------------------------------------===//

BenchRecord make_record(int64_t M, int64_t K, int64_t N,
                        const std::string &format, const std::string &strategy,
                        const std::string &target, int threads,
                        const KernelTiming &timing,
                        const BandwidthResult &bandwidth,
                        const PeakResult *peak) {
  BenchRecord r;
  r.M = M;
  r.K = K;
  r.N = N;
  r.format = format;
  r.strategy = strategy;
  r.target = target;
  r.threads = threads;
  r.cold = timing.timing.cold;
  r.us = timing.timing.us;
  r.gbps = timing.gbps;
  r.paired = !timing.probe_gbps.empty();
  r.roofline_gbps = r.paired ? timing.roofline_gbps : bandwidth.gbps;
  r.ratio = r.paired             ? timing.ratio
            : bandwidth.gbps > 0 ? timing.gbps / bandwidth.gbps
                                 : 0.0;
  r.packed_bytes = timing.packed_bytes;
  r.copies = timing.timing.copies;
  r.reps = int(timing.timing.rep_us.size());
  r.schedule_policy = timing.policy;
  r.rep_us = timing.timing.rep_us;
  r.rep_probe_gbps = timing.probe_gbps;
  r.rep_handoff_us = timing.probe_handoff_us;
  r.thread_tiles = timing.thread_tiles;
  r.thread_us = timing.thread_us;
  r.job_us = timing.job_us;
  r.ratios = timing.ratios;
  r.ratio_updates = timing.ratio_updates;
  r.ratio_trace = timing.ratio_trace;
  if (N > 1) {
    r.gops = timing.gops;
    if (!timing.peak_gops.empty()) {
      r.peak_gops = timing.peak_gops_median;
      r.gops_ratio = timing.gops_ratio;
    } else if (peak) {
      r.peak_gops = peak->gops;
      r.gops_ratio = peak->gops > 0 ? timing.gops / peak->gops : 0.0;
    }
    r.peak_isa = !timing.peak_isa.empty() ? timing.peak_isa
                 : peak                   ? peak->isa
                                          : "";
  }
  return r;
}

nlohmann::ordered_json to_json(const BenchRecord &r) {
  nlohmann::ordered_json j = {
      {"shape", std::to_string(r.M) + "x" + std::to_string(r.K)},
      {"M", r.M},
      {"K", r.K},
      {"N", r.N},
      {"format", r.format},
      {"strategy", r.strategy},
      {"target", r.target},
      {"threads", r.threads},
      {"cold", r.cold},
      {"us", r.us},
      {"gbps", r.gbps},
      {"roofline_gbps", r.roofline_gbps},
      {"ratio", r.ratio},
      {"paired", r.paired},
      {"packed_bytes", r.packed_bytes},
      {"copies", r.copies},
      {"reps", r.reps},
  };
  if (r.read_floor_ratio > 0)
    j["read_floor_ratio"] = r.read_floor_ratio;
  if (r.N > 1) {
    j["gops"] = r.gops;
    j["peak_gops"] = r.peak_gops;
    j["gops_ratio"] = r.gops_ratio;
    j["peak_isa"] = r.peak_isa;
  }
  if (!r.schedule_policy.empty()) {
    j["schedule_policy"] = r.schedule_policy;
    j["load_core"] = r.load_core;
    j["slow_core"] = r.slow_core;
    j["slow_factor"] = r.slow_factor;
    j["rep_us"] = r.rep_us;
    if (!r.rep_probe_gbps.empty()) {
      j["rep_probe_gbps"] = r.rep_probe_gbps;
      j["rep_handoff_us"] = r.rep_handoff_us;
    }
    j["thread_tiles"] = r.thread_tiles;
    j["thread_us"] = r.thread_us;
    j["job_us"] = r.job_us;
    if (r.schedule_policy == "dynamic") {
      j["ratios"] = r.ratios;
      j["ratio_updates"] = r.ratio_updates;
      j["ratio_trace"] = r.ratio_trace;
    }
  }
  return j;
}

nlohmann::ordered_json to_json(const BandwidthResult &b) {
  return {{"gbps", b.gbps},
          {"rep_gbps", b.rep_gbps},
          {"handoff_us", b.handoff_us},
          {"rep_handoff_us", b.rep_handoff_us},
          {"bytes", b.bytes},
          {"threads", b.threads},
          {"loads", b.loads}};
}

nlohmann::ordered_json to_json(const PeakResult &p) {
  return {{"gops", p.gops},
          {"rep_gops", p.rep_gops},
          {"threads", p.threads},
          {"isa", p.isa}};
}

void write_bench_json(const std::string &path,
                      const std::vector<BenchRecord> &records,
                      const BandwidthResult &bandwidth,
                      const PeakResult *peak) {
  const CpuFeatures &cpu = host_cpu_features();
  nlohmann::ordered_json doc = {
      {"host", {{"arch", cpu.arch}, {"cpu", cpu.model}}},
      {"read_bandwidth", to_json(bandwidth)},
  };
  if (peak)
    doc["int8_peak"] = to_json(*peak);
  doc["records"] = nlohmann::ordered_json::array();
  for (const BenchRecord &r : records)
    doc["records"].push_back(to_json(r));
  std::ofstream out(path);
  out << doc.dump(2) << "\n";
  if (!out.flush())
    throw Error("cannot write " + path);
}

} // namespace lowbit::cli
