//===- scheduler_test.cpp - the dynamic parallel method (hybrid CPUs) -----===//
//
// The proportional split, the paper's ratio update and its filter with
// hand-computed numbers, OS seeding, and the pool's scheduled runs: every
// tile (and every output row of a real kernel chain) exactly once under
// random ratio tables, threads without tiles left out, a slow thread
// learned.
//
//===----------------------------------------------------------------------===//

#include "lowbit/reference.h"
#include "lowbit/run_kernel.h"
#include "lowbit/scheduler.h"
#include "lowbit/thread_pool.h"
#include "lowbit/upconvert.h"

#include "scalar_kernel.h"
#include "test_util.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <numeric>
#include <random>

namespace lowbit {
namespace {

using test::bits;
using test::error_of;

void spin_for(double seconds) {
  const auto until =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until) {
  }
}

// Contiguous, in thread order, covering [0, tiles) exactly once.
void expect_partition(const std::vector<TileRange> &chunks, int64_t tiles) {
  int64_t next = 0;
  for (size_t i = 0; i < chunks.size(); ++i) {
    ASSERT_EQ(chunks[i].begin, next) << "chunk " << i;
    ASSERT_GE(chunks[i].end, chunks[i].begin) << "chunk " << i;
    next = chunks[i].end;
  }
  ASSERT_EQ(next, tiles);
}

//===----------------------------------------------------------------------===//
// The split (eq. 3)
//===----------------------------------------------------------------------===//

TEST(SplitWeighted, ProportionalToGivenRatios) {
  auto sizes = [](int64_t tiles, std::vector<double> ratios,
                  int64_t grain = 1) {
    std::vector<int64_t> out;
    for (const TileRange &r : split_tiles_weighted(tiles, ratios, grain))
      out.push_back(r.size());
    return out;
  };
  EXPECT_EQ(sizes(100, {1, 3}), (std::vector<int64_t>{25, 75}));
  EXPECT_EQ(sizes(10, {0.3, 0.7}), (std::vector<int64_t>{3, 7}));
  EXPECT_EQ(sizes(8, {1, 2, 1}), (std::vector<int64_t>{2, 4, 2}));
  EXPECT_EQ(sizes(160, {1.645, 0.355}), (std::vector<int64_t>{132, 28}));
  // Only the proportions matter.
  EXPECT_EQ(sizes(100, {10, 30}), sizes(100, {0.25, 0.75}));
  // A zero ratio gets nothing; so does a share below half a tile.
  EXPECT_EQ(sizes(10, {1, 0, 1}), (std::vector<int64_t>{5, 0, 5}));
  EXPECT_EQ(sizes(10, {1, 0.01}), (std::vector<int64_t>{10, 0}));
  // Halves round up at each boundary, so equal ratios give split_tiles's
  // chunks for two threads.
  EXPECT_EQ(sizes(5, {1, 1}), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(sizes(0, {1, 1}), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(sizes(1, {1, 1, 1}), (std::vector<int64_t>{0, 1, 0}));
  // Whole grains: 40 tiles in grains of 8 are 5 units, 1:4 -> 1 and 4 units.
  EXPECT_EQ(sizes(40, {1, 4}, 8), (std::vector<int64_t>{8, 32}));
  // A ragged last grain stays with whoever owns the last unit.
  EXPECT_EQ(sizes(42, {1, 1}, 8), (std::vector<int64_t>{24, 18}));
  EXPECT_EQ(sizes(42, {1, 0}, 8), (std::vector<int64_t>{42, 0}));
}

TEST(SplitWeighted, EveryTileOnceWithinOneGrainOfItsShare) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> ratio(0.0, 4.0);
  for (int trial = 0; trial < 3000; ++trial) {
    const int parts = 1 + int(rng() % 9);
    const int64_t tiles = int64_t(rng() % 500);
    const int64_t grain = 1 + int64_t(rng() % 6);
    std::vector<double> ratios(static_cast<size_t>(parts));
    for (double &r : ratios)
      r = rng() % 5 == 0 ? 0.0 : ratio(rng);
    if (std::accumulate(ratios.begin(), ratios.end(), 0.0) == 0.0)
      ratios[0] = 1.0;
    SCOPED_TRACE("trial " + std::to_string(trial));
    const std::vector<TileRange> chunks =
        split_tiles_weighted(tiles, ratios, grain);
    ASSERT_EQ(chunks.size(), size_t(parts));
    expect_partition(chunks, tiles);
    const double total = std::accumulate(ratios.begin(), ratios.end(), 0.0);
    for (int i = 0; i < parts; ++i) {
      const TileRange r = chunks[size_t(i)];
      // Whole grains, except where a chunk ends at the ragged end.
      if (!r.empty())
        EXPECT_EQ(r.begin % grain, 0);
      if (r.end != tiles)
        EXPECT_EQ(r.end % grain, 0);
      const double share = double(tiles) * ratios[size_t(i)] / total;
      EXPECT_LE(std::abs(double(r.size()) - share), double(grain) + 1e-9)
          << "thread " << i;
      if (ratios[size_t(i)] == 0.0)
        EXPECT_TRUE(r.empty());
    }
  }
}

TEST(SplitWeighted, EqualRatiosAreBalanced) {
  for (int parts = 1; parts <= 9; ++parts)
    for (int64_t tiles = 0; tiles <= 100; ++tiles) {
      const std::vector<TileRange> chunks =
          split_tiles_weighted(tiles, std::vector<double>(size_t(parts), 1.0));
      int64_t lo = tiles, hi = 0;
      for (const TileRange &r : chunks) {
        lo = std::min(lo, r.size());
        hi = std::max(hi, r.size());
      }
      EXPECT_LE(hi - lo, 1) << tiles << " tiles, " << parts << " parts";
    }
}

TEST(SplitWeighted, RejectsBadRatiosAndGrain) {
  EXPECT_EQ(error_of([] { split_tiles_weighted(10, {}); }),
            "split_tiles_weighted: no ratios");
  EXPECT_EQ(error_of([] {
              split_tiles_weighted(10, {1, -1});
            }),
            "split_tiles_weighted: ratio 1 is negative or not finite");
  EXPECT_EQ(error_of([] {
              split_tiles_weighted(10, {NAN, 1});
            }),
            "split_tiles_weighted: ratio 0 is negative or not finite");
  EXPECT_EQ(error_of([] { split_tiles_weighted(10, {INFINITY}); }),
            "split_tiles_weighted: ratio 0 is negative or not finite");
  EXPECT_EQ(error_of([] {
              split_tiles_weighted(10, {0, 0});
            }),
            "split_tiles_weighted: the ratios sum to 0.000000");
  EXPECT_EQ(error_of([] { split_tiles_weighted(10, {1}, 0); }),
            "split_tiles_weighted: grain must be >= 1 tile, got 0");
  EXPECT_EQ(error_of([] { split_tiles_weighted(-1, {1}); }),
            "split_tiles_weighted: negative tile count -1");
  // Huge tile counts stay exact at the ends.
  const std::vector<TileRange> big =
      split_tiles_weighted(int64_t(1) << 40, {1, 2});
  EXPECT_EQ(big[1].end, int64_t(1) << 40);
}

//===----------------------------------------------------------------------===//
// The update (eq. 2) and the filter
//===----------------------------------------------------------------------===//

TEST(RatioUpdate, SeedEquationTwoByHand) {
  // pr = (1, 1), t = (1, 2): pr_0' = 1 / (1*1/1 + 1*1/2) = 2/3,
  //                          pr_1' = 1 / (2*1/1 + 2*1/2) = 1/3.
  std::vector<double> r = seed_measured_ratios({1, 1}, {1, 2});
  EXPECT_NEAR(r[0], 2.0 / 3.0, 1e-15);
  EXPECT_NEAR(r[1], 1.0 / 3.0, 1e-15);
  // pr = (2, 1, 1), t = (1, 1, 2): sum_j pr_j / t_j = 2 + 1 + 0.5 = 3.5, so
  // pr_0' = 2 / (1 * 3.5), pr_1' = 1 / (1 * 3.5), pr_2' = 1 / (2 * 3.5).
  r = seed_measured_ratios({2, 1, 1}, {1, 1, 2});
  EXPECT_NEAR(r[0], 2.0 / 3.5, 1e-15);
  EXPECT_NEAR(r[1], 1.0 / 3.5, 1e-15);
  EXPECT_NEAR(r[2], 1.0 / 7.0, 1e-15);
  EXPECT_NEAR(r[0] + r[1] + r[2], 1.0, 1e-15);
  EXPECT_EQ(error_of([] {
              seed_measured_ratios({1}, {1, 2});
            }),
            "seed_measured_ratios: 1 ratios but 2 times");
  EXPECT_EQ(error_of([] {
              seed_measured_ratios({1, 1}, {1, 0});
            }),
            "seed_measured_ratios: thread 1 needs a positive finite ratio "
            "and time");
}

TEST(RatioUpdate, FilterByHand) {
  // Two threads at 1, 50 tiles each; thread 1 is half as fast (1 ms vs
  // 2 ms). S = 2, speeds 50000 and 25000 tiles/s, so pr' = 2 * (2/3, 1/3) =
  // (4/3, 2/3) -- S times the paper's eq. (2) -- and with alpha = 0.3:
  //   pr_0 = 0.3 * 1 + 0.7 * 4/3 = 1.2333...,  pr_1 = 0.3 + 0.7 * 2/3 =
  //   0.7666...
  std::vector<double> pr = {1, 1};
  update_ratios(pr, {50, 50}, {1e-3, 2e-3}, 0.3);
  EXPECT_NEAR(pr[0], 0.3 + 0.7 * 4.0 / 3.0, 1e-12);
  EXPECT_NEAR(pr[1], 0.3 + 0.7 * 2.0 / 3.0, 1e-12);
  EXPECT_NEAR(pr[0], 1.2333333333333333, 1e-12);
  EXPECT_NEAR(pr[1], 0.7666666666666667, 1e-12);
  // Next kernel: 100 tiles split 62 / 38 by those ratios, same speeds
  // (t = 62/50 ms and 38/25 ms): pr' is (4/3, 2/3) again, and
  //   pr_0 = 0.3 * 1.2333 + 0.7 * 4/3 = 1.30333..., pr_1 = 0.69666...
  const std::vector<TileRange> split = split_tiles_weighted(100, pr);
  EXPECT_EQ(split[0].size(), 62);
  update_ratios(pr, {62, 38}, {62 / 50e3, 38 / 25e3}, 0.3);
  EXPECT_NEAR(pr[0], 1.3033333333333333, 1e-12);
  EXPECT_NEAR(pr[1], 0.6966666666666667, 1e-12);
  // It converges geometrically (error x 0.3 per kernel) to (4/3, 2/3) and
  // keeps the table's sum.
  for (int k = 0; k < 12; ++k)
    update_ratios(pr, {40, 20}, {40 / 50e3, 20 / 25e3}, 0.3);
  EXPECT_NEAR(pr[0], 4.0 / 3.0, 1e-6);
  EXPECT_NEAR(pr[1], 2.0 / 3.0, 1e-6);
  EXPECT_NEAR(pr[0] + pr[1], 2.0, 1e-12);
}

TEST(RatioUpdate, IsTheSeedFormulaWhenWorkIsProportional) {
  // alpha = 0: the update is S * eq. (2) when thread i did work ~ pr_i.
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(0.1, 3.0);
  for (int trial = 0; trial < 200; ++trial) {
    const size_t n = 2 + rng() % 6;
    std::vector<double> pr(n), t(n);
    std::vector<int64_t> work(n);
    double sum = 0;
    for (size_t i = 0; i < n; ++i) {
      work[i] = 1 + int64_t(rng() % 1000);
      pr[i] = double(work[i]) / 100.0; // exactly proportional
      t[i] = u(rng) * 1e-3;
      sum += pr[i];
    }
    const std::vector<double> seed = seed_measured_ratios(pr, t);
    std::vector<double> mine = pr;
    update_ratios(mine, work, t, 0.0);
    for (size_t i = 0; i < n; ++i)
      EXPECT_NEAR(mine[i], sum * seed[i], 1e-12 * sum);
  }
}

TEST(RatioUpdate, IdleThreadsKeepTheirRatioAndEdgeCases) {
  // Thread 2 had no tiles: it keeps 0.5; threads 0 and 1 share S = 2.5.
  std::vector<double> pr = {1.5, 1.0, 0.5};
  update_ratios(pr, {30, 20, 0}, {1e-3, 1e-3, 0}, 0.0);
  EXPECT_NEAR(pr[0], 2.5 * 30.0 / 50.0, 1e-12);
  EXPECT_NEAR(pr[1], 2.5 * 20.0 / 50.0, 1e-12);
  EXPECT_EQ(pr[2], 0.5);
  // One participant: nothing to compare, nothing changes.
  pr = {1, 1};
  update_ratios(pr, {10, 0}, {1e-3, 0}, 0.3);
  EXPECT_EQ(pr, (std::vector<double>{1, 1}));
  // alpha = 1 never moves.
  update_ratios(pr, {10, 10}, {1e-3, 5e-3}, 1.0);
  EXPECT_EQ(pr, (std::vector<double>{1, 1}));
  EXPECT_EQ(error_of([&] {
              update_ratios(pr, {1, 1}, {1, 1}, 1.5);
            }),
            "update_ratios: alpha must be in [0, 1], got 1.500000");
  EXPECT_EQ(error_of([&] {
              update_ratios(pr, {1}, {1, 1}, 0.3);
            }),
            "update_ratios: 2 ratios, 1 work sizes, 2 times");
  EXPECT_EQ(error_of([&] {
              update_ratios(pr, {1, 1}, {1, 0}, 0.3);
            }),
            "update_ratios: thread 1 did work in zero time or has ratio 0");
  EXPECT_EQ(error_of([&] {
              update_ratios(pr, {1, -1}, {1, 1}, 0.3);
            }),
            "update_ratios: thread 1 has a negative or non-finite ratio, "
            "work or time");
}

//===----------------------------------------------------------------------===//
// Policies and seeds
//===----------------------------------------------------------------------===//

TEST(SchedulePolicy, Names) {
  EXPECT_EQ(parse_schedule_policy("static"), SchedulePolicy::Static);
  EXPECT_EQ(parse_schedule_policy("dynamic"), SchedulePolicy::Dynamic);
  EXPECT_STREQ(schedule_policy_name(SchedulePolicy::Static), "static");
  EXPECT_STREQ(schedule_policy_name(SchedulePolicy::Dynamic), "dynamic");
  EXPECT_EQ(error_of([] { parse_schedule_policy("guided"); }),
            "unknown schedule policy 'guided' (expected static or dynamic)");
  EXPECT_EQ(ThreadPool::Options().policy, SchedulePolicy::Dynamic);
  EXPECT_EQ(ThreadPool::Options().alpha, 0.3);
}

TEST(SeedRatios, CapacityThenCoreTypeThenUniform) {
  std::string source;
  auto core = [](double capacity, int type) {
    CoreInfo c;
    c.capacity = capacity;
    c.core_type = type;
    return c;
  };
  // Capacities 1024 and 512, scaled to mean 1.
  std::vector<double> r = seed_ratios({core(1024, 0), core(512, 0)}, &source);
  EXPECT_NEAR(r[0], 4.0 / 3.0, 1e-12);
  EXPECT_NEAR(r[1], 2.0 / 3.0, 1e-12);
  EXPECT_EQ(source, "cpu_capacity");
  // Equal capacities say nothing; hybrid core types do (P 1, E 0.5).
  r = seed_ratios({core(1024, 0x40), core(1024, 0x20), core(1024, 0x20)},
                  &source);
  EXPECT_NEAR(r[0], 1.5, 1e-12);
  EXPECT_NEAR(r[1], 0.75, 1e-12);
  EXPECT_NEAR(r[2], 0.75, 1e-12);
  EXPECT_EQ(source, "cpuid-0x1a");
  // An unknown core type or capacity anywhere: uniform.
  r = seed_ratios({core(0, 0x40), core(0, 0)}, &source);
  EXPECT_EQ(r, (std::vector<double>{1, 1}));
  EXPECT_EQ(source, "uniform");
  r = seed_ratios({core(1024, 0), core(0, 0)}, &source);
  EXPECT_EQ(r, (std::vector<double>{1, 1}));
  EXPECT_TRUE(seed_ratios({}).empty());
  EXPECT_STREQ(core_type_name(0x40), "P-core");
  EXPECT_STREQ(core_type_name(0x20), "E-core");
  EXPECT_STREQ(core_type_name(0), "");
  EXPECT_EQ(read_cpu_capacity(-1), 0.0);
}

TEST(SeedRatios, ThisHost) {
  // Whatever the host says, the pool's seed has mean 1 and is recorded.
  ThreadPool pool(2);
  const std::vector<double> &seed = pool.seed_ratios();
  ASSERT_EQ(seed.size(), 2u);
  EXPECT_NEAR(seed[0] + seed[1], 2.0, 1e-12);
  std::printf("[ seed ] %s: %.3f %.3f (cpu %d capacity %.0f type '%s', cpu %d "
              "capacity %.0f type '%s')\n",
              pool.seed_source().c_str(), seed[0], seed[1], pool.cores()[0].cpu,
              pool.cores()[0].capacity,
              core_type_name(pool.cores()[0].core_type), pool.cores()[1].cpu,
              pool.cores()[1].capacity,
              core_type_name(pool.cores()[1].core_type));
  ThreadPool::Options options;
  options.threads = 2;
  options.seed_from_os = false;
  ThreadPool plain(options);
  EXPECT_EQ(plain.seed_ratios(), (std::vector<double>{1, 1}));
  EXPECT_EQ(plain.seed_source(), "uniform");
}

//===----------------------------------------------------------------------===//
// The pool
//===----------------------------------------------------------------------===//

TEST(ScheduledPool, OptionsAndClassesAreChecked) {
  ThreadPool::Options options;
  options.threads = 2;
  options.alpha = 1.5;
  EXPECT_EQ(error_of([&] { ThreadPool pool(options); }),
            "schedule alpha must be in [0, 1], got 1.500000");
  options.alpha = 0.3;
  options.grain = 0;
  EXPECT_EQ(error_of([&] { ThreadPool pool(options); }),
            "schedule grain must be >= 1 tile, got 0");
  ThreadPool pool(2);
  const int a = pool.kernel_class("upconvert x86-avx2 i2s");
  const int b = pool.kernel_class("upconvert x86-avx2 q4_0");
  EXPECT_NE(a, b);
  EXPECT_EQ(pool.kernel_class("upconvert x86-avx2 i2s"), a);
  EXPECT_EQ(pool.kernel_classes(),
            (std::vector<std::string>{"upconvert x86-avx2 i2s",
                                      "upconvert x86-avx2 q4_0"}));
  EXPECT_EQ(pool.ratios(a), pool.seed_ratios());
  EXPECT_EQ(error_of([&] { pool.kernel_class(""); }),
            "a kernel class needs a non-empty key");
  EXPECT_EQ(error_of([&] { pool.ratios(7); }),
            "unknown kernel class 7 (the pool has 2)");
  EXPECT_EQ(error_of([&] { pool.set_ratios(a, {1}); }),
            "set_ratios: 1 ratios for 2 threads");
  EXPECT_EQ(error_of([&] {
              pool.set_ratios(a, {0, 0});
            }),
            "set_ratios: the ratios sum to 0");
  EXPECT_EQ(error_of([&] {
              pool.set_ratios(a, {-1, 2});
            }),
            "set_ratios: ratios must be finite and >= 0");
  EXPECT_EQ(error_of([&] { pool.set_alpha(-0.1); }),
            "schedule alpha must be in [0, 1], got -0.100000");
  EXPECT_EQ(upconvert_kernel_class(Format::parse("i2s"), "x86-avx2"),
            "upconvert x86-avx2 i2s");
  EXPECT_EQ(upconvert_kernel_class(Format::parse("q4_0")), "upconvert q4_0");
}

// Under random ratio tables (zeros included) every tile is run exactly once,
// on the thread whose chunk the table gives it, and threads without tiles
// are not called.
TEST(ScheduledPool, EveryTileOnceUnderRandomRatioTables) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(0.0, 3.0);
  for (int threads : {1, 2, 3, 4}) {
    for (int grain : {1, 3}) {
      ThreadPool::Options options;
      options.threads = threads;
      options.grain = grain;
      options.probe_after = 0; // the split is exactly the table's
      ThreadPool pool(options);
      const int cls = pool.kernel_class("test");
      for (int trial = 0; trial < 150; ++trial) {
        std::vector<double> ratios(static_cast<size_t>(threads));
        for (double &r : ratios)
          r = rng() % 4 == 0 ? 0.0 : u(rng);
        ratios[rng() % size_t(threads)] += 0.5; // sum > 0
        pool.set_ratios(cls, ratios);
        const int64_t tiles = int64_t(rng() % 70);
        const std::vector<TileRange> want =
            split_tiles_weighted(tiles, ratios, grain);
        std::vector<std::atomic<int>> hits(static_cast<size_t>(tiles));
        std::vector<std::atomic<int>> calls(static_cast<size_t>(threads));
        pool.run_scheduled(cls, tiles,
                           [&](int64_t begin, int64_t end, int thread) {
                             EXPECT_EQ(begin, want[size_t(thread)].begin);
                             EXPECT_EQ(end, want[size_t(thread)].end);
                             for (int64_t t = begin; t < end; ++t)
                               hits[size_t(t)]++;
                             calls[size_t(thread)]++;
                           });
        for (int64_t t = 0; t < tiles; ++t)
          ASSERT_EQ(hits[size_t(t)].load(), 1) << "tile " << t;
        for (int t = 0; t < threads; ++t)
          EXPECT_EQ(calls[size_t(t)].load(), want[size_t(t)].empty() ? 0 : 1);
        const ThreadPool::JobStats &job = pool.last_job();
        for (int t = 0; t < threads; ++t) {
          EXPECT_EQ(job.chunks[size_t(t)].begin, want[size_t(t)].begin);
          if (want[size_t(t)].empty())
            EXPECT_EQ(job.seconds[size_t(t)], 0.0);
          else
            EXPECT_GT(job.seconds[size_t(t)], 0.0);
        }
      }
    }
  }
}

// Jobs that leave workers out alternate with jobs that use them, through
// both wake-up paths: a worker that skipped a job must still take the next
// one it is part of, and must never run a job it is not part of.
TEST(ScheduledPool, ManyJobsWithChangingParticipants) {
  for (int spin : {0, 100}) {
    ThreadPool::Options options;
    options.threads = 3;
    options.spin_us = spin;
    options.wait_spin_us = spin;
    options.probe_after = 0;
    ThreadPool pool(options);
    const int cls = pool.kernel_class("test");
    const std::vector<std::vector<double>> tables = {
        {1, 1, 1}, {1, 0, 0}, {0, 1, 0}, {1, 0, 1}, {0, 0, 1}, {2, 1, 0}};
    int64_t sum = 0, expected = 0;
    std::vector<int64_t> part(3);
    for (int job = 0; job < 3000; ++job) {
      const std::vector<double> &ratios = tables[size_t(job) % tables.size()];
      pool.set_ratios(cls, ratios);
      std::fill(part.begin(), part.end(), 0);
      pool.run_scheduled(cls, 6, [&](int64_t begin, int64_t end, int thread) {
        part[size_t(thread)] += (end - begin) * (job + 1);
      });
      sum += part[0] + part[1] + part[2];
      expected += 6 * (job + 1);
      if (job % 700 == 0)
        std::this_thread::sleep_for(std::chrono::microseconds(300));
    }
    EXPECT_EQ(sum, expected);
  }
}

// Exceptions from a scheduled run reach the caller and leave the table alone.
TEST(ScheduledPool, RethrowsAndKeepsTheTable) {
  ThreadPool pool(2);
  const int cls = pool.kernel_class("test");
  const std::vector<double> before = pool.ratios(cls);
  EXPECT_THROW(pool.run_scheduled(cls, 10,
                                  [&](int64_t, int64_t, int thread) {
                                    if (thread == 1)
                                      throw std::runtime_error("worker");
                                  }),
               std::runtime_error);
  EXPECT_EQ(pool.ratios(cls), before);
  EXPECT_EQ(pool.updates(cls), 0);
  std::atomic<int> ran{0};
  pool.run_scheduled(cls, 10, [&](int64_t, int64_t, int) { ran++; });
  EXPECT_EQ(ran.load(), 2);
}

// A controlled clock for the pool (ThreadPool::Options::clock): every job
// starts at one shared instant, and each thread's time moves only when its
// chunk says how long it took (work()). What the table learns then depends
// on the simulated speeds alone, not on what else runs on the host: with
// real spinning, a preemption of either thread on a busy host made these
// tests fail now and then.
struct VirtualClock {
  using Clock = ThreadPool::Clock;
  // The instant the next job starts at; a thread that sees a new one starts
  // its time there.
  static inline std::atomic<int64_t> epoch_ns{0};
  struct Local {
    int64_t epoch_ns = -1, elapsed_ns = 0;
  };
  static Local &local() {
    thread_local Local l;
    const int64_t e = epoch_ns.load(std::memory_order_relaxed);
    if (l.epoch_ns != e)
      l = {e, 0};
    return l;
  }
  static Clock::time_point now() {
    const Local &l = local();
    return Clock::time_point(std::chrono::nanoseconds(l.epoch_ns + l.elapsed_ns));
  }
  /// This thread's chunk took `seconds`.
  static void work(double seconds) {
    local().elapsed_ns += int64_t(seconds * 1e9);
  }
  /// The next job starts 1 s after the last one (the pool's publication
  /// makes the store visible to the workers).
  static void next_job() {
    epoch_ns.fetch_add(1'000'000'000, std::memory_order_relaxed);
  }
};

// Thread 1 spends three times as long per tile: the dynamic table learns
// ratios 1.5 / 0.5 and gives it a quarter of the tiles; the static policy
// neither splits by nor changes the table.
TEST(ScheduledPool, LearnsASlowThread) {
  ThreadPool::Options options;
  options.threads = 2;
  options.seed_from_os = false;
  options.clock = &VirtualClock::now;
  ThreadPool pool(options);
  const int cls = pool.kernel_class("slow thread 1");
  auto job = [&] {
    VirtualClock::next_job();
    pool.run_scheduled(cls, 200, [&](int64_t begin, int64_t end, int thread) {
      VirtualClock::work(double(end - begin) * (thread == 1 ? 6e-6 : 2e-6));
    });
  };
  pool.set_policy(SchedulePolicy::Static);
  for (int i = 0; i < 5; ++i)
    job();
  EXPECT_EQ(pool.ratios(cls), (std::vector<double>{1, 1}));
  EXPECT_EQ(pool.last_job().chunks[1].size(), 100);
  EXPECT_NEAR(pool.last_job().seconds[1], 600e-6, 1e-9);
  EXPECT_EQ(pool.updates(cls), 0);

  pool.set_policy(SchedulePolicy::Dynamic);
  std::vector<int64_t> share;
  for (int i = 0; i < 40; ++i) {
    job();
    share.push_back(pool.last_job().chunks[1].size());
  }
  // The filter (alpha 0.3) halves the error in about two runs: after 20 the
  // split is the ideal one to within its rounding to a tile.
  for (int i = 20; i < 40; ++i)
    EXPECT_NEAR(double(share[size_t(i)]), 50.0, 1.0) << "run " << i;
  EXPECT_NEAR(pool.ratios(cls)[0], 1.5, 1e-3);
  EXPECT_NEAR(pool.ratios(cls)[1], 0.5, 1e-3);
  EXPECT_EQ(pool.updates(cls), 40);
  EXPECT_EQ(pool.stalls(cls), 0);
  EXPECT_NEAR(pool.ratios(cls)[0] + pool.ratios(cls)[1], 2.0, 1e-9);
}

// The real clock (no Options::clock): a thread's time is at least what its
// chunk spent, whatever else runs on the host (a preemption only adds).
TEST(ScheduledPool, TimesOnTheRealClock) {
  ThreadPool::Options options;
  options.threads = 2;
  options.seed_from_os = false;
  ThreadPool pool(options);
  const int cls = pool.kernel_class("test");
  pool.run_scheduled(cls, 2, [&](int64_t, int64_t, int thread) {
    spin_for(thread == 1 ? 3e-3 : 1e-3);
  });
  const ThreadPool::JobStats &job = pool.last_job();
  EXPECT_GE(job.seconds[0], 1e-3);
  EXPECT_GE(job.seconds[1], 3e-3);
  EXPECT_GE(job.wall_seconds, 3e-3);
  EXPECT_GE(job.start_seconds[1], 0.0);
  EXPECT_LE(job.start_seconds[1], job.seconds[1]);
}

// A run in which a thread was away far longer than the others (a
// preemption) leaves the table alone, unless the previous run stalled too;
// stall_factor 0 takes every run, as the paper does. The preemptions are
// simulated on the controlled clock.
TEST(ScheduledPool, AStallIsNotASpeed) {
  for (double factor : {8.0, 0.0}) {
    ThreadPool::Options options;
    options.threads = 2;
    options.seed_from_os = false;
    options.stall_factor = factor;
    options.clock = &VirtualClock::now;
    ThreadPool pool(options);
    const int cls = pool.kernel_class("test");
    std::vector<char> stalled, updated;
    // 2 us per tile; thread 1 away for 3 ms more, back to normal, then
    // away twice in a row.
    for (double away : {3e-3, 0.0, 3e-3, 3e-3}) {
      VirtualClock::next_job();
      pool.run_scheduled(cls, 20, [&](int64_t begin, int64_t end, int thread) {
        VirtualClock::work(double(end - begin) * 2e-6 +
                           (thread == 1 ? away : 0.0));
      });
      stalled.push_back(pool.last_job().stalled);
      updated.push_back(pool.last_job().updated);
    }
    if (factor > 0) {
      // The lone stall leaves the table alone; the second in a row counts.
      EXPECT_EQ(stalled, (std::vector<char>{1, 0, 1, 1}));
      EXPECT_EQ(updated, (std::vector<char>{0, 1, 0, 1}));
      EXPECT_EQ(pool.stalls(cls), 3);
      EXPECT_EQ(pool.updates(cls), 2);
    } else {
      // Every run with two participants updates (thread 1's share can
      // fall below a tile after two collapses).
      EXPECT_EQ(stalled, (std::vector<char>{0, 0, 0, 0}));
      EXPECT_EQ(updated[0], 1);
      EXPECT_EQ(updated[1], 1);
      EXPECT_EQ(pool.stalls(cls), 0);
    }
    EXPECT_LT(pool.ratios(cls)[1], 0.5);
  }
}

// A thread whose ratio leaves it without tiles gets one grain after
// probe_after such runs, so it is measured again.
TEST(ScheduledPool, ProbesAThreadLeftOutTooLong) {
  ThreadPool::Options options;
  options.threads = 2;
  options.probe_after = 4;
  options.alpha = 1.0; // keep the table as set
  ThreadPool pool(options);
  const int cls = pool.kernel_class("test");
  pool.set_ratios(cls, {1.0, 1e-6});
  std::vector<int64_t> sizes;
  for (int i = 0; i < 6; ++i) {
    pool.run_scheduled(cls, 10, [](int64_t, int64_t, int) {});
    sizes.push_back(pool.last_job().chunks[1].size());
  }
  EXPECT_EQ(sizes, (std::vector<int64_t>{0, 0, 0, 0, 1, 0}));
  // Kernels with fewer tiles than threads do not count.
  pool.set_ratios(cls, {1.0, 1e-6});
  for (int i = 0; i < 8; ++i)
    pool.run_scheduled(cls, 1, [](int64_t, int64_t, int) {});
  EXPECT_TRUE(pool.last_job().chunks[1].empty());
}

//===----------------------------------------------------------------------===//
// The kernel chain: every output row exactly once, against the reference
//===----------------------------------------------------------------------===//

// The scalar ABI kernel behind a counter of how often each tile was
// computed (a row computed twice would still have the right value).
lowbit_kernel_fn counted_inner = nullptr;
std::vector<std::atomic<int>> *tile_hits = nullptr;

extern "C" void counted_kernel(const uint8_t *codes, const uint16_t *scales,
                               const uint16_t *zeros, const int8_t *xq,
                               const float *x_scales, const int32_t *x_sums,
                               float *y, int64_t n, int64_t tile_begin,
                               int64_t tile_end, float w_scale) {
  for (int64_t t = tile_begin; t < tile_end; ++t)
    (*tile_hits)[size_t(t)]++;
  counted_inner(codes, scales, zeros, xq, x_scales, x_sums, y, n, tile_begin,
                tile_end, w_scale);
}

TEST(ScheduledPool, KernelRowsExactlyOnceUnderRandomRatios) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(0.0, 2.0);
  ThreadPool::Options options;
  options.threads = 3;
  ThreadPool pool(options);
  uint32_t seed = 77;
  for (const char *name : {"i2s", "q4_0", "w2g64"}) {
    const Format f = Format::parse(name);
    for (int64_t M : {1, 16, 17, 100, 257}) {
      const int64_t K = 128, N = 2;
      SCOPED_TRACE(f.name() + " M=" + std::to_string(M));
      const std::vector<float> W = test::random_values(M * K, seed++);
      const std::vector<float> X = test::random_values(N * K, seed++, 2.0f);
      const PackedWeights P = quantize(f, W.data(), M, K);
      std::vector<float> expected(size_t(N * M));
      reference_mpgemm(P, X.data(), N, expected.data());
      const UpconvertWeights U = pack_upconvert(P);
      const PreparedActivations A = prepare_activations(f, X.data(), N, K);
      counted_inner = test::scalar_kernel(f, M, K);
      const int cls = pool.kernel_class(upconvert_kernel_class(f));
      for (int trial = 0; trial < 12; ++trial) {
        std::vector<double> ratios(3);
        for (double &r : ratios)
          r = rng() % 3 == 0 ? 0.0 : u(rng);
        ratios[size_t(trial % 3)] += 0.1;
        pool.set_ratios(cls, ratios);
        std::vector<std::atomic<int>> hits(static_cast<size_t>(U.num_tiles()));
        tile_hits = &hits;
        std::vector<float> Y(size_t(N * M), NAN);
        run_kernel(counted_kernel, U, A, Y.data(), M, pool);
        for (int64_t t = 0; t < U.num_tiles(); ++t)
          ASSERT_EQ(hits[size_t(t)].load(), 1) << "tile " << t;
        for (int64_t i = 0; i < N * M; ++i)
          ASSERT_EQ(bits(Y[size_t(i)]), bits(expected[size_t(i)]))
              << "Y[" << i / M << ", " << i % M << "] trial " << trial;
      }
      tile_hits = nullptr;
    }
  }
}

} // namespace
} // namespace lowbit
