//===- scheduler.cpp - performance-ratio work split for hybrid CPUs -------===//

#include "lowbit/scheduler.h"
#include "lowbit/error.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace lowbit {

TileRange split_tiles(int64_t num_tiles, int parts, int index) {
  if (num_tiles <= 0 || parts < 1 || index < 0 || index >= parts)
    return {};
  const int64_t base = num_tiles / parts, extra = num_tiles % parts;
  const int64_t begin = index * base + (index < extra ? index : extra);
  return {begin, begin + base + (index < extra ? 1 : 0)};
}

SchedulePolicy parse_schedule_policy(const std::string &name) {
  if (name == "static")
    return SchedulePolicy::Static;
  if (name == "dynamic")
    return SchedulePolicy::Dynamic;
  throw Error("unknown schedule policy '" + name +
              "' (expected static or dynamic)");
}

const char *schedule_policy_name(SchedulePolicy policy) {
  return policy == SchedulePolicy::Static ? "static" : "dynamic";
}

static bool finite_non_negative(double x) { return std::isfinite(x) && x >= 0; }

std::vector<TileRange> split_tiles_weighted(int64_t num_tiles,
                                            const std::vector<double> &ratios,
                                            int64_t grain) {
  std::vector<TileRange> chunks;
  split_tiles_weighted(num_tiles, ratios, grain, chunks);
  return chunks;
}

void split_tiles_weighted(int64_t num_tiles, const std::vector<double> &ratios,
                          int64_t grain, std::vector<TileRange> &chunks) {
  if (ratios.empty())
    throw Error("split_tiles_weighted: no ratios");
  if (grain < 1)
    throw Error("split_tiles_weighted: grain must be >= 1 tile, got " +
                std::to_string(grain));
  if (num_tiles < 0)
    throw Error("split_tiles_weighted: negative tile count " +
                std::to_string(num_tiles));
  double total = 0.0;
  for (size_t i = 0; i < ratios.size(); ++i) {
    if (!finite_non_negative(ratios[i]))
      throw Error("split_tiles_weighted: ratio " + std::to_string(i) +
                  " is negative or not finite");
    total += ratios[i];
  }
  if (!(total > 0.0) || !std::isfinite(total))
    throw Error("split_tiles_weighted: the ratios sum to " +
                std::to_string(total));

  // Boundary after thread i: the exact boundary num_tiles * c_i (c_i the
  // share of threads 0..i) rounded to the nearest whole grain (halves up),
  // capped at num_tiles; once the remaining ratios are all 0, num_tiles.
  chunks.resize(ratios.size());
  double cumulative = 0.0;
  int64_t previous = 0;
  for (size_t i = 0; i < ratios.size(); ++i) {
    cumulative += ratios[i];
    int64_t boundary = num_tiles;
    if (i + 1 < ratios.size() && cumulative < total) {
      const double exact = double(num_tiles) * (cumulative / total);
      const double grains = std::floor(exact / double(grain) + 0.5);
      boundary = grains * double(grain) >= double(num_tiles)
                     ? num_tiles
                     : int64_t(grains) * grain;
    }
    boundary = std::clamp(boundary, previous, num_tiles);
    chunks[i] = {previous, boundary};
    previous = boundary;
  }
}

std::vector<double> seed_measured_ratios(const std::vector<double> &ratios,
                                         const std::vector<double> &seconds) {
  if (ratios.size() != seconds.size())
    throw Error("seed_measured_ratios: " + std::to_string(ratios.size()) +
                " ratios but " + std::to_string(seconds.size()) + " times");
  for (size_t i = 0; i < ratios.size(); ++i)
    if (!(ratios[i] > 0) || !std::isfinite(ratios[i]) || !(seconds[i] > 0) ||
        !std::isfinite(seconds[i]))
      throw Error("seed_measured_ratios: thread " + std::to_string(i) +
                  " needs a positive finite ratio and time");
  std::vector<double> out(ratios.size());
  for (size_t i = 0; i < ratios.size(); ++i) {
    double denominator = 0.0;
    for (size_t j = 0; j < ratios.size(); ++j)
      denominator += seconds[i] * ratios[j] / seconds[j];
    out[i] = ratios[i] / denominator;
  }
  return out;
}

void update_ratios(std::vector<double> &ratios,
                   const std::vector<int64_t> &work,
                   const std::vector<double> &seconds, double alpha) {
  if (ratios.size() != work.size() || ratios.size() != seconds.size())
    throw Error("update_ratios: " + std::to_string(ratios.size()) +
                " ratios, " + std::to_string(work.size()) + " work sizes, " +
                std::to_string(seconds.size()) + " times");
  if (!(alpha >= 0.0 && alpha <= 1.0))
    throw Error("update_ratios: alpha must be in [0, 1], got " +
                std::to_string(alpha));
  double total_ratio = 0.0, total_speed = 0.0;
  int participants = 0;
  for (size_t i = 0; i < ratios.size(); ++i) {
    if (!finite_non_negative(ratios[i]) || work[i] < 0 ||
        !finite_non_negative(seconds[i]))
      throw Error("update_ratios: thread " + std::to_string(i) +
                  " has a negative or non-finite ratio, work or time");
    if (work[i] == 0)
      continue;
    if (!(seconds[i] > 0.0) || !(ratios[i] > 0.0))
      throw Error("update_ratios: thread " + std::to_string(i) +
                  " did work in zero time or has ratio 0");
    ++participants;
    total_ratio += ratios[i];
    total_speed += double(work[i]) / seconds[i];
  }
  if (participants < 2)
    return;
  for (size_t i = 0; i < ratios.size(); ++i) {
    if (work[i] == 0)
      continue;
    const double measured =
        total_ratio * (double(work[i]) / seconds[i]) / total_speed;
    ratios[i] = alpha * ratios[i] + (1.0 - alpha) * measured;
  }
}

double read_cpu_capacity(int cpu) {
  if (cpu < 0)
    return 0.0;
  std::ifstream in("/sys/devices/system/cpu/cpu" + std::to_string(cpu) +
                   "/cpu_capacity");
  double capacity = 0.0;
  if (!(in >> capacity) || !std::isfinite(capacity) || capacity <= 0.0)
    return 0.0;
  return capacity;
}

int current_core_type() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid_count(0, 0, &a, &b, &c, &d) || a < 0x1A)
    return 0;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(d & (1u << 15)))
    return 0; // not a hybrid part
  if (!__get_cpuid_count(0x1A, 0, &a, &b, &c, &d))
    return 0;
  return int(a >> 24);
#else
  return 0;
#endif
}

const char *core_type_name(int core_type) {
  switch (core_type) {
  case 0x40:
    return "P-core";
  case 0x20:
    return "E-core";
  default:
    return "";
  }
}

std::vector<double> seed_ratios(const std::vector<CoreInfo> &cores,
                                std::string *source) {
  std::vector<double> ratios(cores.size(), 1.0);
  if (source)
    *source = "uniform";
  if (cores.empty())
    return ratios;
  auto all_differ_and_known = [&](auto value) {
    bool known = true, differ = false;
    for (const CoreInfo &c : cores) {
      known &= value(c) > 0;
      differ |= value(c) != value(cores.front());
    }
    return known && differ;
  };
  auto capacity = [](const CoreInfo &c) { return c.capacity; };
  auto type = [](const CoreInfo &c) {
    return c.core_type == 0x40   ? 1.0
           : c.core_type == 0x20 ? kECoreSeedRatio
                                 : 0.0;
  };
  if (all_differ_and_known(capacity)) {
    for (size_t i = 0; i < cores.size(); ++i)
      ratios[i] = cores[i].capacity;
    if (source)
      *source = "cpu_capacity";
  } else if (all_differ_and_known(type)) {
    for (size_t i = 0; i < cores.size(); ++i)
      ratios[i] = type(cores[i]);
    if (source)
      *source = "cpuid-0x1a";
  } else {
    return ratios;
  }
  double sum = 0.0;
  for (double r : ratios)
    sum += r;
  for (double &r : ratios)
    r *= double(ratios.size()) / sum;
  return ratios;
}

} // namespace lowbit
