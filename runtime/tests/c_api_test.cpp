//===- c_api_test.cpp - the C API of lowbit.h -----------------------------===//

#include "lowbit/lowbit.h"
#include "lowbit/lut.h"
#include "lowbit/format.h"

#include "scalar_kernel.h"
#include "test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
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
      {"i2s", M, K, 4, "scalar", "gemm", test::scalar_kernel(f, M, K)},
      {"i2s", M, K, 1, "scalar", "test", test::scalar_kernel(f, M, K)},
      {"i2s", M + 1, K, 1, "scalar", "other", test::scalar_kernel(f, M, K)}};
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

// The codes a kernel was called with (the layout lowbit_pack chose).
const uint8_t *recordedCodes = nullptr;
void recordingKernel(const uint8_t *codes, const uint16_t *, const uint16_t *,
                     const int8_t *, const float *, const int32_t *, float *,
                     int64_t, int64_t, int64_t, float) {
  recordedCodes = codes;
}

TEST(CApi, PacksTl2InTheOrderOfTheKernelsTarget) {
  const int64_t M = 20, K = 200;
  const std::vector<float> W = test::random_values(M * K, 5);
  const std::vector<float> X = test::random_values(K, 6);
  const PackedWeights P = quantize(Format::parse("tl2"), W.data(), M, K);
  for (const char *target : {"x86-avx2", "x86-avxvnni", "x86-avx512vnni"}) {
    SCOPED_TRACE(target);
    const lowbit_kernel_entry_t entry = {"tl2", M,      K, 1,
                                         target, "test", recordingKernel};
    ASSERT_EQ(lowbit_register_kernels(&entry, 1), LOWBIT_OK);
    lowbit_weights_t *w = nullptr;
    ASSERT_EQ(lowbit_pack("tl2", W.data(), M, K, &w), LOWBIT_OK)
        << lowbit_last_error();
    std::vector<float> Y(static_cast<size_t>(M));
    recordedCodes = nullptr;
    ASSERT_EQ(lowbit_mpgemm(w, X.data(), 1, Y.data(), nullptr), LOWBIT_OK);
    const UpconvertWeights want = pack_lut(
        P, std::strcmp(target, "x86-avx512vnni") == 0 ? LutOrder::Rows
                                                       : LutOrder::Lanes);
    ASSERT_NE(recordedCodes, nullptr);
    EXPECT_EQ(std::memcmp(recordedCodes, want.codes.data(), want.codes.size()),
              0);
    lowbit_free_weights(w);
  }
  ASSERT_EQ(lowbit_register_kernels(nullptr, 0), LOWBIT_OK);
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
