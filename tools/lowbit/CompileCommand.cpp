//===- CompileCommand.cpp - `lowbit compile` ------------------------------===//
//
// Ahead-of-time compilation into a self-contained bundle directory that an
// engine drops into its build with add_subdirectory():
//
//   OUT/CMakeLists.txt        static library `lowbit_bundle` (C++17, no LLVM)
//   OUT/README.md             the C API and how to build
//   OUT/lowbit_kernels.h      shape list, kernel prototypes,
//                             lowbit_bundle_register()
//   OUT/lowbit_kernels.cpp    one dispatch table per target, keyed by (M, K)
//   OUT/kernels/<fn>.cpp      one generated kernel per (target, shape), built
//                             with that target's ISA flags only
//   OUT/include/lowbit/*.h    the runtime headers (lowbit.h is the C API)
//   OUT/src/*                 the runtime sources
//
// Every shape gets a kernel for --target and, unless the target is generic,
// one for its fallback (`generic`; `aarch64-neon-nodot` for aarch64-neon,
// since every AArch64 core has NEON): lowbit_bundle_register() checks the
// CPU's features (lowbit::host_runs) and registers the table of the target,
// or the fallback's when the CPU lacks the ISA. tl1/tl2 have no generic kernel;
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
#include "Kernels.h"
#include "Models.h"

#include "lowbit/bitserial.h"
#include "lowbit/error.h"
#include "lowbit/format.h"
#include "lowbit/lut.h"
#include "lowbit/target.h"
#include "lowbit/upconvert.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <utility>

namespace fs = std::filesystem;

namespace lowbit::cli {

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
/// lacks `target`'s ISA.
std::string fallbackTarget(const std::string &target) {
  return target == "aarch64-neon" ? "aarch64-neon-nodot" : "generic";
}

std::string headerText(const Format &format, const std::string &target,
                       const std::vector<LinearShape> &shapes,
                       const std::vector<BundleKernel> &kernels) {
  std::ostringstream h;
  h << "/* Generated by `lowbit compile`: do not edit. See README.md. */\n"
    << "#ifndef LOWBIT_KERNELS_H\n#define LOWBIT_KERNELS_H\n\n"
    << "#include \"lowbit/lowbit.h\"\n\n"
    << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
    << "#define LOWBIT_BUNDLE_FORMAT " << quoted(format.name()) << "\n"
    << "#define LOWBIT_BUNDLE_TARGET " << quoted(target) << "\n\n"
    << "/* The linear layers the bundle was compiled for (a shape may repeat\n"
    << " * under several names; each distinct (M, K) has one kernel). */\n"
    << "typedef struct lowbit_bundle_shape_t {\n"
    << "  const char *name;\n  int64_t M, K;\n} lowbit_bundle_shape_t;\n"
    << "extern const lowbit_bundle_shape_t lowbit_bundle_shapes[];\n"
    << "extern const size_t lowbit_bundle_num_shapes; /* " << shapes.size()
    << " */\n\n"
    << "/* Registers the kernels of LOWBIT_BUNDLE_TARGET with the runtime\n"
    << " * (lowbit_register_kernels), or the " << fallbackTarget(target)
    << " ones when this CPU lacks\n"
    << " * the target's ISA (or when the environment sets\n"
    << " * LOWBIT_BUNDLE_GENERIC=1). Call once before lowbit_pack(). */\n"
    << "lowbit_status_t lowbit_bundle_register(void);\n"
    << "/* The target whose kernels lowbit_bundle_register() chose (\"\" "
       "before). */\n"
    << "const char *lowbit_bundle_active_target(void);\n"
    << "/* The kernel table compiled for `target` (LOWBIT_BUNDLE_TARGET or\n"
    << " * \"" << fallbackTarget(target)
    << "\"), whatever this CPU runs; NULL and *count = 0 for another. */\n"
    << "const lowbit_kernel_entry_t *lowbit_bundle_kernels(const char "
       "*target,\n"
    << "                                                   size_t *count);\n\n"
    << "/* The kernels (kernel_abi.h). */\n";
  for (const BundleKernel &k : kernels)
    h << "void " << k.function
      << "(const uint8_t *, const uint16_t *, const uint16_t *, const int8_t "
         "*,\n    const float *, const int32_t *, float *, int64_t, int64_t, "
         "int64_t, float);\n";
  h << "\n#ifdef __cplusplus\n}\n#endif\n\n#endif /* LOWBIT_KERNELS_H */\n";
  return h.str();
}

std::string tableText(const Format &format, const std::string &target,
                      const std::vector<LinearShape> &shapes,
                      const std::vector<BundleKernel> &kernels) {
  std::ostringstream c;
  c << "// Generated by `lowbit compile`: do not edit. See README.md.\n"
    << "#include \"lowbit_kernels.h\"\n\n"
    << "#include \"lowbit/target.h\"\n\n#include <cstdlib>\n#include "
       "<cstring>\n"
    << "#include <exception>\n\n"
    << "extern \"C\" const lowbit_bundle_shape_t lowbit_bundle_shapes[] = {\n";
  for (const LinearShape &s : shapes)
    c << "    {" << quoted(s.name) << ", " << s.M << ", " << s.K << "},\n";
  c << "};\nextern \"C\" const size_t lowbit_bundle_num_shapes = "
    << shapes.size() << ";\n\nnamespace {\n\n";
  auto table = [&](const std::string &t, const char *name) {
    c << "// " << t << "\nconst lowbit_kernel_entry_t " << name << "[] = {\n";
    size_t n = 0;
    for (const BundleKernel &k : kernels)
      if (k.target == t) {
        c << "    {" << quoted(format.name()) << ", " << k.M << ", " << k.K
          << ", " << k.minN << ", " << quoted(k.target) << ",\n     "
          << quoted(k.config) << ",\n     &" << k.function << "},\n";
        ++n;
      }
    if (n == 0) // no kernels (tl1/tl2 on generic): the reference runs
      c << "    {nullptr, 0, 0, 0, nullptr, nullptr, nullptr},\n";
    c << "};\nconst size_t " << name << "Count = " << n << ";\n\n";
  };
  table(target, "targetKernels");
  const std::string fallback = fallbackTarget(target);
  if (target != "generic")
    table(fallback, "fallbackKernels");
  // The target's kernels may need more than its base ISA (lowbit::runs_on:
  // the LUT kernels on x86-avx512vnni need AVX512-VBMI).
  Strategy strategy = Strategy::Upconvert;
  for (const BundleKernel &k : kernels) {
    if (k.target != target)
      continue;
    const Strategy own = strategyOfConfig(k.config);
    if (own != Strategy::Upconvert)
      strategy = own;
  }
  c << "const char *activeTarget = \"\";\n\n} // namespace\n\n"
    << "extern \"C\" lowbit_status_t lowbit_bundle_register(void) {\n"
    << "  bool native = false;\n"
    << "  try {\n"
    << "    native = lowbit::host_runs(lowbit::parse_target(" << quoted(target)
    << "),\n                               lowbit::parse_strategy("
    << quoted(strategy_name(strategy)) << "));\n"
    << "  } catch (const std::exception &) {\n  }\n"
    << "  // LOWBIT_BUNDLE_GENERIC=1 forces the fallback (for testing it).\n"
    << "  const char *force = std::getenv(\"LOWBIT_BUNDLE_GENERIC\");\n"
    << "  if (force && std::strcmp(force, \"0\") != 0)\n"
    << "    native = false;\n";
  if (target != "generic")
    c << "  if (!native) {\n"
      << "    activeTarget = " << quoted(fallback) << ";\n"
      << "    return lowbit_register_kernels(fallbackKernels, "
         "fallbackKernelsCount);\n"
      << "  }\n";
  else
    c << "  (void)native;\n";
  c << "  activeTarget = " << quoted(target) << ";\n"
    << "  return lowbit_register_kernels(targetKernels, targetKernelsCount);\n"
    << "}\n\n"
    << "extern \"C\" const char *lowbit_bundle_active_target(void) {\n"
    << "  return activeTarget;\n}\n\n"
    << "extern \"C\" const lowbit_kernel_entry_t *\n"
    << "lowbit_bundle_kernels(const char *target, size_t *count) {\n"
    << "  if (std::strcmp(target, " << quoted(target) << ") == 0) {\n"
    << "    *count = targetKernelsCount;\n    return targetKernels;\n  }\n";
  if (target != "generic")
    c << "  if (std::strcmp(target, " << quoted(fallback) << ") == 0) {\n"
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

std::string cmakeText(const std::vector<std::string> &runtimeSources,
                      const std::vector<BundleKernel> &kernels) {
  std::ostringstream m;
  m << "# Generated by `lowbit compile`: do not edit. See README.md.\n"
    << "# A static library `lowbit_bundle` (alias lowbit::bundle): the lowbit\n"
    << "# runtime, its C API (include/lowbit/lowbit.h) and the generated\n"
    << "# kernels. Plain C++17, no LLVM; use it with add_subdirectory().\n"
    << "cmake_minimum_required(VERSION 3.16)\n"
    << "project(lowbit_bundle LANGUAGES CXX)\n\n"
    << "find_package(Threads REQUIRED)\n\n"
    << "set(lowbit_bundle_runtime_sources\n";
  for (const std::string &s : runtimeSources)
    m << "  " << s << "\n";
  m << ")\nset(lowbit_bundle_kernel_sources\n";
  for (const BundleKernel &k : kernels)
    m << "  " << k.file << "\n";
  m << ")\n\n"
    << "add_library(lowbit_bundle STATIC lowbit_kernels.cpp\n"
    << "  ${lowbit_bundle_runtime_sources} ${lowbit_bundle_kernel_sources})\n";
  writeLibraryProperties(m);
  m << "target_link_libraries(lowbit_bundle PUBLIC Threads::Threads)\n\n"
    << "# The reference is the bit-exact oracle: no fused multiply-add, and "
       "no\n"
    << "# -march, so that the runtime runs on any CPU of its architecture.\n"
    << "set_source_files_properties(${lowbit_bundle_runtime_sources}\n"
    << "  lowbit_kernels.cpp PROPERTIES COMPILE_OPTIONS "
       "\"-ffp-contract=off\")\n"
    << "# Each kernel gets the ISA flags of its target only: the dispatch in\n"
    << "# lowbit_kernels.cpp calls it only on a CPU that has that ISA.\n";
  for (const BundleKernel &k : kernels) {
    std::string flags = "-O3;-ffp-contract=off";
    for (const std::string &f : k.flags)
      flags += ";" + f;
    m << "set_source_files_properties(" << k.file
      << " PROPERTIES COMPILE_OPTIONS \"" << flags << "\")\n";
  }
  return m.str();
}

std::string readmeText(const Format &format, const std::string &target,
                       const std::string &command,
                       const std::vector<LinearShape> &shapes,
                       const std::vector<BundleKernel> &kernels) {
  std::ostringstream r;
  r << "# lowbit bundle: " << format.name() << " for " << target << "\n\n"
    << "Generated by\n\n    " << command << "\n\n"
    << "A self-contained static library, `lowbit_bundle`: the lowbit runtime,\n"
    << "its C API (`include/lowbit/lowbit.h`) and " << kernels.size()
    << " generated kernels\n(`kernels/`, one per target, weight shape and N "
       "class). It "
       "builds with any C++17\ncompiler; no LLVM.\n\n"
    << "## Build\n\n```cmake\nadd_subdirectory(path/to/bundle lowbit_bundle)\n"
    << "target_link_libraries(my_engine PRIVATE lowbit_bundle)\n```\n\n"
    << "A C program links it too (CMake links with the C++ driver).\n\n"
    << "## Dispatch\n\n`lowbit_bundle_register()` (in `lowbit_kernels.h`) "
       "checks the CPU's features\nand registers the "
    << target << " kernels, or the `" << fallbackTarget(target)
    << "` ones when the CPU lacks\nthe ISA "
       "(`lowbit_bundle_active_target()` says which). `lowbit_pack()` then\n"
       "packs weights of a compiled shape for its kernel; any other shape runs "
       "the\nscalar reference.\n\n"
    << "## C API\n\n```c\n#include \"lowbit_kernels.h\"   /* includes "
       "lowbit/lowbit.h */\n\n"
    << "lowbit_bundle_register();\n"
    << "lowbit_context_t *ctx;                 /* a pool of 4 threads */\n"
    << "lowbit_context_create(4, &ctx);\n"
    << "lowbit_weights_t *w;                   /* quantize + pack W [M][K] */\n"
    << "if (lowbit_pack(\"" << format.name()
    << "\", W, M, K, &w) != LOWBIT_OK)\n"
    << "  fprintf(stderr, \"%s\\n\", lowbit_last_error());\n"
    << "lowbit_mpgemm(w, X, N, Y, ctx);        /* Y [N][M] = X [N][K] * W^T "
       "*/\n"
    << "lowbit_reference_mpgemm(w, X, N, R);   /* the scalar oracle */\n"
    << "lowbit_free_weights(w);\nlowbit_context_free(ctx);\n```\n\n"
    << "| function | |\n|---|---|\n"
    << "| `lowbit_bundle_register()` | install this bundle's kernel table |\n"
    << "| `lowbit_register_kernels(entries, n)` | install any table of "
       "`lowbit_kernel_entry_t` |\n"
    << "| `lowbit_pack(format, W, M, K, &w)` | quantize and pack fp32 "
       "weights |\n"
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
    << format.name()
    << (format.is_ternary() ? " are bit-exact with the reference."
                            : " are within the format's documented bound of "
                              "the reference.")
    << "\n\n## Shapes\n\n| layer | M | K |\n|---|---|---|\n";
  for (const LinearShape &s : shapes)
    r << "| " << (s.name.empty() ? "-" : s.name) << " | " << s.M << " | " << s.K
      << " |\n";
  r << "\n## Kernels\n\nEach shape has a GEMV kernel (N = 1) and, when "
       "the compiler picks a\ndifferent config for N > 1, a GEMM kernel; "
       "`lowbit_mpgemm` runs the one of\nits N (both compute any N).\n\n"
       "| function | target | N | config |\n|---|---|---|---|\n";
  for (const BundleKernel &k : kernels)
    r << "| `" << k.function << "` | " << k.target << " | "
      << (k.minN == 1 ? "1" : ">= 2") << " | `" << k.config << "` |\n";
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

/// The kernel of `target` for M x K weights configured for `nHint`
/// activation rows, as a bundle kernel named after them; its C++ in `cpp`.
BundleKernel generateBundleKernel(const Format &format,
                                  const std::string &target, int64_t M,
                                  int64_t K, int64_t nHint,
                                  const KernelOptions &options,
                                  std::string &cpp) {
  mlir::lowbit::KernelSource source = generateKernelSource(
      format, target, {M, K, nHint}, options,
      "lowbit_bundle_" + identifier(target) + "_" + identifier(format.name()) +
          "_" + std::to_string(M) + "x" + std::to_string(K) +
          (nHint == 1 ? "" : "_gemm"));
  BundleKernel k;
  k.target = target;
  k.minN = nHint == 1 ? 1 : 2;
  k.M = M;
  k.K = K;
  k.function = source.functionName;
  k.config = source.config;
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
                "' has kernels for i2s, w2gG and w4gG only, not " +
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

std::vector<BundleKernel>
writeBundle(const fs::path &out, const BundleSpec &spec,
            std::vector<std::string> &runtimeSources) {
  const Format &format = spec.format;
  const std::string &targetName = spec.target;
  Target target = parse_target(targetName);
  if (isGpuTarget(target))
    return writeGpuBundle(out, spec, runtimeSources);
  if (spec.dtype != GpuDType::F32)
    throw Error("lowbit compile: --dtype " + gpu_dtype_name(spec.dtype) +
                " is for the GPU targets (spirv-vulkan, spirv-xe2)");
  if (target != Target::Generic && target != Target::X86Avx2 &&
      target != Target::X86AvxVnni && target != Target::X86Avx512Vnni &&
      !is_aarch64_target(target))
    throw Error("lowbit compile: target '" + targetName +
                "' is not supported (use generic, x86-avx2, x86-avxvnni, "
                "x86-avx512vnni, aarch64-neon, aarch64-neon-nodot or native)");
  const bool bitserial = spec.strategy == Strategy::LutBitserial;
  const bool lut = has_lut_layout(format);
  if (bitserial && !has_bitserial_layout(format))
    throw Error("lowbit compile: strategy 'lut-bitserial' has no kernel for " +
                format.name() + " (it supports i2s, w1gG, w2gG, w3gG, w4gG)");
  if (!bitserial && !lut && !has_upconvert_layout(format))
    throw Error("lowbit compile: no kernel strategy for " + format.name());
  if ((lut || bitserial) && target == Target::Generic)
    throw Error("lowbit compile: " + format.name() +
                (bitserial ? " (lut-bitserial)" : " (lut-elementwise)") +
                " needs an x86 or aarch64 target, not generic");

  // Generic has no LUT kernels: tl1/tl2 fall back to the reference there,
  // lut-bitserial to up-convert (none for w3gG); aarch64-neon-nodot has
  // both LUT strategies (tbl needs no dotprod).
  std::vector<std::string> targets = {targetName};
  std::string fallback = fallbackTarget(targetName);
  bool fallbackLut = (lut || bitserial) && fallback != "generic";
  if (spec.fallback && target != Target::Generic &&
      (fallbackLut || (!lut && has_upconvert_layout(format))))
    targets.push_back(fallback);

  std::vector<std::pair<int64_t, int64_t>> distinct =
      distinctShapes(spec.shapes);

  fs::path runtime = runtimeSourceDir();
  prepareBundleDir(out);

  std::vector<BundleKernel> kernels;
  for (const std::string &t : targets)
    for (const auto &[M, K] : distinct)
      for (int64_t nHint : {int64_t(1), int64_t(16)}) {
        KernelOptions kernelOptions;
        kernelOptions.threads = spec.threads;
        kernelOptions.schedulePath = spec.schedule;
        if (bitserial && (t == targetName || fallbackLut))
          kernelOptions.strategy = Strategy::LutBitserial;
        if (t == targetName)
          kernelOptions.config = spec.config;
        std::string cpp;
        BundleKernel k =
            generateBundleKernel(format, t, M, K, nHint, kernelOptions, cpp);
        // The GEMM kernel only when its config differs from the GEMV one.
        if (nHint != 1 && kernels.back().config == k.config)
          continue;
        writeFile(out / k.file, cpp);
        kernels.push_back(std::move(k));
      }

  runtimeSources = copyRuntime(runtime, out);

  writeFile(out / "lowbit_kernels.h",
            headerText(format, targetName, spec.shapes, kernels));
  writeFile(out / "lowbit_kernels.cpp",
            tableText(format, targetName, spec.shapes, kernels));
  writeFile(out / "CMakeLists.txt", cmakeText(runtimeSources, kernels));
  writeFile(out / "README.md",
            readmeText(format, targetName, spec.command, spec.shapes, kernels));
  return kernels;
}

namespace {

int runCompile(const ParsedOptions &options) {
  auto start = std::chrono::steady_clock::now();
  BundleSpec spec;
  spec.format = Format::parse(*options.get("format"));
  if (options.has("model") == options.has("shapes"))
    throw Error("give exactly one of --model and --shapes");
  spec.shapes = options.has("model") ? modelShapes(*options.get("model"))
                                     : parseShapeList(*options.get("shapes"));
  if (spec.shapes.empty())
    throw Error("no shapes to compile");
  for (LinearShape &s : spec.shapes) {
    spec.format.check_shape(s.M, s.K);
    if (s.name.empty())
      s.name = std::to_string(s.M) + "x" + std::to_string(s.K);
  }
  const std::string strategyName = options.getOr("strategy", "auto");
  spec.strategy = parse_strategy(strategyName);
  if (spec.strategy != Strategy::Auto &&
      spec.strategy != Strategy::LutBitserial)
    throw Error("lowbit compile: strategy '" + strategyName +
                "' is not supported (use auto or lut-bitserial)");
  // native: the best target for the bundle's kernels (auto picks
  // lut-elementwise for tl1/tl2).
  Target target = parse_target(options.getOr("target", "native"));
  if (target == Target::Native)
    target = native_target(spec.strategy == Strategy::Auto
                               ? has_lut_layout(spec.format)
                                     ? Strategy::LutElementwise
                                     : Strategy::Upconvert
                               : spec.strategy);
  spec.target = target_name(target);
  spec.threads = int(options.getPositive("threads", 1));
  spec.schedule = options.getOr("schedule", "");
  spec.command = "lowbit compile " +
                 (options.has("model") ? "--model " + *options.get("model")
                                       : "--shapes " + *options.get("shapes")) +
                 " --format " + spec.format.name() + " --target " + spec.target;
  if (spec.strategy == Strategy::LutBitserial)
    spec.command += " --strategy lut-bitserial";
  if (!spec.schedule.empty())
    spec.command += " --schedule " + spec.schedule;
  if (spec.threads != 1)
    spec.command += " --threads " + std::to_string(spec.threads);
  spec.dtype = parse_gpu_dtype(options.getOr("dtype", "f32"));
  if (spec.dtype != GpuDType::F32)
    spec.command += " --dtype " + gpu_dtype_name(spec.dtype);

  fs::path out = *options.get("out");
  std::vector<std::string> runtimeSources;
  std::vector<BundleKernel> kernels = writeBundle(out, spec, runtimeSources);

  size_t distinct = 0;
  std::string targetList;
  for (size_t i = 0; i < kernels.size(); ++i) {
    const BundleKernel &k = kernels[i];
    if (k.target == spec.target && k.minN == 1)
      ++distinct;
    if (i == 0 || kernels[i - 1].target != k.target)
      targetList += (targetList.empty() ? "" : " + ") + k.target;
  }
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::printf("compile: %s, %zu shapes (%zu distinct), %zu kernels (%s), "
              "%zu runtime sources -> %s (%.1f s)\n",
              spec.format.name().c_str(), spec.shapes.size(), distinct,
              kernels.size(), targetList.c_str(), runtimeSources.size(),
              out.string().c_str(), seconds);
  return 0;
}

} // namespace

const Command &compileCommand() {
  static const Command command{
      {"compile",
       "Compile kernels ahead of time into a bundle to add_subdirectory().",
       "The bundle (--out) holds the generated kernels of every shape for "
       "--target\nand for its fallback when the CPU lacks the ISA (generic; "
       "aarch64-neon-nodot\nfor aarch64-neon; tl1/tl2 fall back to the "
       "reference), the runtime sources, a\n"
       "CMakeLists.txt building the static library lowbit_bundle (C++17, no "
       "LLVM)\nand a README.md with the C API (include/lowbit/lowbit.h).\n",
       {{"format", "F", "weight format", true},
        {"model", "NAME", "every linear shape of a model (schedules/models)"},
        {"shapes", "MxK[,...]", "weight shapes instead of --model"},
        {"target", "T",
         "native (default), generic, x86-avx2, x86-avxvnni, "
         "x86-avx512vnni, aarch64-neon, aarch64-neon-nodot, spirv-vulkan, "
         "spirv-xe2 (SPIR-V kernels + the Vulkan launcher; C++ API)"},
        {"strategy", "S",
         "auto (default: upconvert, tl1/tl2 lut-elementwise) or "
         "lut-bitserial (x86 and aarch64 kernels; a generic fallback "
         "stays upconvert)"},
        {"schedule", "FILE", "JSON schedule to take configs from"},
        {"threads", "N", "threads the kernels are configured for (default 1)"},
        {"dtype", "T",
         "GPU targets: element type of X and Y on the device, f32 "
         "(default), f16, bf16"},
        {"out", "DIR", "bundle directory (created)", true}}},
      runCompile};
  return command;
}

} // namespace lowbit::cli
