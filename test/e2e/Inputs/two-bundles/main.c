/* Two bundles in one program: `first` and `second` (lowbit compile --name),
 * their kernel tables concatenated and registered once; every shape of each
 * is packed, run for N = 1 and 3 and compared with the reference (bit-exact
 * for ternary formats, within 1e-3 of the largest output otherwise). */
#include "first_kernels.h"
#include "second_kernels.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t rng = 777u;
static float next_value(float scale) {
  rng = rng * 1664525u + 1013904223u;
  return ((float)(rng >> 8) / 16777216.0f * 2.0f - 1.0f) * scale;
}

static int run_shape(const char *bundle, const char *name, const char *format,
                     int64_t M, int64_t K, lowbit_context_t *ctx) {
  const int exact = !strcmp(format, "i2s") || !strcmp(format, "tl1") ||
                    !strcmp(format, "tl2");
  float *W = malloc(sizeof(float) * (size_t)(M * K));
  float *X = malloc(sizeof(float) * (size_t)(3 * K));
  float *Y = malloc(sizeof(float) * (size_t)(3 * M));
  float *R = malloc(sizeof(float) * (size_t)(3 * M));
  lowbit_weights_t *w = NULL;
  int bad = 0;
  for (int64_t i = 0; i < M * K; ++i)
    W[i] = next_value(0.05f);
  for (int64_t i = 0; i < 3 * K; ++i)
    X[i] = next_value(2.0f);
  if (lowbit_pack(format, W, M, K, &w) != LOWBIT_OK ||
      lowbit_mpgemm(w, X, 3, Y, ctx) != LOWBIT_OK ||
      lowbit_reference_mpgemm(w, X, 3, R) != LOWBIT_OK) {
    fprintf(stderr, "two_bundles: %s\n", lowbit_last_error());
    return 1;
  }
  double max_ref = 0;
  for (int64_t i = 0; i < 3 * M; ++i)
    max_ref = fabs(R[i]) > max_ref ? fabs(R[i]) : max_ref;
  for (int64_t i = 0; i < 3 * M; ++i)
    if (exact ? memcmp(&Y[i], &R[i], sizeof(float)) != 0
              : !(fabs((double)Y[i] - R[i]) <= 1e-3 * max_ref + 1e-6))
      ++bad;
  printf("%s %s %s %lldx%lld: %s %s\n", bundle, name, format, (long long)M,
         (long long)K, lowbit_weights_target(w, 1),
         bad ? "MISMATCH" : "matches the reference");
  lowbit_free_weights(w);
  free(W);
  free(X);
  free(Y);
  free(R);
  return bad != 0;
}

int main(void) {
  size_t n1 = 0, n2 = 0;
  const lowbit_kernel_entry_t *t1 = first_bundle_select_kernels(&n1);
  const lowbit_kernel_entry_t *t2 = second_bundle_select_kernels(&n2);
  lowbit_kernel_entry_t *all = malloc(sizeof(*all) * (n1 + n2 + 1));
  lowbit_context_t *ctx = NULL;
  int failures = 0;
  memcpy(all, t1, sizeof(*all) * n1);
  memcpy(all + n1, t2, sizeof(*all) * n2);
  if (lowbit_register_kernels(all, n1 + n2) != LOWBIT_OK ||
      lowbit_context_create(2, &ctx) != LOWBIT_OK) {
    fprintf(stderr, "two_bundles: %s\n", lowbit_last_error());
    return 1;
  }
  printf("first: %s (%zu kernels, %s), second: %s (%zu kernels, %s)\n",
         FIRST_BUNDLE_FORMAT, n1, first_bundle_active_target(),
         SECOND_BUNDLE_FORMAT, n2, second_bundle_active_target());
  for (size_t s = 0; s < first_bundle_num_shapes; ++s)
    failures += run_shape("first", first_bundle_shapes[s].name,
                          first_bundle_shapes[s].format,
                          first_bundle_shapes[s].M, first_bundle_shapes[s].K,
                          ctx);
  for (size_t s = 0; s < second_bundle_num_shapes; ++s)
    failures += run_shape("second", second_bundle_shapes[s].name,
                          second_bundle_shapes[s].format,
                          second_bundle_shapes[s].M, second_bundle_shapes[s].K,
                          ctx);
  lowbit_context_free(ctx);
  free(all);
  printf("%s\n", failures ? "FAILED" : "both bundles match the reference");
  return failures ? 1 : 0;
}
