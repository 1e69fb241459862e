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
  /// AMX-TILE and AMX-INT8 (CPUID), and whether the OS let this process use
  /// the tile data: XCR0 enables XTILECFG and XTILEDATA and Linux granted
  /// arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA), which the runtime
  /// asks once per process when it detects the features.
  bool amxtile = false, amxint8 = false, amx_permitted = false;
  bool neon = false, dotprod = false;
};

const CpuFeatures &host_cpu_features();

/// Aarch64Neon is Armv8.2-A + dotprod (sdot); Aarch64NeonNoDot the
/// Advanced SIMD of any Armv8-A core.
enum class Target {
  Native, Generic, X86Avx2, X86AvxVnni, X86Avx512Vnni, X86Amx, Aarch64Neon,
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
/// Why a CPU with features `f` does not run x86-amx natively: "" when it
/// does, else "no AVX512-VNNI", "no AMX-INT8" (CPUID lacks AMX-TILE or
/// AMX-INT8) or "the kernel refused XTILEDATA" (XCR0 or arch_prctl).
std::string amx_missing_reason(const CpuFeatures &f);
/// Whether x86-amx kernels run here through the emulation of amx_tiles.h
/// (compiled with -DLOWBIT_AMX_EMULATE): the CPU lacks AMX (or its
/// permission), has the rest of x86-amx (AVX512-VNNI), and the environment
/// asks for it with LOWBIT_AMX=emulate. Only an explicit --target x86-amx
/// runs emulated; `native` never picks it.
bool amx_emulated(const CpuFeatures &f);
/// runs_on(host_cpu_features(), t, strategy).
bool host_runs(Target t, Strategy strategy = Strategy::Upconvert);
/// The best native target on this host for the kernels of `strategy` (the
/// order choose_kernel resolves `native` in).
Target native_target(Strategy strategy = Strategy::Upconvert);
/// Whether `t` compiles to AArch64 code (run under qemu-aarch64 when the
/// host is not AArch64).
bool is_aarch64_target(Target t);

/// Throws Error listing the known strategies on an unknown name.
Strategy parse_strategy(std::string_view name);
std::string strategy_name(Strategy s);

struct Format;

/// A strategy and a concrete target (never `auto` or `native`).
struct KernelChoice {
  Strategy strategy;
  Target target;
};

/// Whether `t` is a GPU target (spirv-vulkan, spirv-xe2).
bool is_gpu_target(Target t);
/// Whether a CPU with features `f` runs code for `t` only under an emulator
/// (AArch64 code elsewhere: qemu-aarch64).
bool emulated_on(const CpuFeatures &f, Target t);
/// Whether the kernels of `t` look bytes up in a table (pshufb, vpermb,
/// tbl), which the LUT strategies need: every x86 and AArch64 target, as
/// lib/Target's TargetInfo::hasByteTableLookup says (tested there).
bool has_byte_table_lookup(Target t);
/// Whether the GPU kernel (#lowbit.gpu, up-convert) reads `format`: i2s,
/// w1gG..w4gG and the ggml block formats.
bool has_gpu_kernel(const Format &format);
/// The strategy `auto` takes for `format` on a CPU target (with or without
/// a byte table lookup): up-convert where it has a layout (measured faster
/// than lut-bitserial on every llama3-8b and bitnet shape), the LUT
/// strategies for the formats only they read, else the reference.
Strategy auto_strategy(const Format &format, bool byte_table_lookup);

/// The one place that decides strategy x target: `native` becomes the
/// first of x86-avx512vnni, x86-avxvnni, x86-avx2, aarch64-neon,
/// aarch64-neon-nodot, generic whose base ISA the CPU (features `cpu`) has
/// and that runs the strategy it gets for `format` there (the LUT kernels of
/// x86-avx512vnni need AVX512-VBMI: without it they take x86-avx2); `auto`
/// becomes auto_strategy's (the up-convert kernel on a GPU target). Throws
/// Error with one line when the combination has no kernel or cannot run
/// (`vulkan`: whether a Vulkan device is present; AArch64 targets run
/// emulated on other CPUs). A tuned schedule's entry may override the
/// choice per shape (lib/Jit's resolveChoiceFor).
KernelChoice choose_kernel(const Format &format, Strategy strategy,
                           Target target, const CpuFeatures &cpu, bool vulkan);
/// choose_kernel on this host (host_cpu_features(); a Vulkan device is
/// looked for only for a GPU target).
KernelChoice choose_kernel(const Format &format, Strategy strategy,
                           Target target);

} // namespace lowbit

#endif // LOWBIT_TARGET_H
