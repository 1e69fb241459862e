/*===- lowbit.h - the C API of the lowbit runtime and its bundles ---------===*\
|*                                                                          *|
|* Plain C (C99). Every function returns a lowbit_status_t (or a value that  *|
|* cannot fail); on error, lowbit_last_error() gives a one-line message for  *|
|* the calling thread. No C++ exception crosses this boundary.              *|
|*                                                                          *|
\*===----------------------------------------------------------------------===*/
/*
 * USE
 *   lowbit_bundle_register();                 // bundle: install its kernels
 *   lowbit_context_t *ctx;  lowbit_context_create(4, &ctx);
 *   lowbit_weights_t *w;    lowbit_pack("i2s", W, M, K, &w);
 *   lowbit_mpgemm(w, X, N, Y, ctx);           // Y [N][M] = X [N][K] * W^T
 *   lowbit_free_weights(w); lowbit_context_free(ctx);
 *
 * KERNELS
 *   The runtime holds no generated code. A compiled bundle (`lowbit compile`)
 *   registers a table of kernels, one per (format, M, K), chosen for the CPU
 *   it runs on, plus an any-shape kernel per format, with
 *   lowbit_register_kernels(). lowbit_pack() looks the shape up in that
 *   table when it packs: weights of a registered shape are repacked into the
 *   kernel's layout and run by the kernel, any other shape by the format's
 *   any-shape kernel, and only a format without one runs the scalar
 *   reference (exact, slow).
 *
 * THREADS
 *   Functions may be called from any thread; lowbit_mpgemm() calls on one
 *   context must not overlap (use one context per engine thread).
 */
#ifndef LOWBIT_LOWBIT_H
#define LOWBIT_LOWBIT_H

#include "lowbit/kernel_abi.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum lowbit_status_t {
  LOWBIT_OK = 0,
  LOWBIT_ERROR_INVALID_ARGUMENT = 1, /* bad format, shape, null pointer */
  LOWBIT_ERROR_OUT_OF_MEMORY = 2,
  LOWBIT_ERROR_INTERNAL = 3 /* anything else (see lowbit_last_error) */
} lowbit_status_t;

/* Packed weights of one M x K matrix (opaque). */
typedef struct lowbit_weights_t lowbit_weights_t;
/* A thread pool to run kernels on (opaque). */
typedef struct lowbit_context_t lowbit_context_t;

/* One generated kernel: y = x * W^T for weights of `format` (e.g. "i2s"),
 * shape M x K, in the layout its descriptor `layout` names (kernel_abi.h,
 * LAYOUT DESCRIPTOR: vnni4, lut_abi.h's tl1/tl2 in a lane order, or
 * bitserial_abi.h's bit planes); lowbit_pack() packs by it alone. A shape
 * may have several entries, one per N class: lowbit_mpgemm() runs the entry
 * with the largest min_n <= N (e.g. 1: the GEMV config, 2: the register-
 * blocked GEMM config). Every kernel computes any N correctly.
 * An entry with M = K = 0, fn = NULL and any_fn set is an any-shape kernel
 * of its format (kernel_abi.h, ANY-SHAPE KERNEL): lowbit_pack() uses it
 * for every shape of that format that has no entry of its own (and whose K
 * it accepts), instead of the scalar reference. */
typedef struct lowbit_kernel_entry_t {
  const char *format;
  int64_t M, K;
  int64_t min_n; /* >= 1 */
  const char *target; /* e.g. "x86-avx2", "generic" */
  const char *config; /* the compiler's config attribute (diagnostics) */
  lowbit_layout_t layout; /* the packed layout the kernel reads */
  lowbit_kernel_fn fn;         /* NULL for an any-shape entry */
  lowbit_any_kernel_fn any_fn; /* any-shape entries only (M = K = 0) */
} lowbit_kernel_entry_t;

/* The message of the last failed call on this thread ("" if none). */
const char *lowbit_last_error(void);

/* Replaces the registered kernel table with a copy of entries[0, count)
 * (the strings must stay valid: a bundle passes string literals). Weights
 * packed before keep the kernel they were packed for. */
lowbit_status_t lowbit_register_kernels(const lowbit_kernel_entry_t *entries,
                                        size_t count);

/* Quantizes the fp32 matrix W [M][K] (row-major) into `format` ("i2s",
 * "tl1", "tl2", "w<b>g<G>", or a ggml block type: "q4_0", "q4_1",
 * "q5_0", "q5_1", "q8_0", "q2_k" ... "q6_k", "iq4_nl") and packs it for
 * the registered kernel of (format, M, K), or for the reference when there
 * is none. */
lowbit_status_t lowbit_pack(const char *format, const float *W, int64_t M,
                            int64_t K, lowbit_weights_t **out);
void lowbit_free_weights(lowbit_weights_t *weights);

/* The kernel lowbit_mpgemm() runs for N activation rows: its target and
 * config, or "reference" for both. */
const char *lowbit_weights_target(const lowbit_weights_t *weights, int64_t N);
const char *lowbit_weights_config(const lowbit_weights_t *weights, int64_t N);

/* A pool of `threads` threads (the caller counts as one; >= 1). Threads are
 * not pinned. */
lowbit_status_t lowbit_context_create(int threads, lowbit_context_t **out);
void lowbit_context_free(lowbit_context_t *context);

/* Y [N][M] = X [N][K] * W^T (activations quantized per row as the format
 * defines). context may be NULL: then the calling thread does all the work. */
lowbit_status_t lowbit_mpgemm(const lowbit_weights_t *weights, const float *X,
                              int64_t N, float *Y, lowbit_context_t *context);

/* ---- Engine-facing API: pre-quantized weights, shared activations, the
 * engine's own threads. ---- */

/* Packs an M x K matrix given in the bytes of a GGUF tensor type ("f32",
 * "f16", "bf16", "tq1_0", "tq2_0", "i2_s" or a block type "q4_0" ...
 * "iq4_nl"; `bytes` long, rows of K values as ggml stores them) into
 * `format`, without loss where the values allow it (lowbit/gguf.h,
 * import_weights): ternary types into i2s/tl1/tl2 with their one scale, a
 * block type into its own format as it is, floats quantized (a
 * float matrix of values {-a, 0, a} keeps scale a). Anything lossy or
 * impossible is an error. */
lowbit_status_t lowbit_pack_gguf(const char *format, const char *gguf_type,
                                 const void *data, size_t bytes, int64_t M,
                                 int64_t K, lowbit_weights_t **out);

/* The packed bytes a product with these weights streams (what a decode
 * step reads). */
int64_t lowbit_weights_bytes(const lowbit_weights_t *weights);

/* Frees the canonical copy that weights packed for a kernel keep beside
 * the kernel's layout (about as large): an engine that holds many weights
 * calls it once each is packed. The products are unchanged;
 * lowbit_reference_mpgemm on these weights is an error afterwards. Weights
 * that the reference runs (no kernel) keep their one copy. */
lowbit_status_t lowbit_weights_compact(lowbit_weights_t *weights);

/* Quantized activations (opaque), reusable across calls: quantize a batch
 * once, multiply it with every weight of the same format class and K
 * (Q/K/V, gate/up). */
typedef struct lowbit_activations_t lowbit_activations_t;
lowbit_status_t lowbit_activations_create(lowbit_activations_t **out);
void lowbit_activations_free(lowbit_activations_t *activations);

/* Quantizes X [N][K] as the format of `like` defines (ternary formats: one
 * int8 scale per row; others: per block of 32) into `activations` (its
 * buffers are reused). K is like's K. Rows are split over the context's
 * threads when N is large enough to gain from it; context may be NULL. */
lowbit_status_t lowbit_quantize_activations(const lowbit_weights_t *like,
                                            const float *X, int64_t N,
                                            lowbit_activations_t *activations,
                                            lowbit_context_t *context);

/* Y [N][M] = X * W^T with activations quantized by
 * lowbit_quantize_activations for weights of the same format class and K
 * (else an error). context may be NULL (the calling thread does it all). */
lowbit_status_t lowbit_mpgemm_quantized(const lowbit_weights_t *weights,
                                        const lowbit_activations_t *activations,
                                        float *Y, lowbit_context_t *context);

/* Running a product on the engine's own threads: the rows of W are
 * lowbit_weights_tiles() tiles; each thread calls lowbit_mpgemm_tiles on a
 * disjoint range [tile_begin, tile_end) (together covering all tiles) and
 * writes only rows of those tiles of Y. Safe to call concurrently on one
 * weights and activations object. */
int64_t lowbit_weights_tiles(const lowbit_weights_t *weights);
lowbit_status_t lowbit_mpgemm_tiles(const lowbit_weights_t *weights,
                                    const lowbit_activations_t *activations,
                                    float *Y, int64_t tile_begin,
                                    int64_t tile_end);

/* Threads of a context (>= 1). */
int lowbit_context_threads(const lowbit_context_t *context);

/* Runs fn(user, begin, end, thread) on the context's threads over [0, n),
 * split in contiguous chunks, one per thread (thread 0 is the caller);
 * returns when all are done. For the engine's own non-GEMM work on the same
 * threads. fn must not call back into the context. */
typedef void (*lowbit_range_fn)(void *user, int64_t begin, int64_t end,
                                int thread);
lowbit_status_t lowbit_parallel_for(lowbit_context_t *context, int64_t n,
                                    lowbit_range_fn fn, void *user);

/* Runs fn(user, i, i + 1, thread) once for every i in [0, n), each i taken
 * by the next thread that is free, in increasing order; a thread that has
 * not started by the time the caller finds nothing left takes no part and
 * is not waited for, so a thread that another process keeps off its core
 * does not hold the caller up unless it took an item. fn must not call
 * back into the context. */
lowbit_status_t lowbit_parallel_claim(lowbit_context_t *context, int64_t n,
                                      lowbit_range_fn fn, void *user);

/* The same product by the scalar reference: the oracle of every kernel
 * (bit-exact for i2s/tl1/tl2, within the documented bound for the others). */
lowbit_status_t lowbit_reference_mpgemm(const lowbit_weights_t *weights,
                                        const float *X, int64_t N, float *Y);

#ifdef __cplusplus
}
#endif

#endif /* LOWBIT_LOWBIT_H */
