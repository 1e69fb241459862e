//===- thread_pool_test.cpp - split_tiles and the persistent pool ---------===//

#include "lowbit/thread_pool.h"

#include "test_util.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <thread>

namespace lowbit {
namespace {

using test::error_of;

TEST(SplitTiles, EveryTileExactlyOnceInContiguousBalancedChunks) {
  for (int parts = 1; parts <= 9; ++parts) {
    for (int64_t tiles = 0; tiles <= 100; ++tiles) {
      SCOPED_TRACE("tiles=" + std::to_string(tiles) +
                   " parts=" + std::to_string(parts));
      std::vector<int> owner(size_t(tiles), -1);
      int64_t next = 0, smallest = tiles, largest = 0;
      for (int p = 0; p < parts; ++p) {
        const TileRange r = split_tiles(tiles, parts, p);
        ASSERT_EQ(r.begin, next); // contiguous, in thread order
        ASSERT_GE(r.size(), 0);
        for (int64_t t = r.begin; t < r.end; ++t) {
          ASSERT_EQ(owner[size_t(t)], -1);
          owner[size_t(t)] = p;
        }
        next = r.end;
        smallest = std::min(smallest, r.size());
        largest = std::max(largest, r.size());
      }
      ASSERT_EQ(next, tiles);
      ASSERT_LE(largest - smallest, 1);
    }
  }
  EXPECT_TRUE(split_tiles(10, 2, 2).empty());
  EXPECT_TRUE(split_tiles(10, 0, 0).empty());
  const TileRange big = split_tiles(int64_t(1) << 40, 3, 2);
  EXPECT_EQ(big.end, int64_t(1) << 40);
}

TEST(ThreadPool, RunCoversEveryTileOnceOnItsThread) {
  for (int threads : {1, 2, 3, 4}) {
    ThreadPool pool(threads);
    ASSERT_EQ(pool.size(), threads);
    for (int64_t tiles : {0, 1, 2, 3, 5, 160}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(tiles));
      std::atomic<int> calls{0};
      pool.run(tiles, [&](int64_t begin, int64_t end, int thread) {
        const TileRange want = split_tiles(tiles, threads, thread);
        EXPECT_EQ(begin, want.begin);
        EXPECT_EQ(end, want.end);
        for (int64_t t = begin; t < end; ++t)
          hits[size_t(t)]++;
        calls++;
      });
      for (int64_t t = 0; t < tiles; ++t)
        ASSERT_EQ(hits[size_t(t)].load(), 1) << "tile " << t;
      EXPECT_EQ(calls.load(), std::min<int64_t>(tiles, threads));
    }
  }
}

TEST(ThreadPool, RunOnAllRunsEveryThreadOnceAndCallerIsZero) {
  ThreadPool pool(3);
  std::vector<std::atomic<int>> hits(3);
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> on_caller{-1};
  pool.run_on_all([&](int thread) {
    hits[size_t(thread)]++;
    if (std::this_thread::get_id() == caller)
      on_caller = thread;
  });
  for (auto &h : hits)
    EXPECT_EQ(h.load(), 1);
  EXPECT_EQ(on_caller.load(), 0);
}

// Many back-to-back jobs through both wake-up paths: spinning workers
// (spin_us 100) and workers that always sleep (spin_us 0), with a pause now
// and then so that spinning workers fall asleep too.
TEST(ThreadPool, ManyJobsBothWakePaths) {
  for (int spin : {0, 100}) {
    ThreadPool::Options options;
    options.threads = 2;
    options.spin_us = spin;
    ThreadPool pool(options);
    int64_t sum = 0;
    std::vector<int64_t> part(2);
    for (int job = 0; job < 2000; ++job) {
      pool.run_on_all([&](int thread) { part[size_t(thread)] = job + thread; });
      sum += part[0] + part[1];
      if (job % 500 == 0)
        std::this_thread::sleep_for(std::chrono::microseconds(300));
    }
    EXPECT_EQ(sum, 2 * (1999 * 2000 / 2) + 2000);
  }
}

TEST(ThreadPool, RethrowsAfterEveryThreadFinished) {
  ThreadPool pool(3);
  std::atomic<int> finished{0};
  EXPECT_THROW(pool.run_on_all([&](int thread) {
    if (thread == 2)
      throw std::runtime_error("worker failed");
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    finished++;
  }),
               std::runtime_error);
  EXPECT_EQ(finished.load(), 2);
  EXPECT_THROW(pool.run_on_all([&](int thread) {
    if (thread == 0)
      throw std::runtime_error("caller failed");
  }),
               std::runtime_error);
  // The pool still works afterwards.
  std::atomic<int> ran{0};
  pool.run_on_all([&](int) { ran++; });
  EXPECT_EQ(ran.load(), 3);
}

TEST(ThreadPool, RejectsZeroThreads) {
  EXPECT_EQ(error_of([] { ThreadPool pool(0); }),
            "thread count must be >= 1, got 0");
}

TEST(ThreadPool, PinsOnePerCpuOrNone) {
  const unsigned cpus = std::thread::hardware_concurrency();
  ThreadPool pool(2);
  if (pool.pinned()) {
    EXPECT_GE(pool.cpu_of(0), 0);
    EXPECT_GE(pool.cpu_of(1), 0);
    EXPECT_NE(pool.cpu_of(0), pool.cpu_of(1));
  }
  // More threads than CPUs: never pinned (two threads on one core), still
  // correct.
  ThreadPool over(int(cpus) + 1);
  EXPECT_FALSE(over.pinned());
  EXPECT_EQ(over.cpu_of(0), -1);
  std::atomic<int> ran{0};
  over.run_on_all([&](int) { ran++; });
  EXPECT_EQ(ran.load(), int(cpus) + 1);
}

// Dispatch cost of an empty job with spinning workers; printed, not
// asserted beyond a generous bound (the machine is shared and noisy).
// run_elastic: a worker that has taken the job up is waited for; one that
// has not when the caller's part returns is withdrawn and never runs it.
TEST(ThreadPool, ElasticWaitsForAStartedWorker) {
  ThreadPool pool(2);
  for (int round = 0; round < 20; ++round) {
    std::atomic<bool> started{false}, finished{false};
    pool.run_elastic([&](int thread) {
      if (thread == 1) {
        started = true;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        finished = true;
        return;
      }
      // The caller returns only once the worker runs the job (10 s bound).
      const auto until =
          std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (!started && std::chrono::steady_clock::now() < until) {
      }
    });
    ASSERT_TRUE(started) << "the worker did not start within 10 s";
    EXPECT_TRUE(finished.load()); // run_elastic returned after the worker
    EXPECT_EQ(pool.last_withdrawn(), 0);
  }
}

TEST(ThreadPool, ElasticWithdrawsAWorkerThatHasNotStarted) {
  for (int spin : {0, 100}) {
    ThreadPool::Options options;
    options.threads = 2;
    options.spin_us = spin; // 0: the worker sleeps, a wake-up is slow
    ThreadPool pool(options);
    int withdrawn = 0;
    for (int job = 0; job < 300; ++job) {
      std::atomic<int> runs[2] = {0, 0};
      pool.run_elastic([&](int thread) { runs[thread]++; });
      EXPECT_EQ(runs[0].load(), 1);
      // Withdrawn: never ran; else ran once, before run_elastic returned.
      EXPECT_EQ(runs[1].load(), 1 - pool.last_withdrawn()) << "job " << job;
      withdrawn += pool.last_withdrawn();
    }
    std::printf("[ elastic ] spin %d us: worker withdrawn from %d of 300 "
                "empty jobs\n",
                spin, withdrawn);
    // An empty caller part returns within nanoseconds; a sleeping worker
    // takes microseconds to wake, so it cannot have won all 300 races.
    if (spin == 0)
      EXPECT_GT(withdrawn, 0);
    // Jobs of both kinds still run on every thread afterwards.
    std::atomic<int> all{0};
    pool.run_on_all([&](int) { all++; });
    EXPECT_EQ(all.load(), 2);
  }
}

TEST(ThreadPool, DispatchOverhead) {
  ThreadPool pool(2);
  std::atomic<int64_t> sink{0};
  auto once = [&] { pool.run(2, [&](int64_t b, int64_t, int) { sink += b; }); };
  for (int i = 0; i < 1000; ++i)
    once();
  const int jobs = 20000;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < jobs; ++i)
    once();
  const double us = std::chrono::duration<double, std::micro>(
                        std::chrono::steady_clock::now() - start)
                        .count() /
                    jobs;
  std::printf("[ dispatch ] 2 threads, empty job: %.3f us per run()\n", us);
  EXPECT_LT(us, 100.0);
}

} // namespace
} // namespace lowbit
