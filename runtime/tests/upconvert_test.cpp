//===- upconvert_test.cpp - the upconvert layout and prepared activations -===//
//
// The layout is read back with scalar_kernel.h's layout_code (an independent
// transcription of kernel_abi.h) and compared with unpack_row; the whole
// chain pack -> prepare -> thread pool -> kernel runs the test-only scalar
// kernel and must equal the reference bit for bit.

#include "lowbit/activation.h"
#include "lowbit/reference.h"
#include "lowbit/run_kernel.h"
#include "lowbit/upconvert.h"

#include "naive.h"
#include "scalar_kernel.h"
#include "test_util.h"

#include <cmath>
#include <random>

namespace lowbit {
namespace {

using test::bits;
using test::error_of;
using test::layout_code;

struct Case {
  const char *format;
  std::vector<int64_t> Ks; // the smallest legal K first, then ragged ones
};

void PrintTo(const Case &c, std::ostream *os) { *os << c.format; }

const std::vector<int64_t> kMs = {1, 17, 33};

class UpconvertTest : public ::testing::TestWithParam<Case> {};

// The code kernel_abi.h assigns to a value returned by unpack_row.
unsigned expected_code(const Format &f, int8_t q) {
  if (f.encoding() == Encoding::Ternary)
    return unsigned(q + 1);
  if (f.encoding() == Encoding::Binary)
    return q > 0 ? 1u : 0u;
  return unsigned(q);
}

TEST_P(UpconvertTest, LayoutMatchesUnpackRow) {
  const Format f = Format::parse(GetParam().format);
  uint32_t seed = 7;
  for (int64_t M : kMs) {
    for (int64_t K : GetParam().Ks) {
      SCOPED_TRACE(f.name() + " M=" + std::to_string(M) +
                   " K=" + std::to_string(K));
      const std::vector<float> W = test::random_values(M * K, seed++);
      const PackedWeights P = quantize(f, W.data(), M, K);
      const UpconvertWeights U = pack_upconvert(P);

      const int64_t Mp = (M + 15) / 16 * 16, Kp = (K + 31) / 32 * 32;
      ASSERT_EQ(U.M, M);
      ASSERT_EQ(U.K, K);
      ASSERT_EQ(U.Mp, Mp);
      ASSERT_EQ(U.Kp, Kp);
      ASSERT_EQ(U.bits, f.bits);
      ASSERT_EQ(U.num_tiles(), Mp / 16);
      ASSERT_EQ(bits(U.w_scale), bits(P.tensor_scale));
      ASSERT_EQ(int64_t(U.codes.size()), Mp * Kp * f.bits / 8);
      ASSERT_EQ(reinterpret_cast<uintptr_t>(U.codes.data()) % 64, 0u);

      std::vector<int8_t> q(static_cast<size_t>(K));
      for (int64_t m = 0; m < Mp; ++m) {
        if (m < M)
          unpack_row(P, m, q.data());
        for (int64_t k = 0; k < Kp; ++k) {
          const unsigned want =
              m < M && k < K ? expected_code(f, q[size_t(k)]) : 0u;
          ASSERT_EQ(layout_code(U.codes.data(), f.bits, Kp, m, k), want)
              << "m=" << m << " k=" << k;
        }
      }

      if (f.is_ternary()) {
        EXPECT_TRUE(U.scales.empty());
        EXPECT_TRUE(U.zeros.empty());
        EXPECT_EQ(U.packed_bytes(), Mp * Kp / 4);
        continue;
      }
      const int64_t G = f.group, groups = Kp / G;
      ASSERT_EQ(U.group, G);
      ASSERT_EQ(int64_t(U.scales.size()), Mp * groups);
      const bool zeros = f.encoding() == Encoding::Unsigned;
      ASSERT_EQ(int64_t(U.zeros.size()), zeros ? Mp * groups : 0);
      EXPECT_EQ(U.packed_bytes(),
                Mp * Kp * f.bits / 8 + Mp * groups * 2 * (zeros ? 2 : 1));
      for (int64_t m = 0; m < Mp; ++m)
        for (int64_t g = 0; g < groups; ++g) {
          const size_t at = size_t(((m / 16) * groups + g) * 16 + m % 16);
          uint16_t scale = 0, zero = 0;
          if (m < M && f.kind == FormatKind::Q4_0) {
            const uint8_t *block = &P.codes[size_t(m * P.row_bytes() + g * 18)];
            scale = uint16_t(block[0] | block[1] << 8);
          } else if (m < M) {
            scale = P.scales[size_t(m * groups + g)];
            zero = zeros ? P.zeros[size_t(m * groups + g)] : 0;
          }
          ASSERT_EQ(U.scales[at], scale) << "m=" << m << " g=" << g;
          if (zeros)
            ASSERT_EQ(U.zeros[at], zero) << "m=" << m << " g=" << g;
        }
    }
  }
}

// pack -> prepare -> pool -> kernel equals the reference bit for bit (the
// scalar kernel combines floats in the reference's order), for 1, 2 and 3
// threads (3 threads on M = 17 leaves one of them without a tile). Group
// formats also stay within 1e-2 of the fp64 product of the dequantized
// weights with the fp32 activations, over all shapes of the format.
TEST_P(UpconvertTest, ChainMatchesReference) {
  const Format f = Format::parse(GetParam().format);
  ThreadPool pools[] = {ThreadPool(1), ThreadPool(2), ThreadPool(3)};
  uint32_t seed = 1000;
  double total_err = 0.0, total_norm = 0.0;
  for (int64_t M : kMs) {
    for (int64_t K : GetParam().Ks) {
      for (int64_t N : {1, 3}) {
        SCOPED_TRACE(f.name() + " M=" + std::to_string(M) +
                     " K=" + std::to_string(K) + " N=" + std::to_string(N));
        const std::vector<float> W = test::random_values(M * K, seed++);
        const std::vector<float> X = test::random_values(N * K, seed++, 2.0f);
        const PackedWeights P = quantize(f, W.data(), M, K);
        std::vector<float> expected(size_t(N * M));
        reference_mpgemm(P, X.data(), N, expected.data());

        const UpconvertWeights U = pack_upconvert(P);
        const PreparedActivations A = prepare_activations(f, X.data(), N, K);
        const lowbit_kernel_fn kernel = test::scalar_kernel(f, M, K);
        for (ThreadPool &pool : pools) {
          std::vector<float> Y(size_t(N * M), NAN);
          run_kernel(kernel, U, A, Y.data(), M, pool);
          for (int64_t i = 0; i < N * M; ++i)
            ASSERT_EQ(bits(Y[size_t(i)]), bits(expected[size_t(i)]))
                << "threads=" << pool.size() << " Y[" << i / M << ", " << i % M
                << "] = " << Y[size_t(i)] << ", expected "
                << expected[size_t(i)];
        }
        if (f.is_ternary())
          continue;
        std::vector<float> deq(size_t(M * K));
        dequantize(P, deq.data());
        for (int64_t n = 0; n < N; ++n)
          for (int64_t m = 0; m < M; ++m) {
            double exact = 0.0;
            for (int64_t k = 0; k < K; ++k)
              exact += double(X[size_t(n * K + k)]) * deq[size_t(m * K + k)];
            const double d = double(expected[size_t(n * M + m)]) - exact;
            total_err += d * d;
            total_norm += exact * exact;
          }
      }
    }
  }
  if (!f.is_ternary())
    EXPECT_LE(std::sqrt(total_err / total_norm), 1e-2);
}

INSTANTIATE_TEST_SUITE_P(
    Formats, UpconvertTest,
    ::testing::Values(Case{"i2s", {1, 7, 100}}, Case{"w1g32", {32, 96}},
                      Case{"w1g128", {128, 256}}, Case{"w2g64", {64, 192}},
                      Case{"w2g32", {32, 96}}, Case{"w4g32", {32, 96}},
                      Case{"w4g128", {128}}, Case{"q4_0", {32, 96}}),
    [](const auto &info) { return std::string(info.param.format); });

// FNV-1a (64-bit) of n bytes.
uint64_t fnv1a(const void *data, size_t n) {
  const uint8_t *p = static_cast<const uint8_t *>(data);
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; ++i)
    h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

// Canonical weights that do not depend on quantize(): ggml blocks of random
// bytes whose fp16 d (and m / dmin) are random finite values in [0.5, 1);
// ternary codes from values in {-1, 0, 1}; the group formats quantize
// normal values.
PackedWeights random_canonical(const Format &f, int64_t M, int64_t K,
                               uint32_t seed) {
  std::mt19937 rng(seed);
  if (const GgmlBlockType *type = ggml_block_type(f.kind)) {
    PackedWeights P;
    P.format = f;
    P.M = M;
    P.K = K;
    P.codes.resize(size_t(M * P.row_bytes()));
    for (uint8_t &b : P.codes)
      b = uint8_t(rng());
    auto put = [&](uint8_t *at) {
      const uint16_t h = uint16_t(0x3800 | (rng() & 0x3FF));
      at[0] = uint8_t(h);
      at[1] = uint8_t(h >> 8);
    };
    for (size_t b = 0; b < P.codes.size(); b += size_t(type->block_bytes)) {
      put(&P.codes[b + size_t(type->d_offset)]);
      if (type->min_offset >= 0)
        put(&P.codes[b + size_t(type->min_offset)]);
    }
    return P;
  }
  std::vector<float> W(size_t(M * K));
  if (f.is_ternary())
    for (float &w : W)
      w = float(int(rng() % 3) - 1);
  else
    W = test::random_values(M * K, seed);
  return quantize(f, W.data(), M, K);
}

// The bytes pack_upconvert wrote before it packed 4 bytes at a time (the
// checksums were computed with the packer of commit 468a077, which put one
// code at a time): codes, then scales and zeros. The K-quants' scale layout
// is not pinned here (kernel_abi.h's K-QUANT SCALES may change); their codes
// are.
TEST(Upconvert, BytesAsBefore) {
  struct Expected {
    const char *format;
    int64_t M, K;
    uint64_t codes, scales; // scales of the K-quants: not checked (0)
  };
  const Expected cases[] = {
      {"i2s", 37, 100, 18237991388014333317ull, 6635954191001347439ull},
      {"i2s", 16, 2560, 5395300337637462304ull, 6635954191001347439ull},
      {"w1g32", 33, 96, 881268895380712666ull, 111375732214449286ull},
      {"w2g64", 33, 192, 2538371052117974175ull, 4031856427371052518ull},
      {"w4g128", 17, 256, 7806428700290361505ull, 12096961348191582163ull},
      {"q4_0", 35, 320, 1741078545109534175ull, 10539994558171785846ull},
      {"q8_0", 35, 320, 17210143227063003680ull, 16093541818609672567ull},
      {"q5_0", 35, 320, 891533390099507544ull, 17771019288843834849ull},
      {"q4_1", 35, 320, 14336999367240339491ull, 1916459083238309973ull},
      {"q5_1", 35, 320, 7133309265876868002ull, 17236384157752494066ull},
      {"q2_k", 19, 512, 1297292992287150771ull, 0ull},
      {"q3_k", 19, 512, 7700447667273808070ull, 0ull},
      {"q4_k", 19, 512, 9238740051994217894ull, 0ull},
      {"q5_k", 19, 512, 9035291237896529265ull, 0ull},
      {"q6_k", 19, 512, 2192363499556194762ull, 0ull},
  };
  uint32_t seed = 11;
  for (const Expected &e : cases) {
    SCOPED_TRACE(std::string(e.format) + " " + std::to_string(e.M) + "x" +
                 std::to_string(e.K));
    const Format f = Format::parse(e.format);
    const UpconvertWeights U =
        pack_upconvert(random_canonical(f, e.M, e.K, seed++));
    EXPECT_EQ(fnv1a(U.codes.data(), U.codes.bytes()), e.codes);
    const GgmlBlockType *type = ggml_block_type(f.kind);
    if (type && type->sub_scale_bits > 0)
      continue;
    const uint64_t scales = fnv1a(U.scales.data(), U.scales.bytes()) ^
                            (fnv1a(U.zeros.data(), U.zeros.bytes()) << 1);
    EXPECT_EQ(scales, e.scales);
  }
}

// The ggml block formats pack into no more bytes than their GGUF blocks
// (rows padded to 16): the K-quants' sub-scales at the bits ggml stores
// them (kernel_abi.h, K-QUANT SCALES), the others' fp16 fields as they are.
TEST(Upconvert, BlockFormatsAsSmallAsGguf) {
  int count = 0;
  const GgmlBlockType *types = ggml_block_types(&count);
  for (int t = 0; t < count; ++t) {
    const Format f = Format::parse(types[t].name);
    const int64_t M = 19, K = 512;
    const UpconvertWeights U = pack_upconvert(random_canonical(f, M, K, 5));
    EXPECT_EQ(U.packed_bytes(),
              U.Mp * (K / types[t].block) * types[t].block_bytes)
        << types[t].name;
  }
}

TEST(Upconvert, RejectsOtherFormats) {
  for (const char *name : {"tl1", "tl2", "w3g32"}) {
    const Format f = Format::parse(name);
    std::vector<float> W(64, 0.25f);
    const PackedWeights P = quantize(f, W.data(), 1, 64);
    EXPECT_EQ(error_of([&] { pack_upconvert(P); }),
              std::string("format '") + name +
                  "' has no upconvert layout (supported: i2s, w1gG, w2gG, "
                  "w4gG and the ggml block formats)");
    EXPECT_FALSE(has_upconvert_layout(f));
  }
  for (const char *name : {"i2s", "w1g32", "w2g64", "w4g128", "q4_0"})
    EXPECT_TRUE(has_upconvert_layout(Format::parse(name)));
}

TEST(Upconvert, RejectsInconsistentWeights) {
  std::vector<float> W(2 * 64, 0.5f);
  PackedWeights P = quantize(Format::parse("w2g32"), W.data(), 2, 64);
  P.codes.pop_back();
  EXPECT_NE(error_of([&] { pack_upconvert(P); }), "");
}

TEST(PrepareActivations, LayoutPerFormat) {
  struct Shape {
    const char *format;
    int64_t N, K;
  };
  for (const Shape s :
       {Shape{"i2s", 3, 7}, Shape{"i2s", 2, 100}, Shape{"i2s", 1, 64},
        Shape{"w2g64", 3, 128}, Shape{"q4_0", 2, 96}}) {
    const Format f = Format::parse(s.format);
    SCOPED_TRACE(f.name() + " K=" + std::to_string(s.K));
    const std::vector<float> X = test::random_values(s.N * s.K, 5, 3.0f);
    const PreparedActivations P = prepare_activations(f, X.data(), s.N, s.K);
    const int64_t Kp = (s.K + 31) / 32 * 32;
    const int64_t block = f.is_ternary() ? Kp : 32, blocks = Kp / block;
    ASSERT_EQ(P.N, s.N);
    ASSERT_EQ(P.K, s.K);
    ASSERT_EQ(P.Kp, Kp);
    ASSERT_EQ(P.block, block);
    ASSERT_EQ(int64_t(P.xq.size()), s.N * Kp);
    ASSERT_EQ(int64_t(P.x_scales.size()), s.N * blocks);
    ASSERT_EQ(int64_t(P.x_sums.size()), s.N * blocks);
    ASSERT_EQ(reinterpret_cast<uintptr_t>(P.xq.data()) % 64, 0u);

    const test::NaiveActivations A =
        test::naive_activations(X, s.N, s.K, f.is_ternary() ? s.K : 32);
    for (int64_t n = 0; n < s.N; ++n) {
      for (int64_t k = 0; k < Kp; ++k)
        ASSERT_EQ(P.xq[size_t(n * Kp + k)],
                  k < s.K ? A.q[size_t(n * s.K + k)] : 0)
            << "n=" << n << " k=" << k;
      for (int64_t b = 0; b < blocks; ++b) {
        int64_t sum = 0;
        for (int64_t k = b * block; k < std::min((b + 1) * block, s.K); ++k)
          sum += A.q[size_t(n * s.K + k)];
        EXPECT_EQ(P.x_sums[size_t(n * blocks + b)], sum);
        EXPECT_EQ(bits(P.x_scales[size_t(n * blocks + b)]),
                  bits(A.s[size_t(n * blocks + b)]));
      }
    }
  }
}

TEST(PrepareActivations, RejectsBadInput) {
  std::vector<float> X(2 * 64, 1.0f);
  EXPECT_EQ(error_of([&] {
              prepare_activations(Format::parse("w2g64"), X.data(), 1, 32);
            }),
            "w2g64 needs K % 64 == 0, got K = 32");
  X[70] = NAN;
  EXPECT_EQ(error_of([&] {
              prepare_activations(Format::parse("q4_0"), X.data(), 2, 64);
            }),
            "activation [1, 6] is NaN");
  EXPECT_NE(error_of([&] {
              prepare_activations(Format::parse("i2s"), X.data(), 0, 64);
            }),
            "");
}

TEST(RunKernel, RejectsMismatchedOperands) {
  const Format f = Format::parse("w2g32");
  std::vector<float> W(20 * 64, 0.5f), X(64 * 2, 1.0f), Y(40);
  const UpconvertWeights U = pack_upconvert(quantize(f, W.data(), 20, 64));
  const PreparedActivations A = prepare_activations(f, X.data(), 2, 64);
  const PreparedActivations A32 = prepare_activations(f, X.data(), 2, 32);
  const PreparedActivations T =
      prepare_activations(Format::parse("i2s"), X.data(), 2, 64);
  ThreadPool pool(2);
  const lowbit_kernel_fn kernel = test::scalar_kernel(f, 20, 64);
  EXPECT_NO_THROW(run_kernel(kernel, U, A, Y.data(), 20, pool));
  EXPECT_EQ(error_of([&] { run_kernel(kernel, U, A, Y.data(), 19, pool); }),
            "run_kernel: M = 19 but the weights have M = 20");
  EXPECT_EQ(error_of([&] { run_kernel(kernel, U, A32, Y.data(), 20, pool); }),
            "run_kernel: activations have K = 32 (block 32), weights K = 64 "
            "(w2g32, block 32)");
  EXPECT_EQ(error_of([&] { run_kernel(kernel, U, T, Y.data(), 20, pool); }),
            "run_kernel: activations have K = 64 (block 64), weights K = 64 "
            "(w2g32, block 32)");
  EXPECT_EQ(error_of([&] { run_kernel(nullptr, U, A, Y.data(), 20, pool); }),
            "run_kernel: no kernel function");
}

} // namespace
} // namespace lowbit
