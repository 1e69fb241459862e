//===- run_kernel.h - calling a generated kernel on a thread pool -*- C++ -*-=//
#ifndef LOWBIT_RUN_KERNEL_H
#define LOWBIT_RUN_KERNEL_H

#include "lowbit/kernel_abi.h"
#include "lowbit/thread_pool.h"
#include "lowbit/upconvert.h"

#include <cstdint>

namespace lowbit {

/// Computes y [A.N][M] = kernel(W, A): the 16-row tiles [0, W.num_tiles())
/// are split over the pool with split_tiles and each thread calls `kernel`
/// once on its chunk. M must equal W.M (the M the kernel was generated for)
/// and A must have W's K and format block; throws Error otherwise.
void run_kernel(lowbit_kernel_fn kernel, const UpconvertWeights &W,
                const PreparedActivations &A, float *y, int64_t M,
                ThreadPool &pool);

} // namespace lowbit

#endif // LOWBIT_RUN_KERNEL_H
