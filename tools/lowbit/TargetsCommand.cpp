//===- TargetsCommand.cpp - `lowbit targets` ------------------------------===//
//
// Prints the host's ISA features (detected at run time) and, for every
// target, whether code for it runs here.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "lowbit/target.h"
#include "lowbit/vulkan.h"

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace lowbit::cli {

/// Every ISA feature lowbit detects, with whether the host has it.
static std::vector<std::pair<const char *, bool>> hostFeatures() {
  const CpuFeatures &cpu = host_cpu_features();
  return {
      {"sse4.2", cpu.sse42},      {"avx2", cpu.avx2},
      {"fma", cpu.fma},           {"f16c", cpu.f16c},
      {"avx-vnni", cpu.avxvnni},  {"avx-vnni-int8", cpu.avxvnniint8},
      {"avx512f", cpu.avx512f},   {"avx512bw", cpu.avx512bw},
      {"avx512vl", cpu.avx512vl}, {"avx512-vnni", cpu.avx512vnni},
      {"avx512-vbmi", cpu.avx512vbmi},
      {"amx-tile", cpu.amxtile},  {"amx-int8", cpu.amxint8},
      {"neon", cpu.neon},         {"dotprod", cpu.dotprod},
  };
}

std::vector<std::string> hostFeatureNames() {
  std::vector<std::string> names;
  for (const auto &[name, present] : hostFeatures())
    if (present)
      names.push_back(name);
  return names;
}

static int runTargets(const ParsedOptions &) {
  const CpuFeatures &cpu = host_cpu_features();
  std::printf("host: %s %s%s%s\n", cpu.arch.c_str(), cpu.vendor.c_str(),
              cpu.model.empty() ? "" : ", ", cpu.model.c_str());
  std::string present, missing;
  for (const auto &[name, has] : hostFeatures())
    (has ? present : missing) += std::string(" ") + name;
  std::printf("features:%s\n", present.empty() ? " (none)" : present.c_str());
  std::printf("missing: %s\n", missing.empty() ? " (none)" : missing.c_str());
  std::printf("native target: %s\n\ntargets:\n",
              target_name(native_target()).c_str());
  for (Target t : all_targets()) {
    if (t == Target::Native)
      continue;
    std::printf("  %-18s %s\n", target_name(t).c_str(),
                !host_runs(t) && is_aarch64_target(t)
                    ? "does not run here (run and verify use qemu-aarch64)"
                : t == Target::X86Amx && !host_runs(t)
                    ? ("does not run here: " + amx_missing_reason(cpu) +
                       (amx_emulated(cpu) ? " (LOWBIT_AMX=emulate: run and "
                                            "verify emulate the tiles)"
                                          : ""))
                          .c_str()
                : !host_runs(t) ? "does not run here"
                : host_runs(t, Strategy::LutElementwise)
                    ? "runs on this host"
                    : "runs on this host (not its LUT kernels, which "
                      "need avx512-vbmi)");
  }
  if (vulkan_available())
    std::printf("\nvulkan device: %s\n", vulkan_device_name().c_str());
  return 0;
}

const Command &targetsCommand() {
  static const Command command{
      {"targets",
       "Print the host CPU's ISA features, detected at run time, and which "
       "lowbit targets run on this host.",
       nullptr,
       {}},
      runTargets};
  return command;
}

} // namespace lowbit::cli
