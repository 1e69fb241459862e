//===- ggml_blocks.cpp - ggml's block formats: table, layouts, quantizers -===//
//
// Written from the definitions in llama.cpp's ggml (ggml/src/ggml-common.h:
// the block structs; ggml/src/ggml-quants.c: quantize_row_<type>_ref,
// dequantize_row_<type>, quantize_iq4_nl); an independent implementation,
// not their code. The quantizers reproduce ggml's operation by operation,
// every float operation rounded separately in the same order (this file is
// built with -ffp-contract=off, as ggml-base on x86 has no FMA contraction),
// so that the bytes are identical. The decoders return the s and o of each
// scale block as ggml's dequantize_row_* computes them, so that s * c (+ o)
// is its value bit for bit.
//
//===----------------------------------------------------------------------===//

#include "ggml_blocks.h"
#include "byte_order.h"
#include "layout.h"
#include "q4_0.h"

#include "lowbit/error.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

namespace lowbit {
namespace detail {
namespace {

// ggml's QK_K, the super-block of the K-quants.
constexpr int kSuper = 256;

// ggml's GROUP_MAX_EPS: a block whose largest |x| is below it is all zero.
constexpr float kGroupMaxEps = 1e-15f;

// ggml's kvalues_iq4nl (ggml-common.h), the codebook of iq4_nl.
constexpr int8_t kIq4nlValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                     1,    13,   25,  38,  53,  69,  89,  113};

// ggml's nearest_int: adding 1.5 * 2^23 leaves round-half-even(x) + 2^22 in
// the low 23 bits of the float; ggml reads them without a range check, and
// so do we (the same bits for any x, also outside |x| <= 2^22).
int nearest_int(float x) {
  const float v = x + 12582912.0f;
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  return int(bits & 0x007FFFFF) - 0x00400000;
}

// A C float-to-integer conversion `(int8_t)t` / `(uint8_t)t` as ggml's x86
// build does it: cvttss2si truncates to int32 (INT32_MIN for NaN and out of
// range) and the low byte is kept. Here without undefined behaviour.
int32_t truncate_x86(float t) {
  if (t > -2147483648.0f && t < 2147483648.0f)
    return int32_t(t);
  return INT32_MIN;
}
int as_int8(float t) { return int8_t(uint8_t(uint32_t(truncate_x86(t)))); }
int as_uint8(float t) { return uint8_t(uint32_t(truncate_x86(t))); }

float get_half(const uint8_t *p) { return half_to_float(load_le<uint16_t>(p)); }

// GGML_FP32_TO_FP16 into p; returns the stored value as ggml reads it back.
float put_half(uint8_t *p, float v, const char *field) {
  const uint16_t h = float_to_half(v);
  if ((h & 0x7C00) == 0x7C00)
    throw Fp16Overflow{field, v};
  store_le(p, h);
  return half_to_float(h);
}

// --- q4_0, q4_1, q5_0, q5_1, q8_0: one scale per 32 ----------------------
//
// q4_0   d, qs[16]          x = d * (q - 8)      q = qs nibbles
// q4_1   d, m, qs[16]       x = d * q + m
// q5_0   d, qh[4], qs[16]   x = d * (q - 16)     q = nibble | qh bit << 4
// q5_1   d, m, qh[4], qs[16]  x = d * q + m
// q8_0   d, qs[32] int8     x = d * q
// Code j < 16 is the low nibble of qs[j], code j + 16 its high nibble; the
// fifth bit of code j is bit j of the little-endian uint32 qh.

void nibbles(const uint8_t *qs, int8_t *q) {
  for (int j = 0; j < 16; ++j) {
    q[j] = int8_t(qs[j] & 0x0F);
    q[j + 16] = int8_t(qs[j] >> 4);
  }
}

void high_bits(const uint8_t *qh, int8_t *q) {
  const uint32_t h = load_le<uint32_t>(qh);
  for (int j = 0; j < 32; ++j)
    q[j] = int8_t(q[j] | (((h >> j) & 1) << 4));
}

// The signed maximum of n values (the scale of q4_0 / q5_0 blocks, and of
// the K-quants' make_qx_quants / make_q3_quants): the first element of
// largest |x|, with its sign.
float signed_max(const float *x, int n = 32) {
  float amax = 0.0f, max = 0.0f;
  for (int j = 0; j < n; ++j)
    if (amax < std::fabs(x[j])) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  return max;
}

void min_max(const float *x, float &min, float &max) {
  min = FLT_MAX;
  max = -FLT_MAX;
  for (int j = 0; j < 32; ++j) {
    if (x[j] < min)
      min = x[j];
    if (x[j] > max)
      max = x[j];
  }
}

void decode_q4_0(const uint8_t *b, int8_t *q, float *s, float *) {
  s[0] = get_half(b);
  nibbles(b + 2, q);
}

void quantize_q4_0(const float *x, uint8_t *b) {
  const float d = signed_max(x) / -8;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  put_half(b, d, "d");
  for (int j = 0; j < 16; ++j) {
    const int lo = std::min(15, as_int8(x[j] * id + 8.5f));
    const int hi = std::min(15, as_int8(x[j + 16] * id + 8.5f));
    b[2 + j] = uint8_t(uint8_t(lo) | uint8_t(hi) << 4);
  }
}

void decode_q4_1(const uint8_t *b, int8_t *q, float *s, float *o) {
  s[0] = get_half(b);
  o[0] = get_half(b + 2);
  nibbles(b + 4, q);
}

// The header of Q4_1 and Q5_1 (codes 0..levels over the block's range):
// writes d and m, returns m and 1 / d.
void put_range_header(const float *x, int levels, uint8_t *b, float &min,
                      float &id) {
  float max;
  min_max(x, min, max);
  const float d = (max - min) / float(levels);
  id = d != 0.0f ? 1.0f / d : 0.0f;
  put_half(b, d, "d");
  put_half(b + 2, min, "m");
}

void quantize_q4_1(const float *x, uint8_t *b) {
  float min, id;
  put_range_header(x, 15, b, min, id);
  for (int j = 0; j < 16; ++j) {
    const int lo = std::min(15, as_int8((x[j] - min) * id + 0.5f));
    const int hi = std::min(15, as_int8((x[j + 16] - min) * id + 0.5f));
    b[4 + j] = uint8_t(uint8_t(lo) | uint8_t(hi) << 4);
  }
}

// Writes 32 five-bit codes as q5's qh (little-endian) and qs.
void store_q5(const int *code, uint8_t *qh, uint8_t *qs) {
  uint32_t h = 0;
  for (int j = 0; j < 16; ++j) {
    qs[j] = uint8_t((code[j] & 0x0F) | ((code[j + 16] & 0x0F) << 4));
    h |= uint32_t((code[j] & 0x10) >> 4) << j;
    h |= uint32_t((code[j + 16] & 0x10) >> 4) << (j + 16);
  }
  store_le(qh, h);
}

void decode_q5_0(const uint8_t *b, int8_t *q, float *s, float *) {
  s[0] = get_half(b);
  nibbles(b + 6, q);
  high_bits(b + 2, q);
}

void quantize_q5_0(const float *x, uint8_t *b) {
  const float d = signed_max(x) / -16;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  put_half(b, d, "d");
  int code[32];
  for (int j = 0; j < 32; ++j)
    code[j] = uint8_t(std::min(31, as_int8(x[j] * id + 16.5f)));
  store_q5(code, b + 2, b + 6);
}

void decode_q5_1(const uint8_t *b, int8_t *q, float *s, float *o) {
  s[0] = get_half(b);
  o[0] = get_half(b + 2);
  nibbles(b + 8, q);
  high_bits(b + 4, q);
}

void quantize_q5_1(const float *x, uint8_t *b) {
  float min, id;
  put_range_header(x, 31, b, min, id);
  int code[32];
  for (int j = 0; j < 32; ++j)
    code[j] = as_uint8((x[j] - min) * id + 0.5f);
  store_q5(code, b + 4, b + 8);
}

void decode_q8_0(const uint8_t *b, int8_t *q, float *s, float *) {
  s[0] = get_half(b);
  for (int j = 0; j < 32; ++j)
    q[j] = int8_t(b[2 + j]);
}

void quantize_q8_0(const float *x, uint8_t *b) {
  float amax = 0.0f;
  for (int j = 0; j < 32; ++j)
    amax = std::max(amax, std::fabs(x[j]));
  const float d = amax / 127;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  put_half(b, d, "d");
  for (int j = 0; j < 32; ++j)
    b[2 + j] = uint8_t(as_int8(std::roundf(x[j] * id)));
}

// --- iq4_nl: d, qs[16]; x = d * kvalues_iq4nl[q] --------------------------

void decode_iq4_nl(const uint8_t *b, int8_t *q, float *s, float *) {
  s[0] = get_half(b);
  nibbles(b + 2, q);
}

// ggml's best_index_int8 over the sorted codebook: the nearest entry, the
// upper one when x is (in float) as far from both.
int nearest_codebook_index(float x) {
  const int8_t *val = kIq4nlValues;
  if (x <= val[0])
    return 0;
  if (x >= val[15])
    return 15;
  int lo = 0, hi = 15;
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    if (x < val[mid])
      hi = mid;
    else
      lo = mid;
  }
  return x - val[hi - 1] < val[hi] - x ? hi - 1 : hi;
}

// ggml's quantize_iq4_nl without an importance matrix (what
// ggml_quantize_chunk and llama-quantize run): weights x^2, a first scale
// from the signed maximum, then 15 trial scales (itry - 127) / max, keeping
// the weighted least-squares scale with the largest sumqx^2 / sumq2; the
// codes are chosen again for the final float scale (before its fp16
// rounding).
void quantize_iq4_nl(const float *x, uint8_t *b) {
  float amax = 0.0f, max = 0.0f;
  for (int j = 0; j < 32; ++j)
    if (std::fabs(x[j]) > amax) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  float scale = 0.0f;
  if (!(amax < kGroupMaxEps)) {
    float w[32];
    for (int j = 0; j < 32; ++j)
      w[j] = x[j] * x[j];
    // The weighted sums of one trial inverse scale.
    auto sums = [&](float id, float &sumqx, float &sumq2) {
      sumqx = 0.0f;
      sumq2 = 0.0f;
      for (int j = 0; j < 32; ++j) {
        const float q = kIq4nlValues[nearest_codebook_index(id * x[j])];
        sumqx += w[j] * q * x[j];
        sumq2 += w[j] * q * q;
      }
    };
    const float d0 = -max / kIq4nlValues[0];
    float sumqx, sumq2;
    sums(1 / d0, sumqx, sumq2);
    float d = sumq2 > 0 ? sumqx / sumq2 : 0.0f;
    float best = d * sumqx;
    for (int itry = -7; itry <= 7; ++itry) {
      sums(float(itry + kIq4nlValues[0]) / max, sumqx, sumq2);
      if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
        d = sumqx / sumq2;
        best = d * sumqx;
      }
    }
    scale = d;
  }
  put_half(b, scale, "d");
  const float id = scale != 0.0f ? 1 / scale : 0.0f;
  int L[32];
  for (int j = 0; j < 32; ++j)
    L[j] = nearest_codebook_index(id * x[j]);
  for (int j = 0; j < 16; ++j)
    b[2 + j] = uint8_t(L[j] | L[j + 16] << 4);
}

// --- K-quant helpers (ggml-quants.c) -------------------------------------

// make_qx_quants with rmse_type 1 and no importance: signed codes in
// [-nmax, nmax) for the weights x^2, trying the scales (nmax + 0.1 is) / max
// for is = -9..9 and keeping the least-squares one with the largest
// sumlx^2 / suml2. L gets code + nmax; returns the scale.
float make_qx_quants(int n, int nmax, const float *x, int8_t *L) {
  const float max = signed_max(x, n);
  if (std::fabs(max) < kGroupMaxEps) {
    std::fill(L, L + n, int8_t(0));
    return 0.0f;
  }
  auto code = [&](float iscale, int i) {
    return std::max(-nmax, std::min(nmax - 1, nearest_int(iscale * x[i])));
  };
  float iscale = float(-nmax) / max;
  float sumlx = 0.0f, suml2 = 0.0f;
  for (int i = 0; i < n; ++i) {
    const int l = code(iscale, i);
    L[i] = int8_t(l + nmax);
    const float w = x[i] * x[i];
    sumlx += w * x[i] * float(l);
    suml2 += w * float(l) * float(l);
  }
  float scale = suml2 != 0.0f ? sumlx / suml2 : 0.0f;
  float best = scale * sumlx;
  for (int is = -9; is <= 9; ++is) {
    if (is == 0)
      continue;
    iscale = -(float(nmax) + 0.1f * float(is)) / max;
    sumlx = 0.0f;
    suml2 = 0.0f;
    for (int i = 0; i < n; ++i) {
      const int l = code(iscale, i);
      const float w = x[i] * x[i];
      sumlx += w * x[i] * float(l);
      suml2 += w * float(l) * float(l);
    }
    if (suml2 > 0 && sumlx * sumlx > best * suml2) {
      for (int i = 0; i < n; ++i)
        L[i] = int8_t(nmax + code(iscale, i));
      scale = sumlx / suml2;
      best = scale * sumlx;
    }
  }
  return scale;
}

// make_q3_quants with do_rmse: signed codes in [-nmax, nmax) for the
// weights x^2, then up to 5 sweeps that move single codes to the value the
// other codes' least-squares fit suggests while sumlx^2 / suml2 grows. L
// gets code + nmax (0 for an all-zero block); returns the scale.
float make_q3_quants(int n, int nmax, const float *x, int8_t *L) {
  const float max = signed_max(x, n);
  if (std::fabs(max) < kGroupMaxEps) {
    std::fill(L, L + n, int8_t(0));
    return 0.0f;
  }
  const float iscale = float(-nmax) / max;
  float sumlx = 0.0f, suml2 = 0.0f;
  for (int i = 0; i < n; ++i) {
    const int l =
        std::max(-nmax, std::min(nmax - 1, nearest_int(iscale * x[i])));
    L[i] = int8_t(l);
    const float w = x[i] * x[i];
    sumlx += w * x[i] * float(l);
    suml2 += w * float(l) * float(l);
  }
  for (int itry = 0; itry < 5; ++itry) {
    int changed = 0;
    for (int i = 0; i < n; ++i) {
      const float w = x[i] * x[i];
      float slx = sumlx - w * x[i] * float(L[i]);
      if (!(slx > 0))
        continue;
      float sl2 = suml2 - w * float(L[i]) * float(L[i]);
      const int l =
          std::max(-nmax, std::min(nmax - 1, nearest_int(x[i] * sl2 / slx)));
      if (l == L[i])
        continue;
      slx += w * x[i] * float(l);
      sl2 += w * float(l) * float(l);
      if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
        L[i] = int8_t(l);
        sumlx = slx;
        suml2 = sl2;
        ++changed;
      }
    }
    if (!changed)
      break;
  }
  for (int i = 0; i < n; ++i)
    L[i] = int8_t(L[i] + nmax);
  return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

// make_qkx2_quants: codes 0..nmax with a min (x ~= scale * L - the_min),
// from the range [min(0, min x), max x], then nstep + 1 trial scales
// (rmin + rdelta is + nmax) / (max - min), each refit by weighted least
// squares (scale and min, min kept <= 0), keeping the one of least weighted
// error (|diff| when use_mad, else diff^2). Returns the scale.
float make_qkx2_quants(int n, int nmax, const float *x, const float *weights,
                       uint8_t *L, float *the_min, float rmin, float rdelta,
                       int nstep, bool use_mad) {
  float min = x[0], max = x[0];
  float sum_w = weights[0];
  float sum_x = sum_w * x[0];
  for (int i = 1; i < n; ++i) {
    if (x[i] < min)
      min = x[i];
    if (x[i] > max)
      max = x[i];
    sum_w += weights[i];
    sum_x += weights[i] * x[i];
  }
  if (min > 0)
    min = 0;
  if (max == min) {
    std::fill(L, L + n, uint8_t(0));
    *the_min = -min;
    return 0.0f;
  }
  auto error = [&](float diff) {
    return use_mad ? std::fabs(diff) : diff * diff;
  };
  float iscale = float(nmax) / (max - min);
  float scale = 1 / iscale;
  float best_error = 0.0f;
  for (int i = 0; i < n; ++i) {
    const int l = nearest_int(iscale * (x[i] - min));
    L[i] = uint8_t(std::max(0, std::min(nmax, l)));
    best_error += weights[i] * error(scale * float(L[i]) + min - x[i]);
  }
  uint8_t Laux[32];
  for (int is = 0; is <= nstep; ++is) {
    iscale = (rmin + rdelta * float(is) + float(nmax)) / (max - min);
    float sum_l = 0.0f, sum_l2 = 0.0f, sum_xl = 0.0f;
    for (int i = 0; i < n; ++i) {
      const int l =
          std::max(0, std::min(nmax, nearest_int(iscale * (x[i] - min))));
      Laux[i] = uint8_t(l);
      const float w = weights[i];
      sum_l += w * float(l);
      sum_l2 += w * float(l) * float(l);
      sum_xl += w * float(l) * x[i];
    }
    const float D = sum_w * sum_l2 - sum_l * sum_l;
    if (!(D > 0))
      continue;
    float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
    float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
    if (this_min > 0) {
      this_min = 0;
      this_scale = sum_xl / sum_l2;
    }
    float cur_error = 0.0f;
    for (int i = 0; i < n; ++i)
      cur_error +=
          weights[i] * error(this_scale * float(Laux[i]) + this_min - x[i]);
    if (cur_error < best_error) {
      std::copy(Laux, Laux + n, L);
      best_error = cur_error;
      scale = this_scale;
      min = this_min;
    }
  }
  *the_min = -min;
  return scale;
}

// Packs 256 codes of 2 bits as q2_k / q3_k store them: value 128 h + 32 i
// + l (h < 2, i < 4, l < 32) is bits 2i..2i+1 of qs[32 h + l].
void pack_2bit(const uint8_t *L, uint8_t *qs) {
  for (int h = 0; h < 2; ++h)
    for (int l = 0; l < 32; ++l) {
      const uint8_t *v = L + 128 * h + l;
      qs[32 * h + l] = uint8_t(v[0] | v[32] << 2 | v[64] << 4 | v[96] << 6);
    }
}

// --- q2_k: scales[16], qs[64], d, dmin (84 bytes) ------------------------
// Sub-block j (16 values): sc = scales[j]; s = d * (sc & 15),
// o = -(dmin * (sc >> 4)); x = s * q + o with q the 2-bit code.

void sub_scales_q2_k(const uint8_t *b, int *sc, int *m) {
  for (int j = 0; j < 16; ++j) {
    sc[j] = b[j] & 0x0F;
    m[j] = b[j] >> 4;
  }
}

// The 2-bit codes of pack_2bit's order, a run of 32 at a time.
void unpack_2bit(const uint8_t *qs, int8_t *q) {
  for (int h = 0; h < 2; ++h)
    for (int i = 0; i < 4; ++i)
      for (int l = 0; l < 32; ++l)
        q[128 * h + 32 * i + l] = int8_t((qs[32 * h + l] >> (2 * i)) & 3);
}

void decode_q2_k(const uint8_t *b, int8_t *q, float *s, float *o) {
  const float d = get_half(b + 80), dmin = get_half(b + 82);
  int sc[16], m[16];
  sub_scales_q2_k(b, sc, m);
  for (int j = 0; j < 16; ++j) {
    s[j] = d * float(sc[j]);
    o[j] = -(dmin * float(m[j]));
  }
  unpack_2bit(b + 16, q);
}

void quantize_q2_k(const float *x, uint8_t *b) {
  uint8_t L[kSuper];
  float scales[16], mins[16];
  float max_scale = 0.0f, max_min = 0.0f;
  for (int j = 0; j < 16; ++j) {
    float weights[16];
    for (int l = 0; l < 16; ++l)
      weights[l] = std::fabs(x[16 * j + l]);
    scales[j] = make_qkx2_quants(16, 3, x + 16 * j, weights, L + 16 * j,
                                 &mins[j], -0.5f, 0.1f, 15, true);
    if (scales[j] > max_scale)
      max_scale = scales[j];
    if (mins[j] > max_min)
      max_min = mins[j];
  }
  uint8_t *sc = b;
  std::fill(sc, sc + 16, uint8_t(0));
  float d = 0.0f, dmin = 0.0f;
  if (max_scale > 0) {
    const float iscale = 15.0f / max_scale;
    for (int j = 0; j < 16; ++j)
      sc[j] = uint8_t(nearest_int(iscale * scales[j]));
    d = put_half(b + 80, max_scale / 15.0f, "d");
  } else {
    put_half(b + 80, 0.0f, "d");
  }
  if (max_min > 0) {
    const float iscale = 15.0f / max_min;
    for (int j = 0; j < 16; ++j)
      sc[j] = uint8_t(sc[j] | uint32_t(nearest_int(iscale * mins[j])) << 4);
    dmin = put_half(b + 82, max_min / 15.0f, "dmin");
  } else {
    put_half(b + 82, 0.0f, "dmin");
  }
  for (int j = 0; j < 16; ++j) {
    const float dl = d * float(sc[j] & 0x0F);
    if (dl == 0.0f)
      continue;
    const float ml = dmin * float(sc[j] >> 4);
    for (int i = 0; i < 16; ++i) {
      const int l = nearest_int((x[16 * j + i] + ml) / dl);
      L[16 * j + i] = uint8_t(std::max(0, std::min(3, l)));
    }
  }
  pack_2bit(L, b + 16);
}

// --- q3_k: hmask[32], qs[64], scales[12], d (110 bytes) ------------------
// Value v: 2 low bits from qs (as q2_k), the third bit is bit v / 32 of
// hmask[v % 32]; c = q - 4. Sub-block j: 6-bit sc_j = low 4 bits (scales[j]
// for j < 8, scales[j - 8] >> 4 after) | bits 2 (j / 4) of scales[8 + j % 4]
// << 4; s = d * (sc_j - 32).

int q3_k_scale(const uint8_t *scales, int j) {
  const int low = j < 8 ? scales[j] & 0x0F : scales[j - 8] >> 4;
  const int high = (scales[8 + j % 4] >> (2 * (j / 4))) & 3;
  return (low | high << 4) - 32;
}

void sub_scales_q3_k(const uint8_t *b, int *sc, int *) {
  for (int j = 0; j < 16; ++j)
    sc[j] = q3_k_scale(b + 96, j);
}

void decode_q3_k(const uint8_t *b, int8_t *q, float *s, float *) {
  const float d = get_half(b + 108);
  int sc[16];
  sub_scales_q3_k(b, sc, nullptr);
  for (int j = 0; j < 16; ++j)
    s[j] = d * float(sc[j]);
  unpack_2bit(b + 32, q);
  for (int v = 0; v < kSuper; ++v)
    q[v] = int8_t(q[v] | ((b[v % 32] >> (v / 32)) & 1) << 2);
}

void quantize_q3_k(const float *x, uint8_t *b) {
  int8_t L[kSuper];
  float scales[16];
  float max_scale = 0.0f, amax = 0.0f;
  for (int j = 0; j < 16; ++j) {
    scales[j] = make_q3_quants(16, 4, x + 16 * j, L + 16 * j);
    if (std::fabs(scales[j]) > amax) {
      amax = std::fabs(scales[j]);
      max_scale = scales[j];
    }
  }
  uint8_t *sc = b + 96;
  std::fill(sc, sc + 12, uint8_t(0));
  if (max_scale != 0.0f) {
    const float iscale = -32.0f / max_scale;
    for (int j = 0; j < 16; ++j) {
      int l = int8_t(nearest_int(iscale * scales[j])); // ggml's int8_t l
      l = std::max(-32, std::min(31, l)) + 32;
      if (j < 8)
        sc[j] = uint8_t(l & 0x0F);
      else
        sc[j - 8] = uint8_t(sc[j - 8] | (l & 0x0F) << 4);
      sc[8 + j % 4] = uint8_t(sc[8 + j % 4] | (l >> 4) << (2 * (j / 4)));
    }
    put_half(b + 108, 1 / iscale, "d");
  } else {
    put_half(b + 108, 0.0f, "d");
  }
  const float d = get_half(b + 108);
  for (int j = 0; j < 16; ++j) {
    const float dl = d * float(q3_k_scale(sc, j));
    if (dl == 0.0f)
      continue;
    for (int i = 0; i < 16; ++i) {
      const int l = nearest_int(x[16 * j + i] / dl);
      L[16 * j + i] = int8_t(std::max(-4, std::min(3, l)) + 4);
    }
  }
  uint8_t low[kSuper];
  std::fill(b, b + 32, uint8_t(0));
  for (int v = 0; v < kSuper; ++v) {
    int l = L[v];
    if (l > 3) {
      b[v % 32] = uint8_t(b[v % 32] | 1 << (v / 32));
      l -= 4;
    }
    low[v] = uint8_t(l);
  }
  pack_2bit(low, b + 32);
}

// --- q4_k, q5_k: d, dmin, scales[12], (q5_k: qh[32]), qs[128] ------------
// Sub-block j (32 values) has 6-bit sc_j and m_j (ggml's
// get_scale_min_k4): j < 4: scales[j] & 63, scales[j + 4] & 63; else
// scales[j + 4] & 15 | (scales[j - 4] >> 6) << 4 and scales[j + 4] >> 4 |
// (scales[j] >> 6) << 4. s = d * sc_j, o = -(dmin * m_j). Value 64 i + l
// (l < 32) is the low nibble of qs[32 i + l], value 64 i + 32 + l its high
// nibble; q5_k adds bit 2 i (resp. 2 i + 1) of qh[l] as the fifth bit.

void k4_scale_min(const uint8_t *scales, int j, int &sc, int &m) {
  if (j < 4) {
    sc = scales[j] & 63;
    m = scales[j + 4] & 63;
  } else {
    sc = (scales[j + 4] & 0x0F) | (scales[j - 4] >> 6) << 4;
    m = (scales[j + 4] >> 4) | (scales[j] >> 6) << 4;
  }
}

void sub_scales_k4(const uint8_t *b, int *sc, int *m) {
  for (int j = 0; j < 8; ++j)
    k4_scale_min(b + 4, j, sc[j], m[j]);
}

void decode_k4_scales(const uint8_t *b, float *s, float *o) {
  const float d = get_half(b), dmin = get_half(b + 2);
  int sc[8], m[8];
  sub_scales_k4(b, sc, m);
  for (int j = 0; j < 8; ++j) {
    s[j] = d * float(sc[j]);
    o[j] = -(dmin * float(m[j]));
  }
}

// The 256 nibbles of q4_k / q5_k's qs, in value order.
void k4_nibbles(const uint8_t *qs, int8_t *q) {
  for (int i = 0; i < 4; ++i)
    for (int l = 0; l < 32; ++l) {
      q[64 * i + l] = int8_t(qs[32 * i + l] & 0x0F);
      q[64 * i + 32 + l] = int8_t(qs[32 * i + l] >> 4);
    }
}

void decode_q4_k(const uint8_t *b, int8_t *q, float *s, float *o) {
  decode_k4_scales(b, s, o);
  k4_nibbles(b + 16, q);
}

void decode_q5_k(const uint8_t *b, int8_t *q, float *s, float *o) {
  decode_k4_scales(b, s, o);
  k4_nibbles(b + 48, q);
  for (int v = 0; v < kSuper; ++v)
    q[v] = int8_t(q[v] | ((b[16 + v % 32] >> (v / 32)) & 1) << 4);
}

// The common part of quantize_row_q4_K_ref and quantize_row_q5_K_ref:
// codes 0..nmax in L; writes d, dmin and scales[12].
void quantize_k4_scales(const float *x, int nmax, float rmin, int nstep,
                        uint8_t *b, uint8_t *L) {
  float scales[8], mins[8];
  float max_scale = 0.0f, max_min = 0.0f;
  for (int j = 0; j < 8; ++j) {
    const float *xj = x + 32 * j;
    float sum_x2 = 0.0f;
    for (int l = 0; l < 32; ++l)
      sum_x2 += xj[l] * xj[l];
    const float av_x = std::sqrt(sum_x2 / 32);
    float weights[32];
    for (int l = 0; l < 32; ++l)
      weights[l] = av_x + std::fabs(xj[l]);
    scales[j] = make_qkx2_quants(32, nmax, xj, weights, L + 32 * j, &mins[j],
                                 rmin, 0.1f, nstep, false);
    if (scales[j] > max_scale)
      max_scale = scales[j];
    if (mins[j] > max_min)
      max_min = mins[j];
  }
  const float inv_scale = max_scale > 0 ? 63.0f / max_scale : 0.0f;
  const float inv_min = max_min > 0 ? 63.0f / max_min : 0.0f;
  uint8_t *sc = b + 4;
  for (int j = 0; j < 8; ++j) {
    const uint8_t ls =
        std::min<uint8_t>(63, uint8_t(nearest_int(inv_scale * scales[j])));
    const uint8_t lm =
        std::min<uint8_t>(63, uint8_t(nearest_int(inv_min * mins[j])));
    if (j < 4) {
      sc[j] = ls;
      sc[j + 4] = lm;
    } else {
      sc[j + 4] = uint8_t((ls & 0x0F) | (lm & 0x0F) << 4);
      sc[j - 4] = uint8_t(sc[j - 4] | (ls >> 4) << 6);
      sc[j] = uint8_t(sc[j] | (lm >> 4) << 6);
    }
  }
  const float d = put_half(b, max_scale / 63.0f, "d");
  const float dmin = put_half(b + 2, max_min / 63.0f, "dmin");
  for (int j = 0; j < 8; ++j) {
    int scj, mj;
    k4_scale_min(sc, j, scj, mj);
    const float dl = d * float(scj);
    if (dl == 0.0f)
      continue;
    const float ml = dmin * float(mj);
    for (int i = 0; i < 32; ++i) {
      const int l = nearest_int((x[32 * j + i] + ml) / dl);
      L[32 * j + i] = uint8_t(std::max(0, std::min(nmax, l)));
    }
  }
}

void quantize_q4_k(const float *x, uint8_t *b) {
  uint8_t L[kSuper];
  quantize_k4_scales(x, 15, -1.0f, 20, b, L);
  for (int i = 0; i < 4; ++i)
    for (int l = 0; l < 32; ++l)
      b[16 + 32 * i + l] = uint8_t(L[64 * i + l] | L[64 * i + 32 + l] << 4);
}

void quantize_q5_k(const float *x, uint8_t *b) {
  uint8_t L[kSuper];
  quantize_k4_scales(x, 31, -0.5f, 15, b, L);
  uint8_t *qh = b + 16;
  std::fill(qh, qh + 32, uint8_t(0));
  for (int i = 0; i < 4; ++i)
    for (int l = 0; l < 32; ++l) {
      const int lo = L[64 * i + l], hi = L[64 * i + 32 + l];
      qh[l] = uint8_t(qh[l] | (lo >> 4) << (2 * i) | (hi >> 4) << (2 * i + 1));
      b[48 + 32 * i + l] = uint8_t((lo & 0x0F) | (hi & 0x0F) << 4);
    }
}

// --- q6_k: ql[128], qh[64], int8 scales[16], d (210 bytes) ---------------
// Value 128 h + 32 i + l (h < 2, i < 4, l < 32): low nibble from ql[64 h +
// l + 32 (i & 1)] (i < 2: low nibble, else high), bits 2i..2i+1 of qh[32 h
// + l] as bits 4..5; c = q - 32. Sub-block j: s = d * scales[j].

void sub_scales_q6_k(const uint8_t *b, int *sc, int *) {
  for (int j = 0; j < 16; ++j)
    sc[j] = int8_t(b[192 + j]);
}

void decode_q6_k(const uint8_t *b, int8_t *q, float *s, float *) {
  const float d = get_half(b + 208);
  int sc[16];
  sub_scales_q6_k(b, sc, nullptr);
  for (int j = 0; j < 16; ++j)
    s[j] = d * float(sc[j]);
  for (int h = 0; h < 2; ++h)
    for (int i = 0; i < 4; ++i)
      for (int l = 0; l < 32; ++l) {
        const uint8_t low = b[64 * h + l + 32 * (i & 1)];
        const int nib = i < 2 ? low & 0x0F : low >> 4;
        q[128 * h + 32 * i + l] =
            int8_t(nib | ((b[128 + 32 * h + l] >> (2 * i)) & 3) << 4);
      }
}

void quantize_q6_k(const float *x, uint8_t *b) {
  int8_t L[kSuper];
  float scales[16];
  float max_scale = 0.0f, max_abs_scale = 0.0f;
  for (int j = 0; j < 16; ++j) {
    scales[j] = make_qx_quants(16, 32, x + 16 * j, L + 16 * j);
    if (std::fabs(scales[j]) > max_abs_scale) {
      max_abs_scale = std::fabs(scales[j]);
      max_scale = scales[j];
    }
  }
  if (max_abs_scale < kGroupMaxEps) {
    std::fill(b, b + 210, uint8_t(0));
    return;
  }
  const float iscale = -128.0f / max_scale;
  const float d = put_half(b + 208, 1 / iscale, "d");
  for (int j = 0; j < 16; ++j)
    b[192 + j] = uint8_t(std::min(127, nearest_int(iscale * scales[j])));
  for (int j = 0; j < 16; ++j) {
    const float dl = d * float(int8_t(b[192 + j]));
    if (dl == 0.0f)
      continue;
    for (int i = 0; i < 16; ++i) {
      const int l = nearest_int(x[16 * j + i] / dl);
      L[16 * j + i] = int8_t(std::max(-32, std::min(31, l)) + 32);
    }
  }
  for (int h = 0; h < 2; ++h)
    for (int l = 0; l < 32; ++l) {
      const int8_t *v = L + 128 * h + l;
      b[64 * h + l] = uint8_t((v[0] & 0x0F) | (v[64] & 0x0F) << 4);
      b[64 * h + l + 32] = uint8_t((v[32] & 0x0F) | (v[96] & 0x0F) << 4);
      b[128 + 32 * h + l] = uint8_t((v[0] >> 4) | (v[32] >> 4) << 2 |
                                    (v[64] >> 4) << 4 | (v[96] >> 4) << 6);
    }
}

// --- the table -----------------------------------------------------------

struct Row {
  GgmlBlockType type;
  BlockCodec codec;
};

// name, ggml id, weights and bytes per block, code bits, weights per scale,
// min, sub-scale bits, code offset, codebook, offsets of d and of m / dmin.
const Row kRows[] = {
    {{FormatKind::Q4_0, "q4_0", 2, 32, 18, 4, 32, false, 0, 8, nullptr, 0, -1},
     {decode_q4_0, quantize_q4_0}},
    {{FormatKind::Q4_1, "q4_1", 3, 32, 20, 4, 32, true, 0, 0, nullptr, 0, 2},
     {decode_q4_1, quantize_q4_1}},
    {{FormatKind::Q5_0, "q5_0", 6, 32, 22, 5, 32, false, 0, 16, nullptr, 0, -1},
     {decode_q5_0, quantize_q5_0}},
    {{FormatKind::Q5_1, "q5_1", 7, 32, 24, 5, 32, true, 0, 0, nullptr, 0, 2},
     {decode_q5_1, quantize_q5_1}},
    {{FormatKind::Q8_0, "q8_0", 8, 32, 34, 8, 32, false, 0, 0, nullptr, 0, -1},
     {decode_q8_0, quantize_q8_0}},
    {{FormatKind::Q2_K, "q2_k", 10, 256, 84, 2, 16, true, 4, 0, nullptr, 80,
      82},
     {decode_q2_k, quantize_q2_k, sub_scales_q2_k}},
    {{FormatKind::Q3_K, "q3_k", 11, 256, 110, 3, 16, false, 6, 4, nullptr, 108,
      -1},
     {decode_q3_k, quantize_q3_k, sub_scales_q3_k}},
    {{FormatKind::Q4_K, "q4_k", 12, 256, 144, 4, 32, true, 6, 0, nullptr, 0, 2},
     {decode_q4_k, quantize_q4_k, sub_scales_k4}},
    {{FormatKind::Q5_K, "q5_k", 13, 256, 176, 5, 32, true, 6, 0, nullptr, 0, 2},
     {decode_q5_k, quantize_q5_k, sub_scales_k4}},
    {{FormatKind::Q6_K, "q6_k", 14, 256, 210, 6, 16, false, 8, 32, nullptr, 208,
      -1},
     {decode_q6_k, quantize_q6_k, sub_scales_q6_k}},
    {{FormatKind::IQ4_NL, "iq4_nl", 20, 32, 18, 4, 32, false, 0, 0,
      kIq4nlValues, 0, -1},
     {decode_iq4_nl, quantize_iq4_nl}},
};

constexpr int kRowCount = int(sizeof(kRows) / sizeof(kRows[0]));

const Row *row_of(FormatKind kind) {
  for (const Row &r : kRows)
    if (r.type.kind == kind)
      return &r;
  return nullptr;
}

std::string format_float(double x) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", x);
  return text;
}

std::string where(const GgmlBlockType &type, int64_t m, int64_t b) {
  return std::string(type.name) + " row " + std::to_string(m) + " block " +
         std::to_string(b);
}

} // namespace

const BlockCodec &block_codec(FormatKind kind) {
  const Row *r = row_of(kind);
  if (!r)
    throw Error("internal: format kind " + std::to_string(int(kind)) +
                " is not a ggml block type");
  return r->codec;
}

void quantize_block_row(const GgmlBlockType &type, const float *x, int64_t K,
                        int64_t m, uint8_t *row) {
  const BlockCodec &codec = block_codec(type.kind);
  for (int64_t b = 0; b < K / type.block; ++b) {
    try {
      codec.quantize(x + b * type.block, row + b * type.block_bytes);
    } catch (const Fp16Overflow &e) {
      const std::string scale = std::string(e.field) == "m"
                                    ? "min m"
                                    : "scale " + std::string(e.field);
      throw Error(where(type, m, b) + ": " + scale + " = " +
                  format_float(e.value) +
                  " overflows fp16 (weights too large for " + type.name + ")");
    }
  }
}

void decode_block_row_codes(const GgmlBlockType &type, const uint8_t *row,
                            int64_t K, int8_t *q) {
  const BlockCodec &codec = block_codec(type.kind);
  float s[16], o[16];
  for (int64_t b = 0; b < K / type.block; ++b)
    codec.decode(row + b * type.block_bytes, q + b * type.block, s, o);
}

void dequantize_block_row(const GgmlBlockType &type, const uint8_t *row,
                          int64_t K, float *out) {
  const BlockCodec &codec = block_codec(type.kind);
  int8_t q[256];
  float s[16], o[16];
  for (int64_t b = 0; b < K / type.block; ++b, out += type.block) {
    codec.decode(row + b * type.block_bytes, q, s, o);
    for (int k = 0; k < type.block; ++k) {
      const float c = type.codebook ? float(type.codebook[uint8_t(q[k])])
                                    : float(q[k] - type.code_offset);
      const int j = k / type.scale_block;
      // Without a min s * c alone: adding o = 0 would turn a -0 into +0.
      out[k] = type.has_min ? s[j] * c + o[j] : s[j] * c;
    }
  }
}

void check_block_row(const GgmlBlockType &type, const uint8_t *row, int64_t K,
                     int64_t m) {
  for (int64_t b = 0; b < K / type.block; ++b) {
    const uint8_t *block = row + b * type.block_bytes;
    if ((load_le<uint16_t>(block + type.d_offset) & 0x7C00) == 0x7C00)
      throw Error(where(type, m, b) + ": scale d is not finite");
    if (type.min_offset >= 0 &&
        (load_le<uint16_t>(block + type.min_offset) & 0x7C00) == 0x7C00)
      throw Error(where(type, m, b) + ": " +
                  (type.sub_scale_bits ? "scale dmin" : "min m") +
                  " is not finite");
  }
}

// q4_0.h: the q4_0 helpers of the kernels' packers, through the table.
void decode_q4_0_row(const uint8_t *row, int64_t K, int8_t *q) {
  decode_block_row_codes(*ggml_block_type(FormatKind::Q4_0), row, K, q);
}

uint16_t q4_0_block_scale(const uint8_t *row, int64_t b) {
  return load_le<uint16_t>(row + b * 18);
}

} // namespace detail

const GgmlBlockType *ggml_block_types(int *count) {
  static const GgmlBlockType *types = [] {
    static GgmlBlockType all[detail::kRowCount];
    for (int i = 0; i < detail::kRowCount; ++i)
      all[i] = detail::kRows[i].type;
    return all;
  }();
  *count = detail::kRowCount;
  return types;
}

const GgmlBlockType *ggml_block_type(FormatKind kind) {
  const detail::Row *r = detail::row_of(kind);
  return r ? &r->type : nullptr;
}

const GgmlBlockType *ggml_block_type_by_id(uint32_t id) {
  for (const detail::Row &r : detail::kRows)
    if (r.type.ggml_type == id)
      return &r.type;
  return nullptr;
}

void row_block_params(const PackedWeights &W, int64_t m, int8_t *c, float *s,
                      float *o) {
  const GgmlBlockType *type = ggml_block_type(W.format.kind);
  if (!type)
    throw Error("row_block_params: " + W.format.name() +
                " is not a ggml block format");
  detail::check_layout(W);
  if (m < 0 || m >= W.M)
    throw Error("row " + std::to_string(m) + " is out of range for " +
                std::to_string(W.M) + " rows");
  const detail::BlockCodec &codec = detail::block_codec(type->kind);
  const uint8_t *row = W.codes.data() + m * W.row_bytes();
  const int64_t per_block = type->block / type->scale_block;
  for (int64_t b = 0; b < W.K / type->block; ++b) {
    int8_t *cb = c + b * type->block;
    float *sb = s + b * per_block, *ob = o + b * per_block;
    std::fill(ob, ob + per_block, 0.0f);
    codec.decode(row + b * type->block_bytes, cb, sb, ob);
    for (int k = 0; k < type->block; ++k)
      cb[k] = type->codebook ? type->codebook[uint8_t(cb[k])]
                             : int8_t(cb[k] - type->code_offset);
  }
}

} // namespace lowbit
