//===- BenchProbes.cpp - read-bandwidth and int8-peak probes --------------===//

#include "BenchProbes.h"

#include "lowbit/error.h"

#include <algorithm>
#include <cstring>

#include <sys/mman.h>

#if defined(__x86_64__)
#include <immintrin.h>

#include "lowbit/amx_tiles.h"
#endif

namespace lowbit::cli {

namespace {

// Results of the measurement loops end here so that no loop is optimised
// away.
volatile uint64_t sink;

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

// AMX-INT8: tdpbsud into 4 accumulator tiles (2 activation x 2 weight
// tiles, as the x86-amx GEMM kernels multiply them), 16 x 16 x 64 MACs
// each; the tiles' wrappers of amx_tiles.h, `Tiles` either the
// instructions or their emulation (which only checks the loop's result on
// hosts without AMX: its speed is no peak). Activations 3 (signed), codes 2
// (unsigned): accumulator j ends at j + 384 x iterations.
struct AmxInstructions {
  __attribute__((target("amx-tile"))) static void
  config(const lowbit_amx_tilecfg *cfg) {
    _tile_loadconfig(cfg);
  }
  __attribute__((target("amx-tile"))) static void release() {
    _tile_release();
  }
  template <int T>
  __attribute__((target("amx-tile"))) static void load(const void *p) {
    _tile_loadd(T, p, 64);
  }
  template <int T>
  __attribute__((target("amx-tile"))) static void store(void *p) {
    _tile_stored(T, p, 64);
  }
  template <int C, int A, int B>
  __attribute__((target("amx-tile,amx-int8"))) static void dot() {
    _tile_dpbsud(C, A, B);
  }
};
struct AmxEmulation {
  static void config(const lowbit_amx_tilecfg *cfg) {
    lowbit_amx_emu_ldtilecfg(cfg);
  }
  static void release() { lowbit_amx_emu_release(); }
  template <int T> static void load(const void *p) {
    lowbit_amx_emu_load(T, p, 64);
  }
  template <int T> static void store(void *p) { lowbit_amx_emu_store(T, p, 64); }
  template <int C, int A, int B> static void dot() {
    lowbit_amx_emu_dot(C, A, B, 1, 0);
  }
};

template <typename Tiles> uint64_t peak_amx(int64_t iterations) {
  const lowbit_amx_tilecfg cfg = lowbit_amx_full_config(64);
  Tiles::config(&cfg);
  alignas(64) int8_t x[16 * 64];
  alignas(64) uint8_t w[16 * 64];
  alignas(64) int32_t acc[4][16 * 16];
  std::memset(x, 3, sizeof(x));
  std::memset(w, 2, sizeof(w));
  for (int j = 0; j < 4; ++j)
    std::fill(acc[j], acc[j] + 16 * 16, j);
  Tiles::template load<0>(acc[0]);
  Tiles::template load<1>(acc[1]);
  Tiles::template load<2>(acc[2]);
  Tiles::template load<3>(acc[3]);
  Tiles::template load<4>(x);
  Tiles::template load<5>(x);
  Tiles::template load<6>(w);
  Tiles::template load<7>(w);
  for (int64_t i = 0; i < iterations; ++i) {
    Tiles::template dot<0, 4, 6>();
    Tiles::template dot<1, 4, 7>();
    Tiles::template dot<2, 5, 6>();
    Tiles::template dot<3, 5, 7>();
  }
  Tiles::template store<0>(acc[0]);
  Tiles::template store<1>(acc[1]);
  Tiles::template store<2>(acc[2]);
  Tiles::template store<3>(acc[3]);
  Tiles::release();
  return uint64_t(int64_t(acc[0][0]) + acc[1][17] + acc[2][100] + acc[3][255]);
}
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
  if (isa == "amx" && runs_on(cpu, Target::X86Amx))
    return {peak_amx<AmxInstructions>, 4 * 16 * 16 * 64};
  if (isa == "amx-emulated" && amx_emulated(cpu))
    return {peak_amx<AmxEmulation>, 4 * 16 * 16 * 64};
#endif
  if (isa == "avx512vnni" || isa == "avxvnni" || isa == "avx2" ||
      isa == "amx" || isa == "amx-emulated")
    throw Error("this host cannot run the " + isa + " int8 peak loop");
  throw Error("unknown int8 peak ISA '" + isa +
              "' (expected avx512vnni, avxvnni, avx2, amx or amx-emulated)");
}

} // namespace

void keep_result(uint64_t value) { sink = sink ^ value; }

double seconds_since(BenchClock::time_point start) {
  return std::chrono::duration<double>(BenchClock::now() - start).count();
}

void check_reps(int reps) {
  if (reps < kMinReps)
    throw Error("benchmarks need at least " + std::to_string(kMinReps) +
                " timed reps, got " + std::to_string(reps));
}

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
    const BenchClock::time_point start = BenchClock::now();
    pool_.run(bytes_ / kPage, [&](int64_t first, int64_t end, int thread) {
      sums_[size_t(thread)] =
          read_(data_ + first * kPage, size_t((end - first) * kPage), prefetch);
    });
    best = std::max(best, double(bytes_) / seconds_since(start) / 1e9);
    for (uint64_t v : sums_)
      keep_result(v);
  }
  handoff_us_ = 0.0;
  if (pool_.size() > 1) {
    std::vector<double> us;
    for (int i = 0; i < 31; ++i) {
      const BenchClock::time_point start = BenchClock::now();
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
// int8 peak
//===----------------------------------------------------------------------===//

std::string peak_isa_for(Target target) {
  switch (target) {
  case Target::X86Avx512Vnni:
    return "avx512vnni";
  case Target::X86Amx:
    // Emulated kernels (LOWBIT_AMX=emulate) get the emulated loop, so
    // labelled: its GOPS are no peak.
    return host_runs(Target::X86Amx) || !amx_emulated(host_cpu_features())
               ? "amx"
               : "amx-emulated";
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
    const BenchClock::time_point start = BenchClock::now();
    keep_result(run_(iterations));
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
  const BenchClock::time_point start = BenchClock::now();
  pool_.run_on_all(
      [&](int thread) { sums_[size_t(thread)] = run_(iterations_); });
  const double s = seconds_since(start);
  for (uint64_t v : sums_)
    keep_result(v);
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

uint64_t run_int8_peak_loop(const std::string &isa, int64_t iterations) {
  return peak_loop(isa).run(iterations);
}

PeakResult measure_int8_peak(ThreadPool &pool, const std::string &isa,
                             int reps) {
  check_reps(reps);
  Int8Peak peak(pool, isa);
  return peak.measure(reps);
}
} // namespace lowbit::cli
