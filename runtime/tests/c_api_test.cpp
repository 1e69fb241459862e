//===- c_api_test.cpp - the C API of lowbit.h -----------------------------===//

#include "lowbit/lowbit.h"
#include "lowbit/error.h"
#include "lowbit/format.h"
#include "lowbit/gguf.h"
#include "lowbit/lut.h"
#include "lowbit/run_kernel.h"
#include "lowbit/upconvert.h"

#include "scalar_kernel.h"
#include "test_util.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace lowbit {
namespace {

TEST(CApi, ReferenceWhenNoKernelIsRegistered) {
  ASSERT_EQ(lowbit_register_kernels(nullptr, 0), LOWBIT_OK);
  const int64_t M = 33, K = 64, N = 3;
  const std::vector<float> W = test::random_values(M * K, 1);
  const std::vector<float> X = test::random_values(N * K, 2, 2.0f);
  lowbit_weights_t *w = nullptr;
  ASSERT_EQ(lowbit_pack("w2g64", W.data(), M, K, &w), LOWBIT_OK)
      << lowbit_last_error();
  EXPECT_STREQ(lowbit_weights_target(w, 1), "reference");
  std::vector<float> Y(size_t(N * M)), R(size_t(N * M));
  ASSERT_EQ(lowbit_mpgemm(w, X.data(), N, Y.data(), nullptr), LOWBIT_OK);
  ASSERT_EQ(lowbit_reference_mpgemm(w, X.data(), N, R.data()), LOWBIT_OK);
  EXPECT_EQ(std::memcmp(Y.data(), R.data(), Y.size() * sizeof(float)), 0);
  lowbit_free_weights(w);
}

TEST(CApi, RegisteredKernelIsBitExactWithAndWithoutContext) {
  const int64_t M = 40, K = 96, N = 5;
  const Format f = Format::parse("i2s");
  const lowbit_kernel_entry_t entries[] = {
      {"i2s", M, K, 4, "scalar", "gemm", vnni4_layout(f),
       test::scalar_kernel(f, M, K)},
      {"i2s", M, K, 1, "scalar", "test", vnni4_layout(f),
       test::scalar_kernel(f, M, K)},
      {"i2s", M + 1, K, 1, "scalar", "other", vnni4_layout(f),
       test::scalar_kernel(f, M, K)}};
  ASSERT_EQ(lowbit_register_kernels(entries, 3), LOWBIT_OK);
  const std::vector<float> W = test::random_values(M * K, 3);
  const std::vector<float> X = test::random_values(N * K, 4, 2.0f);
  lowbit_weights_t *w = nullptr;
  ASSERT_EQ(lowbit_pack("i2s", W.data(), M, K, &w), LOWBIT_OK)
      << lowbit_last_error();
  EXPECT_STREQ(lowbit_weights_target(w, 1), "scalar");
  EXPECT_STREQ(lowbit_weights_config(w, 1), "test");
  EXPECT_STREQ(lowbit_weights_config(w, 3), "test");
  EXPECT_STREQ(lowbit_weights_config(w, 4), "gemm");
  EXPECT_STREQ(lowbit_weights_config(w, 100), "gemm");
  lowbit_context_t *ctx = nullptr;
  ASSERT_EQ(lowbit_context_create(2, &ctx), LOWBIT_OK);
  std::vector<float> R(size_t(N * M)), A(R.size(), NAN), B(R.size(), NAN);
  ASSERT_EQ(lowbit_reference_mpgemm(w, X.data(), N, R.data()), LOWBIT_OK);
  ASSERT_EQ(lowbit_mpgemm(w, X.data(), N, A.data(), ctx), LOWBIT_OK)
      << lowbit_last_error();
  ASSERT_EQ(lowbit_mpgemm(w, X.data(), N, B.data(), nullptr), LOWBIT_OK);
  EXPECT_EQ(std::memcmp(A.data(), R.data(), R.size() * sizeof(float)), 0);
  EXPECT_EQ(std::memcmp(B.data(), R.data(), R.size() * sizeof(float)), 0);
  lowbit_context_free(ctx);
  lowbit_free_weights(w);
  ASSERT_EQ(lowbit_register_kernels(nullptr, 0), LOWBIT_OK);
}

TEST(CApi, CompactFreesTheCanonicalCopyOfKernelWeights) {
  const int64_t M = 40, K = 96, N = 3;
  const Format f = Format::parse("i2s");
  const lowbit_kernel_entry_t entry = {"i2s", M, K, 1, "scalar", "test",
                                       vnni4_layout(f),
                                       test::scalar_kernel(f, M, K)};
  ASSERT_EQ(lowbit_register_kernels(&entry, 1), LOWBIT_OK);
  const std::vector<float> W = test::random_values(M * K, 5);
  const std::vector<float> X = test::random_values(N * K, 6, 2.0f);
  lowbit_weights_t *w = nullptr;
  ASSERT_EQ(lowbit_pack("i2s", W.data(), M, K, &w), LOWBIT_OK);
  std::vector<float> R(size_t(N * M)), Y(R.size(), NAN);
  ASSERT_EQ(lowbit_reference_mpgemm(w, X.data(), N, R.data()), LOWBIT_OK);
  const int64_t bytes = lowbit_weights_bytes(w);
  ASSERT_EQ(lowbit_weights_compact(w), LOWBIT_OK);
  // The kernel's product and layout are unchanged; the reference, which
  // reads the canonical copy, is refused.
  EXPECT_EQ(lowbit_weights_bytes(w), bytes);
  ASSERT_EQ(lowbit_mpgemm(w, X.data(), N, Y.data(), nullptr), LOWBIT_OK);
  EXPECT_EQ(std::memcmp(Y.data(), R.data(), R.size() * sizeof(float)), 0);
  EXPECT_NE(lowbit_reference_mpgemm(w, X.data(), N, R.data()), LOWBIT_OK);
  EXPECT_NE(std::string(lowbit_last_error()).find("compacted"),
            std::string::npos);
  lowbit_free_weights(w);

  // Without a kernel the one copy stays and the reference still runs.
  ASSERT_EQ(lowbit_register_kernels(nullptr, 0), LOWBIT_OK);
  ASSERT_EQ(lowbit_pack("i2s", W.data(), M, K, &w), LOWBIT_OK);
  ASSERT_EQ(lowbit_weights_compact(w), LOWBIT_OK);
  ASSERT_EQ(lowbit_mpgemm(w, X.data(), N, Y.data(), nullptr), LOWBIT_OK);
  EXPECT_EQ(std::memcmp(Y.data(), R.data(), R.size() * sizeof(float)), 0);
  EXPECT_EQ(lowbit_reference_mpgemm(w, X.data(), N, Y.data()), LOWBIT_OK);
  lowbit_free_weights(w);
  EXPECT_NE(lowbit_weights_compact(nullptr), LOWBIT_OK);
}

// The codes a kernel was called with (the layout lowbit_pack chose).
const uint8_t *recordedCodes = nullptr;
void recordingKernel(const uint8_t *codes, const uint16_t *, const uint16_t *,
                     const int8_t *, const float *, const int32_t *, float *,
                     int64_t, int64_t, int64_t, float) {
  recordedCodes = codes;
}

TEST(CApi, PacksTl2InTheLaneOrderOfTheKernelsLayout) {
  const int64_t M = 20, K = 200;
  const std::vector<float> W = test::random_values(M * K, 5);
  const std::vector<float> X = test::random_values(K, 6);
  const Format tl2 = Format::parse("tl2");
  const PackedWeights P = quantize(tl2, W.data(), M, K);
  for (uint8_t order : {LOWBIT_LANE_ROWS, LOWBIT_LANE_LANES}) {
    SCOPED_TRACE(int(order));
    const lowbit_kernel_entry_t entry = {
        "tl2", M, K, 1, "any", "test", lut_layout(tl2, order), recordingKernel};
    ASSERT_EQ(lowbit_register_kernels(&entry, 1), LOWBIT_OK);
    lowbit_weights_t *w = nullptr;
    ASSERT_EQ(lowbit_pack("tl2", W.data(), M, K, &w), LOWBIT_OK)
        << lowbit_last_error();
    std::vector<float> Y(static_cast<size_t>(M));
    recordedCodes = nullptr;
    ASSERT_EQ(lowbit_mpgemm(w, X.data(), 1, Y.data(), nullptr), LOWBIT_OK);
    const UpconvertWeights want = pack_lut(
        P, order == LOWBIT_LANE_ROWS ? LutOrder::Rows : LutOrder::Lanes);
    ASSERT_NE(recordedCodes, nullptr);
    EXPECT_EQ(std::memcmp(recordedCodes, want.codes.data(), want.codes.size()),
              0);
    lowbit_free_weights(w);
  }
  ASSERT_EQ(lowbit_register_kernels(nullptr, 0), LOWBIT_OK);
}

// The direct import's half of the C API (the engine's load): the lane order
// of the registered tl2 kernels is what upconvert_kernels_registered
// reports and shape_upconvert lays out; a handle over weights in that order
// runs the kernel on pack_lut's bytes; weights in the other order are
// refused.
TEST(CApi, DirectTl2WeightsTakeTheKernelsLaneOrder) {
  const int64_t M = 20, K = 256;
  const Format tl2 = Format::parse("tl2");
  std::vector<float> W = test::random_values(M * K, 11);
  for (size_t i = 0; i < W.size(); ++i) // one scale: ggml's d in every block
    W[i] = i % size_t(K) == 0
               ? 0.5f
               : 0.5f * float(W[i] > 0.3f) - 0.5f * float(W[i] < -0.3f);
  const std::vector<uint8_t> bytes =
      gguf_encode(GgufType::TQ2_0, W.data(), M, K);
  const GgufTensor t = test::tensor_of(GgufType::TQ2_0, bytes, M, K);
  const std::vector<float> X = test::random_values(K, 12);
  for (uint8_t order : {LOWBIT_LANE_ROWS, LOWBIT_LANE_LANES}) {
    SCOPED_TRACE(int(order));
    const lowbit_kernel_entry_t entry = {
        "tl2", M, K, 1, "any", "test", lut_layout(tl2, order), recordingKernel};
    ASSERT_EQ(lowbit_register_kernels(&entry, 1), LOWBIT_OK);
    uint8_t lanes = 99;
    ASSERT_TRUE(upconvert_kernels_registered(tl2, M, K, &lanes));
    EXPECT_EQ(lanes, order);
    EXPECT_FALSE(upconvert_kernels_registered(Format::parse("i2s"), M, K));
    const uint8_t other =
        order == LOWBIT_LANE_ROWS ? LOWBIT_LANE_LANES : LOWBIT_LANE_ROWS;
    for (uint8_t packed : {order, other}) {
      UpconvertWeights U = shape_upconvert(tl2, M, K, nullptr, packed);
      ASSERT_EQ(U.lane_order, packed);
      gguf_finish_rows(t, U, {gguf_pack_rows(t, U, 0, M)});
      if (packed == other) {
        EXPECT_THROW(upconvert_weights_handle(std::move(U)), Error);
        continue;
      }
      lowbit_weights_t *w = upconvert_weights_handle(std::move(U));
      std::vector<float> Y(static_cast<size_t>(M));
      recordedCodes = nullptr;
      ASSERT_EQ(lowbit_mpgemm(w, X.data(), 1, Y.data(), nullptr), LOWBIT_OK);
      const UpconvertWeights want = pack_lut(
          quantize(tl2, W.data(), M, K),
          order == LOWBIT_LANE_ROWS ? LutOrder::Rows : LutOrder::Lanes);
      ASSERT_NE(recordedCodes, nullptr);
      EXPECT_EQ(
          std::memcmp(recordedCodes, want.codes.data(), want.codes.size()), 0);
      lowbit_free_weights(w);
    }
  }
  ASSERT_EQ(lowbit_register_kernels(nullptr, 0), LOWBIT_OK);
}

// A kernel whose layout descriptor does not fit its format (or names no
// layout the runtime packs) is refused when registered, with the reason.
TEST(CApi, RegisterRefusesALayoutForAnotherFormat) {
  const Format tl2 = Format::parse("tl2"), i2s = Format::parse("i2s");
  struct Case {
    const char *format;
    lowbit_layout_t layout;
    const char *message;
  };
  lowbit_layout_t none = {};
  lowbit_layout_t panels = bitplanes_layout();
  panels.panel_blocks = 32;
  lowbit_layout_t lanes = vnni4_layout(i2s);
  lanes.lane_order = LOWBIT_LANE_LANES;
  const Case cases[] = {
      {"tl2", bitplanes_layout(), "a bitplanes layout (bitserial_abi.h) for "
                                  "tl2 weights"},
      {"tl2", vnni4_layout(tl2), "a vnni4 layout (kernel_abi.h) for tl2"},
      {"i2s", lut_layout(tl2), "a lut layout (lut_abi.h) for i2s weights"},
      {"tl2", lut_layout(Format::parse("tl1")), "is not the lut layout"},
      {"i2s", none, "names no layout family"},
      {"i2s", panels, "is not the bitplanes layout"},
      {"i2s", lanes, "is not the vnni4 layout"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(layout_name(c.layout));
    const lowbit_kernel_entry_t entry = {c.format, 32, 96, 1, "x86-avx2",
                                         "test", c.layout, recordingKernel};
    EXPECT_EQ(lowbit_register_kernels(&entry, 1),
              LOWBIT_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(lowbit_last_error()).find(c.message),
              std::string::npos)
        << lowbit_last_error();
  }
  ASSERT_EQ(lowbit_register_kernels(nullptr, 0), LOWBIT_OK);
}

// Activations quantized once serve every weight of the same format class and
// K (Q/K/V) and give what lowbit_mpgemm gives from the floats, with and
// without a kernel, on lowbit's pool, on the caller, and tile by tile on the
// engine's own threads.
void checkQuantizedPaths(const char *format, int64_t M, int64_t K,
                         int64_t N) {
  const std::vector<float> X = test::random_values(N * K, 11, 2.0f);
  lowbit_activations_t *acts = nullptr;
  ASSERT_EQ(lowbit_activations_create(&acts), LOWBIT_OK);
  lowbit_context_t *ctx = nullptr;
  ASSERT_EQ(lowbit_context_create(2, &ctx), LOWBIT_OK);
  for (int64_t rows : {M, M + 7}) { // two weights of one K share acts
    const std::vector<float> W = test::random_values(rows * K, 12 + rows);
    lowbit_weights_t *w = nullptr;
    ASSERT_EQ(lowbit_pack(format, W.data(), rows, K, &w), LOWBIT_OK)
        << lowbit_last_error();
    if (rows == M)
      ASSERT_EQ(lowbit_quantize_activations(w, X.data(), N, acts, ctx),
                LOWBIT_OK)
          << lowbit_last_error();
    const size_t size = size_t(N * rows);
    std::vector<float> want(size), pool(size, NAN), caller(size, NAN),
        tiles(size, NAN);
    ASSERT_EQ(lowbit_mpgemm(w, X.data(), N, want.data(), nullptr), LOWBIT_OK);
    ASSERT_EQ(lowbit_mpgemm_quantized(w, acts, pool.data(), ctx), LOWBIT_OK)
        << lowbit_last_error();
    ASSERT_EQ(lowbit_mpgemm_quantized(w, acts, caller.data(), nullptr),
              LOWBIT_OK);
    // Three engine threads take tiles from a shared counter.
    const int64_t count = lowbit_weights_tiles(w);
    ASSERT_GE(count, (rows + 15) / 16);
    std::atomic<int64_t> next{0};
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 3; ++t)
      threads.emplace_back([&] {
        for (int64_t i; (i = next.fetch_add(1)) < count;)
          failures += lowbit_mpgemm_tiles(w, acts, tiles.data(), i, i + 1) !=
                      LOWBIT_OK;
      });
    for (std::thread &t : threads)
      t.join();
    EXPECT_EQ(failures.load(), 0);
    EXPECT_EQ(std::memcmp(pool.data(), want.data(), size * sizeof(float)), 0)
        << format << " rows " << rows;
    EXPECT_EQ(std::memcmp(caller.data(), want.data(), size * sizeof(float)),
              0);
    EXPECT_EQ(std::memcmp(tiles.data(), want.data(), size * sizeof(float)), 0);
    EXPECT_GT(lowbit_weights_bytes(w), 0);
    lowbit_free_weights(w);
  }
  lowbit_context_free(ctx);
  lowbit_activations_free(acts);
}

TEST(CApi, QuantizedActivationsWithoutKernels) {
  ASSERT_EQ(lowbit_register_kernels(nullptr, 0), LOWBIT_OK);
  checkQuantizedPaths("i2s", 37, 100, 3);
  checkQuantizedPaths("tl2", 21, 64, 2);
  checkQuantizedPaths("w2g64", 33, 128, 4);
  checkQuantizedPaths("q4_0", 50, 96, 1);
  // ggml block formats: scale blocks of 32 and of 16, with and without min.
  checkQuantizedPaths("q4_k", 20, 512, 2);
  checkQuantizedPaths("q3_k", 9, 256, 3);
  checkQuantizedPaths("q5_1", 13, 64, 2);
  checkQuantizedPaths("iq4_nl", 5, 32, 1);
  // Enough rows that the quantization itself is split over the threads.
  checkQuantizedPaths("i2s", 20, 130, 300);
  checkQuantizedPaths("w2g64", 20, 128, 300);
}

// GGUF bytes of a block type into its own format: a copy, and the product
// equals the one of the weights quantize() made from the same values.
TEST(CApi, PackGgufBlockTypes) {
  ASSERT_EQ(lowbit_register_kernels(nullptr, 0), LOWBIT_OK);
  const int64_t M = 6, K = 256, N = 2;
  const std::vector<float> W = test::random_values(M * K, 31);
  const std::vector<float> X = test::random_values(N * K, 32);
  for (const char *name : {"q6_k", "q2_k", "q8_0"}) {
    SCOPED_TRACE(name);
    const std::vector<uint8_t> bytes =
        gguf_encode(parse_gguf_type(name), W.data(), M, K);
    lowbit_weights_t *from_gguf = nullptr, *packed = nullptr;
    ASSERT_EQ(lowbit_pack_gguf(name, name, bytes.data(), bytes.size(), M, K,
                               &from_gguf),
              LOWBIT_OK)
        << lowbit_last_error();
    ASSERT_EQ(lowbit_pack(name, W.data(), M, K, &packed), LOWBIT_OK);
    std::vector<float> a(size_t(N * M)), b(size_t(N * M));
    ASSERT_EQ(lowbit_mpgemm(from_gguf, X.data(), N, a.data(), nullptr),
              LOWBIT_OK);
    ASSERT_EQ(lowbit_mpgemm(packed, X.data(), N, b.data(), nullptr),
              LOWBIT_OK);
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
    EXPECT_EQ(lowbit_weights_bytes(from_gguf), int64_t(bytes.size()));
    lowbit_free_weights(from_gguf);
    lowbit_free_weights(packed);
  }
  lowbit_weights_t *w = nullptr;
  EXPECT_EQ(lowbit_pack_gguf("q4_k", "iq4_xs", W.data(), 10, 1, 256, &w),
            LOWBIT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(lowbit_last_error(), "unknown GGUF tensor type "
                                              "'iq4_xs'"),
            nullptr);
}

TEST(CApi, QuantizedActivationsWithAKernel) {
  const int64_t M = 40, K = 96;
  for (const char *name : {"i2s", "q4_0"}) {
    const Format f = Format::parse(name);
    const lowbit_kernel_entry_t entries[] = {
        {name, M, K, 1, "scalar", "test", vnni4_layout(f),
         test::scalar_kernel(f, M, K)}};
    ASSERT_EQ(lowbit_register_kernels(entries, 1), LOWBIT_OK);
    checkQuantizedPaths(name, M, K, 3); // M + 7 runs the reference
  }
  ASSERT_EQ(lowbit_register_kernels(nullptr, 0), LOWBIT_OK);
}

// An any-shape kernel for the tests: the scalar oracle configured for the
// call's format, M and K (configuring is not thread-safe, hence the lock).
Format anyFormat;
std::mutex anyMutex;
void anyScalarKernel(const uint8_t *codes, const uint16_t *scales,
                     const uint16_t *zeros, const int8_t *xq,
                     const float *x_scales, const int32_t *x_sums, float *y,
                     int64_t n, int64_t tile_begin, int64_t tile_end,
                     float w_scale, int64_t M, int64_t K) {
  std::lock_guard<std::mutex> lock(anyMutex);
  test::scalar_kernel(anyFormat, M, K)(codes, scales, zeros, xq, x_scales,
                                       x_sums, y, n, tile_begin, tile_end,
                                       w_scale);
}

TEST(CApi, AnyShapeKernelServesShapesWithoutTheirOwn) {
  for (const char *name : {"i2s", "q4_0"}) {
    anyFormat = Format::parse(name);
    const lowbit_kernel_entry_t entries[] = {
        {name, 40, 96, 1, "scalar", "exact", vnni4_layout(anyFormat),
         test::scalar_kernel(anyFormat, 40, 96), nullptr},
        {name, 0, 0, 1, "scalar", "any", vnni4_layout(anyFormat), nullptr,
         anyScalarKernel}};
    ASSERT_EQ(lowbit_register_kernels(entries, 2), LOWBIT_OK)
        << lowbit_last_error();
    for (auto [M, K] : {std::pair<int64_t, int64_t>{40, 96}, {33, 160},
                        {7, 64}}) {
      const std::vector<float> W = test::random_values(M * K, 21);
      lowbit_weights_t *w = nullptr;
      ASSERT_EQ(lowbit_pack(name, W.data(), M, K, &w), LOWBIT_OK);
      EXPECT_STREQ(lowbit_weights_config(w, 1), M == 40 ? "exact" : "any");
      lowbit_free_weights(w);
    }
    // Every path through an any-shape kernel equals the reference.
    checkQuantizedPaths(name, 33, 160, 3);
  }
  // An any-shape entry is M = K = 0 with any_fn and no fn, nothing else.
  const lowbit_kernel_entry_t bad[] = {
      {"i2s", 0, 0, 1, "scalar", "any", vnni4_layout(anyFormat),
       test::scalar_kernel(anyFormat, 1, 32), anyScalarKernel}};
  EXPECT_EQ(lowbit_register_kernels(bad, 1), LOWBIT_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(lowbit_register_kernels(nullptr, 0), LOWBIT_OK);
}

TEST(CApi, QuantizedActivationsMustFitTheWeights) {
  ASSERT_EQ(lowbit_register_kernels(nullptr, 0), LOWBIT_OK);
  const std::vector<float> W = test::random_values(32 * 64, 1);
  const std::vector<float> X = test::random_values(64, 2);
  lowbit_weights_t *ternary = nullptr, *group = nullptr, *longer = nullptr;
  ASSERT_EQ(lowbit_pack("i2s", W.data(), 32, 64, &ternary), LOWBIT_OK);
  ASSERT_EQ(lowbit_pack("q4_0", W.data(), 32, 64, &group), LOWBIT_OK);
  ASSERT_EQ(lowbit_pack("i2s", W.data(), 16, 128, &longer), LOWBIT_OK);
  lowbit_activations_t *acts = nullptr;
  ASSERT_EQ(lowbit_activations_create(&acts), LOWBIT_OK);
  std::vector<float> Y(64);
  EXPECT_EQ(lowbit_mpgemm_quantized(ternary, acts, Y.data(), nullptr),
            LOWBIT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(lowbit_last_error(), "not quantized yet"), nullptr);
  ASSERT_EQ(lowbit_quantize_activations(ternary, X.data(), 1, acts, nullptr),
            LOWBIT_OK);
  EXPECT_EQ(lowbit_mpgemm_quantized(group, acts, Y.data(), nullptr),
            LOWBIT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(lowbit_last_error(), "q4_0 weights"), nullptr);
  EXPECT_EQ(lowbit_mpgemm_quantized(longer, acts, Y.data(), nullptr),
            LOWBIT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(lowbit_mpgemm_tiles(ternary, acts, Y.data(), 0, 3),
            LOWBIT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(lowbit_last_error(), "outside [0, 2)"), nullptr);
  // q4_k (sums per 32) and q6_k (sums per 16) activations are not
  // interchangeable, though both are int8 per 32-block.
  const std::vector<float> W256 = test::random_values(16 * 256, 3);
  const std::vector<float> X256 = test::random_values(256, 4);
  lowbit_weights_t *q4k = nullptr, *q6k = nullptr;
  ASSERT_EQ(lowbit_pack("q4_k", W256.data(), 16, 256, &q4k), LOWBIT_OK);
  ASSERT_EQ(lowbit_pack("q6_k", W256.data(), 16, 256, &q6k), LOWBIT_OK);
  ASSERT_EQ(lowbit_quantize_activations(q4k, X256.data(), 1, acts, nullptr),
            LOWBIT_OK);
  EXPECT_EQ(lowbit_mpgemm_quantized(q4k, acts, Y.data(), nullptr), LOWBIT_OK);
  EXPECT_EQ(lowbit_mpgemm_quantized(q6k, acts, Y.data(), nullptr),
            LOWBIT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(lowbit_last_error(), "(activation class 1) do not "
                                             "fit q6_k weights of K = 256 "
                                             "(class 2)"),
            nullptr);
  lowbit_free_weights(q4k);
  lowbit_free_weights(q6k);
  const float bad[64] = {NAN};
  EXPECT_EQ(lowbit_quantize_activations(ternary, bad, 1, acts, nullptr),
            LOWBIT_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(lowbit_last_error(), "activation [0, 0] is NaN");
  lowbit_activations_free(acts);
  lowbit_free_weights(ternary);
  lowbit_free_weights(group);
  lowbit_free_weights(longer);
}

void countRange(void *user, int64_t begin, int64_t end, int thread) {
  auto *hits = static_cast<std::vector<std::atomic<int>> *>(user);
  for (int64_t i = begin; i < end; ++i)
    (*hits)[size_t(i)] += 1;
  (void)thread;
}

TEST(CApi, ParallelForCoversTheRangeOnce) {
  lowbit_context_t *ctx = nullptr;
  ASSERT_EQ(lowbit_context_create(2, &ctx), LOWBIT_OK);
  EXPECT_EQ(lowbit_context_threads(ctx), 2);
  EXPECT_EQ(lowbit_context_threads(nullptr), 1);
  for (int64_t n : {0, 1, 2, 3, 1000}) {
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    ASSERT_EQ(lowbit_parallel_for(ctx, n, countRange, &hits), LOWBIT_OK);
    ASSERT_EQ(lowbit_parallel_for(nullptr, n, countRange, &hits), LOWBIT_OK);
    for (const std::atomic<int> &h : hits)
      EXPECT_EQ(h.load(), 2);
  }
  EXPECT_EQ(lowbit_parallel_for(ctx, -1, countRange, nullptr),
            LOWBIT_ERROR_INVALID_ARGUMENT);
  lowbit_context_free(ctx);
}

// Every item once, whichever threads take part.
TEST(CApi, ParallelClaimCoversTheRangeOnce) {
  lowbit_context_t *ctx = nullptr;
  ASSERT_EQ(lowbit_context_create(2, &ctx), LOWBIT_OK);
  for (int64_t n : {0, 1, 2, 3, 1000}) {
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    for (int round = 0; round < 50; ++round)
      ASSERT_EQ(lowbit_parallel_claim(ctx, n, countRange, &hits), LOWBIT_OK);
    ASSERT_EQ(lowbit_parallel_claim(nullptr, n, countRange, &hits), LOWBIT_OK);
    for (const std::atomic<int> &h : hits)
      EXPECT_EQ(h.load(), 51);
  }
  EXPECT_EQ(lowbit_parallel_claim(ctx, -1, countRange, nullptr),
            LOWBIT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(lowbit_parallel_claim(ctx, 1, nullptr, nullptr),
            LOWBIT_ERROR_INVALID_ARGUMENT);
  lowbit_context_free(ctx);
}

TEST(CApi, ErrorsAreStatusesWithAMessage) {
  const std::vector<float> W(64, 1.0f);
  lowbit_weights_t *w = reinterpret_cast<lowbit_weights_t *>(1);
  EXPECT_EQ(lowbit_pack("w9g7", W.data(), 1, 64, &w),
            LOWBIT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(w, nullptr);
  EXPECT_NE(std::strstr(lowbit_last_error(), "w9g7"), nullptr)
      << lowbit_last_error();
  EXPECT_EQ(lowbit_pack("w2g64", W.data(), 1, 32, &w),
            LOWBIT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(lowbit_last_error(), "K"), nullptr);
  EXPECT_EQ(lowbit_pack(nullptr, W.data(), 1, 64, &w),
            LOWBIT_ERROR_INVALID_ARGUMENT);
  lowbit_context_t *ctx = nullptr;
  EXPECT_EQ(lowbit_context_create(0, &ctx), LOWBIT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(ctx, nullptr);
  ASSERT_EQ(lowbit_pack("i2s", W.data(), 1, 64, &w), LOWBIT_OK);
  EXPECT_STREQ(lowbit_last_error(), "");
  float y = 0;
  EXPECT_EQ(lowbit_mpgemm(w, W.data(), 0, &y, nullptr),
            LOWBIT_ERROR_INVALID_ARGUMENT);
  lowbit_free_weights(w);
}

} // namespace
} // namespace lowbit
