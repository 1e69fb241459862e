//===- scalar_kernel.cpp - a scalar kernel of the kernel ABI, for tests ---===//

#include "scalar_kernel.h"
#include "naive.h"

namespace lowbit::test {

namespace {
struct Config {
  Format format;
  int64_t M = 0, K = 0, Kp = 0;
};
Config config;
} // namespace

unsigned layout_code(const uint8_t *codes, int bits, int64_t Kp, int64_t m,
                     int64_t k) {
  const int64_t kv = 32 / bits;
  const int64_t tile = m / 16, i = m % 16;
  const int64_t v = k / kv, j = (k % kv) / 4, r = k % 4;
  const uint8_t byte = codes[(tile * (Kp / kv) + v) * 64 + i * 4 + r];
  return (byte >> (bits * j)) & ((1u << bits) - 1);
}

extern "C" void scalar_kernel_impl(const uint8_t *codes, const uint16_t *scales,
                                   const uint16_t *zeros, const int8_t *xq,
                                   const float *x_scales, const int32_t *x_sums,
                                   float *y, int64_t N, int64_t tile_begin,
                                   int64_t tile_end, float w_scale) {
  const Config &c = config;
  const Format &f = c.format;
  const int bits = f.bits;
  for (int64_t n = 0; n < N; ++n) {
    const int8_t *x = xq + n * c.Kp;
    for (int64_t m = tile_begin * 16; m < tile_end * 16 && m < c.M; ++m) {
      if (f.is_ternary()) {
        int32_t D = 0;
        for (int64_t k = 0; k < c.Kp; ++k)
          D += int32_t(layout_code(codes, bits, c.Kp, m, k)) * x[k];
        const int32_t acc = D - x_sums[n];
        y[n * c.M + m] = float(acc) * w_scale / x_scales[n];
        continue;
      }
      const int64_t blocks = c.Kp / 32, groups = c.Kp / f.group;
      float sum = 0.0f;
      for (int64_t b = 0; b < blocks; ++b) {
        int32_t D = 0;
        for (int64_t k = 32 * b; k < 32 * b + 32; ++k)
          D += int32_t(layout_code(codes, bits, c.Kp, m, k)) * x[k];
        const int32_t S = x_sums[n * blocks + b];
        const int64_t g = 32 * b / f.group;
        const int64_t at = ((m / 16) * groups + g) * 16 + m % 16;
        int32_t acc;
        if (f.encoding() == Encoding::Binary)
          acc = 2 * D - S;
        else if (f.kind == FormatKind::Q4_0)
          acc = D - 8 * S;
        else
          acc = D - int32_t(ref_float(zeros[at])) * S;
        sum =
            sum + float(acc) * ref_float(scales[at]) / x_scales[n * blocks + b];
      }
      y[n * c.M + m] = sum;
    }
  }
}

lowbit_kernel_fn scalar_kernel(const Format &format, int64_t M, int64_t K) {
  config.format = format;
  config.M = M;
  config.K = K;
  config.Kp = (K + 31) / 32 * 32;
  return &scalar_kernel_impl;
}

} // namespace lowbit::test
