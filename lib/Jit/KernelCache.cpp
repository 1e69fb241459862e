//===- KernelCache.cpp - compile generated C++ into cached shared objects -===//

#include "lowbit/Jit/KernelCache.h"

#include "lowbit/error.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace lowbit::jit {

namespace fs = std::filesystem;

// SHA-256 as FIPS 180-4 (section 6.2) defines it, so that the kernel cache
// (and a warm engine start, which only looks kernels up) needs no LLVM.
namespace {

constexpr uint32_t kSha256K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
    0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
    0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

/// One 64-byte block into the state H (FIPS 180-4, 6.2.2), the message
/// schedule W_t kept as its last 16 words (W_t replaces W_{t-16}).
void sha256Block(uint32_t H[8], const unsigned char *block) {
  uint32_t W[16];
  for (int t = 0; t < 16; ++t)
    W[t] = uint32_t(block[4 * t]) << 24 | uint32_t(block[4 * t + 1]) << 16 |
           uint32_t(block[4 * t + 2]) << 8 | uint32_t(block[4 * t + 3]);
  auto schedule = [&W](int t) {
    if (t >= 16) {
      const uint32_t w15 = W[(t - 15) & 15], w2 = W[(t - 2) & 15];
      W[t & 15] += (rotr(w15, 7) ^ rotr(w15, 18) ^ (w15 >> 3)) +
                   W[(t - 7) & 15] +
                   (rotr(w2, 17) ^ rotr(w2, 19) ^ (w2 >> 10));
    }
    return W[t & 15];
  };
  uint32_t a = H[0], b = H[1], c = H[2], d = H[3], e = H[4], f = H[5],
           g = H[6], h = H[7];
  // One round of 6.2.2 step 3 without its renaming: T1 + T2 becomes the
  // new a where h was, d + T1 the new e; eight rounds bring the names back.
  auto round = [&schedule](uint32_t a, uint32_t b, uint32_t c, uint32_t &d,
                           uint32_t e, uint32_t f, uint32_t g, uint32_t &h,
                           int t) {
    const uint32_t T1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) +
                        ((e & f) ^ (~e & g)) + kSha256K[t] + schedule(t);
    const uint32_t T2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) +
                        ((a & b) ^ (a & c) ^ (b & c));
    d += T1;
    h = T1 + T2;
  };
  for (int t = 0; t < 64; t += 16)
    for (int u = 0; u < 16; u += 8) {
      round(a, b, c, d, e, f, g, h, t + u);
      round(h, a, b, c, d, e, f, g, t + u + 1);
      round(g, h, a, b, c, d, e, f, t + u + 2);
      round(f, g, h, a, b, c, d, e, t + u + 3);
      round(e, f, g, h, a, b, c, d, t + u + 4);
      round(d, e, f, g, h, a, b, c, t + u + 5);
      round(c, d, e, f, g, h, a, b, t + u + 6);
      round(b, c, d, e, f, g, h, a, t + u + 7);
    }
  H[0] += a;
  H[1] += b;
  H[2] += c;
  H[3] += d;
  H[4] += e;
  H[5] += f;
  H[6] += g;
  H[7] += h;
}

} // namespace

std::string sha256_hex(const std::string &data) {
  uint32_t H[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  const auto *bytes = reinterpret_cast<const unsigned char *>(data.data());
  size_t whole = data.size() / 64 * 64;
  for (size_t i = 0; i < whole; i += 64)
    sha256Block(H, bytes + i);
  // Padding (5.1.1): 0x80, zeros, the message length in bits (big-endian
  // 64-bit) ending the last block; one block or two.
  unsigned char tail[128] = {};
  const size_t rest = data.size() - whole;
  std::memcpy(tail, bytes + whole, rest);
  tail[rest] = 0x80;
  const size_t tailSize = rest + 1 + 8 <= 64 ? 64 : 128;
  const uint64_t bits = uint64_t(data.size()) * 8;
  for (int i = 0; i < 8; ++i)
    tail[tailSize - 1 - i] = static_cast<unsigned char>(bits >> (8 * i));
  for (size_t i = 0; i < tailSize; i += 64)
    sha256Block(H, tail + i);
  static const char hex[] = "0123456789abcdef";
  std::string out;
  for (uint32_t word : H)
    for (int shift = 28; shift >= 0; shift -= 4)
      out += hex[(word >> shift) & 0xf];
  return out;
}

void append_key_part(std::string &key, const std::string &part) {
  key += std::to_string(part.size()) + ":" + part + "\n";
}

//===----------------------------------------------------------------------===//
// Processes
//===----------------------------------------------------------------------===//

namespace {

/// Starts argv[0] (looked up on PATH) with stdout and stderr appended to
/// `log` (or to a pipe whose read end is returned in *pipe_read).
pid_t spawn(const std::vector<std::string> &argv, const std::string &log,
            int *pipe_read = nullptr) {
  std::vector<char *> args;
  for (const std::string &a : argv)
    args.push_back(const_cast<char *>(a.c_str()));
  args.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  int fds[2] = {-1, -1};
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  if (pipe_read) {
    if (pipe(fds) != 0)
      throw Error(std::string("cannot create a pipe: ") + std::strerror(errno));
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    posix_spawn_file_actions_addclose(&actions, fds[1]);
  } else {
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
  }
  pid_t pid = -1;
  const int rc =
      posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (pipe_read) {
    close(fds[1]);
    if (rc != 0)
      close(fds[0]);
    else
      *pipe_read = fds[0];
  }
  if (rc != 0)
    throw Error("cannot run the C++ compiler '" + argv[0] +
                "': " + std::strerror(rc));
  return pid;
}

/// Waits for `pid`; returns its exit status (128 + signal when killed).
int wait_for(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      return 127;
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

/// Runs argv and returns {exit status, stdout + stderr}.
std::pair<int, std::string> run_capture(const std::vector<std::string> &argv) {
  int fd = -1;
  const pid_t pid = spawn(argv, "", &fd);
  std::string out;
  char buffer[4096];
  for (;;) {
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n > 0)
      out.append(buffer, size_t(n));
    else if (n == 0 || errno != EINTR)
      break;
  }
  close(fd);
  return {wait_for(pid), out};
}

/// The file `name` runs (looked up on PATH as posix_spawnp does), "" when
/// there is none.
std::string executable_path(const std::string &name) {
  if (name.find('/') != std::string::npos)
    return access(name.c_str(), X_OK) == 0 ? name : "";
  const char *path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':'))
    if (!dir.empty() && access((dir + "/" + name).c_str(), X_OK) == 0)
      return dir + "/" + name;
  return "";
}

bool executable_on_path(const std::string &name) {
  return !executable_path(name).empty();
}

/// Where compiler_identity keeps the `--version` text of `cxx`: named by the
/// file it runs (symbolic links resolved; device, inode, size, modification
/// time), so that another or an updated compiler gets its own entry. Empty
/// where the file or the cache cannot be found.
fs::path kept_identity_path(const std::string &cxx) {
  std::error_code ec;
  const std::string found = executable_path(cxx);
  if (found.empty())
    return {};
  const fs::path file = fs::canonical(found, ec);
  const std::string identity = ec ? std::string() : file_identity(file);
  if (identity.empty())
    return {};
  std::string key = "lowbit compiler identity v2\n";
  for (const std::string &part : {file.string(), identity})
    append_key_part(key, part);
  try {
    return fs::path(kernel_cache_dir()) / "compilers" /
           (sha256_hex(key) + ".version");
  } catch (const Error &) {
    return {};
  }
}

/// The compiler's `--version` text, once per process and compiler, and kept
/// in the cache (kept_identity_path): a start that finds its kernels in the
/// cache runs no compiler (`clang++ --version` alone maps libLLVM and takes
/// tens of milliseconds). An entry that cannot be written is skipped.
std::string compiler_identity(const std::string &cxx) {
  static std::mutex mutex;
  static std::map<std::string, std::string> known;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = known.find(cxx);
  if (it != known.end())
    return it->second;
  const fs::path kept = kept_identity_path(cxx);
  if (!kept.empty())
    if (std::string text = read_file(kept); !text.empty())
      return known[cxx] = text;
  auto [status, out] = run_capture({cxx, "--version"});
  if (status != 0)
    throw Error("the C++ compiler '" + cxx + "' does not run ('" + cxx +
                " --version' exited with status " + std::to_string(status) +
                ")");
  if (!kept.empty() && !out.empty())
    keep_file(kept, out);
  return known[cxx] = out;
}

} // namespace

std::string read_file(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_file(const fs::path &path, const std::string &text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out.flush())
    throw Error("cannot write " + path.string());
}

std::string file_identity(const fs::path &path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return "";
  return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" +
         std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) +
         "." + std::to_string(st.st_mtim.tv_nsec);
}

void keep_file(const fs::path &path, const std::string &text) {
  try {
    fs::create_directories(path.parent_path());
    ScopedTempDir work(path.parent_path(), "tmp-");
    write_file(work.path() / "entry", text);
    fs::rename(work.path() / "entry", path);
  } catch (const std::exception &) {
  }
}

namespace {

/// The compiler's first error line (paths inside `dir` shortened to the
/// file name), else its first non-empty line.
std::string first_error_line(const std::string &log, const fs::path &dir) {
  std::stringstream lines(log);
  std::string line, first;
  while (std::getline(lines, line)) {
    if (first.empty() && !line.empty())
      first = line;
    if (line.find("error") != std::string::npos) {
      first = line;
      break;
    }
  }
  const std::string prefix = dir.string() + "/";
  for (size_t at; (at = first.find(prefix)) != std::string::npos;)
    first.erase(at, prefix.size());
  return first;
}

const std::vector<std::string> kBaseFlags = {"-O3", "-fPIC", "-std=c++17"};

/// Compiles the sources into `out` (a shared object) inside `dir`.
void build_shared_object(const std::string &cxx,
                         const std::vector<std::string> &sources,
                         const std::vector<std::string> &flags,
                         const fs::path &dir, const fs::path &out) {
  const fs::path log = dir / "compiler.log";
  auto command = [&](std::vector<std::string> tail) {
    std::vector<std::string> argv = {cxx};
    argv.insert(argv.end(), kBaseFlags.begin(), kBaseFlags.end());
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.insert(argv.end(), tail.begin(), tail.end());
    return argv;
  };
  auto fail = [&](int status) {
    std::string line = first_error_line(read_file(log), dir);
    if (line.empty())
      line = "exit status " + std::to_string(status);
    throw Error("kernel compilation failed (" + cxx + "): " + line);
  };

  std::vector<std::string> files;
  for (size_t i = 0; i < sources.size(); ++i) {
    files.push_back((dir / ("kernel" + std::to_string(i) + ".cpp")).string());
    write_file(files.back(), sources[i]);
  }
  if (files.size() == 1) {
    const int status = wait_for(spawn(
        command({"-shared", files[0], "-o", out.string()}), log.string()));
    if (status != 0)
      fail(status);
    return;
  }
  // Several translation units: compile in parallel, then link.
  const size_t jobs = std::max<size_t>(1, std::thread::hardware_concurrency());
  std::vector<std::string> objects;
  for (size_t first = 0; first < files.size(); first += jobs) {
    std::vector<pid_t> running;
    for (size_t i = first; i < std::min(files.size(), first + jobs); ++i) {
      objects.push_back(files[i] + ".o");
      running.push_back(
          spawn(command({"-c", files[i], "-o", objects.back()}), log.string()));
    }
    int worst = 0;
    for (pid_t pid : running)
      worst = std::max(worst, wait_for(pid));
    if (worst != 0)
      fail(worst);
  }
  std::vector<std::string> link = {"-shared"};
  link.insert(link.end(), objects.begin(), objects.end());
  link.insert(link.end(), {"-o", out.string()});
  const int status = wait_for(spawn(command(link), log.string()));
  if (status != 0)
    fail(status);
}

} // namespace

//===----------------------------------------------------------------------===//
// The cache
//===----------------------------------------------------------------------===//

ScopedTempDir::ScopedTempDir(const fs::path &parent, const std::string &prefix) {
  std::string pattern = (parent / (prefix + "XXXXXX")).string();
  if (!mkdtemp(pattern.data()))
    throw Error("cannot create a directory in " + parent.string() + ": " +
                std::strerror(errno));
  path_ = pattern;
}

ScopedTempDir::~ScopedTempDir() {
  std::error_code ignored;
  fs::remove_all(path_, ignored);
}

KernelLibrary::KernelLibrary(void *handle, std::string path, bool cached)
    : handle_(handle), path_(std::move(path)), cached_(cached) {}

KernelLibrary::~KernelLibrary() {
  if (handle_)
    dlclose(handle_);
}

void *KernelLibrary::symbol(const std::string &name) const {
  dlerror();
  void *address = dlsym(handle_, name.c_str());
  if (!address)
    throw Error("symbol '" + name + "' not found in " + path_);
  return address;
}

lowbit_kernel_fn KernelLibrary::kernel(const std::string &name) const {
  return reinterpret_cast<lowbit_kernel_fn>(symbol(name));
}

std::string host_cxx() {
  if (const char *cxx = std::getenv("LOWBIT_CXX"); cxx && *cxx)
    return cxx;
  for (const char *candidate : {"clang++-22", "c++", "g++"})
    if (executable_on_path(candidate))
      return candidate;
  throw Error("no C++ compiler found (set LOWBIT_CXX, or install clang-22 "
              "or g++)");
}

std::string kernel_cache_dir() {
  fs::path base;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    base = xdg;
  else if (const char *home = std::getenv("HOME"); home && *home)
    base = fs::path(home) / ".cache";
  else
    throw Error("cannot place the kernel cache: neither XDG_CACHE_HOME nor "
                "HOME is set");
  const fs::path dir = base / "lowbit";
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throw Error("cannot create the kernel cache " + dir.string() + ": " +
                ec.message());
  return dir.string();
}

std::shared_ptr<KernelLibrary>
compile_and_load(const std::vector<std::string> &cppSources,
                 const std::vector<std::string> &flags) {
  if (cppSources.empty())
    throw Error("compile_and_load: no kernel sources");
  const std::string cxx = host_cxx();
  // Every input of the build, each length-prefixed so that no two different
  // inputs give the same key text.
  std::string key = "lowbit kernel cache v1\n";
  auto add = [&key](const std::string &part) { append_key_part(key, part); };
  add(cxx);
  add(compiler_identity(cxx));
  for (const std::string &flag : kBaseFlags)
    add(flag);
  add("flags " + std::to_string(flags.size()));
  for (const std::string &flag : flags)
    add(flag);
  add("sources " + std::to_string(cppSources.size()));
  for (const std::string &source : cppSources)
    add(source);

  const fs::path dir = kernel_cache_dir();
  const fs::path target = dir / (sha256_hex(key) + ".so");
  for (int attempt = 0; attempt < 2; ++attempt) {
    bool cached = fs::exists(target);
    if (!cached) {
      // Inside the cache, so that rename() stays on one file system.
      ScopedTempDir work(dir, "tmp-");
      const fs::path built = work.path() / "kernels.so";
      build_shared_object(cxx, cppSources, flags, work.path(), built);
      std::error_code ec;
      fs::rename(built, target, ec);
      if (ec)
        throw Error("cannot move a compiled kernel into " + dir.string() +
                    ": " + ec.message());
    }
    if (void *handle = dlopen(target.c_str(), RTLD_NOW | RTLD_LOCAL))
      return std::make_shared<KernelLibrary>(handle, target.string(), cached);
    const char *why = dlerror();
    if (!cached || attempt == 1)
      throw Error("cannot load " + target.string() + ": " +
                  (why ? why : "dlopen failed"));
    // A cached file that does not load (damaged): build it again once.
    std::error_code ignored;
    fs::remove(target, ignored);
  }
  throw Error("cannot load " + target.string());
}

LoadedKernel compile_and_load(const std::string &cppSource,
                              const std::string &symbol,
                              const std::vector<std::string> &flags) {
  LoadedKernel k;
  k.library = compile_and_load(std::vector<std::string>{cppSource}, flags);
  k.fn = k.library->kernel(symbol);
  return k;
}

//===----------------------------------------------------------------------===//
// Executables for another architecture
//===----------------------------------------------------------------------===//

std::pair<int, std::string> run_command(const std::vector<std::string> &argv) {
  return run_capture(argv);
}

CrossToolchain aarch64_toolchain() {
  static const char *sysroot = "/usr/aarch64-linux-gnu";
  CrossToolchain t;
  t.arch = "aarch64";
  if (const char *cxx = std::getenv("LOWBIT_CROSS_CXX"); cxx && *cxx) {
    std::stringstream words(cxx);
    for (std::string w; words >> w;)
      t.cxx.push_back(w);
  } else if (executable_on_path("aarch64-linux-gnu-g++")) {
    t.cxx = {"aarch64-linux-gnu-g++"};
  } else if (executable_on_path("clang++-22") &&
             fs::exists(fs::path(sysroot) / "include" / "stdio.h")) {
    t.cxx = {"clang++-22", "--target=aarch64-linux-gnu"};
  } else {
    throw Error("cannot build aarch64 code: no cross compiler (install "
                "g++-aarch64-linux-gnu and libc6-dev-arm64-cross, or set "
                "LOWBIT_CROSS_CXX)");
  }
  if (!executable_on_path(t.cxx.front()))
    throw Error("cannot build aarch64 code: the cross compiler '" +
                t.cxx.front() + "' is not installed");
  const char *qemu = std::getenv("LOWBIT_QEMU");
  std::string emulator = qemu && *qemu ? qemu : "qemu-aarch64";
  if (!executable_on_path(emulator))
    throw Error("cannot run aarch64 code on this host: '" + emulator +
                "' not found (install qemu-user)");
  if (!fs::exists(fs::path(sysroot) / "lib" / "ld-linux-aarch64.so.1"))
    throw Error(std::string("cannot run aarch64 code on this host: no "
                            "AArch64 C library in ") +
                sysroot + " (install libc6-dev-arm64-cross)");
  t.run = {emulator, "-L", sysroot};
  return t;
}

std::string build_cached_executable(const CrossToolchain &toolchain,
                                    const std::vector<BuildUnit> &units,
                                    const std::vector<std::string> &linkFlags) {
  const std::string &cxx = toolchain.cxx.front();
  std::string base = "lowbit cross cache v1\n";
  const auto add = append_key_part;
  for (const std::string &word : toolchain.cxx)
    add(base, word);
  add(base, compiler_identity(cxx));

  const fs::path dir = kernel_cache_dir();
  std::vector<fs::path> objects;
  std::vector<size_t> missing;
  std::string exeKey = base;
  for (const BuildUnit &unit : units) {
    std::string key = base;
    add(key, "flags " + std::to_string(unit.flags.size()));
    for (const std::string &flag : unit.flags)
      add(key, flag);
    add(key, read_file(unit.path));
    add(key, unit.headers);
    const std::string hash = sha256_hex(key);
    add(exeKey, hash);
    objects.push_back(dir / (hash + "." + toolchain.arch + ".o"));
    if (!fs::exists(objects.back()))
      missing.push_back(objects.size() - 1);
  }
  add(exeKey, "link " + std::to_string(linkFlags.size()));
  for (const std::string &flag : linkFlags)
    add(exeKey, flag);
  const fs::path exe = dir / (sha256_hex(exeKey) + "." + toolchain.arch);
  if (fs::exists(exe))
    return exe.string();

  // Inside the cache, so that rename() stays on one file system.
  ScopedTempDir work(dir, "tmp-");
  const fs::path log = work.path() / "compiler.log";
  auto fail = [&](int status) {
    std::string line = first_error_line(read_file(log), work.path());
    if (line.empty())
      line = "exit status " + std::to_string(status);
    throw Error(toolchain.arch + " build failed (" + cxx + "): " + line);
  };
  auto command = [&](const std::vector<std::string> &tail) {
    std::vector<std::string> argv = toolchain.cxx;
    argv.insert(argv.end(), tail.begin(), tail.end());
    return argv;
  };
  const size_t jobs = std::max<size_t>(1, std::thread::hardware_concurrency());
  for (size_t first = 0; first < missing.size(); first += jobs) {
    std::vector<std::pair<pid_t, size_t>> running;
    for (size_t j = first; j < std::min(missing.size(), first + jobs); ++j) {
      const size_t i = missing[j];
      std::vector<std::string> args = {"-std=c++17"};
      args.insert(args.end(), units[i].flags.begin(), units[i].flags.end());
      for (const std::string &dir : units[i].includes)
        args.push_back("-I" + dir);
      const fs::path built = work.path() / objects[i].filename();
      args.insert(args.end(), {"-c", units[i].path, "-o", built.string()});
      running.push_back({spawn(command(args), log.string()), i});
    }
    int worst = 0;
    for (auto [pid, i] : running)
      worst = std::max(worst, wait_for(pid));
    if (worst != 0)
      fail(worst);
    for (auto [pid, i] : running) {
      std::error_code ec;
      fs::rename(work.path() / objects[i].filename(), objects[i], ec);
      if (ec)
        throw Error("cannot move an object into " + dir.string() + ": " +
                    ec.message());
    }
  }
  std::vector<std::string> link;
  for (const fs::path &object : objects)
    link.push_back(object.string());
  link.insert(link.end(), linkFlags.begin(), linkFlags.end());
  const fs::path built = work.path() / "a.out";
  link.insert(link.end(), {"-o", built.string()});
  if (int status = wait_for(spawn(command(link), log.string())); status != 0)
    fail(status);
  std::error_code ec;
  fs::rename(built, exe, ec);
  if (ec)
    throw Error("cannot move an executable into " + dir.string() + ": " +
                ec.message());
  return exe.string();
}

} // namespace lowbit::jit
