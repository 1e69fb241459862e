//===- target.h - host features, targets and strategies ---------*- C++ -*-===//
#ifndef LOWBIT_TARGET_H
#define LOWBIT_TARGET_H

#include <string>
#include <string_view>
#include <vector>

namespace lowbit {

/// ISA features of the host, detected at run time (CPUID + XGETBV on x86,
/// so a feature the OS does not enable counts as missing).
struct CpuFeatures {
  std::string arch;   // "x86_64", "aarch64", ...
  std::string vendor; // "AuthenticAMD", ...
  std::string model;  // brand string
  bool sse42 = false, avx2 = false, fma = false, f16c = false;
  bool avxvnni = false, avxvnniint8 = false;
  bool avx512f = false, avx512bw = false, avx512vl = false,
       avx512vnni = false, avx512vbmi = false;
  bool neon = false, dotprod = false;
};

const CpuFeatures &host_cpu_features();

/// Aarch64Neon is Armv8.2-A + dotprod (sdot); Aarch64NeonNoDot the
/// Advanced SIMD of any Armv8-A core.
enum class Target {
  Native, Generic, X86Avx2, X86AvxVnni, X86Avx512Vnni, Aarch64Neon,
  Aarch64NeonNoDot, SpirvVulkan, SpirvXe2,
};

/// Throws Error listing the known targets on an unknown name.
Target parse_target(std::string_view name);
std::string target_name(Target t);
std::vector<Target> all_targets();
enum class Strategy { Reference, Upconvert, LutElementwise, LutBitserial, Auto };

/// Whether code for `t` can run natively on a CPU with features `f` (GPU
/// targets: whether this host has a Vulkan device). The kernels of a
/// strategy may need more than the target's base ISA: the LUT strategies
/// on x86-avx512vnni look their tables up with vpermb (AVX512-VBMI), which
/// Cascade Lake and Cooper Lake lack.
bool runs_on(const CpuFeatures &f, Target t,
             Strategy strategy = Strategy::Upconvert);
/// runs_on(host_cpu_features(), t, strategy).
bool host_runs(Target t, Strategy strategy = Strategy::Upconvert);
/// The best native target on this host (what `native` resolves to), for
/// the kernels of `strategy`.
Target native_target(Strategy strategy = Strategy::Upconvert);
/// Whether `t` compiles to AArch64 code (run under qemu-aarch64 when the
/// host is not AArch64).
bool is_aarch64_target(Target t);

/// Throws Error listing the known strategies on an unknown name.
Strategy parse_strategy(std::string_view name);
std::string strategy_name(Strategy s);

} // namespace lowbit

#endif // LOWBIT_TARGET_H
