//===- CompileCommand.cpp - `lowbit compile` ------------------------------===//
//
// Ahead-of-time compilation into a self-contained bundle directory that an
// engine drops into its build with add_subdirectory():
//
//   OUT/CMakeLists.txt        static library `NAME_bundle` (C++17, no LLVM)
//                             over `lowbit_runtime`, which it defines unless
//                             the program already has one (bundles share it)
//   OUT/README.md             the C API and how to build
//   OUT/NAME_kernels.h        shape list, kernel prototypes,
//                             NAME_bundle_register()
//   OUT/NAME_kernels.cpp      one dispatch table per target, keyed by
//                             (format, M, K)
//   OUT/kernels/<fn>.cpp      one generated kernel per (target, format,
//                             shape), built with that target's ISA flags only
//   OUT/include/lowbit/*.h    the runtime headers (lowbit.h is the C API)
//   OUT/src/*                 the runtime sources
//
// NAME is --name (default `lowbit`): it prefixes the CMake target, the
// header and every C symbol, so that two bundles link into one program. A
// bundle holds one or several formats (--format i2s,q4_0, or every format
// a GGUF model's linear weights are packed in, --gguf); the registration
// chooses target or fallback kernels per format.
//
// Every shape gets a kernel for --target and, unless the target is generic,
// one for its fallback (`generic`; `aarch64-neon-nodot` for aarch64-neon,
// since every AArch64 core has NEON): lowbit_bundle_register() checks the
// CPU's features (lowbit::host_runs) and registers the table of the target,
// or the fallback's when the CPU lacks the ISA (per format: the LUT kernels
// may need more than the target's base ISA). tl1/tl2 have no generic kernel;
// there the fallback is the runtime's reference. With --strategy lut-bitserial
// the target's kernels are lut-bitserial ones (x86 and AArch64; the
// aarch64-neon-nodot fallback too) and the generic fallback stays up-convert
// (none for w3gG); the C API packs weights for the layout of the registered
// kernels' strategy.
//
// A GPU target (spirv-vulkan, spirv-xe2) bundles the embedded SPIR-V
// kernels instead (kernels/<fn>.cpp define <fn>_spirv and <fn>_info, see
// lowbit/vulkan.h), a lookup lowbit_bundle_spirv_kernel(M, K, N), and the
// runtime with its Vulkan launcher: CMakeLists.txt finds Vulkan and links
// libvulkan; the engine runs a kernel through lowbit::VulkanKernel (C++).
//
// The kernels are generated here (generateBundleKernel); the text of the
// other generated files lives in templates, tools/lowbit/bundle/*.in (one
// per file, CPU and GPU bundles in one), embedded in this binary
// (BundleTemplates.h) and filled (Template.h) with the values of
// bundleValues(): the bundle's shapes, kernels, tables and names.
//
// The runtime sources are copied from the runtime/ directory of the source
// tree this binary was built from (LOWBIT_RUNTIME_SOURCE_DIR, set by
// tools/lowbit/CMakeLists.txt), or from $LOWBIT_RUNTIME_DIR when set, or
// from <binary>/../../runtime (a source tree moved with its build/).
//
//===----------------------------------------------------------------------===//

#include "Bundle.h"
#include "BundleTemplates.h"
#include "Commands.h"
#include "Models.h"
#include "Options.h"
#include "Progress.h"
#include "Template.h"
#include "engine.h"

#include "lowbit/bitserial.h"
#include "lowbit/error.h"
#include "lowbit/format.h"
#include "lowbit/gguf.h"
#include "lowbit/lut.h"
#include "lowbit/target.h"
#include "lowbit/upconvert.h"

#include "lowbit/Jit/Codegen.h"
#include "lowbit/Jit/Jit.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <utility>

namespace fs = std::filesystem;

namespace lowbit::cli {

using namespace lowbit::jit;

namespace {

fs::path runtimeSourceDir() {
  std::vector<fs::path> candidates;
  if (const char *env = std::getenv("LOWBIT_RUNTIME_DIR"))
    candidates.push_back(env);
#ifdef LOWBIT_RUNTIME_SOURCE_DIR
  candidates.push_back(LOWBIT_RUNTIME_SOURCE_DIR);
#endif
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) // build/bin/lowbit -> <source>/runtime, as schedulesDir() does
    candidates.push_back(exe.parent_path().parent_path().parent_path() /
                         "runtime");
  for (const fs::path &dir : candidates)
    if (fs::exists(dir / "include" / "lowbit" / "lowbit.h", ec) &&
        fs::is_directory(dir / "src", ec))
      return dir;
  throw Error("cannot find the runtime sources (set LOWBIT_RUNTIME_DIR to "
              "the runtime/ directory of the lowbit source tree)");
}

std::string identifier(const std::string &text) {
  std::string out = text;
  for (char &c : out)
    if (!std::isalnum(static_cast<unsigned char>(c)))
      c = '_';
  return out;
}

void writeFile(const fs::path &path, const std::string &text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out)
    throw Error(path.string() + ": cannot write");
}

std::vector<fs::path> sortedFiles(const fs::path &dir,
                                  const std::set<std::string> &extensions) {
  std::vector<fs::path> files;
  for (const auto &entry : fs::directory_iterator(dir))
    if (entry.is_regular_file() &&
        extensions.count(entry.path().extension().string()))
      files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

/// The target whose kernels a bundle for `target` registers on a CPU that
/// lacks `target`'s ISA (its TargetInfo's getFallbackTarget).
std::string fallbackTarget(const std::string &target) {
  return jit::codegen().fallbackTarget(target);
}

/// Whether `target` has LUT kernels (the byte table lookups of
/// lut-elementwise and lut-bitserial).
bool hasLutKernels(const std::string &target) {
  return jit::codegen().hasByteTableLookup(target);
}

/// What the generated files of a bundle describe (tools/lowbit/bundle/*.in
/// hold their text).
struct BundleFiles {
  std::string name;  // the symbol prefix, e.g. lowbit
  std::string macro; // name upper-cased: the prefix of the header's macros
  std::string target, fallback;
  std::string command;
  bool gpu = false;               // spirv-vulkan, spirv-xe2
  GpuDType dtype = GpuDType::F32; // GPU: X and Y on the device
  std::vector<BundleGroup> groups;
  std::vector<BundleKernel> kernels;
  /// CPU, per group: the strategy of its target kernels (what the CPU must
  /// run, lowbit::runs_on), upconvert when it has none.
  std::vector<Strategy> strategies;

  std::string header() const { return name + "_kernels.h"; }
  std::string table() const { return name + "_kernels.cpp"; }
};

/// What the files of `spec` describe, before its kernels (and, for a CPU
/// bundle, their strategies) are added.
BundleFiles describeBundle(const BundleSpec &spec) {
  const Target target = parse_target(spec.target);
  BundleFiles b;
  b.name = spec.name;
  b.macro = spec.name;
  for (char &ch : b.macro)
    ch = char(std::toupper(static_cast<unsigned char>(ch)));
  b.target = spec.target;
  b.gpu = isGpuTarget(target);
  b.fallback = b.gpu || target == Target::Generic ? spec.target
                                                  : fallbackTarget(spec.target);
  b.command = spec.command;
  b.dtype = spec.dtype;
  b.groups = bundleGroups(spec);
  return b;
}

/// `text` escaped for a C string literal.
std::string cString(const std::string &text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out;
}

/// The values of one kernel (an item of the templates' `kernels` lists).
void setKernelValues(TemplateValues &v, const BundleKernel &k) {
  const lowbit_layout_t &layout = k.layout;
  v.set("function", k.function)
      .set("target", k.target)
      .set("format", k.format)
      .set("M", k.M)
      .set("K", k.K)
      .set("minN", k.minN)
      .setFlag("any", k.M == 0)
      .setFlag("gemm", k.minN != 1)
      .set("config", k.config)
      .set("configC", cString(k.config))
      .set("layoutFamily", layout.family == LOWBIT_LAYOUT_VNNI4 ? "VNNI4"
                           : layout.family == LOWBIT_LAYOUT_LUT ? "LUT"
                           : layout.family == LOWBIT_LAYOUT_BITPLANES
                               ? "BITPLANES"
                           : layout.family == LOWBIT_LAYOUT_GGML_ROWS
                               ? "GGML_ROWS"
                               : "NONE")
      .set("laneOrder",
           layout.lane_order == LOWBIT_LANE_LANES ? "LANES" : "ROWS")
      .set("tileRows", int64_t(layout.tile_rows))
      .set("tileK", int64_t(layout.tile_k))
      .set("panelBlocks", int64_t(layout.panel_blocks))
      .set("blockBytes", int64_t(layout.block_bytes))
      .set("file", k.file)
      .setList("flags");
  for (const std::string &flag : k.flags)
    v.add("flags").set("flag", flag);
}

/// The values the bundle templates are filled with.
TemplateValues bundleValues(const BundleFiles &b,
                            const std::vector<std::string> &runtimeSources) {
  TemplateValues v;
  std::string formats;
  bool ternary = true;
  for (const BundleGroup &g : b.groups) {
    formats += (formats.empty() ? "" : ",") + g.format.name();
    ternary = ternary && g.format.is_ternary();
  }
  v.setFlag("gpu", b.gpu)
      .set("name", b.name)
      .set("MACRO", b.macro)
      .set("library", b.name + "_bundle")
      .set("header", b.header())
      .set("table", b.table())
      .set("target", b.target)
      .set("fallback", b.fallback)
      .set("command", b.command)
      .set("dtype", gpu_dtype_name(b.dtype))
      .set("formats", formats)
      .set("firstFormat", b.groups.front().format.name())
      .set("numFormats", int64_t(b.groups.size()))
      .setFlag("ternary", ternary)
      .set("numKernels", int64_t(b.kernels.size()))
      .setList("runtimeSources")
      .setList("shapes")
      .setList("kernels");
  for (const std::string &source : runtimeSources)
    v.add("runtimeSources").set("source", source);
  int64_t numShapes = 0;
  for (const BundleGroup &g : b.groups)
    for (const LinearShape &s : g.shapes) {
      v.add("shapes")
          .set("nameC", cString(s.name))
          .set("layer", s.name.empty() ? "-" : s.name)
          .set("format", g.format.name())
          .set("M", s.M)
          .set("K", s.K);
      ++numShapes;
    }
  v.set("numShapes", numShapes);
  for (const BundleKernel &k : b.kernels)
    setKernelValues(v.add("kernels"), k);
  if (b.gpu)
    return v;

  // One table per target, the kernels of each format together: the
  // target's, and the fallback's unless the target is generic; each group
  // has its range in both (0, 0 when there is no fallback table).
  const bool hasFallback = b.target != b.fallback;
  v.setFlag("hasFallback", hasFallback).setList("tables").setList("groups");
  std::vector<std::vector<std::pair<int64_t, int64_t>>> ranges;
  std::vector<std::pair<std::string, std::string>> tables = {
      {b.target, "targetKernels"}};
  if (hasFallback)
    tables.push_back({b.fallback, "fallbackKernels"});
  int64_t selected = 1; // room for every kernel, and never an empty array
  for (const auto &[target, array] : tables) {
    TemplateValues &table = v.add("tables");
    table.set("target", target).set("array", array).setList("kernels");
    std::vector<std::pair<int64_t, int64_t>> &tableRanges =
        ranges.emplace_back();
    int64_t count = 0;
    for (const BundleGroup &g : b.groups) {
      const int64_t begin = count;
      for (const BundleKernel &k : b.kernels)
        if (k.target == target && k.format == g.format.name()) {
          setKernelValues(table.add("kernels"), k);
          ++count;
        }
      tableRanges.push_back({begin, count});
    }
    table.set("count", count);
    selected += count;
  }
  v.set("numSelected", selected);
  for (size_t i = 0; i < b.groups.size(); ++i)
    v.add("groups")
        .set("index", int64_t(i))
        .set("format", b.groups[i].format.name())
        .set("strategy", strategy_name(b.strategies[i]))
        .set("targetBegin", ranges[0][i].first)
        .set("targetEnd", ranges[0][i].second)
        .set("fallbackBegin", hasFallback ? ranges[1][i].first : 0)
        .set("fallbackEnd", hasFallback ? ranges[1][i].second : 0);
  return v;
}

/// Writes the bundle's header, dispatch table, CMakeLists.txt and README.md
/// from the templates.
void writeBundleFiles(const fs::path &out, const BundleFiles &b,
                      const std::vector<std::string> &runtimeSources) {
  const TemplateValues values = bundleValues(b, runtimeSources);
  for (const auto &[file, bundleTemplate] :
       {std::pair{b.header(), bundle_templates::kernels_h},
        std::pair{b.table(), bundle_templates::kernels_cpp},
        std::pair{std::string("CMakeLists.txt"),
                  bundle_templates::CMakeLists_txt},
        std::pair{std::string("README.md"), bundle_templates::README_md}})
    writeFile(out / file,
              fillTemplate(bundleTemplate.name, bundleTemplate.text, values));
}

/// Copies the runtime headers and sources into the bundle; returns the
/// bundle-relative .cpp files.
std::vector<std::string> copyRuntime(const fs::path &runtime,
                                     const fs::path &out) {
  std::vector<std::string> sources;
  for (const fs::path &h : sortedFiles(runtime / "include" / "lowbit", {".h"}))
    fs::copy_file(h, out / "include" / "lowbit" / h.filename(),
                  fs::copy_options::overwrite_existing);
  for (const fs::path &s : sortedFiles(runtime / "src", {".cpp", ".h"})) {
    fs::copy_file(s, out / "src" / s.filename(),
                  fs::copy_options::overwrite_existing);
    if (s.extension() == ".cpp")
      sources.push_back("src/" + s.filename().string());
  }
  return sources;
}

/// Creates the bundle directories and removes stale kernels.
void prepareBundleDir(const fs::path &out) {
  std::error_code ec;
  fs::create_directories(out / "kernels", ec);
  fs::create_directories(out / "include" / "lowbit", ec);
  fs::create_directories(out / "src", ec);
  if (ec)
    throw Error(out.string() +
                ": cannot create the bundle directory: " + ec.message());
  // Stale kernels of an earlier compile into the same directory would be
  // left unreferenced; remove them so the bundle is exactly this one.
  for (const fs::path &old : sortedFiles(out / "kernels", {".cpp"}))
    fs::remove(old);
  // And the table of an earlier --name (NAME_kernels.{h,cpp}).
  for (const fs::path &old : sortedFiles(out, {".h", ".cpp"})) {
    const std::string file = old.filename().string();
    if (file.size() > 11 &&
        (file.rfind("_kernels.h") == file.size() - 10 ||
         file.rfind("_kernels.cpp") == file.size() - 12))
      fs::remove(old);
  }
}

/// The distinct (M, K) of `shapes`, in order.
std::vector<std::pair<int64_t, int64_t>>
distinctShapes(const std::vector<LinearShape> &shapes) {
  std::vector<std::pair<int64_t, int64_t>> distinct;
  for (const LinearShape &s : shapes)
    if (std::find(distinct.begin(), distinct.end(), std::make_pair(s.M, s.K)) ==
        distinct.end())
      distinct.push_back({s.M, s.K});
  return distinct;
}

/// The kernel of `target` for M x K weights (0 x 0: the any-shape kernel)
/// configured for `nHint` activation rows, as a bundle kernel named after
/// them; its C++ in `cpp`.
BundleKernel generateBundleKernel(const Format &format,
                                  const std::string &target, int64_t M,
                                  int64_t K, int64_t nHint,
                                  const KernelOptions &options,
                                  std::string &cpp,
                                  const std::string &name = "lowbit") {
  const std::string shape = M == 0 && K == 0
                                ? std::string("any")
                                : std::to_string(M) + "x" + std::to_string(K);
  mlir::lowbit::KernelSource source = generateKernelSource(
      format, target, {M, K, nHint}, options,
      name + "_bundle_" + identifier(target) + "_" + identifier(format.name()) +
          "_" + shape + (nHint == 1 ? "" : "_gemm"));
  BundleKernel k;
  k.target = target;
  k.format = format.name();
  k.minN = nHint == 1 ? 1 : 2;
  k.M = M;
  k.K = K;
  k.function = source.functionName;
  k.config = source.config;
  k.layout = source.layoutDescriptor;
  k.tableActGroup = source.tableActGroup;
  k.file = "kernels/" + k.function + ".cpp";
  k.flags = source.compileFlags;
  cpp = std::move(source.cpp);
  return k;
}

/// writeBundle for spirv-vulkan / spirv-xe2.
std::vector<BundleKernel>
writeGpuBundle(const fs::path &out, const BundleSpec &spec,
               std::vector<std::string> &runtimeSources) {
  const Format &format = spec.format;
  if (!hasGpuKernel(format))
    throw Error("lowbit compile: target '" + spec.target +
                "' has kernels for i2s, w1gG..w4gG and the ggml block "
                "formats, not " +
                format.name());
  if (spec.strategy != Strategy::Auto)
    throw Error("lowbit compile: target '" + spec.target +
                "' has only the upconvert strategy");
  fs::path runtime = runtimeSourceDir();
  // Every kernel first: a bad request writes nothing.
  std::vector<BundleKernel> kernels;
  std::vector<std::string> sources;
  for (const auto &[M, K] : distinctShapes(spec.shapes))
    for (int64_t nHint : {int64_t(1), int64_t(16)}) {
      KernelOptions kernelOptions;
      kernelOptions.schedule = spec.schedule;
      kernelOptions.dtype = spec.dtype;
      std::string cpp;
      BundleKernel k = generateBundleKernel(format, spec.target, M, K, nHint,
                                            kernelOptions, cpp);
      // The GEMM kernel only when its config differs from the GEMV one.
      if (nHint != 1 && kernels.back().config == k.config)
        continue;
      kernels.push_back(std::move(k));
      sources.push_back(std::move(cpp));
    }
  prepareBundleDir(out);
  for (size_t i = 0; i < kernels.size(); ++i)
    writeFile(out / kernels[i].file, sources[i]);
  runtimeSources = copyRuntime(runtime, out);
  BundleFiles b = describeBundle(spec);
  b.kernels = std::move(kernels);
  writeBundleFiles(out, b, runtimeSources);
  return b.kernels;
}

} // namespace

std::vector<BundleGroup> bundleGroups(const BundleSpec &spec) {
  if (!spec.groups.empty())
    return spec.groups;
  return {BundleGroup{spec.format, spec.shapes}};
}

std::vector<BundleKernel>
writeBundle(const fs::path &out, const BundleSpec &spec,
            std::vector<std::string> &runtimeSources) {
  const std::vector<BundleGroup> groups = bundleGroups(spec);
  const std::string &targetName = spec.target;
  Target target = parse_target(targetName);
  if (groups.empty())
    throw Error("lowbit compile: no formats to compile");
  for (size_t i = 0; i < groups.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (groups[i].format.name() == groups[j].format.name())
        throw Error("lowbit compile: format " + groups[i].format.name() +
                    " given twice");
  const std::string &name = spec.name;
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])) ||
      identifier(name) != name)
    throw Error("lowbit compile: --name '" + name +
                "' is not a C identifier (letters, digits, _)");
  if (isGpuTarget(target)) {
    if (groups.size() != 1 || !spec.groups.empty())
      throw Error("lowbit compile: target '" + targetName +
                  "' takes one --format and --model or --shapes");
    if (name != "lowbit")
      throw Error("lowbit compile: --name is for the CPU targets, not '" +
                  targetName + "'");
    return writeGpuBundle(out, spec, runtimeSources);
  }
  if (spec.dtype != GpuDType::F32)
    throw Error("lowbit compile: --dtype " + gpu_dtype_name(spec.dtype) +
                " is for the GPU targets (spirv-vulkan, spirv-xe2)");
  if (!jit::codegen().isTarget(target_name(target))) {
    std::string names;
    for (const std::string &name : jit::codegen().targetNames())
      names += (names.empty() ? "" : ", ") + name;
    throw Error("lowbit compile: target '" + targetName +
                "' is not supported (use " + names + " or native)");
  }

  // lut-bitserial applies to every format that has its layout; a format
  // without one keeps auto (an error when no format of the bundle has one).
  // auto takes it for the formats only it reads (w3gG): auto_strategy's
  // choice on a target with a table lookup, as for every other command.
  bool anyBitserial = false;
  for (const BundleGroup &g : groups)
    anyBitserial = anyBitserial || has_bitserial_layout(g.format);
  const bool wantBitserial = spec.strategy == Strategy::LutBitserial;
  const auto usesBitserial = [&](const Format &format) {
    return has_bitserial_layout(format) &&
           (wantBitserial ||
            auto_strategy(format, true) == Strategy::LutBitserial);
  };
  if (wantBitserial && !anyBitserial)
    throw Error("lowbit compile: strategy 'lut-bitserial' has no kernel for " +
                groups.front().format.name() +
                " (it supports i2s, w1gG, w2gG, w3gG, w4gG)");
  for (const BundleGroup &g : groups) {
    const bool bitserial = usesBitserial(g.format);
    const bool lut = has_lut_layout(g.format);
    if (!bitserial && !lut && !has_upconvert_layout(g.format))
      throw Error("lowbit compile: no kernel strategy for " + g.format.name());
    if ((lut || bitserial) && !hasLutKernels(target_name(target)))
      throw Error("lowbit compile: " + g.format.name() +
                  (bitserial ? " (lut-bitserial)" : " (lut-elementwise)") +
                  " needs an x86 or aarch64 target, not " +
                  target_name(target));
  }

  BundleFiles b = describeBundle(spec);

  fs::path runtime = runtimeSourceDir();
  prepareBundleDir(out);

  // Kernels by target (the target's, then the fallback's), then format.
  // Generic has no LUT kernels: tl1/tl2 fall back to the reference there,
  // lut-bitserial to up-convert (none for w3gG); aarch64-neon-nodot has
  // both LUT strategies (tbl needs no dotprod).
  std::vector<std::string> targets = {b.target};
  if (b.fallback != b.target && spec.fallback)
    targets.push_back(b.fallback);
  Progress progress("compile");
  size_t step = 0;
  for (const std::string &t : targets) {
    for (const BundleGroup &g : groups) {
      const Format &format = g.format;
      progress.update(step++, targets.size() * groups.size(),
                      format.name() + " kernels for " + t);
      const bool bitserial = usesBitserial(format);
      const bool lut = has_lut_layout(format);
      const bool fallbackLut = (lut || bitserial) && hasLutKernels(b.fallback);
      if (t != b.target && !(fallbackLut ||
                             (!lut && has_upconvert_layout(format))))
        continue;
      // The shapes, then the any-shape kernels (M = K = 0) that run every
      // other shape of the format.
      std::vector<std::pair<int64_t, int64_t>> shapes;
      if (!spec.any_shape_only)
        shapes = distinctShapes(g.shapes);
      shapes.push_back({0, 0});
      for (const auto &[M, K] : shapes)
        for (int64_t nHint : {int64_t(1), int64_t(16)}) {
          KernelOptions kernelOptions;
          kernelOptions.threads = spec.threads;
          kernelOptions.schedule = spec.schedule;
          if (bitserial && (t == b.target || fallbackLut))
            kernelOptions.strategy = Strategy::LutBitserial;
          // --config is for the named shapes; the any-shape kernels keep
          // the heuristic's (a config such as int8 tables has no
          // any-shape lowering).
          if (t == b.target && !(M == 0 && K == 0))
            kernelOptions.config = spec.config;
          std::string cpp;
          BundleKernel k = generateBundleKernel(format, t, M, K, nHint,
                                                kernelOptions, cpp, name);
          // The GEMM kernel only when its config differs from the GEMV one.
          if (nHint != 1 && b.kernels.back().config == k.config)
            continue;
          writeFile(out / k.file, cpp);
          b.kernels.push_back(std::move(k));
        }
    }
  }
  // The strategy of each format's target kernels: what the CPU must run
  // (lowbit::runs_on: the LUT kernels on x86-avx512vnni need AVX512-VBMI).
  for (const BundleGroup &g : groups) {
    Strategy strategy = Strategy::Upconvert;
    for (const BundleKernel &k : b.kernels)
      if (k.target == b.target && k.format == g.format.name()) {
        const Strategy own = strategyOfConfig(k.config);
        if (own != Strategy::Upconvert)
          strategy = own;
      }
    b.strategies.push_back(strategy);
  }

  runtimeSources = copyRuntime(runtime, out);
  writeBundleFiles(out, b, runtimeSources);
  return b.kernels;
}

namespace {

/// "blk.3.ffn_down.weight" -> "ffn_down": a layer's name without its block
/// and the ".weight" suffix.
std::string layerName(const std::string &tensor) {
  std::string name = tensor;
  if (name.rfind("blk.", 0) == 0) {
    size_t dot = name.find('.', 4);
    if (dot != std::string::npos)
      name = name.substr(dot + 1);
  }
  const std::string suffix = ".weight";
  if (name.size() > suffix.size() &&
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
    name.resize(name.size() - suffix.size());
  return name;
}

/// The groups of a GGUF model: its linear weights' distinct (format, M, K)
/// (lowbit::engine::linear_specs, the formats the engine packs them in),
/// by format in order of first use, each shape named after the layers that
/// have it ("attn_q,attn_output").
std::vector<BundleGroup> ggufGroups(const std::string &path,
                                    const std::string &format) {
  std::unique_ptr<GgufFile> file = GgufFile::open(path);
  std::vector<BundleGroup> groups;
  for (const engine::LinearSpec &spec : engine::linear_specs(*file, format)) {
    if (spec.format.empty())
      continue;
    auto group = std::find_if(groups.begin(), groups.end(),
                              [&](const BundleGroup &g) {
                                return g.format.name() == spec.format;
                              });
    if (group == groups.end()) {
      groups.push_back({Format::parse(spec.format), {}});
      group = groups.end() - 1;
    }
    auto shape = std::find_if(group->shapes.begin(), group->shapes.end(),
                              [&](const LinearShape &s) {
                                return s.M == spec.M && s.K == spec.K;
                              });
    const std::string layer = layerName(spec.tensor);
    if (shape == group->shapes.end()) {
      group->shapes.push_back({layer, spec.M, spec.K});
    } else if (("," + shape->name + ",").find("," + layer + ",") ==
               std::string::npos) {
      shape->name += "," + layer;
    }
  }
  if (groups.empty())
    throw Error(path + ": no linear weight that lowbit packs");
  // A format with no kernel of any strategy yet: the bundle's runtime runs
  // its weights with the scalar reference (as the C API does for any
  // unregistered shape); said here, not silently.
  std::vector<BundleGroup> kept;
  std::string without;
  for (BundleGroup &g : groups) {
    if (has_upconvert_layout(g.format) || has_lut_layout(g.format) ||
        has_bitserial_layout(g.format)) {
      kept.push_back(std::move(g));
      continue;
    }
    without += (without.empty() ? "" : ", ") + g.format.name();
  }
  if (kept.empty())
    throw Error(path + ": no format of its linear weights (" + without +
                ") has generated kernels yet; the engine runs them with the "
                "scalar reference (lowbit generate)");
  if (!without.empty())
    std::fprintf(stderr,
                 "lowbit: %s: no generated kernels for %s yet: the bundle's "
                 "runtime runs those weights with the scalar reference\n",
                 path.c_str(), without.c_str());
  return kept;
}

int runCompile(const ParsedOptions &options) {
  auto start = std::chrono::steady_clock::now();
  BundleSpec spec;
  const int sources = int(options.has("model")) + int(options.has("shapes")) +
                      int(options.has("gguf"));
  if (sources != 1)
    throw Error("give exactly one of --model and --shapes (or --gguf)");
  std::string source;
  if (options.has("gguf")) {
    // --format (optional) is the engine's: the format of every ternary or
    // float linear weight (q4_0 stays q4_0).
    source = "--gguf " + *options.get("gguf");
    spec.groups = ggufGroups(*options.get("gguf"), options.getOr("format", ""));
  } else {
    if (!options.has("format"))
      throw Error("--format is required with --model and --shapes");
    source = options.has("model") ? "--model " + *options.get("model")
                                  : "--shapes " + *options.get("shapes");
    std::vector<LinearShape> shapes =
        optionShapes(options);
    if (shapes.empty())
      throw Error("no shapes to compile");
    for (LinearShape &s : shapes)
      if (s.name.empty())
        s.name = std::to_string(s.M) + "x" + std::to_string(s.K);
    // Several formats: every shape in each (one bundle, one table).
    const std::vector<std::string> formats = splitList(*options.get("format"));
    if (formats.empty())
      throw Error("--format: no format given");
    for (const std::string &f : formats)
      spec.groups.push_back({Format::parse(f), shapes});
  }
  for (const BundleGroup &g : spec.groups)
    for (const LinearShape &s : g.shapes)
      g.format.check_shape(s.M, s.K);
  // A one-format bundle is described by format/shapes as before.
  if (spec.groups.size() == 1) {
    spec.format = spec.groups.front().format;
    spec.shapes = spec.groups.front().shapes;
    spec.groups.clear();
  }
  const std::vector<BundleGroup> groups = bundleGroups(spec);
  std::string formatList;
  for (const BundleGroup &g : groups)
    formatList += (formatList.empty() ? "" : ",") + g.format.name();
  spec.name = options.getOr("name", "lowbit");
  const std::string strategyName = options.getOr("strategy", "auto");
  spec.strategy = parse_strategy(strategyName);
  if (spec.strategy != Strategy::Auto &&
      spec.strategy != Strategy::LutBitserial)
    throw Error("lowbit compile: strategy '" + strategyName +
                "' is not supported (use auto or lut-bitserial)");
  // native: choose_kernel's target for each format of the bundle (the
  // strategy each gets), and of those the first that runs all of their
  // strategies (one target per bundle: a tl2 bundle on a CPU without
  // AVX512-VBMI is x86-avx2 for its q4_0 head too).
  Target target = parse_target(options.getOr("target", "native"));
  if (target == Target::Native) {
    std::vector<KernelChoice> choices;
    for (const BundleGroup &g : groups)
      choices.push_back(choose_kernel(g.format,
                                      spec.strategy == Strategy::LutBitserial &&
                                              has_bitserial_layout(g.format)
                                          ? Strategy::LutBitserial
                                          : Strategy::Auto,
                                      Target::Native));
    target = choices.front().target;
    for (const KernelChoice &candidate : choices)
      if (std::all_of(choices.begin(), choices.end(),
                      [&](const KernelChoice &c) {
                        return host_runs(candidate.target, c.strategy);
                      })) {
        target = candidate.target;
        break;
      }
  }
  spec.target = target_name(target);
  spec.threads = options.threads();
  spec.schedule = loadSchedule(options.getOr("schedule", ""));
  spec.any_shape_only = options.has("any-shape-only");
  if (spec.any_shape_only)
    spec.fallback = false;
  spec.command = "lowbit compile " + source;
  if (options.has("gguf")) {
    if (options.has("format")) // the engine's format, not the bundle's list
      spec.command += " --format " + *options.get("format");
  } else {
    spec.command += " --format " + formatList;
  }
  spec.command += " --target " + spec.target;
  if (spec.name != "lowbit")
    spec.command += " --name " + spec.name;
  if (spec.any_shape_only)
    spec.command += " --any-shape-only";
  if (spec.strategy == Strategy::LutBitserial)
    spec.command += " --strategy lut-bitserial";
  if (spec.schedule)
    spec.command += " --schedule " + options.getOr("schedule", "");
  spec.command += " --threads " + std::to_string(spec.threads);
  spec.dtype = parse_gpu_dtype(options.getOr("dtype", "f32"));
  if (spec.dtype != GpuDType::F32)
    spec.command += " --dtype " + gpu_dtype_name(spec.dtype);

  fs::path out = *options.get("out");
  std::vector<std::string> runtimeSources;
  std::vector<BundleKernel> kernels = writeBundle(out, spec, runtimeSources);

  size_t numShapes = 0, distinct = 0;
  for (const BundleGroup &g : groups)
    numShapes += g.shapes.size();
  std::string targetList;
  for (size_t i = 0; i < kernels.size(); ++i) {
    const BundleKernel &k = kernels[i];
    if (k.target == spec.target && k.minN == 1 && k.M != 0)
      ++distinct;
    if (i == 0 || kernels[i - 1].target != k.target)
      targetList += (targetList.empty() ? "" : " + ") + k.target;
  }
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::printf("compile: %s, %zu shapes (%zu distinct), %zu kernels (%s), "
              "%zu runtime sources -> %s (%.1f s)\n",
              formatList.c_str(), numShapes, distinct, kernels.size(),
              targetList.c_str(), runtimeSources.size(), out.string().c_str(),
              seconds);
  return 0;
}

} // namespace

const Command &compileCommand() {
  static const Command command{
      {"compile",
       "Compile kernels ahead of time into a bundle to add_subdirectory().",
       "The bundle (--out) holds the generated kernels of every (format, "
       "shape) for\n--target and for its fallback when the CPU lacks the ISA "
       "(generic;\naarch64-neon-nodot for aarch64-neon; tl1/tl2 fall back to "
       "the reference), the\nruntime sources, a CMakeLists.txt building the "
       "static library NAME_bundle\n(C++17, no LLVM) over the runtime library "
       "lowbit_runtime (defined by the\nfirst bundle of a program, shared by "
       "the others) and a README.md with the C\nAPI (include/lowbit/lowbit.h, "
       "NAME_kernels.h).\n\n"
       "--gguf compiles exactly the linear weights of a GGUF model, in the "
       "formats the\nengine packs them in (lowbit::engine::linear_specs): "
       "every format the model\nuses goes into the one bundle (e.g. i2s "
       "layers and a q4_0 output head);\n--format then overrides the format "
       "of its ternary and float weights, as\n`lowbit generate --format` "
       "does. --model/--shapes take every shape in each\nformat of --format "
       "(a comma-separated list).\n",
       {{"gguf", "FILE",
         "the linear weights of a GGUF model (instead of --model/--shapes)"},
        {"model", "NAME", "every linear shape of a model (schedules/models)"},
        {"with-output", nullptr,
         "--model: also the output head and embedding shapes (vocab x hidden)"},
        {"shapes", "MxK[,...]", "weight shapes instead of --model"},
        {"format", "F[,...]",
         "weight format(s); required with --model/--shapes; with --gguf the "
         "format of the ternary and float weights (default: the file's)"},
        {"name", "NAME",
         "prefix of the CMake target NAME_bundle, the header NAME_kernels.h "
         "and every C symbol (NAME_bundle_register, ...), so that bundles "
         "live side by side in one program (default lowbit; CPU targets)"},
        {"target", "T",
         "native (default), generic, x86-avx2, x86-avxvnni, "
         "x86-avx512vnni, x86-amx, aarch64-neon, aarch64-neon-nodot, "
         "spirv-vulkan, "
         "spirv-xe2 (SPIR-V kernels + the Vulkan launcher; C++ API; one "
         "format)"},
        {"strategy", "S",
         "auto (default: upconvert, tl1/tl2 lut-elementwise) or "
         "lut-bitserial (x86 and aarch64 kernels of the formats that have "
         "it; a generic fallback stays upconvert)"},
        {"schedule", "FILE", "JSON schedule to take configs from"},
        {"any-shape-only", nullptr,
         "only the target's any-shape kernels of each format (its shapes "
         "are checked, not compiled; no generic fallback)"},
        {"threads", "N", kThreadsHelp},
        {"dtype", "T",
         "GPU targets: element type of X and Y on the device, f32 "
         "(default), f16, bf16"},
        {"out", "DIR", "bundle directory (created)", true}}},
      runCompile};
  return command;
}

} // namespace lowbit::cli
