//===- KernelCache.h - generated C++ into cached shared objects -*- C++ -*-===//
//
// Generated kernels leave the compiler as C++ text. To run them, Jit.h (and
// through it `lowbit run`, `lowbit bench` or an engine) compiles the text with
// the host C++ compiler into a shared object named by a SHA-256 of everything
// that determines it (compiler path and --version, flags, sources), under
// $XDG_CACHE_HOME/lowbit (default ~/.cache/lowbit), then dlopens it. A later
// call with the same inputs loads the cached file without compiling. Files
// appear atomically (compiled in a private temporary directory, then renamed),
// so concurrent lowbit processes share the cache safely.
//
// Only the source text and the flags are hashed: a kernel source should be
// self-contained (headers it includes through -I flags are not part of the
// key).
//
//===----------------------------------------------------------------------===//
#ifndef LOWBIT_JIT_KERNELCACHE_H
#define LOWBIT_JIT_KERNELCACHE_H

#include "lowbit/kernel_abi.h"

#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace lowbit::jit {

/// A private directory made with mkdtemp under `parent` (named `prefix`
/// plus six random characters), removed with its contents at scope exit.
/// Throws Error naming `parent` when it cannot be made.
class ScopedTempDir {
public:
  explicit ScopedTempDir(
      const std::filesystem::path &parent =
          std::filesystem::temp_directory_path(),
      const std::string &prefix = "lowbit-");
  ~ScopedTempDir();
  ScopedTempDir(const ScopedTempDir &) = delete;
  ScopedTempDir &operator=(const ScopedTempDir &) = delete;
  const std::filesystem::path &path() const { return path_; }

private:
  std::filesystem::path path_;
};

/// A dlopen'ed shared object; dlclose'd when the last reference goes.
class KernelLibrary {
public:
  KernelLibrary(void *handle, std::string path, bool cached);
  ~KernelLibrary();
  KernelLibrary(const KernelLibrary &) = delete;
  KernelLibrary &operator=(const KernelLibrary &) = delete;

  /// The address of `name`; throws Error naming the symbol and the file when
  /// it is missing.
  void *symbol(const std::string &name) const;
  lowbit_kernel_fn kernel(const std::string &name) const;
  const std::string &path() const { return path_; }
  /// True when the file was already in the cache (nothing was compiled).
  bool cached() const { return cached_; }

private:
  void *handle_;
  std::string path_;
  bool cached_;
};

/// One kernel: the library that holds it and its entry point.
struct LoadedKernel {
  std::shared_ptr<KernelLibrary> library;
  lowbit_kernel_fn fn = nullptr;
};

/// Compiles `cppSource` with `<cxx> -O3 -shared -fPIC -std=c++17 <flags>`
/// (reusing the cached object when present), loads it and looks up `symbol`
/// (an extern "C" function with the kernel_abi.h signature). A compiler
/// failure throws Error with the compiler's first error line.
LoadedKernel compile_and_load(const std::string &cppSource,
                              const std::string &symbol,
                              const std::vector<std::string> &flags);

/// A batch: every source is its own translation unit (compiled in parallel,
/// so sources may reuse helper names), all linked into one shared object
/// that is cached as a whole. Returns the library; look kernels up with
/// KernelLibrary::kernel.
std::shared_ptr<KernelLibrary>
compile_and_load(const std::vector<std::string> &cppSources,
                 const std::vector<std::string> &flags);

/// The compiler: $LOWBIT_CXX, else the first of clang++-22, c++, g++ found
/// on PATH. Throws Error when there is none.
std::string host_cxx();

/// A C++ compiler for another architecture and how this host runs what it
/// builds.
struct CrossToolchain {
  std::string arch;             // "aarch64"
  std::vector<std::string> cxx; // the compiler and its target flags
  std::vector<std::string> run; // the emulator command that prefixes a run
};

/// The AArch64 toolchain of an x86 host: $LOWBIT_CROSS_CXX (a command
/// line), else aarch64-linux-gnu-g++, else clang++-22
/// --target=aarch64-linux-gnu; programs run under $LOWBIT_QEMU (default
/// qemu-aarch64) -L /usr/aarch64-linux-gnu. Throws Error with one line
/// naming what is missing and the Debian package that provides it.
CrossToolchain aarch64_toolchain();

/// One translation unit of an executable: a source file, its flags, its
/// include directories and the text of the headers it includes (the cache
/// key has the text, not the directories, which may be temporary).
struct BuildUnit {
  std::string path;
  std::vector<std::string> flags;
  std::vector<std::string> includes;
  std::string headers;
};

/// Compiles every unit with `toolchain.cxx -std=c++17 <flags> -I... -c` (each
/// object cached by a SHA-256 of the compiler, its flags, the source and
/// header text; missing ones built in parallel) and links them with
/// `linkFlags` into an executable cached by the hash of its objects' keys.
/// Returns the executable's path. A compiler failure throws Error with the
/// compiler's first error line.
std::string build_cached_executable(const CrossToolchain &toolchain,
                                    const std::vector<BuildUnit> &units,
                                    const std::vector<std::string> &linkFlags);

/// Runs argv (looked up on PATH); returns {exit status, stdout + stderr}.
std::pair<int, std::string> run_command(const std::vector<std::string> &argv);

/// $XDG_CACHE_HOME/lowbit, else $HOME/.cache/lowbit (created on demand).
std::string kernel_cache_dir();

/// SHA-256 of `data` (FIPS 180-4; our own, so that the cache needs no LLVM)
/// as 64 lowercase hex digits (the cache key).
std::string sha256_hex(const std::string &data);

/// Appends `part` to a cache key (or a kept cache entry) as
/// "<length>:<part>\n", so that no two different lists of parts give the
/// same text.
void append_key_part(std::string &key, const std::string &part);

/// The bytes of `path` ("" where it cannot be read).
std::string read_file(const std::filesystem::path &path);

/// Writes `text` to `path`; Error where it cannot.
void write_file(const std::filesystem::path &path, const std::string &text);

/// Device, inode, size and modification time of `path` as one string, ""
/// where it cannot be read: a file's part of a cache key, so that a rebuilt
/// or replaced file gets entries of its own.
std::string file_identity(const std::filesystem::path &path);

/// Writes `text` to `path` whole or not at all (in a private directory
/// beside it, then renamed, as compile_and_load keeps its objects), creating
/// the directory; where it cannot, nothing is written (the caller makes the
/// entry again next time).
void keep_file(const std::filesystem::path &path, const std::string &text);

} // namespace lowbit::jit

#endif // LOWBIT_JIT_KERNELCACHE_H
