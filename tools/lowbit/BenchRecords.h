//===- BenchRecords.h - the JSON records of `lowbit bench` ------*- C++ -*-===//
//
// One record per benchmark case, with the limits it was compared with;
// ratios are taken within one run (BenchTiming.h).
//
//===----------------------------------------------------------------------===//
#ifndef LOWBIT_TOOLS_LOWBIT_BENCHRECORDS_H
#define LOWBIT_TOOLS_LOWBIT_BENCHRECORDS_H

#include "BenchTiming.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace lowbit::cli {

/// One benchmark case as `lowbit bench --json` writes it.
struct BenchRecord {
  int64_t M = 0, K = 0, N = 1;
  std::string format, strategy, target;
  int threads = 1;
  bool cold = true;
  double us = 0.0;            // median per call
  double gbps = 0.0;          // effective: packed weight bytes / us
  double roofline_gbps = 0.0; // measured read bandwidth (see `paired`)
  double ratio = 0.0;         // effective / measured read bandwidth
  bool paired = false; // roofline and ratio from probe passes before each
                       // rep (median of per-rep ratios), else the run's probe
  int64_t packed_bytes = 0;
  int64_t copies = 0;
  int reps = 0;
  // N > 1 only (0 otherwise):
  double gops = 0.0, peak_gops = 0.0, gops_ratio = 0.0;
  std::string peak_isa;
  // Scheduling: the policy, the CPU a competing process loaded (-1: none),
  // and every timed rep; for dynamic, the ratio table and its history (see
  // KernelTiming).
  std::string schedule_policy;
  int load_core = -1;
  int slow_core = -1;
  double slow_factor = 1.0;
  std::vector<double> rep_us;
  std::vector<double> rep_probe_gbps; // the read probe right before each rep
  std::vector<double> rep_handoff_us; // and the pool's handoff with it
  std::vector<double> thread_tiles, thread_us;
  double job_us = 0.0; // mean publication-to-done time of the pool's jobs
  std::vector<double> ratios;
  int64_t ratio_updates = 0;
  std::vector<std::vector<double>> ratio_trace;
  // bench --read-floor: the median over rounds of this case's rep time /
  // a pure read of its matrix (0: not measured).
  double read_floor_ratio = 0.0;
};

/// Fills a record from a timing: roofline figures from its pairing when it
/// has one, else from the run's `bandwidth` and `peak` (peak may be null).
BenchRecord make_record(int64_t M, int64_t K, int64_t N,
                        const std::string &format, const std::string &strategy,
                        const std::string &target, int threads,
                        const KernelTiming &timing,
                        const BandwidthResult &bandwidth,
                        const PeakResult *peak);

nlohmann::ordered_json to_json(const BenchRecord &record);
nlohmann::ordered_json to_json(const BandwidthResult &bandwidth);
nlohmann::ordered_json to_json(const PeakResult &peak);

/// Writes {"host": ..., "read_bandwidth": ..., "int8_peak": ... (when
/// given), "records": [...]} to `path` (pretty-printed); throws Error when
/// the file cannot be written.
void write_bench_json(const std::string &path,
                      const std::vector<BenchRecord> &records,
                      const BandwidthResult &bandwidth, const PeakResult *peak);

} // namespace lowbit::cli

#endif // LOWBIT_TOOLS_LOWBIT_BENCHRECORDS_H
