//===- scalar_kernel.h - a scalar kernel of the kernel ABI, for tests -*- C++
//-*-//
//
// A test oracle, not a kernel strategy: a straight scalar transcription of
// the MATH section of lowbit/kernel_abi.h that reads the upconvert layout
// one code at a time. Generated kernels have M, K and the format compiled
// in; this one reads them from a configuration set by scalar_kernel().
//
//===----------------------------------------------------------------------===//
#ifndef LOWBIT_TESTS_SCALAR_KERNEL_H
#define LOWBIT_TESTS_SCALAR_KERNEL_H

#include "lowbit/format.h"
#include "lowbit/kernel_abi.h"

#include <cstdint>

namespace lowbit::test {

/// The code of W[m][k] read from upconvert-layout `codes` (kernel_abi.h),
/// for any m < Mp, k < Kp.
unsigned layout_code(const uint8_t *codes, int bits, int64_t Kp, int64_t m,
                     int64_t k);

/// Returns the oracle kernel configured for (format, M, K). The floats are
/// combined in the reference's order (block by block, y = y + acc * s / s_x),
/// so its output equals reference_mpgemm bit for bit. Configuring is not
/// thread-safe; running the returned kernel from many threads is.
lowbit_kernel_fn scalar_kernel(const Format &format, int64_t M, int64_t K);

} // namespace lowbit::test

#endif // LOWBIT_TESTS_SCALAR_KERNEL_H
