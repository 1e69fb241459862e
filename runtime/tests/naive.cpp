//===- naive.cpp - independent oracles for the runtime tests --------------===//

#include "naive.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#if !defined(__FLT16_MAX__)
#error "the runtime tests need the compiler's _Float16 as an fp16 oracle"
#endif

namespace lowbit::test {

uint16_t ref_half(float f) {
  _Float16 h = static_cast<_Float16>(f);
  uint16_t u;
  std::memcpy(&u, &h, sizeof(u));
  return u;
}

float ref_float(uint16_t u) {
  _Float16 h;
  std::memcpy(&h, &u, sizeof(h));
  return static_cast<float>(h);
}

// Sets `n` bits of `value` at bit offset `bit` (bit i of the stream is bit
// i % 8 of byte i / 8), one bit at a time.
static void put_bits(uint8_t *bytes, int64_t bit, unsigned value, int n) {
  for (int i = 0; i < n; ++i)
    if ((value >> i) & 1)
      bytes[(bit + i) / 8] |= uint8_t(1u << ((bit + i) % 8));
}

static void naive_ternary(const Format &f, const std::vector<float> &W,
                          int64_t M, int64_t K, NaiveWeights &out) {
  double sum = 0.0;
  for (float w : W)
    sum += std::fabs(static_cast<double>(w));
  float s = static_cast<float>(sum / static_cast<double>(M * K));
  if (s < 1e-5f)
    s = 1e-5f;
  out.tensor_scale = s;
  for (float w : W) {
    float r = std::nearbyintf(w / s);
    out.q.push_back(static_cast<int8_t>(r < -1 ? -1 : r > 1 ? 1 : r));
    out.dequant.push_back(s * out.q.back());
  }
  // tl2 split: triples first, an even tl1 tail.
  int64_t k3 = 3 * (K / 3);
  if ((K - k3) % 2 == 1)
    k3 -= 3;
  const int64_t T = k3 / 3;
  int64_t row_bytes = (K + 3) / 4; // i2s and tl1
  if (f.kind == FormatKind::TL2)
    row_bytes = (T + 1) / 2 + (T + 7) / 8 + (K - k3 + 3) / 4;
  out.codes.assign(static_cast<size_t>(M * row_bytes), 0);
  for (int64_t m = 0; m < M; ++m) {
    const int8_t *q = &out.q[m * K];
    uint8_t *row = &out.codes[m * row_bytes];
    auto tl1 = [&](int64_t first, int64_t count, uint8_t *dst) {
      for (int64_t i = 0; i < count / 2; ++i)
        put_bits(dst, 4 * i,
                 3 * (q[first + 2 * i] + 1) + (q[first + 2 * i + 1] + 1), 4);
    };
    if (f.kind == FormatKind::I2S) {
      for (int64_t k = 0; k < K; ++k)
        put_bits(row, 2 * k, q[k] + 1, 2);
    } else if (f.kind == FormatKind::TL1) {
      tl1(0, K, row);
    } else {
      for (int64_t t = 0; t < T; ++t) {
        int v = 9 * (q[3 * t] + 1) + 3 * (q[3 * t + 1] + 1) +
                (q[3 * t + 2] + 1) - 13;
        put_bits(row, 4 * t, v < 0 ? -v : v, 4);
        if (v < 0)
          put_bits(row + (T + 1) / 2, t, 1, 1);
      }
      tl1(k3, K - k3, row + (T + 1) / 2 + (T + 7) / 8);
    }
  }
}

static void naive_group(const Format &f, const std::vector<float> &W, int64_t M,
                        int64_t K, NaiveWeights &out) {
  const int b = f.bits;
  const int64_t G = f.group;
  const int qmax = (1 << b) - 1;
  out.q.resize(W.size());
  out.dequant.resize(W.size());
  out.codes.assign(static_cast<size_t>(M * K * b / 8), 0);
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t g = 0; g < K / G; ++g) {
      const float *w = &W[m * K + g * G];
      float sf;
      int z = 0;
      std::vector<int> q(static_cast<size_t>(G));
      if (b == 1) {
        double sum = 0.0;
        for (int64_t i = 0; i < G; ++i)
          sum += std::fabs(static_cast<double>(w[i]));
        uint16_t h = ref_half(static_cast<float>(sum / G));
        out.scales.push_back(h);
        sf = ref_float(h);
        for (int64_t i = 0; i < G; ++i)
          q[i] = w[i] >= 0.0f ? 1 : -1;
      } else {
        float lo = 0.0f, hi = 0.0f;
        for (int64_t i = 0; i < G; ++i) {
          lo = std::min(lo, w[i]);
          hi = std::max(hi, w[i]);
        }
        uint16_t h = ref_half((hi - lo) / static_cast<float>(qmax));
        out.scales.push_back(h);
        sf = ref_float(h);
        if (sf != 0.0f)
          z = static_cast<int>(
              std::clamp(std::nearbyintf(-lo / sf), 0.0f, float(qmax)));
        for (int64_t i = 0; i < G; ++i)
          q[i] = sf == 0.0f ? 0
                            : static_cast<int>(std::clamp(
                                  std::nearbyintf(w[i] / sf) + float(z), 0.0f,
                                  float(qmax)));
        out.zeros.push_back(ref_half(static_cast<float>(z)));
      }
      for (int64_t i = 0; i < G; ++i) {
        const int64_t k = g * G + i;
        out.q[m * K + k] = static_cast<int8_t>(q[i]);
        out.dequant[m * K + k] = sf * static_cast<float>(q[i] - z);
        const unsigned code = b == 1 ? (q[i] > 0 ? 1u : 0u) : unsigned(q[i]);
        put_bits(&out.codes[m * K * b / 8], k * b, code, b);
      }
      for (int64_t i = 0; i < G / 32; ++i) {
        out.block_s.push_back(sf);
        out.block_z.push_back(z);
      }
    }
  }
}

// ggml's quantize_row_q4_0_ref semantics, for well-behaved inputs (no
// infinite 1/d) where a plain truncating cast is defined.
static void naive_q4_0(const std::vector<float> &W, int64_t M, int64_t K,
                       NaiveWeights &out) {
  out.q.resize(W.size());
  out.dequant.resize(W.size());
  for (int64_t i = 0; i < M * K / 32; ++i) {
    const float *x = &W[32 * i];
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < 32; ++j)
      if (std::fabs(x[j]) > amax) {
        amax = std::fabs(x[j]);
        max = x[j];
      }
    const float d = max / -8.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    const uint16_t dh = ref_half(d);
    out.codes.push_back(static_cast<uint8_t>(dh & 0xFF));
    out.codes.push_back(static_cast<uint8_t>(dh >> 8));
    int code[32];
    for (int j = 0; j < 32; ++j) {
      const float t = x[j] * id;
      code[j] = std::min(15, static_cast<int>(t + 8.5f));
      out.q[32 * i + j] = static_cast<int8_t>(code[j]);
      out.dequant[32 * i + j] = ref_float(dh) * static_cast<float>(code[j] - 8);
    }
    for (int j = 0; j < 16; ++j)
      out.codes.push_back(static_cast<uint8_t>(code[j] | (code[j + 16] << 4)));
    out.block_s.push_back(ref_float(dh));
    out.block_z.push_back(8);
  }
}

NaiveWeights naive_quantize(const Format &format, const std::vector<float> &W,
                            int64_t M, int64_t K) {
  NaiveWeights out;
  if (format.kind == FormatKind::Group)
    naive_group(format, W, M, K, out);
  else if (format.kind == FormatKind::Q4_0)
    naive_q4_0(W, M, K, out);
  else
    naive_ternary(format, W, M, K, out);
  return out;
}

NaiveActivations naive_activations(const std::vector<float> &X, int64_t N,
                                   int64_t K, int64_t block) {
  NaiveActivations A;
  A.block = block;
  for (int64_t start = 0; start < N * K; start += block) {
    float amax = 0.0f;
    for (int64_t k = start; k < start + block; ++k)
      amax = std::max(amax, std::fabs(X[k]));
    const float s = 127.0f / std::max(amax, 1e-5f);
    A.s.push_back(s);
    for (int64_t k = start; k < start + block; ++k) {
      const float r = std::nearbyintf(X[k] * s);
      A.q.push_back(static_cast<int8_t>(r < -128 ? -128 : r > 127 ? 127 : r));
    }
  }
  return A;
}

std::vector<float> naive_mpgemm(const Format &format, const NaiveWeights &W,
                                const NaiveActivations &A, int64_t M, int64_t N,
                                int64_t K) {
  std::vector<float> Y(static_cast<size_t>(N * M));
  const bool ternary = format.kind == FormatKind::I2S ||
                       format.kind == FormatKind::TL1 ||
                       format.kind == FormatKind::TL2;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m) {
      if (ternary) {
        int64_t acc = 0;
        for (int64_t k = 0; k < K; ++k)
          acc += int64_t{A.q[n * K + k]} * W.q[m * K + k];
        Y[n * M + m] = static_cast<float>(acc) * W.tensor_scale / A.s[n];
        continue;
      }
      float y = 0.0f;
      for (int64_t b = 0; b < K / 32; ++b) {
        int64_t acc = 0;
        for (int64_t k = 32 * b; k < 32 * b + 32; ++k)
          acc += int64_t{A.q[n * K + k]} *
                 (W.q[m * K + k] - W.block_z[m * (K / 32) + b]);
        y += static_cast<float>(acc) * W.block_s[m * (K / 32) + b] /
             A.s[n * (K / 32) + b];
      }
      Y[n * M + m] = y;
    }
  return Y;
}

} // namespace lowbit::test
