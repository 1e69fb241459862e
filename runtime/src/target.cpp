//===- target.cpp - host features, targets and strategies -----------------===//
//
// x86 features come from CPUID and are only reported when XGETBV shows that
// the OS saves the register state they need (YMM for AVX*, opmask and ZMM
// for AVX-512). Built without any -m flag, so this runs on every CPU.
//
//===----------------------------------------------------------------------===//

#include "lowbit/target.h"
#include "lowbit/error.h"
#include "lowbit/vulkan.h"

#include <cstring>
#include <string_view>
#include <utility>

#if defined(__x86_64__)
#include <cpuid.h>
#elif defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif

namespace lowbit {

#if defined(__x86_64__)
static uint64_t read_xcr0() {
  uint32_t lo, hi;
  // XGETBV as an instruction, not _xgetbv(), which needs -mxsave.
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (uint64_t(hi) << 32) | lo;
}

struct CpuidRegs {
  unsigned a = 0, b = 0, c = 0, d = 0;
};

// All zero for a leaf beyond the CPU's maximum (__get_cpuid_count checks).
static CpuidRegs cpuid(unsigned leaf, unsigned subleaf) {
  CpuidRegs r;
  __get_cpuid_count(leaf, subleaf, &r.a, &r.b, &r.c, &r.d);
  return r;
}

static void detect_x86(CpuFeatures &f) {
  f.arch = "x86_64";
  const CpuidRegs vendor = cpuid(0, 0);
  char name[13] = {};
  std::memcpy(name, &vendor.b, 4);
  std::memcpy(name + 4, &vendor.d, 4);
  std::memcpy(name + 8, &vendor.c, 4);
  f.vendor = name;

  const CpuidRegs l1 = cpuid(1, 0);
  const bool osxsave = l1.c & (1u << 27);
  const uint64_t xcr0 = osxsave ? read_xcr0() : 0;
  const bool ymm = (xcr0 & 0x6) == 0x6;   // XMM and YMM state
  const bool zmm = (xcr0 & 0xE6) == 0xE6; // plus opmask, ZMM_Hi256, Hi16_ZMM
  const bool avx = ymm && (l1.c & (1u << 28));
  f.sse42 = l1.c & (1u << 20);
  f.fma = avx && (l1.c & (1u << 12));
  f.f16c = avx && (l1.c & (1u << 29));

  const CpuidRegs l7 = cpuid(7, 0);
  f.avx2 = avx && (l7.b & (1u << 5));
  f.avx512f = zmm && (l7.b & (1u << 16));
  f.avx512bw = f.avx512f && (l7.b & (1u << 30));
  f.avx512vl = f.avx512f && (l7.b & (1u << 31));
  f.avx512vnni = f.avx512f && (l7.c & (1u << 11));
  f.avx512vbmi = f.avx512f && (l7.c & (1u << 1));
  if (l7.a >= 1) { // subleaf 1 exists
    const CpuidRegs l7s1 = cpuid(7, 1);
    f.avxvnni = avx && (l7s1.a & (1u << 4));
    f.avxvnniint8 = avx && (l7s1.d & (1u << 4));
  }

  unsigned brand[12] = {};
  for (unsigned i = 0; i < 3; ++i) {
    const CpuidRegs r = cpuid(0x80000002 + i, 0);
    unsigned words[4] = {r.a, r.b, r.c, r.d};
    std::memcpy(brand + 4 * i, words, sizeof(words));
  }
  char text[49] = {};
  std::memcpy(text, brand, 48);
  const std::string model = text;
  const size_t first = model.find_first_not_of(' ');
  if (first != std::string::npos)
    f.model = model.substr(first, model.find_last_not_of(' ') - first + 1);
}
#endif

static CpuFeatures detect() {
  CpuFeatures f;
#if defined(__x86_64__)
  detect_x86(f);
#elif defined(__aarch64__)
  f.arch = "aarch64";
  f.neon = true; // Advanced SIMD is part of the AArch64 base ISA.
#if defined(__linux__)
  f.dotprod = getauxval(AT_HWCAP) & (1ul << 20); // HWCAP_ASIMDDP
#endif
#else
  f.arch = "unknown";
#endif
  return f;
}

const CpuFeatures &host_cpu_features() {
  static const CpuFeatures features = detect();
  return features;
}

static constexpr std::pair<Target, const char *> kTargets[] = {
    {Target::Native, "native"},
    {Target::Generic, "generic"},
    {Target::X86Avx2, "x86-avx2"},
    {Target::X86AvxVnni, "x86-avxvnni"},
    {Target::X86Avx512Vnni, "x86-avx512vnni"},
    {Target::Aarch64Neon, "aarch64-neon"},
    {Target::Aarch64NeonNoDot, "aarch64-neon-nodot"},
    {Target::SpirvVulkan, "spirv-vulkan"},
    {Target::SpirvXe2, "spirv-xe2"},
};

static constexpr std::pair<Strategy, const char *> kStrategies[] = {
    {Strategy::Reference, "reference"},
    {Strategy::Upconvert, "upconvert"},
    {Strategy::LutElementwise, "lut-elementwise"},
    {Strategy::LutBitserial, "lut-bitserial"},
    {Strategy::Auto, "auto"},
};

// Looks `name` up in a (value, name) table; throws Error listing the names.
template <typename T, size_t N>
static T parse_name(const std::pair<T, const char *> (&table)[N],
                    std::string_view name, const char *kind) {
  std::string known;
  for (const auto &[value, text] : table) {
    if (name == text)
      return value;
    known += (known.empty() ? "" : ", ") + std::string(text);
  }
  throw Error("unknown " + std::string(kind) + " '" + std::string(name) +
              "' (expected " + known + ")");
}

template <typename T, size_t N>
static std::string name_of(const std::pair<T, const char *> (&table)[N],
                           T value) {
  for (const auto &[v, text] : table)
    if (v == value)
      return text;
  return "?";
}

Target parse_target(std::string_view name) {
  return parse_name(kTargets, name, "target");
}

std::string target_name(Target t) { return name_of(kTargets, t); }

std::vector<Target> all_targets() {
  std::vector<Target> targets;
  for (const auto &entry : kTargets)
    targets.push_back(entry.first);
  return targets;
}

bool runs_on(const CpuFeatures &f, Target t, Strategy strategy) {
  const bool lut = strategy == Strategy::LutElementwise ||
                   strategy == Strategy::LutBitserial;
  // Every x86 kernel is compiled with -mavx2 -mfma -mf16c (fp16 scales are
  // converted with vcvtph2ps) on top of its own ISA.
  const bool x86Base = f.avx2 && f.fma && f.f16c;
  switch (t) {
  case Target::Native:
  case Target::Generic:
    return true;
  case Target::X86Avx2:
    return x86Base;
  case Target::X86AvxVnni:
    return x86Base && f.avxvnni;
  case Target::X86Avx512Vnni:
    // VBMI (vpermb) for the LUT kernels: every CPU with AVX512-VNNI has it
    // except Cascade/Cooper Lake, which run those on x86-avx2.
    return x86Base && f.avx512f && f.avx512bw && f.avx512vl && f.avx512vnni &&
           (!lut || f.avx512vbmi);
  case Target::Aarch64Neon:
    return f.neon && f.dotprod;
  case Target::Aarch64NeonNoDot:
    return f.neon;
  case Target::SpirvVulkan:
  case Target::SpirvXe2:
    // Vulkan compute shaders (spirv-xe2 only changes the tiles): they run
    // wherever the runtime finds a Vulkan device, lavapipe included.
    return vulkan_available();
  }
  return false;
}

bool host_runs(Target t, Strategy strategy) {
  return runs_on(host_cpu_features(), t, strategy);
}

Target native_target(Strategy strategy) {
  for (Target t : {Target::X86Avx512Vnni, Target::X86AvxVnni, Target::X86Avx2,
                   Target::Aarch64Neon, Target::Aarch64NeonNoDot})
    if (host_runs(t, strategy))
      return t;
  return Target::Generic;
}

bool is_aarch64_target(Target t) {
  return t == Target::Aarch64Neon || t == Target::Aarch64NeonNoDot;
}

Strategy parse_strategy(std::string_view name) {
  return parse_name(kStrategies, name, "strategy");
}

std::string strategy_name(Strategy s) { return name_of(kStrategies, s); }

} // namespace lowbit
