//===- JitTestUtil.h - helpers of the kernel cache's tests ------*- C++ -*-===//
//
// Shared by lib/Jit's tests and tools/lowbit's benchmark tests, which time
// kernels compiled through the cache.
//
//===----------------------------------------------------------------------===//
#ifndef LOWBIT_JIT_TESTS_JITTESTUTIL_H
#define LOWBIT_JIT_TESTS_JITTESTUTIL_H

#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace lowbit::jit::test {

/// Points XDG_CACHE_HOME (and optionally LOWBIT_CXX) at test values for the
/// scope of a test.
class ScopedCache {
public:
  ScopedCache() {
    dir_ = std::filesystem::temp_directory_path() /
           ("lowbit-cache-test-" + std::to_string(std::random_device{}()));
    std::filesystem::create_directories(dir_);
    save("XDG_CACHE_HOME");
    save("LOWBIT_CXX");
    setenv("XDG_CACHE_HOME", dir_.c_str(), 1);
  }
  ~ScopedCache() {
    for (auto &[name, value] : saved_)
      if (value.first)
        setenv(name.c_str(), value.second.c_str(), 1);
      else
        unsetenv(name.c_str());
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  std::filesystem::path dir() const { return dir_ / "lowbit"; }

private:
  void save(const std::string &name) {
    const char *v = std::getenv(name.c_str());
    saved_.push_back({name, {v != nullptr, v ? v : ""}});
  }
  std::filesystem::path dir_;
  std::vector<std::pair<std::string, std::pair<bool, std::string>>> saved_;
};

/// A kernel_abi.h function that adds 1 to each of its first `n` outputs.
inline constexpr const char *kAddOne = R"(
#include <stdint.h>
static float helper(float v) { return v + 1.0f; }
extern "C" void add_one(const uint8_t *, const uint16_t *, const uint16_t *,
                        const int8_t *, const float *, const int32_t *,
                        float *y, int64_t n, int64_t, int64_t, float) {
  for (int64_t i = 0; i < n; ++i) y[i] = helper(y[i]);
}
)";

} // namespace lowbit::jit::test

#endif // LOWBIT_JIT_TESTS_JITTESTUTIL_H
