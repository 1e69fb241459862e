//===- reference.h - the scalar reference mpGEMM ----------------*- C++ -*-===//
//
// The oracle every kernel is tested against. Y[n][m] = sum_k X[n][k] W[m][k]
// computed on quantized activations:
//   ternary: acc = sum_k Xq[n][k] * q[m][k] as exact int32,
//            Y = (float)acc * s_w / s_x[n]
//   w<b>g<G>: per activation block b of 32 (inside weight group g):
//            acc_b = sum_{k in b} Xq[n][k] * (q[m][k] - z[m][g]) as int32,
//            Y = sum_b (float)acc_b * s[m][g] / s_x[n][b], summed in block
//            order in float.
//   ggml block formats (q4_0 ... iq4_nl, format.h's GgmlBlockType): per
//            activation block b of 32 and each scale block j inside it (one
//            of 32 or two of 16, in order), with c, s_j, o_j of
//            row_block_params: acc_j = sum_{k in j} Xq[n][k] * c[m][k] and
//            xsum_j = sum_{k in j} Xq[n][k] as int32,
//            t_b = sum_j (s_j * (float)acc_j + o_j * (float)xsum_j) (the o
//            term only where the type has a min), Y = sum_b t_b / s_x[n][b]
//            in block order in float (q4_0: c = q - 8, s = d: the same
//            values as before it joined the table).
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
