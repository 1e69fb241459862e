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
// The runtime sources are copied from the runtime/ directory of the source
// tree this binary was built from (LOWBIT_RUNTIME_SOURCE_DIR, set by
// tools/lowbit/CMakeLists.txt), or from $LOWBIT_RUNTIME_DIR when set, or
// from <binary>/../../runtime (a source tree moved with its build/).
//
//===----------------------------------------------------------------------===//

#include "Bundle.h"
#include "Commands.h"
#include "Models.h"
#include "Options.h"
#include "Progress.h"
#include "engine.h"

#include "lowbit/bitserial.h"
#include "lowbit/error.h"
#include "lowbit/format.h"
#include "lowbit/gguf.h"
#include "lowbit/lut.h"
#include "lowbit/target.h"
#include "lowbit/upconvert.h"

#include "lowbit/Jit/Jit.h"
#include "lowbit/Target/TargetInfo.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
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

std::string quoted(const std::string &text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
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
  std::unique_ptr<mlir::lowbit::TargetInfo> info =
      mlir::lowbit::createTargetInfo(target);
  return info ? info->getFallbackTarget().str() : "generic";
}

/// Whether `target` has LUT kernels (the byte table lookups of
/// lut-elementwise and lut-bitserial).
bool hasLutKernels(const std::string &target) {
  std::unique_ptr<mlir::lowbit::TargetInfo> info =
      mlir::lowbit::createTargetInfo(target);
  return info && info->hasByteTableLookup();
}

/// What the generated files of a CPU bundle describe.
struct CpuBundle {
  std::string name;  // the symbol prefix, e.g. lowbit
  std::string macro; // name upper-cased: the prefix of the header's macros
  std::string target, fallback;
  std::string command;
  std::vector<BundleGroup> groups;
  std::vector<BundleKernel> kernels;
  /// Per group: the strategy of its target kernels (what the CPU must run,
  /// lowbit::runs_on), upconvert when it has none.
  std::vector<Strategy> strategies;

  /// "i2s" or "i2s,q4_0".
  std::string formatList() const {
    std::string list;
    for (const BundleGroup &g : groups)
      list += (list.empty() ? "" : ",") + g.format.name();
    return list;
  }
  size_t numShapes() const {
    size_t n = 0;
    for (const BundleGroup &g : groups)
      n += g.shapes.size();
    return n;
  }
  std::string shapeType() const { return name + "_bundle_shape_t"; }
  std::string header() const { return name + "_kernels.h"; }
  std::string table() const { return name + "_kernels.cpp"; }
  std::string library() const { return name + "_bundle"; }
};

std::string headerText(const CpuBundle &b) {
  const std::string &n = b.name;
  std::ostringstream h;
  h << "/* Generated by `lowbit compile`: do not edit. See README.md. */\n"
    << "#ifndef " << b.macro << "_KERNELS_H\n#define " << b.macro
    << "_KERNELS_H\n\n"
    << "#include \"lowbit/lowbit.h\"\n\n"
    << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
    << "/* The weight formats of the bundle (comma-separated) and their "
       "count. */\n"
    << "#define " << b.macro << "_BUNDLE_FORMAT " << quoted(b.formatList())
    << "\n"
    << "#define " << b.macro << "_BUNDLE_NUM_FORMATS " << b.groups.size()
    << "\n"
    << "#define " << b.macro << "_BUNDLE_TARGET " << quoted(b.target) << "\n\n"
    << "/* The linear layers the bundle was compiled for (a shape may repeat\n"
    << " * under several names; each distinct (format, M, K) has one kernel).\n"
    << " * `format` is the lowbit format to pack the layer's weights in. */\n"
    << "typedef struct " << b.shapeType() << " {\n"
    << "  const char *name;\n  int64_t M, K;\n  const char *format;\n} "
    << b.shapeType() << ";\n"
    << "extern const " << b.shapeType() << " " << n << "_bundle_shapes[];\n"
    << "extern const size_t " << n << "_bundle_num_shapes; /* "
    << b.numShapes() << " */\n\n"
    << "/* Registers the kernels of " << b.macro
    << "_BUNDLE_TARGET with the runtime\n"
    << " * (lowbit_register_kernels, which replaces the registered table), or\n"
    << " * the " << b.fallback
    << " ones for a format whose kernels this CPU cannot run\n"
    << " * (or for every format when the environment sets\n"
    << " * LOWBIT_BUNDLE_GENERIC=1). Call once before lowbit_pack(). */\n"
    << "lowbit_status_t " << n << "_bundle_register(void);\n"
    << "/* The table " << n
    << "_bundle_register() registers, without registering it:\n"
    << " * for an engine that links several bundles and registers their\n"
    << " * tables together (concatenated) with lowbit_register_kernels().\n"
    << " * Valid until the next call; not thread-safe. */\n"
    << "const lowbit_kernel_entry_t *" << n
    << "_bundle_select_kernels(size_t *count);\n"
    << "/* The target whose kernels the last " << n
    << "_bundle_register() or\n"
    << " * _select_kernels() chose (\"\" before; \"" << b.target << "+"
    << b.fallback << "\" when some\n"
    << " * formats run the target's and some the fallback's). */\n"
    << "const char *" << n << "_bundle_active_target(void);\n"
    << "/* The kernel table compiled for `target` (" << b.macro
    << "_BUNDLE_TARGET or\n"
    << " * \"" << b.fallback
    << "\"), whatever this CPU runs; NULL and *count = 0 for another. */\n"
    << "const lowbit_kernel_entry_t *" << n
    << "_bundle_kernels(const char *target, size_t *count);\n\n"
    << "/* The kernels (kernel_abi.h). */\n";
  for (const BundleKernel &k : b.kernels)
    h << "void " << k.function
      << "(const uint8_t *, const uint16_t *, const uint16_t *, const int8_t "
         "*,\n    const float *, const int32_t *, float *, int64_t, int64_t, "
         "int64_t, float"
      << (k.M == 0 ? ",\n    int64_t M, int64_t K" : "") << ");\n";
  h << "\n#ifdef __cplusplus\n}\n#endif\n\n#endif /* " << b.macro
    << "_KERNELS_H */\n";
  return h.str();
}

/// A kernel entry's layout descriptor as C++ (kernel_abi.h's names).
std::string layoutText(const lowbit_layout_t &layout) {
  const char *family = layout.family == LOWBIT_LAYOUT_VNNI4 ? "VNNI4"
                       : layout.family == LOWBIT_LAYOUT_LUT ? "LUT"
                       : layout.family == LOWBIT_LAYOUT_BITPLANES
                           ? "BITPLANES"
                           : "NONE";
  return std::string("{LOWBIT_LAYOUT_") + family + ", " +
         (layout.lane_order == LOWBIT_LANE_LANES ? "LOWBIT_LANE_LANES"
                                                 : "LOWBIT_LANE_ROWS") +
         ", " + std::to_string(layout.tile_rows) + ", " +
         std::to_string(layout.tile_k) + ", " +
         std::to_string(layout.panel_blocks) + "}";
}

std::string tableText(const CpuBundle &b) {
  const std::string &n = b.name;
  const bool hasFallback = b.target != b.fallback;
  std::ostringstream c;
  c << "// Generated by `lowbit compile`: do not edit. See README.md.\n"
    << "#include \"" << b.header() << "\"\n\n"
    << "#include \"lowbit/target.h\"\n\n#include <cstdlib>\n#include "
       "<cstring>\n"
    << "#include <exception>\n\n"
    << "extern \"C\" const " << b.shapeType() << " " << n
    << "_bundle_shapes[] = {\n";
  for (const BundleGroup &g : b.groups)
    for (const LinearShape &s : g.shapes)
      c << "    {" << quoted(s.name) << ", " << s.M << ", " << s.K << ", "
        << quoted(g.format.name()) << "},\n";
  c << "};\nextern \"C\" const size_t " << n
    << "_bundle_num_shapes = " << b.numShapes() << ";\n\nnamespace {\n\n";
  // One table per target, the kernels of each format together; `offsets`
  // receives where each format's kernels start and end.
  auto table = [&](const std::string &t, const char *name,
                   std::vector<std::pair<size_t, size_t>> &ranges) {
    c << "// " << t << "\nconst lowbit_kernel_entry_t " << name << "[] = {\n";
    size_t count = 0;
    for (const BundleGroup &g : b.groups) {
      const size_t begin = count;
      for (const BundleKernel &k : b.kernels)
        if (k.target == t && k.format == g.format.name()) {
          c << "    {" << quoted(k.format) << ", " << k.M << ", " << k.K
            << ", " << k.minN << ", " << quoted(k.target) << ",\n     "
            << quoted(k.config) << ",\n     " << layoutText(k.layout)
            << ",\n     "
            << (k.M == 0 ? "nullptr, &" + k.function
                         : "&" + k.function + ", nullptr")
            << "},\n";
          ++count;
        }
      ranges.push_back({begin, count});
    }
    if (count == 0) // no kernels (tl1/tl2 on generic): the reference runs
      c << "    {nullptr, 0, 0, 0, nullptr, nullptr, {}, nullptr, nullptr},\n";
    c << "};\nconst size_t " << name << "Count = " << count << ";\n\n";
    return count;
  };
  std::vector<std::pair<size_t, size_t>> targetRanges, fallbackRanges;
  const size_t targetCount = table(b.target, "targetKernels", targetRanges);
  size_t fallbackCount = 0;
  if (hasFallback)
    fallbackCount = table(b.fallback, "fallbackKernels", fallbackRanges);
  // Per format: its kernels in each table and the strategy the CPU must
  // run for the target's (lowbit::runs_on: the LUT kernels on
  // x86-avx512vnni need AVX512-VBMI).
  c << "struct Group {\n  const char *format;\n"
    << "  size_t targetBegin, targetEnd, fallbackBegin, fallbackEnd;\n};\n"
    << "const Group groups[] = {\n";
  for (size_t i = 0; i < b.groups.size(); ++i)
    c << "    {" << quoted(b.groups[i].format.name()) << ", "
      << targetRanges[i].first << ", " << targetRanges[i].second << ", "
      << (hasFallback ? fallbackRanges[i].first : 0) << ", "
      << (hasFallback ? fallbackRanges[i].second : 0) << "},\n";
  c << "};\n\n"
    << "lowbit_kernel_entry_t selected[" << targetCount + fallbackCount + 1
    << "];\n"
    << "const char *activeTarget = \"\";\n\n} // namespace\n\n"
    << "extern \"C\" const lowbit_kernel_entry_t *\n"
    << n << "_bundle_select_kernels(size_t *count) {\n"
    << "  // LOWBIT_BUNDLE_GENERIC=1 forces the fallback (for testing it).\n"
    << "  const char *force = std::getenv(\"LOWBIT_BUNDLE_GENERIC\");\n"
    << "  const bool forced = force && std::strcmp(force, \"0\") != 0;\n"
    << "  // Per format: whether this CPU runs its " << b.target
    << " kernels.\n"
    << "  bool runsTarget[" << b.groups.size() << "] = {};\n";
  for (size_t i = 0; i < b.groups.size(); ++i)
    c << "  try { // " << b.groups[i].format.name() << "\n"
      << "    runsTarget[" << i
      << "] = lowbit::host_runs(lowbit::parse_target(" << quoted(b.target)
      << "),\n"
      << "                               lowbit::parse_strategy("
      << quoted(strategy_name(b.strategies[i])) << "));\n"
      << "  } catch (const std::exception &) {\n  }\n";
  c << "  size_t n = 0, native = 0;\n"
    << "  for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); ++i) {\n"
    << "    const Group &g = groups[i];\n"
    << "    bool runs = runsTarget[i];\n";
  if (hasFallback)
    c << "    if (forced)\n      runs = false;\n"
      << "    const lowbit_kernel_entry_t *table =\n"
      << "        runs ? targetKernels : fallbackKernels;\n"
      << "    const size_t begin = runs ? g.targetBegin : g.fallbackBegin;\n"
      << "    const size_t end = runs ? g.targetEnd : g.fallbackEnd;\n";
  else
    c << "    (void)forced;\n    (void)runs;\n"
      << "    runs = true; // generic runs everywhere\n"
      << "    const lowbit_kernel_entry_t *table = targetKernels;\n"
      << "    const size_t begin = g.targetBegin, end = g.targetEnd;\n";
  c << "    for (size_t k = begin; k < end; ++k)\n"
    << "      selected[n++] = table[k];\n"
    << "    native += runs ? 1 : 0;\n  }\n"
    << "  const size_t formats = sizeof(groups) / sizeof(groups[0]);\n"
    << "  activeTarget = native == formats ? " << quoted(b.target) << "\n"
    << "                 : native == 0     ? " << quoted(b.fallback) << "\n"
    << "                                   : "
    << quoted(b.target + "+" + b.fallback) << ";\n"
    << "  *count = n;\n  return selected;\n}\n\n"
    << "extern \"C\" lowbit_status_t " << n << "_bundle_register(void) {\n"
    << "  size_t count = 0;\n"
    << "  const lowbit_kernel_entry_t *table = " << n
    << "_bundle_select_kernels(&count);\n"
    << "  return lowbit_register_kernels(table, count);\n}\n\n"
    << "extern \"C\" const char *" << n << "_bundle_active_target(void) {\n"
    << "  return activeTarget;\n}\n\n"
    << "extern \"C\" const lowbit_kernel_entry_t *\n"
    << n << "_bundle_kernels(const char *target, size_t *count) {\n"
    << "  if (std::strcmp(target, " << quoted(b.target) << ") == 0) {\n"
    << "    *count = targetKernelsCount;\n    return targetKernels;\n  }\n";
  if (hasFallback)
    c << "  if (std::strcmp(target, " << quoted(b.fallback) << ") == 0) {\n"
      << "    *count = fallbackKernelsCount;\n    return fallbackKernels;\n"
      << "  }\n";
  c << "  *count = 0;\n  return nullptr;\n}\n";
  return c.str();
}

/// The properties of the bundle's `lowbit_bundle` library that the CPU and
/// the GPU CMakeLists.txt share: alias, C++17, PIC, include directories.
void writeLibraryProperties(std::ostream &m) {
  m << "add_library(lowbit::bundle ALIAS lowbit_bundle)\n"
    << "target_compile_features(lowbit_bundle PUBLIC cxx_std_17)\n"
    << "set_target_properties(lowbit_bundle PROPERTIES CXX_EXTENSIONS OFF\n"
    << "  POSITION_INDEPENDENT_CODE ON)\n"
    << "target_include_directories(lowbit_bundle\n"
    << "  PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include "
       "${CMAKE_CURRENT_SOURCE_DIR}\n"
    << "  PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)\n";
}

std::string cmakeText(const CpuBundle &b,
                      const std::vector<std::string> &runtimeSources) {
  const std::string lib = b.library();
  const std::string alias = b.name + "::bundle";
  std::ostringstream m;
  m << "# Generated by `lowbit compile`: do not edit. See README.md.\n"
    << "# A static library `" << lib << "` (alias " << alias
    << "): the generated kernels and\n"
    << "# their dispatch table, linked against `lowbit_runtime` (alias\n"
    << "# lowbit::runtime): the lowbit runtime and its C API\n"
    << "# (include/lowbit/lowbit.h). Plain C++17, no LLVM; use it with\n"
    << "# add_subdirectory().\n"
    << "cmake_minimum_required(VERSION 3.16)\n"
    << "project(" << lib << " LANGUAGES CXX)\n\n"
    << "find_package(Threads REQUIRED)\n\n"
    << "# The runtime is one library per program: the first bundle added (or\n"
    << "# the lowbit source tree's runtime/) defines it, every other bundle\n"
    << "# links that one. The reference is the bit-exact oracle: no fused\n"
    << "# multiply-add, and no -march, so that the runtime runs on any CPU of\n"
    << "# its architecture.\n"
    << "if(NOT TARGET lowbit_runtime)\n"
    << "  add_library(lowbit_runtime STATIC\n";
  for (const std::string &s : runtimeSources)
    m << "    ${CMAKE_CURRENT_SOURCE_DIR}/" << s << "\n";
  m << "  )\n"
    << "  add_library(lowbit::runtime ALIAS lowbit_runtime)\n"
    << "  target_compile_features(lowbit_runtime PUBLIC cxx_std_17)\n"
    << "  set_target_properties(lowbit_runtime PROPERTIES CXX_EXTENSIONS OFF\n"
    << "    POSITION_INDEPENDENT_CODE ON)\n"
    << "  target_include_directories(lowbit_runtime\n"
    << "    PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include\n"
    << "    PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)\n"
    << "  target_compile_options(lowbit_runtime PRIVATE -ffp-contract=off)\n"
    << "  target_link_libraries(lowbit_runtime PUBLIC Threads::Threads)\n"
    << "endif()\n\n"
    << "set(" << lib << "_kernel_sources\n";
  for (const BundleKernel &k : b.kernels)
    m << "  " << k.file << "\n";
  m << ")\n\n"
    << "add_library(" << lib << " STATIC " << b.table() << "\n"
    << "  ${" << lib << "_kernel_sources})\n"
    << "add_library(" << alias << " ALIAS " << lib << ")\n"
    << "target_compile_features(" << lib << " PUBLIC cxx_std_17)\n"
    << "set_target_properties(" << lib << " PROPERTIES CXX_EXTENSIONS OFF\n"
    << "  POSITION_INDEPENDENT_CODE ON)\n"
    << "target_include_directories(" << lib << "\n"
    << "  PUBLIC ${CMAKE_CURRENT_SOURCE_DIR} "
       "${CMAKE_CURRENT_SOURCE_DIR}/include)\n"
    << "target_link_libraries(" << lib << " PUBLIC lowbit_runtime)\n\n"
    << "set_source_files_properties(" << b.table()
    << " PROPERTIES COMPILE_OPTIONS \"-ffp-contract=off\")\n"
    << "# Each kernel gets the ISA flags of its target only: the dispatch in\n"
    << "# " << b.table()
    << " registers it only on a CPU that has that ISA.\n";
  // EmitC spells every SSA value as a variable; an index the loops of the
  // any-shape lut-bitserial kernels compute but fold away leaves one unused
  // (up-convert, tl1 and tl2 kernels have none), which must not fail an
  // engine's -Werror build.
  for (const BundleKernel &k : b.kernels) {
    std::string flags = "-O3;-ffp-contract=off;-Wno-unused-variable";
    for (const std::string &f : k.flags)
      flags += ";" + f;
    m << "set_source_files_properties(" << k.file
      << " PROPERTIES COMPILE_OPTIONS \"" << flags << "\")\n";
  }
  return m.str();
}

std::string readmeText(const CpuBundle &b) {
  const std::string &n = b.name;
  const Format &first = b.groups.front().format;
  bool ternary = true;
  for (const BundleGroup &g : b.groups)
    ternary = ternary && g.format.is_ternary();
  std::ostringstream r;
  r << "# lowbit bundle: " << b.formatList() << " for " << b.target << "\n\n"
    << "Generated by\n\n    " << b.command << "\n\n"
    << "A static library, `" << b.library() << "`: " << b.kernels.size()
    << " generated kernels\n(`kernels/`, one per target, format, weight "
       "shape and N class) and their\ndispatch table, linked against "
       "`lowbit_runtime`: the lowbit runtime and its\nC API "
       "(`include/lowbit/lowbit.h`). It builds with any C++17 compiler; no "
       "LLVM.\n\n"
    << "## Build\n\n```cmake\nadd_subdirectory(path/to/bundle " << b.library()
    << ")\n"
    << "target_link_libraries(my_engine PRIVATE " << b.library() << ")\n```\n\n"
    << "A C program links it too (CMake links with the C++ driver). The "
       "runtime\ntarget `lowbit_runtime` is defined by the first bundle added "
       "(or by the\nlowbit source tree's `runtime/`) and shared by every "
       "other: bundles compiled\nwith different `--name`s link into one "
       "program.\n\n"
    << "## Dispatch\n\n`" << n
    << "_bundle_register()` (in `" << b.header()
    << "`) checks the CPU's features\nand registers the " << b.target
    << " kernels, or for a format whose kernels the CPU\ncannot run the `"
    << b.fallback << "` ones (`" << n
    << "_bundle_active_target()` says which).\n`lowbit_pack()` then packs "
       "weights of a compiled (format, shape) for its\nkernel; any other "
       "runs the scalar reference. `lowbit_register_kernels` replaces\nthe "
       "registered table: an engine with several bundles concatenates their\n`"
       "<name>_bundle_select_kernels()` tables and registers them once.\n\n"
    << "## C API\n\n```c\n#include \"" << b.header()
    << "\"   /* includes lowbit/lowbit.h */\n\n"
    << n << "_bundle_register();\n"
    << "lowbit_context_t *ctx;                 /* a pool of 4 threads */\n"
    << "lowbit_context_create(4, &ctx);\n"
    << "lowbit_weights_t *w;                   /* quantize + pack W [M][K] */\n"
    << "if (lowbit_pack(\"" << first.name()
    << "\", W, M, K, &w) != LOWBIT_OK)\n"
    << "  fprintf(stderr, \"%s\\n\", lowbit_last_error());\n"
    << "lowbit_mpgemm(w, X, N, Y, ctx);        /* Y [N][M] = X [N][K] * W^T "
       "*/\n"
    << "lowbit_reference_mpgemm(w, X, N, R);   /* the scalar oracle */\n"
    << "lowbit_free_weights(w);\nlowbit_context_free(ctx);\n```\n\n"
    << "| function | |\n|---|---|\n"
    << "| `" << n << "_bundle_register()` | install this bundle's kernel table |\n"
    << "| `" << n
    << "_bundle_select_kernels(&count)` | the table it would install |\n"
    << "| `lowbit_register_kernels(entries, n)` | install any table of "
       "`lowbit_kernel_entry_t` |\n"
    << "| `lowbit_pack(format, W, M, K, &w)` | quantize and pack fp32 "
       "weights |\n"
    << "| `lowbit_pack_gguf(format, type, data, bytes, M, K, &w)` | pack a "
       "GGUF tensor's bytes |\n"
    << "| `lowbit_weights_target(w, N)`, `lowbit_weights_config(w, N)` | "
       "the kernel `w` runs on for N rows (`reference` if none) |\n"
    << "| `lowbit_context_create(threads, &ctx)`, `lowbit_context_free` | a "
       "thread pool (unpinned) |\n"
    << "| `lowbit_mpgemm(w, X, N, Y, ctx)` | the product; `ctx` NULL runs on "
       "the calling thread |\n"
    << "| `lowbit_reference_mpgemm(w, X, N, Y)` | the reference product |\n"
    << "| `lowbit_free_weights(w)` | |\n"
    << "| `lowbit_last_error()` | this thread's last error message |\n\n"
    << "Every function returns `LOWBIT_OK` or an error status; no exception "
       "crosses\nthe API. Results of "
    << b.formatList()
    << (ternary ? " are bit-exact with the reference."
                : " are within each format's documented bound of "
                  "the reference (bit-exact for the ternary formats).")
    << "\n\n## Shapes\n\n| layer | format | M | K |\n|---|---|---|---|\n";
  for (const BundleGroup &g : b.groups)
    for (const LinearShape &s : g.shapes)
      r << "| " << (s.name.empty() ? "-" : s.name) << " | " << g.format.name()
        << " | " << s.M << " | " << s.K << " |\n";
  r << "\n## Kernels\n\nEach shape has a GEMV kernel (N = 1) and, when "
       "the compiler picks a\ndifferent config for N > 1, a GEMM kernel; "
       "`lowbit_mpgemm` runs the one of\nits N (both compute any N). The "
       "`any` kernels (M and K run-time\narguments, kernel_abi.h) run every "
       "other shape of their format.\n\n"
       "| function | target | shape | N | config |\n|---|---|---|---|---|\n";
  for (const BundleKernel &k : b.kernels)
    r << "| `" << k.function << "` | " << k.target << " | "
      << (k.M == 0 ? std::string("any")
                   : std::to_string(k.M) + "x" + std::to_string(k.K))
      << " | " << (k.minN == 1 ? "1" : ">= 2") << " | `" << k.config
      << "` |\n";
  return r.str();
}

/// lowbit_kernels.h of a GPU bundle: the embedded kernels and their lookup.
std::string gpuHeaderText(const Format &format, const std::string &target,
                          const std::vector<LinearShape> &shapes,
                          const std::vector<BundleKernel> &kernels,
                          GpuDType dtype) {
  std::ostringstream h;
  h << "// Generated by `lowbit compile`: do not edit. See README.md.\n"
    << "#ifndef LOWBIT_KERNELS_H\n#define LOWBIT_KERNELS_H\n\n"
    << "#include \"lowbit/vulkan.h\"\n\n#include <cstddef>\n#include "
       "<cstdint>\n\n"
    << "#define LOWBIT_BUNDLE_FORMAT " << quoted(format.name()) << "\n"
    << "#define LOWBIT_BUNDLE_TARGET " << quoted(target) << "\n"
    << "#define LOWBIT_BUNDLE_DTYPE " << quoted(gpu_dtype_name(dtype)) << "\n\n"
    << "struct lowbit_bundle_shape_t {\n  const char *name;\n  int64_t M, K;\n"
    << "};\nextern const lowbit_bundle_shape_t lowbit_bundle_shapes[];\n"
    << "extern const size_t lowbit_bundle_num_shapes; // " << shapes.size()
    << "\n\n"
    << "// The SPIR-V kernel for weights M x K and N activation rows (the "
       "GEMM\n"
    << "// one for N > 1 where it differs); words == nullptr for a shape the\n"
    << "// bundle was not compiled for. Run it with lowbit::VulkanKernel.\n"
    << "lowbit::SpirvKernel lowbit_bundle_spirv_kernel(int64_t M, int64_t K,\n"
    << "                                               int64_t N);\n\n"
    << "// The embedded kernels (lowbit/vulkan.h, GENERATED GLOBALS).\n";
  for (const BundleKernel &k : kernels)
    h << "extern uint32_t " << k.function << "_spirv[];\nextern int64_t "
      << k.function << "_info[];\n";
  h << "\n#endif // LOWBIT_KERNELS_H\n";
  return h.str();
}

std::string gpuTableText(const std::vector<LinearShape> &shapes,
                         const std::vector<BundleKernel> &kernels) {
  std::ostringstream c;
  c << "// Generated by `lowbit compile`: do not edit. See README.md.\n"
    << "#include \"lowbit_kernels.h\"\n\n"
    << "const lowbit_bundle_shape_t lowbit_bundle_shapes[] = {\n";
  for (const LinearShape &s : shapes)
    c << "    {" << quoted(s.name) << ", " << s.M << ", " << s.K << "},\n";
  c << "};\nconst size_t lowbit_bundle_num_shapes = " << shapes.size()
    << ";\n\nnamespace {\n\nstruct Entry {\n  int64_t M, K, minN;\n"
    << "  const uint32_t *words;\n  const int64_t *info;\n};\n\n"
    << "const Entry entries[] = {\n";
  for (const BundleKernel &k : kernels)
    c << "    {" << k.M << ", " << k.K << ", " << k.minN << ", " << k.function
      << "_spirv, " << k.function << "_info},\n";
  c << "};\n\n} // namespace\n\n"
    << "lowbit::SpirvKernel lowbit_bundle_spirv_kernel(int64_t M, int64_t K,\n"
    << "                                               int64_t N) {\n"
    << "  lowbit::SpirvKernel best;\n  int64_t bestN = 0;\n"
    << "  for (const Entry &e : entries)\n"
    << "    if (e.M == M && e.K == K && e.minN <= N && e.minN > bestN) {\n"
    << "      best = {e.words, e.info};\n      bestN = e.minN;\n    }\n"
    << "  return best;\n}\n";
  return c.str();
}

std::string gpuCmakeText(const std::vector<std::string> &runtimeSources,
                         const std::vector<BundleKernel> &kernels) {
  std::ostringstream m;
  m << "# Generated by `lowbit compile`: do not edit. See README.md.\n"
    << "# A static library `lowbit_bundle` (alias lowbit::bundle): the lowbit\n"
    << "# runtime with its Vulkan launcher (include/lowbit/vulkan.h) and the\n"
    << "# embedded SPIR-V kernels. Plain C++17 and libvulkan, no LLVM.\n"
    << "cmake_minimum_required(VERSION 3.16)\n"
    << "project(lowbit_bundle LANGUAGES CXX)\n\n"
    << "find_package(Threads REQUIRED)\nfind_package(Vulkan REQUIRED)\n\n"
    << "add_library(lowbit_bundle STATIC lowbit_kernels.cpp\n";
  for (const std::string &s : runtimeSources)
    m << "  " << s << "\n";
  for (const BundleKernel &k : kernels)
    m << "  " << k.file << "\n";
  m << ")\n";
  writeLibraryProperties(m);
  m << "# src/vulkan.cpp is the launcher only with LOWBIT_HAVE_VULKAN.\n"
    << "target_compile_definitions(lowbit_bundle PRIVATE "
       "LOWBIT_HAVE_VULKAN=1)\n"
    << "target_compile_options(lowbit_bundle PRIVATE -ffp-contract=off)\n"
    << "target_link_libraries(lowbit_bundle PUBLIC Threads::Threads "
       "Vulkan::Vulkan)\n";
  return m.str();
}

std::string gpuReadmeText(const Format &format, const std::string &target,
                          const std::string &command, GpuDType dtype,
                          const std::vector<LinearShape> &shapes,
                          const std::vector<BundleKernel> &kernels) {
  std::ostringstream r;
  r << "# lowbit bundle: " << format.name() << " for " << target << "\n\n"
    << "Generated by\n\n    " << command << "\n\n"
    << "A static library, `lowbit_bundle`: the lowbit runtime with its "
       "Vulkan launcher\n(`include/lowbit/vulkan.h`) and "
    << kernels.size()
    << " SPIR-V kernels embedded as C++ arrays\n(`kernels/`). It builds "
       "with any C++17 compiler against libvulkan; no LLVM.\n"
    << "X and Y are " << gpu_dtype_name(dtype)
    << " on the device (the API takes and returns float; see\n"
       "vulkan.h, 16-BIT I/O).\n\n"
    << "## Build\n\n```cmake\nadd_subdirectory(path/to/bundle lowbit_bundle)\n"
    << "target_link_libraries(my_engine PRIVATE lowbit_bundle)\n```\n\n"
    << "## Use\n\n```cpp\n#include \"lowbit_kernels.h\"\n\n"
    << "lowbit::PackedWeights W = lowbit::quantize(lowbit::Format::parse("
    << quoted(format.name()) << "), w, M, K);\n"
    << "lowbit::VulkanKernel kernel(lowbit_bundle_spirv_kernel(M, K, N), W);"
       "  // uploads W\n"
    << "kernel.run(X, N, Y);  // Y [N][M] = X [N][K] * W^T; throws "
       "lowbit::Error\n```\n\n"
    << "`lowbit::vulkan_available()` says whether a Vulkan device exists.\n\n"
    << "## Kernels\n\n| function | M | K | N | config "
       "|\n|---|---|---|---|---|\n";
  for (const BundleKernel &k : kernels)
    r << "| `" << k.function << "` | " << k.M << " | " << k.K << " | "
      << (k.minN == 1 ? "1" : ">= 2") << " | `" << k.config << "` |\n";
  r << "\n## Shapes\n\n| layer | M | K |\n|---|---|---|\n";
  for (const LinearShape &s : shapes)
    r << "| " << s.name << " | " << s.M << " | " << s.K << " |\n";
  return r.str();
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
  k.fastAggregation = source.fastAggregation;
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
                "' has kernels for i2s, w1gG..w4gG and q4_0 only, not " +
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
      kernelOptions.schedulePath = spec.schedule;
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
  writeFile(
      out / "lowbit_kernels.h",
      gpuHeaderText(format, spec.target, spec.shapes, kernels, spec.dtype));
  writeFile(out / "lowbit_kernels.cpp", gpuTableText(spec.shapes, kernels));
  writeFile(out / "CMakeLists.txt", gpuCmakeText(runtimeSources, kernels));
  writeFile(out / "README.md", gpuReadmeText(format, spec.target, spec.command,
                                             spec.dtype, spec.shapes, kernels));
  return kernels;
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
  if (!mlir::lowbit::createTargetInfo(target_name(target)))
    throw Error("lowbit compile: target '" + targetName +
                "' is not supported (use " +
                llvm::join(mlir::lowbit::getTargetNames(), ", ") +
                " or native)");

  // lut-bitserial applies to every format that has its layout; a format
  // without one keeps auto (an error when no format of the bundle has one).
  // auto takes it for the formats only it reads (w3gG), as resolveChoice.
  bool anyBitserial = false;
  for (const BundleGroup &g : groups)
    anyBitserial = anyBitserial || has_bitserial_layout(g.format);
  const bool wantBitserial = spec.strategy == Strategy::LutBitserial;
  const auto usesBitserial = [&](const Format &format) {
    return has_bitserial_layout(format) &&
           (wantBitserial || (!has_upconvert_layout(format) &&
                              !has_lut_layout(format)));
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

  CpuBundle b;
  b.name = name;
  b.macro = name;
  for (char &ch : b.macro)
    ch = char(std::toupper(static_cast<unsigned char>(ch)));
  b.target = targetName;
  b.fallback = target == Target::Generic ? targetName
                                         : fallbackTarget(targetName);
  b.command = spec.command;
  b.groups = groups;

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
      std::vector<std::pair<int64_t, int64_t>> shapes =
          distinctShapes(g.shapes);
      shapes.push_back({0, 0});
      for (const auto &[M, K] : shapes)
        for (int64_t nHint : {int64_t(1), int64_t(16)}) {
          KernelOptions kernelOptions;
          kernelOptions.threads = spec.threads;
          kernelOptions.schedulePath = spec.schedule;
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

  writeFile(out / b.header(), headerText(b));
  writeFile(out / b.table(), tableText(b));
  writeFile(out / "CMakeLists.txt", cmakeText(b, runtimeSources));
  writeFile(out / "README.md", readmeText(b));
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
  return groups;
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
  bool anyLut = false;
  for (const BundleGroup &g : groups) {
    formatList += (formatList.empty() ? "" : ",") + g.format.name();
    anyLut = anyLut || has_lut_layout(g.format);
  }
  spec.name = options.getOr("name", "lowbit");
  const std::string strategyName = options.getOr("strategy", "auto");
  spec.strategy = parse_strategy(strategyName);
  if (spec.strategy != Strategy::Auto &&
      spec.strategy != Strategy::LutBitserial)
    throw Error("lowbit compile: strategy '" + strategyName +
                "' is not supported (use auto or lut-bitserial)");
  // native: the best target for the bundle's kernels (auto picks
  // lut-elementwise for tl1/tl2; a target that runs those runs up-convert).
  Target target = parse_target(options.getOr("target", "native"));
  if (target == Target::Native)
    target = native_target(spec.strategy == Strategy::Auto
                               ? anyLut ? Strategy::LutElementwise
                                        : Strategy::Upconvert
                               : spec.strategy);
  spec.target = target_name(target);
  spec.threads = options.threads();
  spec.schedule = options.getOr("schedule", "");
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
  if (spec.strategy == Strategy::LutBitserial)
    spec.command += " --strategy lut-bitserial";
  if (!spec.schedule.empty())
    spec.command += " --schedule " + spec.schedule;
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
         "x86-avx512vnni, aarch64-neon, aarch64-neon-nodot, spirv-vulkan, "
         "spirv-xe2 (SPIR-V kernels + the Vulkan launcher; C++ API; one "
         "format)"},
        {"strategy", "S",
         "auto (default: upconvert, tl1/tl2 lut-elementwise) or "
         "lut-bitserial (x86 and aarch64 kernels of the formats that have "
         "it; a generic fallback stays upconvert)"},
        {"schedule", "FILE", "JSON schedule to take configs from"},
        {"threads", "N", kThreadsHelp},
        {"dtype", "T",
         "GPU targets: element type of X and Y on the device, f32 "
         "(default), f16, bf16"},
        {"out", "DIR", "bundle directory (created)", true}}},
      runCompile};
  return command;
}

} // namespace lowbit::cli
