//===- target.cpp - host features, targets and strategies -----------------===//
//
// x86 features come from CPUID and are only reported when XGETBV shows that
// the OS saves the register state they need (YMM for AVX*, opmask and ZMM
// for AVX-512). Built without any -m flag, so this runs on every CPU.
//
//===----------------------------------------------------------------------===//

#include "lowbit/target.h"
#include "lowbit/bitserial.h"
#include "lowbit/error.h"
#include "lowbit/format.h"
#include "lowbit/lut.h"
#include "lowbit/upconvert.h"
#include "lowbit/vulkan.h"

#include <cstdlib>
#include <cstring>
#include <string_view>
#include <utility>

#if defined(__x86_64__)
#include <cpuid.h>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif
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
  f.amxtile = l7.d & (1u << 24);
  f.amxint8 = l7.d & (1u << 25);
  // XCR0 bits 17 (XTILECFG) and 18 (XTILEDATA); Linux (5.16+) enables
  // the 8 KiB of tile data per process only on request (Documentation/
  // arch/x86/xstate.rst): ARCH_REQ_XCOMP_PERM (0x1023) for feature 18.
  if (f.amxtile && f.amxint8 && f.avx512f &&
      (xcr0 & (3ull << 17)) == (3ull << 17)) {
#if defined(__linux__)
    f.amx_permitted = syscall(SYS_arch_prctl, 0x1023, 18) == 0;
#endif
  }
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
    {Target::X86Amx, "x86-amx"},
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
  case Target::X86Amx:
    // AVX512-VNNI's kernels (and its LUT ones) plus the tiles.
    return runs_on(f, Target::X86Avx512Vnni, strategy) &&
           amx_missing_reason(f).empty();
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

std::string amx_missing_reason(const CpuFeatures &f) {
  if (!runs_on(f, Target::X86Avx512Vnni))
    return "no AVX512-VNNI";
  if (!f.amxtile || !f.amxint8)
    return "no AMX-INT8";
  if (!f.amx_permitted)
    return "the kernel refused XTILEDATA";
  return "";
}

bool amx_emulated(const CpuFeatures &f) {
  const char *mode = std::getenv("LOWBIT_AMX");
  return mode && std::string_view(mode) == "emulate" &&
         !runs_on(f, Target::X86Amx) && runs_on(f, Target::X86Avx512Vnni);
}

bool host_runs(Target t, Strategy strategy) {
  return runs_on(host_cpu_features(), t, strategy);
}

/// The order `native` tries targets in: the widest ISA first.
static constexpr Target kNativeOrder[] = {
    Target::X86Amx,      Target::X86Avx512Vnni,    Target::X86AvxVnni,
    Target::X86Avx2,     Target::Aarch64Neon,      Target::Aarch64NeonNoDot,
    Target::Generic};

Target native_target(Strategy strategy) {
  for (Target t : kNativeOrder)
    if (host_runs(t, strategy))
      return t;
  return Target::Generic;
}

bool is_aarch64_target(Target t) {
  return t == Target::Aarch64Neon || t == Target::Aarch64NeonNoDot;
}

bool is_gpu_target(Target t) {
  return t == Target::SpirvVulkan || t == Target::SpirvXe2;
}

bool emulated_on(const CpuFeatures &f, Target t) {
  return is_aarch64_target(t) && !runs_on(f, t);
}

bool has_byte_table_lookup(Target t) {
  switch (t) {
  case Target::X86Avx2:
  case Target::X86AvxVnni:
  case Target::X86Avx512Vnni:
  case Target::X86Amx:
  case Target::Aarch64Neon:
  case Target::Aarch64NeonNoDot:
    return true;
  case Target::Native:
  case Target::Generic:
  case Target::SpirvVulkan:
  case Target::SpirvXe2:
    return false;
  }
  return false;
}

bool has_gpu_kernel(const Format &format) {
  return ggml_block_type(format.kind) != nullptr ||
         format.kind == FormatKind::I2S || format.kind == FormatKind::Group;
}

Strategy auto_strategy(const Format &format, bool byte_table_lookup) {
  if (has_upconvert_layout(format))
    return Strategy::Upconvert;
  if (has_lut_layout(format) && byte_table_lookup)
    return Strategy::LutElementwise;
  if (has_bitserial_layout(format) && byte_table_lookup)
    return Strategy::LutBitserial;
  return Strategy::Reference;
}

namespace {

/// The error of a LUT strategy for a format without its layout
/// (`supported`: the formats that have one), or "" when it has one.
std::string lut_format_error(Strategy strategy, bool has_layout,
                             const char *supported, const Format &format) {
  if (has_layout)
    return "";
  return "strategy '" + strategy_name(strategy) + "' has no kernel for " +
         format.name() + " (it supports " + supported + ")";
}

/// The strategy of (format, strategy) on the concrete CPU target `t`:
/// `auto` resolved, the format's layout and the target's table lookup
/// checked (Error otherwise).
Strategy cpu_strategy(const Format &format, Strategy strategy, Target t) {
  const bool lookup = has_byte_table_lookup(t);
  if (strategy == Strategy::Auto)
    return auto_strategy(format, lookup);
  std::string error;
  switch (strategy) {
  case Strategy::Reference:
  case Strategy::Auto:
    return strategy;
  case Strategy::Upconvert:
    if (!has_upconvert_layout(format))
      throw Error("strategy 'upconvert' has no kernel for " + format.name() +
                  " (it supports i2s, w1gG, w2gG, w4gG and the ggml block "
                  "formats)");
    return strategy;
  case Strategy::LutBitserial:
    error = lut_format_error(strategy, has_bitserial_layout(format),
                             "i2s, w1gG, w2gG, w3gG, w4gG", format);
    break;
  case Strategy::LutElementwise:
    error =
        lut_format_error(strategy, has_lut_layout(format), "tl1, tl2", format);
    break;
  }
  if (!error.empty())
    throw Error(error);
  if (!lookup)
    throw Error("strategy '" + strategy_name(strategy) +
                "' has no kernel for target '" + target_name(t) +
                "' (it needs pshufb or tbl: x86-avx2, x86-avxvnni, "
                "x86-avx512vnni, aarch64-neon, aarch64-neon-nodot)");
  return strategy;
}

} // namespace

KernelChoice choose_kernel(const Format &format, Strategy strategy,
                           Target target, const CpuFeatures &cpu, bool vulkan) {
  if (target == Target::Native) {
    // The first target of the order whose base ISA the CPU has and that
    // runs the strategy the format gets there. Generic (last) always runs:
    // its error, if any, is the answer.
    for (Target t : kNativeOrder) {
      if (!runs_on(cpu, t))
        continue;
      const Strategy s = cpu_strategy(format, strategy, t);
      if (runs_on(cpu, t, s))
        return {s, t};
    }
  }
  const bool gpu = is_gpu_target(target);
  const bool amxEmulated = target == Target::X86Amx && amx_emulated(cpu);
  if (target == Target::X86Amx && !runs_on(cpu, target) && !amxEmulated)
    throw Error("target 'x86-amx' cannot run on this host: " +
                amx_missing_reason(cpu) +
                " (LOWBIT_AMX=emulate runs its kernels through an emulation "
                "of the tile instructions on a host with AVX512-VNNI)");
  if (!(gpu ? vulkan : runs_on(cpu, target)) && !emulated_on(cpu, target) &&
      !amxEmulated)
    throw Error("target '" + target_name(target) + "' cannot run on this " +
                (gpu ? "host: no Vulkan device" : "host") +
                " (see 'lowbit targets')");
  if (gpu) {
    // The GPU kernel unpacks codes to int8 products: up-convert.
    const bool gpu_format = has_gpu_kernel(format);
    if (strategy == Strategy::Auto)
      strategy = gpu_format ? Strategy::Upconvert : Strategy::Reference;
    if (strategy != Strategy::Reference &&
        (strategy != Strategy::Upconvert || !gpu_format))
      throw Error("target '" + target_name(target) +
                  "' has only the upconvert strategy for i2s, w1gG..w4gG and "
                  "the ggml block formats (got " +
                  strategy_name(strategy) + " for " + format.name() + ")");
    return {strategy, target};
  }
  const Strategy s = cpu_strategy(format, strategy, target);
  if (!runs_on(cpu, target, s) && !emulated_on(cpu, target) && !amxEmulated)
    throw Error("target '" + target_name(target) + "' cannot run " +
                strategy_name(s) +
                " kernels on this host: they need AVX512-VBMI (vpermb); use "
                "x86-avx2");
  return {s, target};
}

KernelChoice choose_kernel(const Format &format, Strategy strategy,
                           Target target) {
  return choose_kernel(format, strategy, target, host_cpu_features(),
                       is_gpu_target(target) && vulkan_available());
}

Strategy parse_strategy(std::string_view name) {
  return parse_name(kStrategies, name, "strategy");
}

std::string strategy_name(Strategy s) { return name_of(kStrategies, s); }

} // namespace lowbit
