//===- reference.h - the scalar reference mpGEMM ----------------*- C++ -*-===//
//
// The oracle every kernel is tested against. Y[n][m] = sum_k X[n][k] W[m][k]
// computed on quantized activations:
//   ternary: acc = sum_k Xq[n][k] * q[m][k] as exact int32,
//            Y = (float)acc * s_w / s_x[n]
//   others:  per activation block b of 32 (inside weight group g):
//            acc_b = sum_{k in b} Xq[n][k] * (q[m][k] - z[m][g]) as int32,
//            Y = sum_b (float)acc_b * s[m][g] / s_x[n][b], summed in block
//            order in float (q4_0: z = 8, s = d of the block).
//
//===----------------------------------------------------------------------===//
#ifndef LOWBIT_REFERENCE_H
#define LOWBIT_REFERENCE_H

#include "lowbit/activation.h"
#include "lowbit/format.h"

namespace lowbit {

/// Largest K for which the ternary int32 accumulation cannot overflow
/// (|Xq| <= 128, |q| <= 1): (2^31 - 1) / 128. Larger K is rejected.
int64_t max_reduction_length();

/// Y [A.N][W.M] from quantized activations (A.K must equal W.K and A.block
/// must be activation_block(W.format, W.K)); throws Error otherwise.
void reference_mpgemm(const PackedWeights &W, const QuantizedActivations &A,
                      float *Y);

/// Rows [m_begin, m_end) of the same product, for W that validate()
/// accepted before (as quantize and the GGUF import guarantee): the rows of
/// Y outside the range are not written. Disjoint ranges may run on
/// different threads.
void reference_mpgemm_rows(const PackedWeights &W,
                           const QuantizedActivations &A, float *Y,
                           int64_t m_begin, int64_t m_end);

/// Quantizes X [N][K] as the format requires, then reference_mpgemm.
void reference_mpgemm(const PackedWeights &W, const float *X, int64_t N,
                      float *Y);

} // namespace lowbit

#endif // LOWBIT_REFERENCE_H
