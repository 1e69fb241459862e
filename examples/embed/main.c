/* Embedding example: runs every linear layer of the model a bundle was
 * compiled for (synthetic weights) through the C API, for decode (N = 1) and
 * prefill (N = 16), and checks each product against the reference:
 * bit-exact for the ternary formats (i2s, tl1, tl2), within a relative
 * bound for the others. Exits 1 on any mismatch or error.
 *
 *   lowbit_embed [threads]     (default 2)
 */
#include "lowbit_kernels.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint32_t rng = 12345u;

/* Uniform in [-scale, scale): a 32-bit LCG, the same on every platform. */
static float next_value(float scale) {
  rng = rng * 1664525u + 1013904223u;
  return ((float)(rng >> 8) / 16777216.0f * 2.0f - 1.0f) * scale;
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int is_ternary(const char *format) {
  return !strcmp(format, "i2s") || !strcmp(format, "tl1") ||
         !strcmp(format, "tl2");
}

#define CHECK(call)                                                           \
  do {                                                                        \
    if ((call) != LOWBIT_OK) {                                                \
      fprintf(stderr, "lowbit_embed: %s: %s\n", #call, lowbit_last_error()); \
      return 1;                                                               \
    }                                                                         \
  } while (0)

/* Compares Y to the reference R ([N][M]); returns the number of mismatches. */
static long compare(const float *Y, const float *R, int64_t count, int exact,
                    double *worst) {
  double max_ref = 0;
  long bad = 0;
  for (int64_t i = 0; i < count; ++i)
    if (fabs(R[i]) > max_ref)
      max_ref = fabs(R[i]);
  *worst = 0;
  for (int64_t i = 0; i < count; ++i) {
    double err = fabs((double)Y[i] - (double)R[i]);
    if (err > *worst)
      *worst = err;
    if (exact ? memcmp(&Y[i], &R[i], sizeof(float)) != 0
              : !(err <= 1e-3 * max_ref + 1e-6))
      ++bad;
  }
  return bad;
}

int main(int argc, char **argv) {
  const int threads = argc > 1 ? atoi(argv[1]) : 2;
  const int64_t batches[2] = {1, 16};
  lowbit_context_t *ctx = NULL;
  long failures = 0;

  CHECK(lowbit_bundle_register());
  CHECK(lowbit_context_create(threads, &ctx));
  printf("bundle: %s, compiled for %s, running %s kernels, %d threads\n",
         LOWBIT_BUNDLE_FORMAT, LOWBIT_BUNDLE_TARGET,
         lowbit_bundle_active_target(), threads);

  for (size_t s = 0; s < lowbit_bundle_num_shapes; ++s) {
    const lowbit_bundle_shape_t *shape = &lowbit_bundle_shapes[s];
    const int64_t M = shape->M, K = shape->K;
    const char *format = shape->format; /* a bundle may hold several */
    const int exact = is_ternary(format);
    float *W = malloc(sizeof(float) * (size_t)(M * K));
    float *X = malloc(sizeof(float) * (size_t)(16 * K));
    float *Y = malloc(sizeof(float) * (size_t)(16 * M));
    float *R = malloc(sizeof(float) * (size_t)(16 * M));
    lowbit_weights_t *w = NULL;
    if (!W || !X || !Y || !R) {
      fprintf(stderr, "lowbit_embed: out of memory\n");
      return 1;
    }
    for (int64_t i = 0; i < M * K; ++i)
      W[i] = next_value(0.05f);
    for (int64_t i = 0; i < 16 * K; ++i)
      X[i] = next_value(2.0f);
    CHECK(lowbit_pack(format, W, M, K, &w));
    if (!strcmp(lowbit_weights_target(w, 1), "reference") && !exact) {
      /* only tl1/tl2 on generic have no kernel; anything else is a bug */
      fprintf(stderr, "lowbit_embed: %s %lldx%lld has no kernel\n", format,
              (long long)M, (long long)K);
      ++failures;
    }
    for (int b = 0; b < 2; ++b) {
      const int64_t N = batches[b];
      double worst, t0, t1, best;
      long bad;
      memset(Y, 0xff, sizeof(float) * (size_t)(N * M)); /* NaN */
      CHECK(lowbit_mpgemm(w, X, N, Y, ctx)); /* warm up */
      best = 1e30;
      for (int rep = 0; rep < 5; ++rep) { /* best of 5 (warm caches) */
        t0 = now_ms();
        CHECK(lowbit_mpgemm(w, X, N, Y, ctx));
        t1 = now_ms();
        if (t1 - t0 < best)
          best = t1 - t0;
      }
      CHECK(lowbit_reference_mpgemm(w, X, N, R));
      bad = compare(Y, R, N * M, exact, &worst);
      printf("%-12s M=%-6lld K=%-6lld N=%-3lld %-15s %8.3f ms  max|err| "
             "%.3g  %s\n",
             shape->name, (long long)M, (long long)K, (long long)N,
             lowbit_weights_target(w, N), best, worst,
             bad ? "MISMATCH" : (exact ? "bit-exact" : "ok"));
      if (bad)
        fprintf(stderr, "lowbit_embed: %s N=%lld: %ld of %lld outputs differ\n",
                shape->name, (long long)N, bad, (long long)(N * M));
      failures += bad;
    }
    lowbit_free_weights(w);
    free(W);
    free(X);
    free(Y);
    free(R);
  }
  lowbit_context_free(ctx);
  printf("%s\n", failures ? "FAILED" : "all layers match the reference");
  return failures ? 1 : 0;
}
