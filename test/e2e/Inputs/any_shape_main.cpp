//===- any_shape_main.cpp - any-shape kernels against the reference -------===//
//
// Links the any-shape kernels of test/Transforms/any-shape.mlir (i2s_any,
// w2g128_any, q4_0_any), any-shape-lut.mlir (tl2_any, tl1_any) and
// any-shape-bitserial.mlir (i2s_bs_any, w3g64_bs_any, w1g128_bs_any), all
// lowbit_any_kernel_fn of kernel_abi.h, with the runtime's quantizer,
// packers (pack_for_kernel with each kernel's layout) and reference, and runs
// every ragged shape through ONE kernel per format: Y bit-exact with the
// reference for the ternary formats, within 1e-5 (normalized) of it for the
// others. Built for a target
// another process cannot dlopen (any-shape-aarch64.test: cross-built, run
// under qemu-aarch64), so the check lives in this executable.
//
//===----------------------------------------------------------------------===//

#include "lowbit/format.h"
#include "lowbit/kernel_abi.h"
#include "lowbit/reference.h"
#include "lowbit/run_kernel.h"
#include "lowbit/thread_pool.h"
#include "lowbit/upconvert.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

extern "C" {
void i2s_any(const uint8_t *, const uint16_t *, const uint16_t *,
             const int8_t *, const float *, const int32_t *, float *, int64_t,
             int64_t, int64_t, float, int64_t, int64_t);
void w2g128_any(const uint8_t *, const uint16_t *, const uint16_t *,
                const int8_t *, const float *, const int32_t *, float *,
                int64_t, int64_t, int64_t, float, int64_t, int64_t);
void q4_0_any(const uint8_t *, const uint16_t *, const uint16_t *,
              const int8_t *, const float *, const int32_t *, float *, int64_t,
              int64_t, int64_t, float, int64_t, int64_t);
void tl2_any(const uint8_t *, const uint16_t *, const uint16_t *,
             const int8_t *, const float *, const int32_t *, float *, int64_t,
             int64_t, int64_t, float, int64_t, int64_t);
void tl1_any(const uint8_t *, const uint16_t *, const uint16_t *,
             const int8_t *, const float *, const int32_t *, float *, int64_t,
             int64_t, int64_t, float, int64_t, int64_t);
void i2s_bs_any(const uint8_t *, const uint16_t *, const uint16_t *,
                const int8_t *, const float *, const int32_t *, float *,
                int64_t, int64_t, int64_t, float, int64_t, int64_t);
void w3g64_bs_any(const uint8_t *, const uint16_t *, const uint16_t *,
                  const int8_t *, const float *, const int32_t *, float *,
                  int64_t, int64_t, int64_t, float, int64_t, int64_t);
void w1g128_bs_any(const uint8_t *, const uint16_t *, const uint16_t *,
                   const int8_t *, const float *, const int32_t *, float *,
                   int64_t, int64_t, int64_t, float, int64_t, int64_t);
}

namespace {

/// Deterministic values in [-1, 1).
std::vector<float> values(int64_t count, uint32_t seed) {
  std::vector<float> v(static_cast<size_t>(count));
  for (float &x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = float(int32_t(seed >> 8) - (1 << 23)) / float(1 << 23);
  }
  return v;
}

} // namespace

int main() {
  struct Kernel {
    const char *format;
    lowbit_any_kernel_fn fn;
    std::vector<int64_t> ks;
    // The family of the layout it reads (kernel_abi.h); AArch64's LUT
    // kernels read lut_abi.h's rows order.
    int family = LOWBIT_LAYOUT_VNNI4;
  };
  const Kernel kernels[] = {
      {"i2s", i2s_any, {1, 100, 2600}},
      {"w2g128", w2g128_any, {128, 640}},
      {"q4_0", q4_0_any, {32, 160, 2592}},
      // 2 K panels at 2600, 5 at 6914 (lut_abi.h).
      {"tl2", tl2_any, {2, 194, 2600, 6914}, LOWBIT_LAYOUT_LUT},
      {"tl1", tl1_any, {2, 194, 2600}, LOWBIT_LAYOUT_LUT},
      // bitserial_abi.h's K panels: 2 at 2600 and 2112, 3 at 4224.
      {"i2s", i2s_bs_any, {1, 100, 2600}, LOWBIT_LAYOUT_BITPLANES},
      {"w3g64", w3g64_bs_any, {64, 2112}, LOWBIT_LAYOUT_BITPLANES},
      {"w1g128", w1g128_bs_any, {128, 4224}, LOWBIT_LAYOUT_BITPLANES},
  };
  lowbit::ThreadPool pool(2);
  int passed = 0, failed = 0;
  uint32_t seed = 1;
  for (const Kernel &kernel : kernels) {
    lowbit::Format format = lowbit::Format::parse(kernel.format);
    const lowbit_layout_t layout =
        kernel.family == LOWBIT_LAYOUT_LUT         ? lowbit::lut_layout(format)
        : kernel.family == LOWBIT_LAYOUT_BITPLANES ? lowbit::bitplanes_layout()
                                                   : lowbit::vnni4_layout(format);
    for (int64_t M : {1, 17, 33, 100})
      for (int64_t K : kernel.ks)
        for (int64_t N : {1, 3}) {
          std::vector<float> Wf = values(M * K, ++seed);
          std::vector<float> X = values(N * K, ++seed);
          lowbit::PackedWeights W = lowbit::quantize(format, Wf.data(), M, K);
          lowbit::UpconvertWeights packed =
              lowbit::pack_for_kernel(W, layout);
          lowbit::PreparedActivations A =
              lowbit::prepare_activations(format, X.data(), N, K);
          std::vector<float> got(size_t(N * M)), want(got.size());
          lowbit::run_any_kernel(kernel.fn, packed, A, got.data(), pool);
          lowbit::reference_mpgemm(W, X.data(), N, want.data());
          double diff = 0, norm = 0;
          bool exact = true;
          for (size_t i = 0; i < got.size(); ++i) {
            exact &= got[i] == want[i];
            diff += double(got[i] - want[i]) * double(got[i] - want[i]);
            norm += double(want[i]) * double(want[i]);
          }
          double relative = norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
          bool ok = format.is_ternary() ? exact : relative <= 1e-5;
          if (ok) {
            ++passed;
          } else {
            ++failed;
            std::printf("FAIL %s M=%lld K=%lld N=%lld: normalized difference "
                        "%g%s\n",
                        kernel.format, (long long)M, (long long)K,
                        (long long)N, relative,
                        format.is_ternary() ? " (must be exact)" : "");
          }
        }
  }
  std::printf("any-shape: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
