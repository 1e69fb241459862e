//===- test_util.h - helpers shared by the runtime tests --------*- C++ -*-===//
#ifndef LOWBIT_TESTS_TEST_UTIL_H
#define LOWBIT_TESTS_TEST_UTIL_H

#include "lowbit/error.h"
#include "lowbit/gguf.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

namespace lowbit::test {

/// Normal(0, sigma) values from a fixed seed.
inline std::vector<float> random_values(int64_t count, uint32_t seed,
                                        float sigma = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, sigma);
  std::vector<float> v(static_cast<size_t>(count));
  for (float &x : v)
    x = dist(rng);
  return v;
}

/// A 2-D tensor [M, K] of `type` named `name` over `bytes` (not copied: they
/// must outlive it).
inline GgufTensor tensor_of(GgufType type, const std::vector<uint8_t> &bytes,
                            int64_t M, int64_t K,
                            const std::string &name = "w") {
  GgufTensor t;
  t.name = name;
  t.type = type;
  t.ne = {K, M};
  t.data = bytes.data();
  t.bytes = bytes.size();
  return t;
}

inline uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

/// A fresh directory under the system temp dir, removed at scope exit.
class TempDir {
public:
  TempDir() {
    const auto *info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string(info->test_suite_name()) + "-" +
                       info->name() + "-" +
                       std::to_string(std::random_device{}());
    for (char &c : name)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-')
        c = '_';
    path_ = std::filesystem::temp_directory_path() / ("lowbit-rt-" + name);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  std::string file(const std::string &name) const {
    return (path_ / name).string();
  }

private:
  std::filesystem::path path_;
};

/// Runs `body`, expects a lowbit::Error and returns its message.
template <typename F> std::string error_of(F &&body) {
  try {
    body();
  } catch (const Error &e) {
    return e.what();
  }
  ADD_FAILURE() << "expected lowbit::Error";
  return "";
}

} // namespace lowbit::test

#endif // LOWBIT_TESTS_TEST_UTIL_H
