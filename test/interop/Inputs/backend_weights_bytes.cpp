// Sets weights of every type libggml-lowbit takes into its buffer and reads
// them back through ggml's API: get_tensor must give every byte that was
// set, though the backend keeps only the packed form (it re-encodes ggml's
// bytes from it). Each weight is set whole (as llama.cpp's loader does:
// packed straight from the caller's bytes), whole again (over the first
// tiles), in three pieces (gathered in the buffer, repacked at the last
// byte), then one piece again (the bytes of a weight held once re-encoded
// under it first). M 32 (tiles in the
// buffer's own pages) and 37 (a ragged last tile: memory of their own).
// The bytes are ggml's own quantizer's (ggml_quantize_chunk).
//
// usage: backend_weights_bytes LIBGGML_LOWBIT.so
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml.h"

#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

namespace {

bool same(ggml_tensor *w, const std::vector<uint8_t> &want, const char *how) {
  std::vector<uint8_t> got(want.size(), 0);
  ggml_backend_tensor_get(w, got.data(), 0, got.size());
  if (got == want)
    return true;
  size_t at = 0;
  while (got[at] == want[at])
    ++at;
  std::printf("FAIL: %s %s (%lld rows): byte %zu of %zu differs after %s\n",
              ggml_type_name(w->type), w->name, (long long)w->ne[1], at,
              want.size(), how);
  return false;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: backend_weights_bytes LIBGGML_LOWBIT.so\n");
    return 2;
  }
  ggml_backend_reg_t reg = ggml_backend_load(argv[1]);
  if (!reg || ggml_backend_reg_dev_count(reg) == 0) {
    std::printf("FAIL: cannot load %s\n", argv[1]);
    return 1;
  }
  ggml_backend_buffer_type_t buft =
      ggml_backend_dev_buffer_type(ggml_backend_reg_dev_get(reg, 0));
  const ggml_type types[] = {
      GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0,  GGML_TYPE_Q5_1,
      GGML_TYPE_Q8_0, GGML_TYPE_Q2_K, GGML_TYPE_Q3_K,  GGML_TYPE_Q4_K,
      GGML_TYPE_Q5_K, GGML_TYPE_Q6_K, GGML_TYPE_IQ4_NL, GGML_TYPE_TQ1_0,
      GGML_TYPE_TQ2_0};
  const int64_t K = 512;
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  int failures = 0, checked = 0;
  for (const ggml_type type : types) {
    for (const int64_t M : {int64_t(32), int64_t(37)}) {
      std::vector<float> x(size_t(M * K));
      for (float &v : x)
        v = normal(rng);
      std::vector<uint8_t> bytes(ggml_row_size(type, K) * size_t(M));
      ggml_quantize_chunk(type, x.data(), bytes.data(), 0, M, K, nullptr);

      ggml_init_params params = {ggml_tensor_overhead() * 4, nullptr, true};
      ggml_context *ctx = ggml_init(params);
      ggml_tensor *w = ggml_new_tensor_2d(ctx, type, K, M);
      ggml_set_name(w, "blk.0.ffn_up.weight");
      ggml_backend_buffer_t buffer =
          ggml_backend_alloc_ctx_tensors_from_buft(ctx, buft);
      ggml_backend_buffer_set_usage(buffer,
                                    GGML_BACKEND_BUFFER_USAGE_WEIGHTS);

      std::vector<uint8_t> other(bytes.size());
      for (float &v : x)
        v = normal(rng);
      ggml_quantize_chunk(type, x.data(), other.data(), 0, M, K, nullptr);
      const size_t p = bytes.size() / 3, q = 2 * bytes.size() / 3 + 5;

      ggml_backend_tensor_set(w, bytes.data(), 0, bytes.size());
      failures += !same(w, bytes, "set whole");
      ggml_backend_tensor_set(w, other.data(), 0, other.size());
      failures += !same(w, other, "set whole again");
      ggml_backend_tensor_set(w, bytes.data(), 0, p);
      ggml_backend_tensor_set(w, bytes.data() + p, p, q - p);
      ggml_backend_tensor_set(w, bytes.data() + q, q, bytes.size() - q);
      failures += !same(w, bytes, "set in three pieces");
      ggml_backend_tensor_set(w, other.data() + p, p, q - p);
      std::memcpy(bytes.data() + p, other.data() + p, q - p);
      failures += !same(w, bytes, "one piece set again");
      checked += 4;

      ggml_backend_buffer_free(buffer);
      ggml_free(ctx);
    }
  }
  std::printf("%d of %d read-backs gave every byte set\n", checked - failures,
              checked);
  return failures == 0 ? 0 : 1;
}
