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
/// (remainder < 5e-9), times 2^n. Below -87: 0; above 88.72 (where expf
/// overflows): infinity, so that SiLU gives -0 there as ggml's does.
inline v8 exp8(v8 x) {
  const v8i keep = x >= splat(-87.0f); // all ones where e^x is not 0
  const v8i overflow = x > splat(88.72f);
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
  bits &= keep;
  __builtin_memcpy(&y, &bits, sizeof y);
  return overflow ? splat(__builtin_inff()) : y;
}

float exp1(float x) {
  float in[8] = {x, x, x, x, x, x, x, x};
  return exp8(load(in))[0];
}

/// Rows of the KV cache a loop prefetches ahead: the weighted sums over V
/// take them in blocks (their column blocks are passes over the same 16 KiB
/// at D = 128, prefetched whole a block ahead so that no pass streams a
/// column of lines from memory); the scores prefetch K rows this far ahead.
constexpr int64_t kRowBlock = 32;

void prefetch_rows(const float *V, int64_t j0, int64_t j1, int64_t D) {
  const char *begin = reinterpret_cast<const char *>(V + j0 * D);
  const char *end = reinterpret_cast<const char *>(V + j1 * D);
  for (const char *line = begin; line < end; line += 64)
    __builtin_prefetch(line);
}

/// scores[j] = scale * (q . K[j]) for j in [j0, j1), 8 keys at a time (8
/// independent chains hide the FMA latency).
void scores_one(const float *q, const float *K, int64_t j0, int64_t j1,
                int64_t D, float scale, float *scores) {
  int64_t j = j0;
  if (D % 8 != 0) {
    for (; j < j1; ++j)
      scores[j] = dot_scalar(q, K + j * D, D) * scale;
    return;
  }
  for (; j + 8 <= j1; j += 8) {
    const float *k = K + j * D;
    if (j + kRowBlock + 8 <= j1)
      prefetch_rows(K, j + kRowBlock, j + kRowBlock + 8, D);
    v8 a0 = splat(0.0f), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0,
       a7 = a0;
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
  for (; j < j1; ++j)
    scores[j] = dot8(q, K + j * D, D) * scale;
}

/// Four queries against the keys [0, L) they share (D % 8 == 0): each key
/// row is loaded once for the four, three keys at a time (12 chains).
void scores_four(const float *q0, const float *q1, const float *q2,
                 const float *q3, const float *K, int64_t L, int64_t D,
                 float scale, float *s0, float *s1, float *s2, float *s3) {
  int64_t j = 0;
  for (; j + 3 <= L; j += 3) {
    const float *k = K + j * D;
    if (j + kRowBlock + 3 <= L)
      prefetch_rows(K, j + kRowBlock, j + kRowBlock + 3, D);
    v8 a00 = splat(0.0f), a01 = a00, a02 = a00, a10 = a00, a11 = a00, a12 = a00,
       a20 = a00, a21 = a00, a22 = a00, a30 = a00, a31 = a00, a32 = a00;
    for (int64_t d = 0; d < D; d += 8) {
      const v8 k0 = load(k + d), k1 = load(k + D + d), k2 = load(k + 2 * D + d);
      v8 x = load(q0 + d);
      a00 += x * k0;
      a01 += x * k1;
      a02 += x * k2;
      x = load(q1 + d);
      a10 += x * k0;
      a11 += x * k1;
      a12 += x * k2;
      x = load(q2 + d);
      a20 += x * k0;
      a21 += x * k1;
      a22 += x * k2;
      x = load(q3 + d);
      a30 += x * k0;
      a31 += x * k1;
      a32 += x * k2;
    }
    s0[j] = hsum(a00) * scale;
    s0[j + 1] = hsum(a01) * scale;
    s0[j + 2] = hsum(a02) * scale;
    s1[j] = hsum(a10) * scale;
    s1[j + 1] = hsum(a11) * scale;
    s1[j + 2] = hsum(a12) * scale;
    s2[j] = hsum(a20) * scale;
    s2[j + 1] = hsum(a21) * scale;
    s2[j + 2] = hsum(a22) * scale;
    s3[j] = hsum(a30) * scale;
    s3[j + 1] = hsum(a31) * scale;
    s3[j + 2] = hsum(a32) * scale;
  }
  for (; j < L; ++j) {
    const float *k = K + j * D;
    s0[j] = dot8(q0, k, D) * scale;
    s1[j] = dot8(q1, k, D) * scale;
    s2[j] = dot8(q2, k, D) * scale;
    s3[j] = dot8(q3, k, D) * scale;
  }
}

/// softmax numerators in place (exp(s - max)); returns 1 / their sum (the
/// sum in four double partial sums by j mod 4).
float softmax(float *scores, int64_t L) {
  float max = -__builtin_inff();
  for (int64_t j = 0; j < L; ++j)
    max = scores[j] > max ? scores[j] : max;
  double sums[4] = {0.0, 0.0, 0.0, 0.0};
  int64_t j = 0;
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
  return float(1.0 / ((sums[0] + sums[1]) + (sums[2] + sums[3])));
}

/// p[j] *= inv: the softmax weights, normalized once.
void normalize(float *p, int64_t L, float inv) {
  int64_t j = 0;
  for (; j + 8 <= L; j += 8)
    store(p + j, load(p + j) * splat(inv));
  for (; j < L; ++j)
    p[j] *= inv;
}

/// out = sum_{j < L} w[j] V[j]: every output element accumulates over j in
/// order from 0, whatever the row and column blocking (partial sums are
/// kept in `out` between row blocks, exactly).
void weighted_sum(const float *w, const float *V, int64_t L, int64_t D,
                  float *out) {
  if (D % 8 != 0) {
    for (int64_t d = 0; d < D; ++d)
      out[d] = 0.0f;
    for (int64_t j = 0; j < L; ++j)
      for (int64_t d = 0; d < D; ++d)
        out[d] += w[j] * V[j * D + d];
    return;
  }
  for (int64_t d = 0; d < D; d += 8)
    store(out + d, splat(0.0f));
  prefetch_rows(V, 0, L < kRowBlock ? L : kRowBlock, D);
  for (int64_t j0 = 0; j0 < L; j0 += kRowBlock) {
    const int64_t j1 = j0 + kRowBlock < L ? j0 + kRowBlock : L;
    prefetch_rows(V, j1, j1 + kRowBlock < L ? j1 + kRowBlock : L, D);
    int64_t d0 = 0;
    for (; d0 + 64 <= D; d0 += 64) { // 64 columns: 8 registers
      float *o = out + d0;
      v8 a0 = load(o), a1 = load(o + 8), a2 = load(o + 16), a3 = load(o + 24),
         a4 = load(o + 32), a5 = load(o + 40), a6 = load(o + 48),
         a7 = load(o + 56);
      for (int64_t j = j0; j < j1; ++j) {
        const v8 x = splat(w[j]);
        const float *v = V + j * D + d0;
        a0 += x * load(v);
        a1 += x * load(v + 8);
        a2 += x * load(v + 16);
        a3 += x * load(v + 24);
        a4 += x * load(v + 32);
        a5 += x * load(v + 40);
        a6 += x * load(v + 48);
        a7 += x * load(v + 56);
      }
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
      v8 a = load(out + d0);
      for (int64_t j = j0; j < j1; ++j)
        a += splat(w[j]) * load(V + j * D + d0);
      store(out + d0, a);
    }
  }
}

/// The same for four queries whose first L rows are shared (query r has
/// L + r * step): each V row chunk is loaded once for the four, 16 columns
/// at a time (8 registers), then every query adds its own last rows.
void weighted_sum_four(float *const w[4], const float *V, int64_t L,
                       int64_t step, int64_t D, float *const out[4]) {
  for (int r = 0; r < 4; ++r)
    for (int64_t d = 0; d < D; d += 8)
      store(out[r] + d, splat(0.0f));
  prefetch_rows(V, 0, L < kRowBlock ? L : kRowBlock, D);
  for (int64_t j0 = 0; j0 < L; j0 += kRowBlock) {
    const int64_t j1 = j0 + kRowBlock < L ? j0 + kRowBlock : L;
    prefetch_rows(V, j1, j1 + kRowBlock < L ? j1 + kRowBlock : L, D);
    int64_t d0 = 0;
    for (; d0 + 16 <= D; d0 += 16) {
      v8 a00 = load(out[0] + d0), a01 = load(out[0] + d0 + 8),
         a10 = load(out[1] + d0), a11 = load(out[1] + d0 + 8),
         a20 = load(out[2] + d0), a21 = load(out[2] + d0 + 8),
         a30 = load(out[3] + d0), a31 = load(out[3] + d0 + 8);
      for (int64_t j = j0; j < j1; ++j) {
        const float *v = V + j * D + d0;
        const v8 v0 = load(v), v1 = load(v + 8);
        v8 x = splat(w[0][j]);
        a00 += x * v0;
        a01 += x * v1;
        x = splat(w[1][j]);
        a10 += x * v0;
        a11 += x * v1;
        x = splat(w[2][j]);
        a20 += x * v0;
        a21 += x * v1;
        x = splat(w[3][j]);
        a30 += x * v0;
        a31 += x * v1;
      }
      store(out[0] + d0, a00);
      store(out[0] + d0 + 8, a01);
      store(out[1] + d0, a10);
      store(out[1] + d0 + 8, a11);
      store(out[2] + d0, a20);
      store(out[2] + d0 + 8, a21);
      store(out[3] + d0, a30);
      store(out[3] + d0 + 8, a31);
    }
    for (; d0 < D; d0 += 8)
      for (int r = 0; r < 4; ++r) {
        v8 a = load(out[r] + d0);
        for (int64_t j = j0; j < j1; ++j)
          a += splat(w[r][j]) * load(V + j * D + d0);
        store(out[r] + d0, a);
      }
  }
  // Each query's own last rows.
  for (int r = 0; r < 4; ++r)
    for (int64_t j = L; j < L + r * step; ++j)
      for (int64_t d0 = 0; d0 < D; d0 += 8)
        store(out[r] + d0,
              load(out[r] + d0) + splat(w[r][j]) * load(V + j * D + d0));
}

void attend(const float *q, int64_t q_stride, int64_t nq, const float *K,
            const float *V, int64_t L0, int64_t step, int64_t D, float scale,
            float *scores, float *out, int64_t out_stride) {
  const int64_t ls = L0 + (nq - 1) * step; // score row stride: the longest
  if (nq == 4 && D % 8 == 0) {
    const float *qs[4];
    float *s[4], *o[4];
    for (int r = 0; r < 4; ++r) {
      qs[r] = q + r * q_stride;
      s[r] = scores + r * ls;
      o[r] = out + r * out_stride;
    }
    scores_four(qs[0], qs[1], qs[2], qs[3], K, L0, D, scale, s[0], s[1], s[2],
                s[3]);
    for (int r = 0; r < 4; ++r) {
      scores_one(qs[r], K, L0, L0 + r * step, D, scale, s[r]);
      normalize(s[r], L0 + r * step, softmax(s[r], L0 + r * step));
    }
    weighted_sum_four(s, V, L0, step, D, o);
    return;
  }
  for (int64_t r = 0; r < nq; ++r) {
    float *s = scores + r * ls;
    const int64_t L = L0 + r * step;
    scores_one(q + r * q_stride, K, 0, L, D, scale, s);
    normalize(s, L, softmax(s, L));
    weighted_sum(s, V, L, D, out + r * out_stride);
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
  v8i h = {0, 0, 0, 0, 0, 0, 0, 0};
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

void gemv(const void *W, FloatType type, int64_t K, const float *X, int64_t N,
          float *Y, int64_t ldy, int64_t m0, int64_t m1) {
  const int64_t row_bytes = K * (type == FloatType::F32 ? 4 : 2);
  for (int64_t m = m0; m < m1; ++m) {
    const void *w = static_cast<const char *>(W) + m * row_bytes;
    for (int64_t n = 0; n < N; ++n)
      Y[n * ldy + m] = dot_long(w, type, X + n * K, K);
  }
}

typedef double v4d __attribute__((vector_size(32), aligned(8)));
typedef float v4 __attribute__((vector_size(16), aligned(4)));

/// y = x / sqrt(mean(x^2) + eps) * w, as ggml_rms_norm then ggml_mul: each
/// square rounded to float, summed in double (16 partial sums by i mod 16,
/// combined in a fixed order), the scale 1 / sqrtf(mean + eps) in float.
void rms_norm(const float *x, const float *w, int64_t n, float eps, float *y) {
  v4d s0 = {0.0, 0.0, 0.0, 0.0}, s1 = s0, s2 = s0, s3 = s0;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const v8 a = load(x + i), b = load(x + i + 8);
    const v8 qa = a * a, qb = b * b;
    s0 += __builtin_convertvector(v4{qa[0], qa[1], qa[2], qa[3]}, v4d);
    s1 += __builtin_convertvector(v4{qa[4], qa[5], qa[6], qa[7]}, v4d);
    s2 += __builtin_convertvector(v4{qb[0], qb[1], qb[2], qb[3]}, v4d);
    s3 += __builtin_convertvector(v4{qb[4], qb[5], qb[6], qb[7]}, v4d);
  }
  const v4d s = (s0 + s1) + (s2 + s3);
  double sum = (s[0] + s[1]) + (s[2] + s[3]);
  for (; i < n; ++i) {
    const float q = x[i] * x[i];
    sum += double(q);
  }
  const float mean = float(sum / double(n));
  const float scale = 1.0f / __builtin_sqrtf(mean + eps);
  i = 0;
  for (; i + 8 <= n; i += 8)
    store(y + i, (load(x + i) * splat(scale)) * load(w + i));
  for (; i < n; ++i)
    y[i] = (x[i] * scale) * w[i];
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
const Kernels table = {LOWBIT_ENGINE_STR(LOWBIT_ENGINE_ISA), attend, gemv, glu,
                       rms_norm};

} // namespace lowbit::engine::LOWBIT_ENGINE_ISA
