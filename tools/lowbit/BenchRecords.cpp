//===- BenchRecords.cpp - the JSON records of `lowbit bench` --------------===//

#include "BenchRecords.h"

#include "lowbit/error.h"

#include <fstream>

namespace lowbit::cli {

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
