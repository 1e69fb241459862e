//===- target_test.cpp - targets, strategies and host features ------------===//

#include "lowbit/target.h"
#include "lowbit/vulkan.h"

#include "test_util.h"

#include <fstream>
#include <set>
#include <sstream>

namespace lowbit {
namespace {

using test::error_of;

TEST(Target, NamesRoundTrip) {
  const std::vector<std::string> names = {
      "native",         "generic",      "x86-avx2",           "x86-avxvnni",
      "x86-avx512vnni", "aarch64-neon", "aarch64-neon-nodot", "spirv-vulkan",
      "spirv-xe2"};
  std::vector<Target> targets = all_targets();
  ASSERT_EQ(targets.size(), names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(target_name(targets[i]), names[i]);
    EXPECT_EQ(parse_target(names[i]), targets[i]);
  }
}

TEST(Target, UnknownNameListsTargets) {
  EXPECT_EQ(error_of([] { parse_target("avx2"); }),
            "unknown target 'avx2' (expected native, generic, x86-avx2, "
            "x86-avxvnni, x86-avx512vnni, aarch64-neon, aarch64-neon-nodot, "
            "spirv-vulkan, spirv-xe2)");
  EXPECT_NE(error_of([] { parse_target(""); }), "");
  EXPECT_NE(error_of([] { parse_target("Native"); }), "");
}

TEST(Strategy, NamesRoundTrip) {
  const std::pair<Strategy, const char *> cases[] = {
      {Strategy::Reference, "reference"},
      {Strategy::Upconvert, "upconvert"},
      {Strategy::LutElementwise, "lut-elementwise"},
      {Strategy::LutBitserial, "lut-bitserial"},
      {Strategy::Auto, "auto"}};
  for (const auto &[strategy, name] : cases) {
    EXPECT_EQ(strategy_name(strategy), name);
    EXPECT_EQ(parse_strategy(name), strategy);
  }
  EXPECT_EQ(error_of([] { parse_strategy("lut"); }),
            "unknown strategy 'lut' (expected reference, upconvert, "
            "lut-elementwise, lut-bitserial, auto)");
}

TEST(Target, HostRuns) {
  EXPECT_TRUE(host_runs(Target::Native));
  EXPECT_TRUE(host_runs(Target::Generic));
  EXPECT_EQ(host_runs(Target::SpirvVulkan), vulkan_available());
  EXPECT_EQ(host_runs(Target::SpirvXe2), vulkan_available());
  EXPECT_TRUE(host_runs(native_target()));
  EXPECT_NE(native_target(), Target::Native);
  const CpuFeatures &f = host_cpu_features();
  EXPECT_EQ(host_runs(Target::X86Avx2), f.avx2 && f.fma);
  EXPECT_EQ(host_runs(Target::X86Avx512Vnni),
            f.avx2 && f.fma && f.f16c && f.avx512f && f.avx512bw &&
                f.avx512vl && f.avx512vnni);
  EXPECT_EQ(host_runs(Target::X86Avx512Vnni, Strategy::LutElementwise),
            host_runs(Target::X86Avx512Vnni) && f.avx512vbmi);
  if (host_runs(Target::X86Avx512Vnni))
    EXPECT_EQ(native_target(), Target::X86Avx512Vnni);
  EXPECT_TRUE(host_runs(native_target(Strategy::LutBitserial),
                        Strategy::LutBitserial));
}

// The LUT kernels of x86-avx512vnni use vpermb: a CPU with AVX512-VNNI but
// no AVX512-VBMI (Cascade Lake) runs its up-convert kernels, not those.
TEST(Target, RunsOnFeatureSets) {
  CpuFeatures cascadeLake;
  cascadeLake.avx2 = cascadeLake.fma = cascadeLake.f16c = true;
  cascadeLake.avx512f = cascadeLake.avx512bw = cascadeLake.avx512vl = true;
  cascadeLake.avx512vnni = true;
  for (Strategy s : {Strategy::Reference, Strategy::Upconvert})
    EXPECT_TRUE(runs_on(cascadeLake, Target::X86Avx512Vnni, s));
  for (Strategy s : {Strategy::LutElementwise, Strategy::LutBitserial}) {
    EXPECT_FALSE(runs_on(cascadeLake, Target::X86Avx512Vnni, s));
    EXPECT_TRUE(runs_on(cascadeLake, Target::X86Avx2, s));
    EXPECT_FALSE(runs_on(cascadeLake, Target::X86AvxVnni, s));
  }
  CpuFeatures iceLake = cascadeLake;
  iceLake.avx512vbmi = true;
  for (Strategy s : {Strategy::Upconvert, Strategy::LutElementwise,
                     Strategy::LutBitserial})
    EXPECT_TRUE(runs_on(iceLake, Target::X86Avx512Vnni, s));
  CpuFeatures noF16c = iceLake;
  noF16c.f16c = false;
  EXPECT_FALSE(runs_on(noF16c, Target::X86Avx512Vnni));
  EXPECT_FALSE(runs_on(noF16c, Target::X86Avx2));
  CpuFeatures arm;
  arm.neon = true;
  EXPECT_TRUE(runs_on(arm, Target::Aarch64NeonNoDot, Strategy::LutBitserial));
  EXPECT_FALSE(runs_on(arm, Target::Aarch64Neon));
  EXPECT_FALSE(runs_on(arm, Target::X86Avx2));
}

#if defined(__x86_64__) && defined(__linux__)
// The kernel's view in /proc/cpuinfo (it also hides features the OS does not
// enable) is an independent oracle for CPUID + XGETBV.
TEST(Target, FeaturesMatchProcCpuinfo) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  std::set<std::string> flags;
  while (std::getline(in, line))
    if (line.rfind("flags", 0) == 0) {
      std::istringstream words(line.substr(line.find(':') + 1));
      for (std::string w; words >> w;)
        flags.insert(w);
      break;
    }
  if (flags.empty())
    GTEST_SKIP() << "no /proc/cpuinfo flags";
  const CpuFeatures &f = host_cpu_features();
  EXPECT_EQ(f.arch, "x86_64");
  EXPECT_FALSE(f.vendor.empty());
  EXPECT_EQ(f.sse42, flags.count("sse4_2") == 1);
  EXPECT_EQ(f.avx2, flags.count("avx2") == 1);
  EXPECT_EQ(f.fma, flags.count("fma") == 1);
  EXPECT_EQ(f.f16c, flags.count("f16c") == 1);
  EXPECT_EQ(f.avxvnni, flags.count("avx_vnni") == 1);
  EXPECT_EQ(f.avx512f, flags.count("avx512f") == 1);
  EXPECT_EQ(f.avx512bw, flags.count("avx512bw") == 1);
  EXPECT_EQ(f.avx512vl, flags.count("avx512vl") == 1);
  EXPECT_EQ(f.avx512vnni, flags.count("avx512_vnni") == 1);
  EXPECT_EQ(f.avx512vbmi, flags.count("avx512vbmi") == 1);
  EXPECT_FALSE(f.neon);
  EXPECT_FALSE(f.dotprod);
  EXPECT_FALSE(host_runs(Target::Aarch64Neon));
  EXPECT_FALSE(host_runs(Target::Aarch64NeonNoDot));
}
#endif

} // namespace
} // namespace lowbit
