//===- BenchTests.cpp - tests of the benchmarks and the chart -------------===//

#include "Bench.h"
#include "JitTestUtil.h"
#include "Plot.h"
#include "test_util.h"

#include "lowbit/Jit/KernelCache.h"

#include "lowbit/error.h"
#include "lowbit/reference.h"
#include "lowbit/run_kernel.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <set>

namespace lowbit::cli {
namespace {

namespace fs = std::filesystem;

using jit::compile_and_load;
using jit::LoadedKernel;
using jit::test::kAddOne;
using jit::test::ScopedCache;
using lowbit::test::error_of;

TEST(Bench, Median) {
  EXPECT_EQ(median({}), 0.0);
  EXPECT_EQ(median({3, 1, 2}), 2.0);
  EXPECT_EQ(median({4, 1, 3, 2}), 2.5);
}

TEST(Bench, ColdCopyCount) {
  EXPECT_EQ(cold_copy_count(1 << 20), 256);
  EXPECT_EQ(cold_copy_count((1 << 20) + 1), 256);
  EXPECT_EQ(cold_copy_count(100 << 20), 3);
  EXPECT_EQ(cold_copy_count(int64_t(300) << 20), 1);
  EXPECT_EQ(cold_copy_count(0), 1);
  EXPECT_EQ(cold_copy_count(10, 100), 10);
}

// A kernel that records, per call, the codes it was given (the chunk that
// starts at tile 0 is in every call exactly once) and how often it ran.
std::vector<const uint8_t *> recorded_codes;
std::mutex recorded_mutex;
void record_codes(const uint8_t *codes, const uint16_t *, const uint16_t *,
                  const int8_t *, const float *, const int32_t *, float *,
                  int64_t, int64_t tile_begin, int64_t, float) {
  if (tile_begin != 0)
    return;
  std::lock_guard<std::mutex> lock(recorded_mutex);
  recorded_codes.push_back(codes);
}

// i2s weights of 0.5 and activations of 1, M x K, for the recording kernel.
struct ConstantProblem {
  UpconvertWeights U;
  PreparedActivations A;
};
ConstantProblem constant_problem(int64_t M, int64_t K) {
  const Format f = Format::parse("i2s");
  std::vector<float> W(size_t(M * K), 0.5f), X(size_t(K), 1.0f);
  return {pack_upconvert(quantize(f, W.data(), M, K)),
          prepare_activations(f, X.data(), 1, K)};
}

TEST(Bench, ColdTimingCyclesThroughEveryCopyEachRep) {
  const auto [U, A] = constant_problem(1024, 1024);
  ThreadPool pool(2);
  recorded_codes.clear();
  const KernelTiming t = time_kernel(record_codes, U, A, pool, true, 5);
  EXPECT_TRUE(t.timing.cold);
  const size_t copies = size_t(cold_copy_count(U.packed_bytes()));
  EXPECT_EQ(t.timing.copies, int64_t(copies));
  EXPECT_EQ(t.timing.calls_per_rep, int64_t(copies));
  ASSERT_EQ(t.timing.rep_us.size(), 5u);
  // A warm-up pass and 5 timed ones, each over the same distinct copies in
  // the same order, none of them the original.
  ASSERT_EQ(recorded_codes.size(), copies * 6);
  std::set<const uint8_t *> distinct(recorded_codes.begin(),
                                     recorded_codes.begin() + long(copies));
  EXPECT_EQ(distinct.size(), copies);
  EXPECT_EQ(distinct.count(U.codes.data()), 0u);
  for (size_t i = copies; i < recorded_codes.size(); ++i)
    EXPECT_EQ(recorded_codes[i], recorded_codes[i % copies]);
  EXPECT_EQ(t.timing.us, median(t.timing.rep_us));
}

TEST(Bench, WarmTimingRepeatsOneMatrix) {
  const ConstantProblem problem = constant_problem(64, 256);
  const UpconvertWeights &U = problem.U;
  const PreparedActivations &A = problem.A;
  ThreadPool pool(2);
  recorded_codes.clear();
  const KernelTiming t = time_kernel(record_codes, U, A, pool, false, 5);
  EXPECT_FALSE(t.timing.cold);
  EXPECT_EQ(t.timing.copies, 1);
  EXPECT_GE(t.timing.calls_per_rep, 1);
  // Two calibration calls, then calls_per_rep per rep, all on W itself.
  EXPECT_EQ(int64_t(recorded_codes.size()), 2 + 5 * t.timing.calls_per_rep);
  for (const uint8_t *codes : recorded_codes)
    EXPECT_EQ(codes, U.codes.data());
  EXPECT_EQ(error_of([&] { time_kernel(record_codes, U, A, pool, true, 4); }),
            "benchmarks need at least 5 timed reps, got 4");
}

TEST(Bench, ReadBandwidthProbe) {
  ThreadPool pool(2);
  const BandwidthResult r =
      measure_read_bandwidth(pool, int64_t(8) << 20, 5, "auto");
  EXPECT_EQ(r.bytes, int64_t(8) << 20);
  EXPECT_EQ(r.threads, 2);
  EXPECT_EQ(r.rep_gbps.size(), 5u);
  EXPECT_GT(r.gbps, 0.0);
  EXPECT_NE(r.loads, "auto");
  // Every pass times the pool's handoff too; one thread has none.
  EXPECT_EQ(r.rep_handoff_us.size(), 5u);
  EXPECT_GT(r.handoff_us, 0.0);
  EXPECT_LT(r.handoff_us, 1e5);
  ThreadPool alone(1);
  EXPECT_EQ(measure_read_bandwidth(alone, int64_t(2) << 20, 5).handoff_us,
            0.0);
  EXPECT_EQ(measure_read_bandwidth(pool, int64_t(2) << 20, 5, "scalar").loads,
            "scalar");
  EXPECT_EQ(error_of([&] { measure_read_bandwidth(pool, 4096, 5); }),
            "the read-bandwidth probe needs at least 1 MiB, got 4096 bytes");
  ReadProbe probe(pool, (int64_t(2) << 20) + 100);
  EXPECT_EQ(probe.bytes(), int64_t(2) << 20); // whole pages
  EXPECT_GT(probe.pass(), 0.0);
  EXPECT_EQ(probe.measure(6).rep_gbps.size(), 6u);
  EXPECT_EQ(error_of([&] { probe.measure(4); }),
            "benchmarks need at least 5 timed reps, got 4");
  EXPECT_EQ(error_of([&] {
              measure_read_bandwidth(pool, int64_t(2) << 20, 5, "sse");
            }),
            "unknown load width 'sse' (expected auto, avx512, avx2 or "
            "scalar)");
}

TEST(Bench, Int8Peak) {
  ThreadPool pool(1);
  const std::string isa = peak_isa_for(Target::Native);
  if (isa.empty())
    GTEST_SKIP() << "no int8 peak loop for this host";
  const PeakResult r = measure_int8_peak(pool, isa, 5);
  EXPECT_EQ(r.isa, isa);
  EXPECT_EQ(r.rep_gops.size(), 5u);
  EXPECT_GT(r.gops, 1.0);
  EXPECT_EQ(peak_isa_for(Target::X86AvxVnni), "avxvnni");
  EXPECT_EQ(peak_isa_for(Target::Generic), "");
  EXPECT_EQ(error_of([&] { measure_int8_peak(pool, "sse"); }),
            "unknown int8 peak ISA 'sse' (expected avx512vnni, avxvnni, "
            "avx2, amx or amx-emulated)");
}

// The AMX peak loop's result, by hand: 4 accumulators start at 0..3 and
// gain 64 x 3 x 2 = 384 per iteration each. Natively on an AMX host, else
// through the emulation (LOWBIT_AMX=emulate, "amx-emulated") on one with
// AVX512-VNNI.
TEST(Bench, AmxPeakLoop) {
  setenv("LOWBIT_AMX", "emulate", 1);
  const CpuFeatures &cpu = host_cpu_features();
  if (!runs_on(cpu, Target::X86Amx) && !amx_emulated(cpu)) {
    unsetenv("LOWBIT_AMX");
    GTEST_SKIP() << "neither AMX nor AVX512-VNNI on this host";
  }
  const std::string isa =
      runs_on(cpu, Target::X86Amx) ? "amx" : "amx-emulated";
  EXPECT_EQ(peak_isa_for(Target::X86Amx), isa);
  EXPECT_EQ(run_int8_peak_loop(isa, 1), uint64_t(6 + 4 * 384));
  EXPECT_EQ(run_int8_peak_loop(isa, 10), uint64_t(6 + 4 * 3840));
  unsetenv("LOWBIT_AMX");
}

BenchRecord sample_record(const std::string &format, int64_t M, int64_t K,
                          double ratio, bool cold = true, int64_t N = 1) {
  BenchRecord r;
  r.M = M;
  r.K = K;
  r.N = N;
  r.format = format;
  r.strategy = "upconvert";
  r.target = "x86-avx512vnni";
  r.threads = 2;
  r.cold = cold;
  r.roofline_gbps = 40.0;
  r.gbps = 40.0 * ratio;
  r.ratio = ratio;
  r.us = 50.0;
  return r;
}

TEST(Bench, RecordsAndJson) {
  KernelTiming t;
  t.timing.cold = true;
  t.timing.copies = 160;
  t.timing.rep_us = {50, 51, 49, 50, 52};
  t.timing.us = 50;
  t.packed_bytes = 1638400;
  t.gbps = 32.768;
  t.gops = 262.144;
  BandwidthResult bw;
  bw.gbps = 40.96;
  PeakResult peak;
  peak.gops = 1000;
  peak.isa = "avx512vnni";
  const BenchRecord gemv = make_record(2560, 2560, 1, "i2s", "upconvert",
                                       "x86-avx512vnni", 2, t, bw, &peak);
  EXPECT_DOUBLE_EQ(gemv.ratio, 0.8);
  EXPECT_EQ(gemv.gops, 0.0); // N = 1: no compute figures
  const nlohmann::ordered_json j = to_json(gemv);
  for (const char *key :
       {"shape", "M", "K", "N", "format", "strategy", "target", "threads", "us",
        "gbps", "roofline_gbps", "ratio", "cold"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["shape"], "2560x2560");
  EXPECT_EQ(j["cold"], true);
  EXPECT_FALSE(j.contains("gops"));

  const BenchRecord gemm = make_record(2560, 2560, 128, "i2s", "upconvert",
                                       "x86-avx512vnni", 2, t, bw, &peak);
  const nlohmann::ordered_json g = to_json(gemm);
  EXPECT_DOUBLE_EQ(g["gops"].get<double>(), 262.144);
  EXPECT_DOUBLE_EQ(g["gops_ratio"].get<double>(), 0.262144);
  EXPECT_EQ(g["peak_isa"], "avx512vnni");

  const fs::path path = fs::temp_directory_path() / "lowbit-bench-test.json";
  write_bench_json(path.string(), {gemv, gemm}, bw, &peak);
  std::ifstream in(path);
  const nlohmann::json doc = nlohmann::json::parse(in);
  EXPECT_EQ(doc["records"].size(), 2u);
  EXPECT_DOUBLE_EQ(doc["read_bandwidth"]["gbps"].get<double>(), 40.96);
  EXPECT_DOUBLE_EQ(doc["int8_peak"]["gops"].get<double>(), 1000.0);
  fs::remove(path);
  EXPECT_EQ(error_of([&] {
              write_bench_json("/nonexistent-dir/x.json", {}, bw, nullptr);
            }),
            "cannot write /nonexistent-dir/x.json");
}

// Timing a real (scalar) kernel, warm and cold, on a small matrix.
TEST(Bench, TimeKernel) {
  ScopedCache cache;
  const Format f = Format::parse("i2s");
  std::vector<float> W(1024 * 1024, 0.5f), X(1024, 1.0f);
  W[3] = -1.0f;
  const UpconvertWeights U = pack_upconvert(quantize(f, W.data(), 1024, 1024));
  const PreparedActivations A = prepare_activations(f, X.data(), 1, 1024);
  LoadedKernel k = compile_and_load(kAddOne, "add_one", {});
  ThreadPool pool(2);
  const KernelTiming warm = time_kernel(k.fn, U, A, pool, false, 5);
  EXPECT_FALSE(warm.timing.cold);
  EXPECT_EQ(warm.packed_bytes, 1024 * 1024 / 4);
  EXPECT_GT(warm.gbps, 0.0);
  EXPECT_GT(warm.gops, 0.0);
  const KernelTiming cold = time_kernel(k.fn, U, A, pool, true, 5);
  EXPECT_TRUE(cold.timing.cold);
  EXPECT_EQ(cold.timing.copies, 1024);
  EXPECT_TRUE(cold.probe_gbps.empty());
  EXPECT_EQ(cold.ratio, 0.0);
}

// With a Pairing, a probe pass (and a peak pass) precedes every timed rep;
// the record takes its roofline and ratios from those.
TEST(Bench, PairedTiming) {
  ScopedCache cache;
  const Format f = Format::parse("i2s");
  std::vector<float> W(256 * 256, 0.5f), X(4 * 256, 1.0f);
  const UpconvertWeights U = pack_upconvert(quantize(f, W.data(), 256, 256));
  const PreparedActivations A = prepare_activations(f, X.data(), 4, 256);
  LoadedKernel k = compile_and_load(kAddOne, "add_one", {});
  ThreadPool pool(2);
  ReadProbe probe(pool, int64_t(4) << 20);
  const std::string isa = peak_isa_for(Target::Native);
  std::unique_ptr<Int8Peak> peak;
  if (!isa.empty())
    peak = std::make_unique<Int8Peak>(pool, isa, 0.002);
  const KernelTiming t =
      time_kernel(k.fn, U, A, pool, false, 6, Pairing{&probe, peak.get()});
  ASSERT_EQ(t.probe_gbps.size(), 6u);
  EXPECT_EQ(t.roofline_gbps, median(t.probe_gbps));
  EXPECT_GT(t.ratio, 0.0);
  BandwidthResult run_probe;
  run_probe.gbps = 1.0;
  const BenchRecord r = make_record(256, 256, 4, "i2s", "upconvert", "native",
                                    2, t, run_probe, nullptr);
  EXPECT_TRUE(r.paired);
  EXPECT_EQ(r.roofline_gbps, t.roofline_gbps);
  EXPECT_EQ(r.ratio, t.ratio);
  if (peak) {
    ASSERT_EQ(t.peak_gops.size(), 6u);
    EXPECT_EQ(r.peak_gops, median(t.peak_gops));
    EXPECT_EQ(r.gops_ratio, t.gops_ratio);
    EXPECT_EQ(r.peak_isa, isa);
  }
  EXPECT_EQ(to_json(r)["paired"], true);
}

// Contenders of different matrices take turns rep by rep, each after its
// own probe pass; the results follow the contenders' order.
TEST(Bench, InterleavedContenders) {
  ScopedCache cache;
  const Format f = Format::parse("i2s");
  std::vector<float> W(512 * 256, 0.5f), X(256, 1.0f);
  const UpconvertWeights small = pack_upconvert(quantize(f, W.data(), 256, 256));
  const UpconvertWeights large = pack_upconvert(quantize(f, W.data(), 512, 256));
  const PreparedActivations A = prepare_activations(f, X.data(), 1, 256);
  LoadedKernel k = compile_and_load(kAddOne, "add_one", {});
  ThreadPool pool(2);
  ReadProbe probe(pool, int64_t(4) << 20);
  const int kernelClass = pool.kernel_class("test");
  const std::vector<Contender> contenders = {
      {k.fn, &small, &A, kernelClass, SchedulePolicy::Dynamic},
      {k.fn, &large, &A, -1, SchedulePolicy::Static},
      {k.fn, &small, &A, -1, SchedulePolicy::Static}};
  const std::vector<KernelTiming> t =
      time_contenders(contenders, pool, true, 5, Pairing{&probe, nullptr});
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].packed_bytes, small.packed_bytes());
  EXPECT_EQ(t[1].packed_bytes, large.packed_bytes());
  EXPECT_EQ(t[0].timing.copies, cold_copy_count(small.packed_bytes()));
  EXPECT_EQ(t[1].timing.copies, cold_copy_count(large.packed_bytes()));
  EXPECT_EQ(t[0].policy, "dynamic");
  EXPECT_EQ(t[1].policy, "static");
  for (const KernelTiming &one : t) {
    EXPECT_EQ(one.timing.rep_us.size(), 5u);
    EXPECT_EQ(one.probe_gbps.size(), 5u);
    EXPECT_TRUE(one.timing.cold);
  }
  EXPECT_FALSE(t[0].ratio_trace.empty()); // dynamic: its class's table
  EXPECT_TRUE(t[1].ratio_trace.empty());
  EXPECT_EQ(error_of([&] { time_contenders({}, pool, true, 5); }),
            "time_contenders: nothing to time");
}

TEST(Bench, ReadSlicesPartitionAnArray) {
  // Any chunking of the tiles gives consecutive slices in whole grains
  // that cover the array up to its last partial grain.
  for (int64_t bytes : {int64_t(0), int64_t(100), int64_t(512), int64_t(4113),
                        int64_t(345600), int64_t(3) << 33})
    for (int64_t tiles : {1, 3, 40, 21600})
      for (int64_t chunk : {int64_t(1), int64_t(7), tiles}) {
        int64_t next = 0;
        for (int64_t begin = 0; begin < tiles; begin += chunk) {
          const ReadSlice slice =
              read_slice(bytes, tiles, begin, std::min(begin + chunk, tiles));
          EXPECT_EQ(slice.offset, next);
          EXPECT_EQ(slice.offset % kReadGrain, 0);
          EXPECT_GE(slice.bytes, 0);
          EXPECT_EQ(slice.bytes % kReadGrain, 0);
          next = slice.offset + slice.bytes;
        }
        EXPECT_EQ(next, bytes - bytes % kReadGrain)
            << bytes << " bytes, " << tiles << " tiles, chunks of " << chunk;
      }
  EXPECT_EQ(read_slice(4096, 4, 2, 2).bytes, 0);
  EXPECT_EQ(read_slice(4096, 4, 1, 3).offset, 1024);
  EXPECT_EQ(read_slice(4096, 4, 1, 3).bytes, 2048);
}

TEST(Bench, ReadContender) {
  ThreadPool pool(2);
  ReadProbe probe(pool, int64_t(1) << 20);
  // The probe's read sees exactly its bytes: one non-zero word inside the
  // range or outside it.
  AlignedArray<uint64_t> words(1024);
  words[700] = 0x1234567890abcdefull;
  EXPECT_EQ(probe.read(reinterpret_cast<const uint8_t *>(words.data()), 8192),
            0x1234567890abcdefull);
  EXPECT_EQ(probe.read(reinterpret_cast<const uint8_t *>(words.data()), 5120),
            0u);
  EXPECT_EQ(probe.read(reinterpret_cast<const uint8_t *>(words.data() + 704),
                       2048),
            0u);
  // A read contender needs no kernel and is timed like one, over W's tiles.
  const auto [U, A] = constant_problem(1024, 1024);
  recorded_codes.clear();
  const std::vector<KernelTiming> t = time_contenders(
      {{record_codes, &U, &A, -1, SchedulePolicy::Static},
       {nullptr, &U, &A, pool.kernel_class("read i2s"),
        SchedulePolicy::Static, &probe}},
      pool, true, 5);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[1].packed_bytes, U.packed_bytes());
  EXPECT_EQ(t[1].timing.copies, t[0].timing.copies);
  EXPECT_EQ(t[1].timing.rep_us.size(), 5u);
  double tiles = 0;
  for (double v : t[1].thread_tiles)
    tiles += v;
  EXPECT_EQ(tiles, double(U.num_tiles()));
  // Only the kernel contender called the kernel (warm-up pass + 5 reps).
  EXPECT_EQ(recorded_codes.size(), size_t(t[0].timing.copies) * 6);
}

TEST(Plot, ChartFromRecords) {
  BandwidthResult bw;
  bw.gbps = 41.0;
  bw.bytes = int64_t(1) << 30;
  bw.loads = "avx512";
  bw.rep_gbps = {41, 41, 41, 41, 41};
  const std::vector<BenchRecord> records = {
      sample_record("i2s", 2560, 2560, 0.9),
      sample_record("q4_0", 2560, 2560, 0.8),
      sample_record("i2s", 4096, 4096, 0.95),
      sample_record("i2s", 4096, 4096, 1.4, false),
      sample_record("i2s", 4096, 4096, 0.5, true, 128), // N > 1: not drawn
  };
  const RooflineChart chart = roofline_chart(records, bw);
  EXPECT_EQ(chart.categories,
            (std::vector<std::string>{"2560x2560", "4096x4096"}));
  ASSERT_EQ(chart.series.size(), 3u);
  EXPECT_EQ(chart.series[0].name, "i2s upconvert x86-avx512vnni");
  EXPECT_EQ(chart.series[2].name, "i2s upconvert x86-avx512vnni (warm)");
  EXPECT_EQ(chart.series[1].values[0], 0.8);
  EXPECT_TRUE(std::isnan(chart.series[1].values[1]));
  EXPECT_EQ(chart.roofline_gbps, 41.0);
  EXPECT_NE(chart.title.find("N = 1"), std::string::npos);
  EXPECT_NE(chart.title.find("2 threads"), std::string::npos);

  const std::string svg = render_svg(chart);
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_NE(svg.find("read limit = 1.0 (41.0 GB/s)"), std::string::npos);
  EXPECT_NE(svg.find("effective GB/s"), std::string::npos);
  EXPECT_NE(svg.find(">0.95<"), std::string::npos);
  EXPECT_EQ(svg.find("nan"), std::string::npos);

  // Paired records each have their own read limit: one label for all of
  // them and no GB/s axis that would assume a single one.
  std::vector<BenchRecord> paired = records;
  for (BenchRecord &r : paired) {
    r.paired = true;
    r.roofline_gbps = 30.0 + double(r.M % 7);
  }
  const RooflineChart pairedChart = roofline_chart(paired, bw);
  EXPECT_EQ(pairedChart.roofline_gbps, 0.0);
  const std::string pairedSvg = render_svg(pairedChart);
  EXPECT_NE(pairedSvg.find("read limit = 1.0 (each bar's, measured before "
                           "its reps)"),
            std::string::npos);
  EXPECT_EQ(pairedSvg.find("GB/s"), std::string::npos);
}

TEST(Plot, EscapesText) {
  RooflineChart chart;
  chart.title = "a < b & c";
  chart.categories = {"x"};
  chart.series = {{"s\"1", {0.5}}};
  const std::string svg = render_svg(chart);
  EXPECT_NE(svg.find("a &lt; b &amp; c"), std::string::npos);
  EXPECT_NE(svg.find("s&quot;1"), std::string::npos);
  EXPECT_EQ(error_of([&] { write_svg("/nonexistent-dir/x.svg", chart); }),
            "cannot write /nonexistent-dir/x.svg");
}

} // namespace
} // namespace lowbit::cli
