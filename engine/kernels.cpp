//===- kernels.cpp - the engine's fp32 loops (compiled once per ISA) ------===//
//
// Built twice on x86-64: as is (namespace generic) and with -mavx2 -mfma
// (namespace avx2, LOWBIT_ENGINE_ISA=avx2). The loops use GCC/Clang vector
// extensions of 8 floats: one AVX register, or two SSE/NEON registers in the
// generic build. Everything here has internal linkage except the table, and
// nothing inline from a system header is called: an inline function
// compiled with AVX2 in this file must never be the copy the linker keeps
// for the generic one.
//
// Every result depends only on its own inputs (a score only on its query
// and key, an output only on its row), never on how a loop was blocked, so
// that a batch gives bit for bit the logits of token-by-token decoding.
//
//===----------------------------------------------------------------------===//
#include "kernels.h"

#ifndef LOWBIT_ENGINE_ISA
#define LOWBIT_ENGINE_ISA generic
#endif
#define LOWBIT_ENGINE_STR2(x) #x
#define LOWBIT_ENGINE_STR(x) LOWBIT_ENGINE_STR2(x)

namespace lowbit::engine::LOWBIT_ENGINE_ISA {
namespace {

// 8 floats; aligned(4): loads and stores through it may be unaligned.
typedef float v8 __attribute__((vector_size(32), aligned(4)));
typedef int v8i __attribute__((vector_size(32), aligned(4)));

inline v8 load(const float *p) { return *reinterpret_cast<const v8 *>(p); }
inline void store(float *p, v8 v) { *reinterpret_cast<v8 *>(p) = v; }
inline v8 splat(float x) { return v8{x, x, x, x, x, x, x, x}; }

inline float hsum(v8 v) {
  return ((v[0] + v[4]) + (v[2] + v[6])) + ((v[1] + v[5]) + (v[3] + v[7]));
}

/// q . k over D floats (D % 8 == 0): one accumulator, so the result does
/// not depend on which other keys are computed alongside.
inline float dot8(const float *q, const float *k, int64_t D) {
  v8 acc = splat(0.0f);
  for (int64_t d = 0; d < D; d += 8)
    acc += load(q + d) * load(k + d);
  return hsum(acc);
}

float dot_scalar(const float *a, const float *b, int64_t n) {
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i)
    sum += a[i] * b[i];
  return sum;
}

/// exp(x), within 2 ulp of expf for x in [-87, 88]: x = n ln2 + r with
/// |r| <= ln2/2 (ln2 in two parts), e^r by its Taylor series to degree 7
/// (remainder < 5e-9), times 2^n. Below -87: 0; above 88: e^88.
inline v8 exp8(v8 x) {
  const v8i zero = x >= splat(-87.0f); // all ones where kept
  x = x < splat(88.0f) ? x : splat(88.0f);
  x = x > splat(-87.0f) ? x : splat(-87.0f);
  const v8 shifter = splat(12582912.0f); // 1.5 * 2^23: rounds to an integer
  v8 t = x * splat(1.44269504088896341f) + shifter;
  const v8 n = t - shifter;
  v8 r = x - n * splat(0.693145751953125f);
  r = r - n * splat(1.42860682030941723e-6f);
  v8 p = splat(1.0f / 5040.0f);
  p = p * r + splat(1.0f / 720.0f);
  p = p * r + splat(1.0f / 120.0f);
  p = p * r + splat(1.0f / 24.0f);
  p = p * r + splat(1.0f / 6.0f);
  p = p * r + splat(0.5f);
  p = p * r + splat(1.0f);
  p = p * r + splat(1.0f);
  const v8i e = (__builtin_convertvector(n, v8i) + 127) << 23;
  v8 scale;
  __builtin_memcpy(&scale, &e, sizeof scale);
  v8 y = p * scale;
  v8i bits;
  __builtin_memcpy(&bits, &y, sizeof bits);
  bits &= zero;
  __builtin_memcpy(&y, &bits, sizeof y);
  return y;
}

float exp1(float x) {
  float in[8] = {x, x, x, x, x, x, x, x};
  return exp8(load(in))[0];
}

void attend(const float *q, const float *K, const float *V, int64_t L,
            int64_t D, float scale, float *scores, float *out) {
  const bool vec = D % 8 == 0;
  // Scores, 8 keys at a time (8 independent chains hide the FMA latency).
  int64_t j = 0;
  if (vec) {
    for (; j + 8 <= L; j += 8) {
      const float *k = K + j * D;
      v8 a0 = splat(0.0f), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0,
         a6 = a0, a7 = a0;
      for (int64_t d = 0; d < D; d += 8) {
        const v8 x = load(q + d);
        a0 += x * load(k + d);
        a1 += x * load(k + D + d);
        a2 += x * load(k + 2 * D + d);
        a3 += x * load(k + 3 * D + d);
        a4 += x * load(k + 4 * D + d);
        a5 += x * load(k + 5 * D + d);
        a6 += x * load(k + 6 * D + d);
        a7 += x * load(k + 7 * D + d);
      }
      const v8 s{hsum(a0), hsum(a1), hsum(a2), hsum(a3),
                 hsum(a4), hsum(a5), hsum(a6), hsum(a7)};
      store(scores + j, s * splat(scale));
    }
    for (; j < L; ++j)
      scores[j] = dot8(q, K + j * D, D) * scale;
  } else {
    for (; j < L; ++j)
      scores[j] = dot_scalar(q, K + j * D, D) * scale;
  }

  float max = -__builtin_inff();
  for (j = 0; j < L; ++j)
    max = scores[j] > max ? scores[j] : max;
  // exp and the sum (four double partial sums by j mod 4).
  double sums[4] = {0.0, 0.0, 0.0, 0.0};
  j = 0;
  for (; j + 8 <= L; j += 8) {
    const v8 e = exp8(load(scores + j) - splat(max));
    store(scores + j, e);
    for (int l = 0; l < 8; ++l)
      sums[l % 4] += double(e[l]);
  }
  for (; j < L; ++j) {
    scores[j] = exp1(scores[j] - max);
    sums[j % 4] += double(scores[j]);
  }
  const float inv = float(1.0 / ((sums[0] + sums[1]) + (sums[2] + sums[3])));

  // out = sum_j p_j V[j], 64 columns at a time (8 registers).
  if (vec) {
    int64_t d0 = 0;
    for (; d0 + 64 <= D; d0 += 64) {
      v8 a0 = splat(0.0f), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0,
         a6 = a0, a7 = a0;
      for (j = 0; j < L; ++j) {
        const v8 p = splat(scores[j] * inv);
        const float *v = V + j * D + d0;
        a0 += p * load(v);
        a1 += p * load(v + 8);
        a2 += p * load(v + 16);
        a3 += p * load(v + 24);
        a4 += p * load(v + 32);
        a5 += p * load(v + 40);
        a6 += p * load(v + 48);
        a7 += p * load(v + 56);
      }
      float *o = out + d0;
      store(o, a0);
      store(o + 8, a1);
      store(o + 16, a2);
      store(o + 24, a3);
      store(o + 32, a4);
      store(o + 40, a5);
      store(o + 48, a6);
      store(o + 56, a7);
    }
    for (; d0 < D; d0 += 8) {
      v8 a = splat(0.0f);
      for (j = 0; j < L; ++j)
        a += splat(scores[j] * inv) * load(V + j * D + d0);
      store(out + d0, a);
    }
  } else {
    for (int64_t d = 0; d < D; ++d)
      out[d] = 0.0f;
    for (j = 0; j < L; ++j) {
      const float p = scores[j] * inv;
      for (int64_t d = 0; d < D; ++d)
        out[d] += p * V[j * D + d];
    }
  }
}

/// IEEE binary16 to float, exactly (normals, subnormals, inf, NaN).
inline v8i f16_bits_to_f32_bits(v8i h) {
  const v8i sign = (h & 0x8000) << 16;
  const v8i em = h & 0x7fff;
  // Normal and subnormal: the 15 bits shifted into place are exactly the
  // value times 2^-112; multiplying by 2^112 rescales (and normalizes a
  // subnormal). Inf/NaN: exponent all ones.
  v8 f;
  const v8i shifted = em << 13;
  __builtin_memcpy(&f, &shifted, sizeof f);
  f = f * splat(5.192296858534828e33f); // 2^112
  v8i out;
  __builtin_memcpy(&out, &f, sizeof out);
  const v8i special = em >= 0x7c00;
  out = special ? (shifted | 0x7f800000) : out;
  return out | sign;
}

/// 8 weights of `type` at element k of row w, as floats.
inline v8 load_weights(const void *w, FloatType type, int64_t k) {
  if (type == FloatType::F32)
    return load(static_cast<const float *>(w) + k);
  const uint16_t *p = static_cast<const uint16_t *>(w) + k;
  v8i h;
  for (int l = 0; l < 8; ++l)
    h[l] = p[l];
  v8i bits = type == FloatType::BF16 ? h << 16 : f16_bits_to_f32_bits(h);
  v8 f;
  __builtin_memcpy(&f, &bits, sizeof f);
  return f;
}

float load_weight(const void *w, FloatType type, int64_t k) {
  if (type == FloatType::F32)
    return static_cast<const float *>(w)[k];
  const uint16_t h[8] = {static_cast<const uint16_t *>(w)[k]};
  return load_weights(h, type, 0)[0];
}

/// w . x over K values: four accumulators of 8 (the order is fixed by K).
float dot_long(const void *w, FloatType type, const float *x, int64_t K) {
  v8 a0 = splat(0.0f), a1 = a0, a2 = a0, a3 = a0;
  int64_t k = 0;
  for (; k + 32 <= K; k += 32) {
    a0 += load_weights(w, type, k) * load(x + k);
    a1 += load_weights(w, type, k + 8) * load(x + k + 8);
    a2 += load_weights(w, type, k + 16) * load(x + k + 16);
    a3 += load_weights(w, type, k + 24) * load(x + k + 24);
  }
  for (; k + 8 <= K; k += 8)
    a0 += load_weights(w, type, k) * load(x + k);
  float sum = hsum((a0 + a1) + (a2 + a3));
  for (; k < K; ++k)
    sum += load_weight(w, type, k) * x[k];
  return sum;
}

void gemv(const void *W, FloatType type, int64_t K, const float *X,
          int64_t N, float *Y, int64_t ldy, int64_t m0, int64_t m1) {
  const int64_t row_bytes = K * (type == FloatType::F32 ? 4 : 2);
  for (int64_t m = m0; m < m1; ++m) {
    const void *w = static_cast<const char *>(W) + m * row_bytes;
    for (int64_t n = 0; n < N; ++n)
      Y[n * ldy + m] = dot_long(w, type, X + n * K, K);
  }
}

void glu(float *g, const float *u, int64_t n, bool relu2) {
  int64_t i = 0;
  if (relu2) {
    for (; i + 8 <= n; i += 8) {
      v8 a = load(g + i);
      a = a > splat(0.0f) ? a : splat(0.0f);
      store(g + i, (a * a) * load(u + i));
    }
    for (; i < n; ++i) {
      const float a = g[i] > 0.0f ? g[i] : 0.0f;
      g[i] = (a * a) * u[i];
    }
    return;
  }
  for (; i + 8 <= n; i += 8) {
    const v8 a = load(g + i);
    store(g + i, (a / (splat(1.0f) + exp8(-a))) * load(u + i));
  }
  for (; i < n; ++i)
    g[i] = (g[i] / (1.0f + exp1(-g[i]))) * u[i];
}

} // namespace

extern const Kernels table;
const Kernels table = {LOWBIT_ENGINE_STR(LOWBIT_ENGINE_ISA), attend, gemv,
                       glu};

} // namespace lowbit::engine::LOWBIT_ENGINE_ISA
