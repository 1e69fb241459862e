//===- target_test.cpp - targets, strategies and host features ------------===//

#include "lowbit/format.h"
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
      "native",         "generic", "x86-avx2",     "x86-avxvnni",
      "x86-avx512vnni", "x86-amx", "aarch64-neon", "aarch64-neon-nodot",
      "spirv-vulkan",   "spirv-xe2"};
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
            "x86-avxvnni, x86-avx512vnni, x86-amx, aarch64-neon, "
            "aarch64-neon-nodot, spirv-vulkan, spirv-xe2)");
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

// choose_kernel, the one decision of strategy x target: for each format x
// strategy x CPU feature set, `native` and some explicit targets, the
// expected choice ("strategy@target") or error, written out by hand from
// the rules target.h states.
namespace choice {

CpuFeatures x86(bool avxvnni, bool avx512, bool vbmi) {
  CpuFeatures f;
  f.arch = "x86_64";
  f.sse42 = f.avx2 = f.fma = f.f16c = true;
  f.avxvnni = avxvnni;
  f.avx512f = f.avx512bw = f.avx512vl = f.avx512vnni = avx512;
  f.avx512vbmi = vbmi;
  return f;
}

std::string choose(const std::string &format, Strategy strategy, Target target,
                   const CpuFeatures &cpu, bool vulkan = false) {
  try {
    const KernelChoice c =
        choose_kernel(Format::parse(format), strategy, target, cpu, vulkan);
    return strategy_name(c.strategy) + "@" + target_name(c.target);
  } catch (const Error &e) {
    return std::string("error: ") + e.what();
  }
}

const Strategy kStrategies[] = {Strategy::Auto, Strategy::Upconvert,
                                Strategy::LutElementwise,
                                Strategy::LutBitserial, Strategy::Reference};

const std::string kUpconvertTl2 =
    "error: strategy 'upconvert' has no kernel for tl2 (it supports i2s, "
    "w1gG, w2gG, w4gG and the ggml block formats)";
const std::string kUpconvertW3 =
    "error: strategy 'upconvert' has no kernel for w3g64 (it supports i2s, "
    "w1gG, w2gG, w4gG and the ggml block formats)";
std::string noElementwise(const std::string &format) {
  return "error: strategy 'lut-elementwise' has no kernel for " + format +
         " (it supports tl1, tl2)";
}
std::string noBitserial(const std::string &format) {
  return "error: strategy 'lut-bitserial' has no kernel for " + format +
         " (it supports i2s, w1gG, w2gG, w3gG, w4gG)";
}

/// The expected choices of `native` on a CPU whose targets for up-convert
/// and for the LUT kernels are `up` and `lut` (names), in the order
/// format x kStrategies.
std::vector<std::pair<std::string, std::vector<std::string>>>
nativeTable(const std::string &up, const std::string &lut) {
  return {
      {"i2s",
       {"upconvert@" + up, "upconvert@" + up, noElementwise("i2s"),
        "lut-bitserial@" + lut, "reference@" + up}},
      {"tl2",
       {"lut-elementwise@" + lut, kUpconvertTl2, "lut-elementwise@" + lut,
        noBitserial("tl2"), "reference@" + up}},
      {"w3g64",
       {"lut-bitserial@" + lut, kUpconvertW3, noElementwise("w3g64"),
        "lut-bitserial@" + lut, "reference@" + up}},
      {"q4_0",
       {"upconvert@" + up, "upconvert@" + up, noElementwise("q4_0"),
        noBitserial("q4_0"), "reference@" + up}},
      {"iq4_nl",
       {"upconvert@" + up, "upconvert@" + up, noElementwise("iq4_nl"),
        noBitserial("iq4_nl"), "reference@" + up}},
      // The 2- and 3-bit K-quants have bit planes but no lut-bitserial
      // kernel (measured not to fit: docs/perf/kquants.md).
      {"q2_k",
       {"upconvert@" + up, "upconvert@" + up, noElementwise("q2_k"),
        noBitserial("q2_k"), "reference@" + up}},
      {"q3_k",
       {"upconvert@" + up, "upconvert@" + up, noElementwise("q3_k"),
        noBitserial("q3_k"), "reference@" + up}},
  };
}

void expectNative(const CpuFeatures &cpu, const std::string &up,
                  const std::string &lut) {
  for (const auto &[format, expected] : nativeTable(up, lut))
    for (size_t i = 0; i < expected.size(); ++i)
      EXPECT_EQ(choose(format, kStrategies[i], Target::Native, cpu),
                expected[i])
          << format << " " << strategy_name(kStrategies[i]);
}

TEST(ChooseKernel, NativeOnX86FeatureSets) {
  // Zen 4 / Ice Lake and later: AVX512-VNNI with VBMI.
  expectNative(x86(false, true, true), "x86-avx512vnni", "x86-avx512vnni");
  // Cascade Lake: AVX512-VNNI without VBMI, so the LUT kernels (vpermb)
  // take x86-avx2.
  expectNative(x86(false, true, false), "x86-avx512vnni", "x86-avx2");
  // Alder Lake: AVX-VNNI, no AVX-512.
  expectNative(x86(true, false, false), "x86-avxvnni", "x86-avxvnni");
  // Haswell: AVX2 alone.
  expectNative(x86(false, false, false), "x86-avx2", "x86-avx2");
}

// x86-amx: AVX512-VNNI plus AMX-TILE, AMX-INT8 and the OS's permission for
// the tile data; `native` takes it only when all hold, and an explicit
// x86-amx on a host without them names what is missing.
TEST(ChooseKernel, AmxNeedsTilesAndPermission) {
  CpuFeatures sapphire = x86(false, true, true);
  sapphire.amxtile = sapphire.amxint8 = true;
  EXPECT_EQ(amx_missing_reason(sapphire), "the kernel refused XTILEDATA");
  EXPECT_FALSE(runs_on(sapphire, Target::X86Amx));
  expectNative(sapphire, "x86-avx512vnni", "x86-avx512vnni");
  sapphire.amx_permitted = true;
  EXPECT_EQ(amx_missing_reason(sapphire), "");
  EXPECT_TRUE(runs_on(sapphire, Target::X86Amx));
  expectNative(sapphire, "x86-amx", "x86-amx");
  CpuFeatures zen4 = x86(false, true, true);
  EXPECT_EQ(amx_missing_reason(zen4), "no AMX-INT8");
  zen4.amxtile = true; // tiles without INT8 (not a real CPU)
  EXPECT_EQ(amx_missing_reason(zen4), "no AMX-INT8");
  EXPECT_EQ(amx_missing_reason(x86(true, false, false)), "no AVX512-VNNI");
}

TEST(ChooseKernel, NativeOnAarch64) {
  CpuFeatures arm;
  arm.arch = "aarch64";
  arm.neon = arm.dotprod = true;
  expectNative(arm, "aarch64-neon", "aarch64-neon");
  arm.dotprod = false;
  expectNative(arm, "aarch64-neon-nodot", "aarch64-neon-nodot");
}

TEST(ChooseKernel, NativeWithoutSimd) {
  CpuFeatures old; // SSE4.2 only: generic, which has no table lookup
  old.arch = "x86_64";
  old.sse42 = true;
  const std::string noLookup =
      "' has no kernel for target 'generic' (it needs pshufb or tbl: "
      "x86-avx2, x86-avxvnni, x86-avx512vnni, aarch64-neon, "
      "aarch64-neon-nodot)";
  EXPECT_EQ(choose("i2s", Strategy::Auto, Target::Native, old),
            "upconvert@generic");
  EXPECT_EQ(choose("tl2", Strategy::Auto, Target::Native, old),
            "reference@generic");
  EXPECT_EQ(choose("w3g64", Strategy::Auto, Target::Native, old),
            "reference@generic");
  EXPECT_EQ(choose("tl2", Strategy::LutElementwise, Target::Native, old),
            "error: strategy 'lut-elementwise" + noLookup);
  EXPECT_EQ(choose("i2s", Strategy::LutBitserial, Target::Native, old),
            "error: strategy 'lut-bitserial" + noLookup);
  // A format error comes before the target's.
  EXPECT_EQ(choose("q4_0", Strategy::LutBitserial, Target::Native, old),
            noBitserial("q4_0"));
}

TEST(ChooseKernel, ExplicitTargets) {
  const CpuFeatures zen4 = x86(false, true, true);
  const CpuFeatures cascade = x86(false, true, false);
  const CpuFeatures haswell = x86(false, false, false);
  EXPECT_EQ(choose("tl2", Strategy::Auto, Target::X86Avx2, zen4),
            "lut-elementwise@x86-avx2");
  EXPECT_EQ(choose("i2s", Strategy::LutBitserial, Target::X86Avx2, zen4),
            "lut-bitserial@x86-avx2");
  EXPECT_EQ(choose("q4_0", Strategy::Auto, Target::Generic, zen4),
            "upconvert@generic");
  EXPECT_EQ(choose("tl2", Strategy::Auto, Target::Generic, zen4),
            "reference@generic");
  const std::string noVbmi =
      " kernels on this host: they need AVX512-VBMI (vpermb); use x86-avx2";
  EXPECT_EQ(choose("tl2", Strategy::Auto, Target::X86Avx512Vnni, cascade),
            "error: target 'x86-avx512vnni' cannot run lut-elementwise" +
                noVbmi);
  EXPECT_EQ(
      choose("i2s", Strategy::LutBitserial, Target::X86Avx512Vnni, cascade),
      "error: target 'x86-avx512vnni' cannot run lut-bitserial" + noVbmi);
  EXPECT_EQ(choose("i2s", Strategy::Auto, Target::X86Avx512Vnni, cascade),
            "upconvert@x86-avx512vnni");
  EXPECT_EQ(choose("i2s", Strategy::Auto, Target::X86Avx512Vnni, haswell),
            "error: target 'x86-avx512vnni' cannot run on this host (see "
            "'lowbit targets')");
  EXPECT_EQ(choose("i2s", Strategy::Auto, Target::X86AvxVnni, zen4),
            "error: target 'x86-avxvnni' cannot run on this host (see "
            "'lowbit targets')");
  // AArch64 code runs emulated on x86 (qemu-aarch64), LUT kernels included.
  EXPECT_EQ(choose("tl2", Strategy::Auto, Target::Aarch64Neon, haswell),
            "lut-elementwise@aarch64-neon");
  EXPECT_EQ(choose("i2s", Strategy::Auto, Target::Aarch64NeonNoDot, zen4),
            "upconvert@aarch64-neon-nodot");
}

TEST(ChooseKernel, GpuTargets) {
  const CpuFeatures zen4 = x86(false, true, true);
  EXPECT_EQ(choose("i2s", Strategy::Auto, Target::SpirvVulkan, zen4, false),
            "error: target 'spirv-vulkan' cannot run on this host: no Vulkan "
            "device (see 'lowbit targets')");
  EXPECT_EQ(choose("i2s", Strategy::Auto, Target::SpirvVulkan, zen4, true),
            "upconvert@spirv-vulkan");
  EXPECT_EQ(choose("q4_0", Strategy::Upconvert, Target::SpirvXe2, zen4, true),
            "upconvert@spirv-xe2");
  EXPECT_EQ(choose("iq4_nl", Strategy::Auto, Target::SpirvVulkan, zen4, true),
            "upconvert@spirv-vulkan");
  EXPECT_EQ(choose("tl2", Strategy::Auto, Target::SpirvVulkan, zen4, true),
            "reference@spirv-vulkan");
  const std::string lut =
      choose("i2s", Strategy::LutElementwise, Target::SpirvXe2, zen4, true);
  EXPECT_EQ(lut.rfind("error: target 'spirv-xe2' has only the upconvert "
                      "strategy for i2s, w1gG..w4gG and the ggml block "
                      "formats",
                      0),
            0u)
      << lut;
  EXPECT_NE(lut.find(" (got lut-elementwise for i2s)"), std::string::npos)
      << lut;
  // native never picks a GPU.
  EXPECT_EQ(choose("i2s", Strategy::Auto, Target::Native, zen4, true),
            "upconvert@x86-avx512vnni");
}

} // namespace choice

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
  EXPECT_EQ(f.amxtile, flags.count("amx_tile") == 1);
  EXPECT_EQ(f.amxint8, flags.count("amx_int8") == 1);
  EXPECT_FALSE(f.neon);
  EXPECT_FALSE(f.dotprod);
  EXPECT_FALSE(host_runs(Target::Aarch64Neon));
  EXPECT_FALSE(host_runs(Target::Aarch64NeonNoDot));
}
#endif

} // namespace
} // namespace lowbit
