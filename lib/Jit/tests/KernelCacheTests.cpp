//===- KernelCacheTests.cpp - tests of the kernel cache -------------------===//

#include "JitTestUtil.h"
#include "test_util.h"

#include "lowbit/Jit/KernelCache.h"

#include "lowbit/format.h"
#include "lowbit/reference.h"
#include "lowbit/run_kernel.h"
#include "lowbit/upconvert.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

namespace lowbit::jit {
namespace {

namespace fs = std::filesystem;

using lowbit::test::error_of;
using test::kAddOne;
using test::ScopedCache;

/// The entries of a cache directory but `compilers/`, where the C++
/// compiler's identity is kept (KernelCache.cpp, compiler_identity).
size_t files_in(const fs::path &dir) {
  size_t n = 0;
  for (const auto &entry : fs::directory_iterator(dir))
    n += entry.path().filename() != "compilers";
  return n;
}

// The private directory of a compile (and of the qemu runner): made under
// its parent with the prefix, gone with its contents at scope exit; a parent
// that does not exist is one error naming it.
TEST(ScopedTempDir, MadeUnderItsParentAndRemoved) {
  ScopedCache cache;
  const fs::path parent = cache.dir();
  fs::create_directories(parent);
  fs::path made;
  {
    ScopedTempDir dir(parent, "tmp-");
    made = dir.path();
    EXPECT_EQ(made.parent_path(), parent);
    EXPECT_EQ(made.filename().string().rfind("tmp-", 0), 0u);
    EXPECT_TRUE(fs::is_directory(made));
    std::ofstream(made / "file") << "x";
  }
  EXPECT_FALSE(fs::exists(made));
  const fs::path missing = parent / "missing";
  EXPECT_EQ(error_of([&] { ScopedTempDir dir(missing); })
                .rfind("cannot create a directory in " + missing.string() +
                           ": ",
                       0),
            0u);
}

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934c"
                            "a495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a"
                               "9cb410ff61f20015ad");
  EXPECT_EQ(
      sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // Around the padding boundaries (55 bytes fit one block with the length,
  // 64 take two) and a key of several blocks; the digests are coreutils'
  // sha256sum's, the same hex LLVM's SHA-256 (which KernelCache.cpp's own
  // replaced) gave, so existing kernel caches keep their keys.
  EXPECT_EQ(sha256_hex(std::string(55, 'k')),
            "94abcc11f65698688ffc2858efb9b3d55f20c579abaad82735ae6817887595f4");
  EXPECT_EQ(sha256_hex(std::string(64, 'k')),
            "2519b49bcf69feac270ac3c8631539e8caed4c7e6a62c6cc5511228a61780745");
  std::string key;
  for (int i = 0; i < 20; ++i)
    key += "lowbit";
  EXPECT_EQ(sha256_hex(key),
            "6a6244fae536943dfc1b5cd948e03bd016c71e08f0df5dd070abf427b895e5e9");
}

const char *kTimesTwo = R"(
#include <stdint.h>
static float helper(float v) { return v * 2.0f; }
extern "C" void times_two(const uint8_t *, const uint16_t *, const uint16_t *,
                          const int8_t *, const float *, const int32_t *,
                          float *y, int64_t n, int64_t, int64_t, float) {
  for (int64_t i = 0; i < n; ++i) y[i] = helper(y[i]);
}
)";

void call(lowbit_kernel_fn fn, std::vector<float> &y) {
  fn(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, y.data(),
     int64_t(y.size()), 0, 0, 0.0f);
}

TEST(KernelCache, CompilesOnceThenReuses) {
  ScopedCache cache;
  LoadedKernel first = compile_and_load(kAddOne, "add_one", {});
  EXPECT_FALSE(first.library->cached());
  std::vector<float> y = {1.0f, 2.5f};
  call(first.fn, y);
  EXPECT_EQ(y, (std::vector<float>{2.0f, 3.5f}));
  EXPECT_EQ(fs::path(first.library->path()).parent_path(), cache.dir());
  EXPECT_EQ(fs::path(first.library->path()).extension(), ".so");
  EXPECT_EQ(fs::path(first.library->path()).stem().string().size(), 64u);

  LoadedKernel again = compile_and_load(kAddOne, "add_one", {});
  EXPECT_TRUE(again.library->cached());
  EXPECT_EQ(again.library->path(), first.library->path());

  // Different flags or source: a different object.
  LoadedKernel other = compile_and_load(kAddOne, "add_one", {"-DX=1"});
  EXPECT_FALSE(other.library->cached());
  EXPECT_NE(other.library->path(), first.library->path());
  // Only the two objects are left (no temporary directories).
  EXPECT_EQ(files_in(cache.dir()), 2u);
}

TEST(KernelCache, BatchOfTranslationUnits) {
  ScopedCache cache;
  // Both sources define a static `helper`: separate translation units.
  auto library =
      compile_and_load(std::vector<std::string>{kAddOne, kTimesTwo}, {"-O2"});
  std::vector<float> y = {1.0f, 3.0f};
  call(library->kernel("add_one"), y);
  call(library->kernel("times_two"), y);
  EXPECT_EQ(y, (std::vector<float>{4.0f, 8.0f}));
  EXPECT_EQ(error_of([&] { library->kernel("missing"); }),
            "symbol 'missing' not found in " + library->path());
  EXPECT_TRUE(
      compile_and_load(std::vector<std::string>{kAddOne, kTimesTwo}, {"-O2"})
          ->cached());
}

TEST(KernelCache, CompilerErrorGivesItsFirstErrorLine) {
  ScopedCache cache;
  const std::string message = error_of([] {
    compile_and_load("int f() { return undefined_name; }\n", "f", {});
  });
  EXPECT_EQ(message.rfind("kernel compilation failed (", 0), 0u) << message;
  EXPECT_NE(message.find("kernel0.cpp:1:"), std::string::npos) << message;
  EXPECT_NE(message.find("error"), std::string::npos) << message;
  EXPECT_NE(message.find("undefined_name"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_EQ(files_in(cache.dir()), 0u); // nothing half-written is left
}

TEST(KernelCache, MissingCompilerOrSymbol) {
  ScopedCache cache;
  EXPECT_EQ(error_of([] {
              compile_and_load(kAddOne, "nope", {});
            }).rfind("symbol 'nope' not found in ", 0),
            0u);
  setenv("LOWBIT_CXX", "lowbit-no-such-compiler", 1);
  EXPECT_EQ(host_cxx(), "lowbit-no-such-compiler");
  EXPECT_EQ(error_of([] { compile_and_load(kAddOne, "add_one", {}); }),
            "cannot run the C++ compiler 'lowbit-no-such-compiler': No such "
            "file or directory");
  EXPECT_EQ(error_of([] { compile_and_load(std::vector<std::string>{}, {}); }),
            "compile_and_load: no kernel sources");
}

// A scalar i2s kernel written as generated code would be (M, K compiled in),
// compiled through the cache, run on a 2-thread
// pool: equal to the reference bit for bit.
TEST(KernelCache, GeneratedStyleKernelMatchesReference) {
  ScopedCache cache;
  const int64_t M = 37, K = 70, N = 3, Kp = 96;
  const std::string source = R"(
#include <stdint.h>
enum : int64_t { M = 37, Kp = 96 };
extern "C" void i2s_37x70(const uint8_t *codes, const uint16_t *,
                          const uint16_t *, const int8_t *xq,
                          const float *x_scales, const int32_t *x_sums,
                          float *y, int64_t n, int64_t tile_begin,
                          int64_t tile_end, float w_scale) {
  for (int64_t c = 0; c < n; ++c)
    for (int64_t m = tile_begin * 16; m < tile_end * 16 && m < M; ++m) {
      int32_t d = 0;
      for (int64_t k = 0; k < Kp; ++k) {
        const uint8_t byte =
            codes[((m / 16) * (Kp / 16) + k / 16) * 64 + (m % 16) * 4 + k % 4];
        d += int32_t((byte >> (2 * ((k % 16) / 4))) & 3) * xq[c * Kp + k];
      }
      y[c * M + m] = float(d - x_sums[c]) * w_scale / x_scales[c];
    }
}
)";
  LoadedKernel k = compile_and_load(source, "i2s_37x70", {});
  std::mt19937 rng(3);
  std::normal_distribution<float> dist;
  std::vector<float> W(size_t(M * K)), X(size_t(N * K));
  for (float &w : W)
    w = dist(rng);
  for (float &x : X)
    x = dist(rng);
  const Format f = Format::parse("i2s");
  const PackedWeights P = quantize(f, W.data(), M, K);
  std::vector<float> expected(size_t(N * M)), y(size_t(N * M), NAN);
  reference_mpgemm(P, X.data(), N, expected.data());
  const UpconvertWeights U = pack_upconvert(P);
  ASSERT_EQ(U.Kp, Kp);
  const PreparedActivations A = prepare_activations(f, X.data(), N, K);
  ThreadPool pool(2);
  run_kernel(k.fn, U, A, y.data(), M, pool);
  for (size_t i = 0; i < y.size(); ++i)
    ASSERT_EQ(std::memcmp(&y[i], &expected[i], 4), 0)
        << "y[" << i << "] = " << y[i] << ", expected " << expected[i];
}

} // namespace
} // namespace lowbit::jit
