//===- JitTests.cpp - tests of the compile-and-load path ------------------===//
//
// Kernels generated for this host's best target on ragged shapes (M, K, N
// multiples of no tile), compared with the reference strategy as `lowbit
// verify` compares them; the cache's reuse; and the one-line errors of bad
// input.
//
//===----------------------------------------------------------------------===//

#include "JitTestUtil.h"
#include "test_util.h"

#include "lowbit/Jit/Jit.h"
#include "lowbit/Target/TargetInfo.h"

#include "lowbit/format.h"
#include "lowbit/target.h"
#include "lowbit/thread_pool.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace lowbit::jit {
namespace {

using lowbit::test::error_of;
using lowbit::test::random_values;
using test::ScopedCache;

struct Case {
  const char *format;
  Strategy strategy;
  int64_t M, K, N;
};

std::string caseName(const testing::TestParamInfo<Case> &info) {
  std::string name =
      std::string(info.param.format) + "_" + strategy_name(info.param.strategy);
  for (char &c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)))
      c = '_';
  return name;
}

class NativeKernel : public testing::TestWithParam<Case> {};

// Y = X * W^T by the generated kernel equals the reference's (bit for bit
// for the ternary formats, within the format's bounds for the others).
TEST_P(NativeKernel, EqualsTheReference) {
  const Case c = GetParam();
  if (native_target(c.strategy) == Target::Generic &&
      c.strategy != Strategy::Upconvert)
    GTEST_SKIP() << "no byte table lookup on this CPU for "
                 << strategy_name(c.strategy);
  ScopedCache cache;
  const Format format = Format::parse(c.format);
  const KernelChoice choice =
      resolveKernelChoice(format, c.strategy, Target::Native);
  KernelOptions options;
  options.threads = 2;
  const CompiledKernel kernel =
      compileKernel(format, choice, {c.M, c.K, c.N}, options);
  ASSERT_NE(kernel.loaded.fn, nullptr);

  const std::vector<float> W = random_values(c.M * c.K, 1);
  const std::vector<float> X = random_values(c.N * c.K, 2);
  const PackedWeights packed = quantize(format, W.data(), c.M, c.K);
  ThreadPool pool(2);
  std::vector<float> got(size_t(c.N * c.M), NAN), want(got.size(), NAN);
  PreparedWeights prepared = prepareWeights(packed, &kernel);
  runKernel(&kernel, prepared, X.data(), c.N, got.data(), pool);
  PreparedWeights canonical = prepareWeights(packed, nullptr);
  runKernel(nullptr, canonical, X.data(), c.N, want.data(), pool);
  EXPECT_EQ(compareWithReference(packed, X.data(), c.N, got, want,
                                 GpuDType::F32, kernel.tableActGroup),
            "")
      << kernel.config;
}

INSTANTIATE_TEST_SUITE_P(
    Jit, NativeKernel,
    testing::Values(Case{"i2s", Strategy::Auto, 37, 70, 3},
                    Case{"w2g64", Strategy::Auto, 45, 192, 1},
                    Case{"tl2", Strategy::LutElementwise, 33, 94, 2},
                    Case{"w1g128", Strategy::LutBitserial, 29, 256, 3}),
    caseName);

// The same request twice: the second compiles nothing and, the object being
// loaded already, gives the same function.
TEST(Jit, SameKeyGivesTheSameObject) {
  ScopedCache cache;
  const Format format = Format::parse("i2s");
  const KernelChoice choice =
      resolveKernelChoice(format, Strategy::Upconvert, Target::Native);
  const KernelOptions options;
  const CompiledKernel first = compileKernel(format, choice, {19, 40}, options);
  const CompiledKernel again = compileKernel(format, choice, {19, 40}, options);
  EXPECT_FALSE(first.loaded.library->cached());
  EXPECT_TRUE(again.loaded.library->cached());
  EXPECT_EQ(again.loaded.library->path(), first.loaded.library->path());
  EXPECT_EQ(again.loaded.fn, first.loaded.fn);
  EXPECT_EQ(again.config, first.config);

  // Another shape is another object; a batch is one object for all.
  const CompiledKernel other = compileKernel(format, choice, {21, 40}, options);
  EXPECT_NE(other.loaded.library->path(), first.loaded.library->path());
  const std::vector<CompiledKernel> batch =
      compileKernels(format, choice, {{19, 40}, {21, 40}}, options);
  ASSERT_EQ(batch.size(), 2u);
  EXPECT_EQ(batch[0].loaded.library, batch[1].loaded.library);
  EXPECT_NE(batch[0].loaded.fn, batch[1].loaded.fn);
}

// Bad input: one Error whose message is one line naming the problem.
TEST(Jit, BadInputThrowsOneLine) {
  ScopedCache cache;
  const KernelOptions options;
  const std::vector<std::string> messages = {
      error_of([] { Format::parse("w5g7"); }),
      error_of([] { parse_target("x86-sse2"); }),
      error_of([] {
        resolveKernelChoice(Format::parse("i2s"), Strategy::LutElementwise,
                            Target::Native);
      }),
      error_of([&] {
        const Format format = Format::parse("w2g64");
        compileKernel(
            format, resolveKernelChoice(format, Strategy::Auto, Target::Native),
            {45, 100}, options);
      }),
      error_of([&] {
        const Format format = Format::parse("i2s");
        const CompiledKernel kernel = compileKernel(
            format, resolveKernelChoice(format, Strategy::Auto, Target::Native),
            {19, 40}, options);
        const std::vector<float> W = random_values(19 * 42, 1);
        prepareWeights(quantize(format, W.data(), 19, 42), &kernel);
      }),
  };
  EXPECT_EQ(messages[0].rfind("unknown format 'w5g7' (expected i2s", 0), 0u)
      << messages[0];
  EXPECT_EQ(messages[1].rfind("unknown target 'x86-sse2'", 0), 0u)
      << messages[1];
  EXPECT_EQ(messages[2], "strategy 'lut-elementwise' has no kernel for i2s "
                         "(it supports tl1, tl2)");
  EXPECT_EQ(messages[3].rfind("cannot generate the w2g64 kernel for M = 45, "
                              "K = 100, target ",
                              0),
            0u)
      << messages[3];
  EXPECT_NE(messages[3].find("group size 64 does not divide K = 100"),
            std::string::npos)
      << messages[3];
  // Weights of another shape than the kernel's: refused, never run.
  EXPECT_EQ(messages[4], "the kernel was compiled for i2s 19x40, the weights "
                         "are i2s 19x42");
  for (const std::string &message : messages)
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

// A --schedule file is read once (loadSchedule) and then serves every
// kernel of a command: its entry decides the config after the file is gone.
TEST(Jit, ScheduleIsReadOnce) {
  ScopedCache cache;
  const std::string path = (cache.dir().parent_path() / "tuned.json").string();
  const std::string config =
      "#lowbit.upconvert<tile_m = 32, tile_k = 128, tile_n = 1>";
  std::ofstream(path) << R"({"version": 1, "entries": [{"format": "i2s", )"
                         R"("M": 19, "K": 256, "n_class": "gemv", )"
                         R"("target": "generic", "threads": 1, "config": ")"
                      << config << "\"}]}";
  KernelOptions options;
  options.schedule = loadSchedule(path);
  ASSERT_TRUE(std::filesystem::remove(path));
  const Format format = Format::parse("i2s");
  EXPECT_EQ(
      generateKernelSource(format, "generic", {19, 256}, options, "f").config,
      config);
  // Another shape has no entry: the heuristic's config.
  EXPECT_NE(
      generateKernelSource(format, "generic", {21, 256}, options, "f").config,
      config);
  EXPECT_EQ(loadSchedule(""), nullptr);
  EXPECT_EQ(error_of([&] { loadSchedule(path); })
                .rfind("schedule '" + path + "': cannot read", 0),
            0u);
}

// A generated source is kept in the kernel cache under its request and read
// back instead of running the passes again; an entry that does not parse is
// generated again.
TEST(Jit, GeneratedSourceIsKeptAndReadBack) {
  ScopedCache cache;
  const Format format = Format::parse("i2s");
  const mlir::lowbit::KernelSource first =
      generateKernelSource(format, "generic", {19, 256}, KernelOptions(), "f");
  const std::filesystem::path dir = cache.dir() / "sources";
  std::vector<std::filesystem::path> kept;
  for (const auto &entry : std::filesystem::directory_iterator(dir))
    kept.push_back(entry.path());
  ASSERT_EQ(kept.size(), 1u);
  // The entry is what the next request reads: edit the config in it (same
  // length, so the entry still parses) and the edit comes back.
  std::string text;
  {
    std::ifstream in(kept[0], std::ios::binary);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  const size_t at = text.find("tile_n = 1");
  ASSERT_NE(at, std::string::npos) << first.config;
  text[at + 9] = '7';
  std::ofstream(kept[0], std::ios::binary) << text;
  const mlir::lowbit::KernelSource edited =
      generateKernelSource(format, "generic", {19, 256}, KernelOptions(), "f");
  EXPECT_NE(edited.config.find("tile_n = 7"), std::string::npos);
  EXPECT_EQ(edited.cpp, first.cpp);
  EXPECT_EQ(edited.functionName, first.functionName);
  EXPECT_EQ(edited.Mp, first.Mp);
  EXPECT_EQ(edited.compileFlags, first.compileFlags);
  EXPECT_EQ(0, std::memcmp(&edited.layoutDescriptor, &first.layoutDescriptor,
                           sizeof first.layoutDescriptor));
  // A truncated entry is generated again (and kept whole).
  std::ofstream(kept[0], std::ios::binary) << text.substr(0, text.size() / 2);
  const mlir::lowbit::KernelSource again =
      generateKernelSource(format, "generic", {19, 256}, KernelOptions(), "f");
  EXPECT_EQ(again.config, first.config);
  EXPECT_EQ(again.cpp, first.cpp);
  EXPECT_EQ(std::filesystem::file_size(kept[0]), text.size());
  // Another request (here the symbol) is another entry.
  generateKernelSource(format, "generic", {19, 256}, KernelOptions(), "g");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir),
                          std::filesystem::directory_iterator()),
            2);
}

// Targets this host runs only under an emulator need the builder a program
// installs (the CLI's qemu runner); without one, a clear error.
TEST(Jit, EmulatedTargetWithoutBuilder) {
  if (!isEmulatedTarget(Target::Aarch64Neon))
    GTEST_SKIP() << "aarch64-neon runs natively here";
  const Format format = Format::parse("i2s");
  const KernelChoice choice =
      resolveKernelChoice(format, Strategy::Auto, Target::Aarch64Neon);
  EXPECT_EQ(error_of([&] {
              compileKernel(format, choice, {16, 32}, KernelOptions());
            }),
            "target 'aarch64-neon' runs only under an emulator on this host, "
            "and this program installed none "
            "(lowbit::jit::setEmulatedBuilder)");
}

// choose_kernel (runtime) decides the LUT strategies by the runtime's
// has_byte_table_lookup; the kernels are generated by the target registry's
// TargetInfo: every CPU target has one, and the two agree.
TEST(Jit, ChoiceAgreesWithTheTargetRegistry) {
  for (Target t : all_targets()) {
    if (t == Target::Native || isGpuTarget(t))
      continue;
    const auto info = mlir::lowbit::createTargetInfo(target_name(t));
    ASSERT_NE(info, nullptr) << target_name(t);
    EXPECT_EQ(has_byte_table_lookup(t), info->hasByteTableLookup())
        << target_name(t);
  }
}

} // namespace
} // namespace lowbit::jit
