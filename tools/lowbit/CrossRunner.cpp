//===- CrossRunner.cpp - kernels for another architecture, under qemu -----===//

#include "CrossRunner.h"
#include "Bundle.h"

#include "lowbit/Jit/Jit.h"

#include "lowbit/error.h"
#include "lowbit/npy.h"
#include "lowbit/packed_file.h"
#include "lowbit/target.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace lowbit::cli {

using namespace lowbit::jit;

namespace {

/// The driver's source: beside the runtime sources of this tree.
fs::path driverSource() {
  std::vector<fs::path> candidates;
#ifdef LOWBIT_CROSS_DRIVER_SOURCE
  candidates.push_back(LOWBIT_CROSS_DRIVER_SOURCE);
#endif
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) // build/bin/lowbit -> <source>/tools/lowbit/cross
    candidates.push_back(exe.parent_path().parent_path().parent_path() /
                         "tools" / "lowbit" / "cross" /
                         "lowbit_cross_main.cpp");
  for (const fs::path &path : candidates)
    if (fs::exists(path, ec))
      return path;
  throw Error("cannot find tools/lowbit/cross/lowbit_cross_main.cpp of the "
              "lowbit source tree");
}

std::string readText(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// The text of every header in `dirs` (sorted), for the cache keys.
std::string headerText(const std::vector<fs::path> &dirs) {
  std::string text;
  for (const fs::path &dir : dirs) {
    std::vector<fs::path> files;
    for (const auto &entry : fs::directory_iterator(dir))
      if (entry.path().extension() == ".h")
        files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const fs::path &f : files)
      text += f.filename().string() + "\n" + readText(f);
  }
  return text;
}

/// One kernel of a cross-built bundle executable.
class CrossKernel : public EmulatedKernel {
public:
  CrossKernel(CrossToolchain toolchain, std::string executable,
              std::string target, int64_t minN)
      : toolchain(std::move(toolchain)), executable(std::move(executable)),
        target(std::move(target)), minN(minN) {}
  void run(const PackedWeights &W, const float *X, int64_t N, float *Y,
           int threads) const override;

private:
  CrossToolchain toolchain;
  std::string executable;
  std::string target;
  int64_t minN; // the bundle entry: 1 the GEMV kernel, 2 the GEMM one
};

std::vector<CompiledKernel>
compileCrossKernels(const Format &format, KernelChoice choice,
                    const std::vector<KernelShape> &shapes,
                    const KernelOptions &options) {
  CrossToolchain toolchain = aarch64_toolchain();
  BundleSpec spec;
  spec.format = format;
  spec.target = target_name(choice.target);
  spec.strategy = choice.strategy;
  spec.fallback = false;
  spec.threads = options.threads;
  spec.schedule = options.schedule;
  spec.config = options.config;
  spec.command = "lowbit run/verify --target " + spec.target;
  for (const KernelShape &s : shapes)
    spec.shapes.push_back({"", s.M, s.K});

  ScopedTempDir temp;
  const fs::path bundle = temp.path() / "bundle";
  std::vector<std::string> runtimeSources;
  std::vector<BundleKernel> bundleKernels =
      writeBundle(bundle, spec, runtimeSources);

  // The flags the bundle's CMakeLists.txt gives each file.
  const std::vector<std::string> common = {"-O2", "-ffp-contract=off"};
  const std::vector<std::string> includes = {(bundle / "include").string(),
                                             (bundle / "src").string(),
                                             bundle.string()};
  const std::string runtimeHeaders =
      headerText({bundle / "include" / "lowbit", bundle / "src"});
  const std::string tableHeaders =
      runtimeHeaders + readText(bundle / "lowbit_kernels.h");
  std::vector<BuildUnit> units;
  for (const std::string &source : runtimeSources)
    units.push_back(
        {(bundle / source).string(), common, includes, runtimeHeaders});
  units.push_back({(bundle / "lowbit_kernels.cpp").string(), common, includes,
                   tableHeaders});
  units.push_back({driverSource().string(), common, includes, tableHeaders});
  for (const BundleKernel &k : bundleKernels) {
    std::vector<std::string> flags = {"-O3", "-ffp-contract=off"};
    flags.insert(flags.end(), k.flags.begin(), k.flags.end());
    units.push_back({(bundle / k.file).string(), flags, {}, ""});
  }
  const std::string executable =
      build_cached_executable(toolchain, units, {"-pthread"});

  std::vector<CompiledKernel> kernels;
  for (const KernelShape &s : shapes) {
    const int64_t minN = s.nHint == 1 ? 1 : 2;
    CompiledKernel kernel;
    kernel.choice = choice;
    kernel.format = format;
    kernel.M = s.M;
    kernel.K = s.K;
    for (const BundleKernel &k : bundleKernels)
      if (k.M == s.M && k.K == s.K && k.minN <= minN) {
        // the last one: the largest min_n
        kernel.config = k.config;
        kernel.layout = k.layout;
        kernel.tableActGroup = k.tableActGroup;
      }
    kernel.emulated =
        std::make_shared<CrossKernel>(toolchain, executable, spec.target, minN);
    kernels.push_back(std::move(kernel));
  }
  return kernels;
}

void CrossKernel::run(const PackedWeights &W, const float *X, int64_t N,
                      float *Y, int threads) const {
  ScopedTempDir temp;
  const std::string w = (temp.path() / "w.lbw").string();
  const std::string x = (temp.path() / "x.npy").string();
  const std::string y = (temp.path() / "y.npy").string();
  save_packed(w, W);
  write_npy(x, {N, W.K}, X);
  std::vector<std::string> argv = toolchain.run;
  argv.insert(argv.end(), {executable, target, std::to_string(minN),
                           std::to_string(threads), w, x, y});
  auto [status, output] = run_command(argv);
  std::string firstLine = output.substr(0, output.find('\n'));
  if (status != 0)
    throw Error(target + " kernel under " + argv.front() +
                " failed (exit status " + std::to_string(status) +
                "): " + firstLine);
  if (firstLine.rfind("kernel " + target + " ", 0) != 0)
    throw Error(target + " kernel under " + argv.front() +
                ": unexpected output '" + firstLine + "'");
  NpyArray result = read_npy(y);
  if (result.shape != std::vector<int64_t>{N, W.M})
    throw Error(target + " kernel under " + argv.front() +
                ": the result has the wrong shape");
  std::copy(result.data.begin(), result.data.end(), Y);
}

} // namespace

void installCrossRunner() { setEmulatedBuilder(compileCrossKernels); }

void requireTimableTarget(Target target, const std::string &command) {
  if (target == Target::Native)
    target = native_target();
  if (isEmulatedTarget(target))
    throw Error(command + " cannot time " + target_name(target) +
                " kernels on this host: they run under qemu-aarch64, "
                "whose speed says nothing about ARM hardware (check them "
                "with 'lowbit verify'; README.md, AArch64 NEON, models "
                "their speed)");
  if (target == Target::X86Amx && !host_runs(target))
    throw Error(command + " cannot time x86-amx kernels on this host: " +
                amx_missing_reason(host_cpu_features()) +
                " (LOWBIT_AMX=emulate runs them through an emulation of "
                "the tiles, for 'lowbit verify' only)");
}

} // namespace lowbit::cli
