//===- model.h - the engine's loaded model (internal) -----------*- C++ -*-===//
//
// What Model::load builds (model.cpp) and Model::eval runs (forward.cpp):
// the hyperparameters, every weight as the forward pass uses it, the KV
// cache and the scratch buffers of one batch.
//
//===----------------------------------------------------------------------===//
#ifndef LOWBIT_ENGINE_MODEL_H
#define LOWBIT_ENGINE_MODEL_H

#include "engine.h"
#include "kernels.h"

#include "lowbit/error.h"

#include <chrono>
#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace lowbit::engine {

struct WeightsFree {
  void operator()(lowbit_weights_t *w) const { lowbit_free_weights(w); }
};
struct ContextFree {
  void operator()(lowbit_context_t *c) const { lowbit_context_free(c); }
};
struct ActivationsFree {
  void operator()(lowbit_activations_t *a) const { lowbit_activations_free(a); }
};

/// One linear layer y = (W x) * scale + bias, W of M x K.
struct Linear {
  std::string tensor; // GGUF name, for errors and reports
  std::string format; // lowbit format; "" = fp32 GEMV in the engine
  int64_t M = 0, K = 0;
  std::unique_ptr<lowbit_weights_t, WeightsFree> packed; // format != ""
  int act_class = 0; // lowbit::activation_class of `packed`'s format
  // format "": M x K row-major, the file's f32/f16/bf16 bytes in place, or
  // decoded into f32_storage for any other type.
  const void *fdata = nullptr;
  FloatType ftype = FloatType::F32;
  std::vector<float> f32_storage;
  float scale = 1.0f; // the optional `<name>.scale` tensor
  bool has_scale = false;
  std::vector<float> bias; // the optional `<name>.bias` tensor, M or empty
};

/// The bytes a product with L reads: its packed weights, or the float
/// bytes the engine's GEMV reads.
inline int64_t linear_bytes(const Linear &L) {
  if (L.packed)
    return lowbit_weights_bytes(L.packed.get());
  return L.M * L.K * (L.ftype == FloatType::F32 ? 4 : 2);
}

struct Layer {
  std::vector<float> attn_norm, attn_sub_norm, ffn_norm, ffn_sub_norm;
  Linear wq, wk, wv, wo, gate, up, down;
};

/// One product of a batch: Y [n][L->M] = X [n][L->K] * W^T (scaled, biased).
struct Product {
  const Linear *L;
  float *Y;
};

/// A packed product's tiles within the union that Model::Impl::run_tiles
/// splits: its tiles are [first, the next span's first), multiplied with
/// `acts` (its activation class's quantization of the input).
struct TileSpan {
  const Linear *L;
  float *Y;
  int64_t first;
  const lowbit_activations_t *acts;
};

struct Model::Impl {
  Options options;
  Hparams hp;
  std::shared_ptr<const GgufFile> file; // kept: embeddings are read from it
  // The one allocation of every weight packed straight from the file
  // (Model::load): declared before the weights, so freed after them.
  std::shared_ptr<void> arena;
  const GgufTensor *tok_embd = nullptr;
  std::vector<float> output_norm;
  std::vector<float> rope_freqs; // llama3's per-dimension factors, or empty
  std::vector<Layer> layers;
  Linear head;
  const Kernels *kernels = nullptr;

  std::unique_ptr<lowbit_context_t, ContextFree> ctx;
  int threads = 1;
  /// Quantized activations, one object per input width so that each keeps
  /// its buffers: [0] n_embd (Q/K/V, gate/up, head), [1] attention output
  /// (wo), [2] n_ff (down).
  std::unique_ptr<lowbit_activations_t, ActivationsFree> acts[3];
  /// The input of a product whose weights mix activation classes (a
  /// Q4_K_M layer's Q4_K and Q6_K) quantized for the second and third
  /// class (created when first needed).
  std::unique_ptr<lowbit_activations_t, ActivationsFree> class_acts[2];

  // KV cache, fp32: [layer][kv head][n_ctx][head_dim] for K and for V.
  std::unique_ptr<float[]> kcache, vcache;
  int64_t pos = 0;
  // RoPE angles per position: [n_ctx][n_rot / 2] cos and sin.
  std::vector<float> rope_cos, rope_sin;

  // Scratch of one batch of up to `batch` tokens (grown once, never per
  // token).
  int64_t batch = 0;
  std::vector<float> x, xn, q, k, v, attn, ff_gate, ff_up, head_in;
  std::vector<float> scores; // [threads][kQueries * n_ctx]
  std::vector<float> last_logits;
  std::vector<TileSpan> spans; // of the products project() runs
  std::vector<int64_t> chunk_bounds; // run_tiles: chunk c's first tile
  DecodeProfile *profile = nullptr; // set_profile: every pass adds to it
  int64_t regions = 0; // parallel regions of the pass (for `profile`)
  /// With `profile`: each thread's kernel time in the current region of
  /// run_tiles (a cache line per thread, written by that thread alone), and
  /// the region fields of StepProfile summed since the last step was charged.
  struct alignas(64) ThreadTimes {
    std::chrono::steady_clock::time_point first, last; // its first chunk's
                                                       // start, last's end
    double busy = 0; // seconds in kernel calls
    bool ran = false;
  };
  std::vector<ThreadTimes> thread_times;
  StepProfile region_times;

  void reserve(int64_t n);
  void forward(const int32_t *tokens, int64_t n, float *logits,
               bool all_logits);
  /// The products of one input X [n][K] with several weights: X is
  /// quantized once per activation class (lowbit::activation_class) into
  /// `acts` (the first class) and class_acts (the others), and all packed
  /// weights run as one parallel region (run_tiles); weights kept in float
  /// run the engine's GEMV.
  void project(std::initializer_list<Product> products, const float *X,
               int64_t n, lowbit_activations_t *acts);
  /// The tiles [0, total) of `spans` (the weights' tiles one after the
  /// other), through lowbit_mpgemm_tiles on the context's threads in
  /// kChunksPerThread chunks per thread: for a decoded token (`decode`,
  /// one row) chunks that shrink geometrically (kChunkTaper), for a batch
  /// equal ones starting on multiples of kGemmGroupTiles.
  void run_tiles(int64_t total, bool decode);
  /// Rows [0, n) of X (`width` wide) RMS-normalized times w into Y (may be
  /// X).
  void norm_rows(const float *X, const std::vector<float> &w, int64_t n,
                 int64_t width, float *Y);
  /// Rotates the first n_rot dimensions of every head of X [n][heads][D]
  /// for positions p0 + i.
  void rope(float *X, int64_t n, int64_t heads, int64_t p0);
  /// x += y over n rows of `width` (the residual stream).
  void add_rows(float *x, const float *y, int64_t n, int64_t width);
};

/// The C API's range callback for a callable F passed as `user`.
template <class F>
void call_range(void *user, int64_t begin, int64_t end, int thread) {
  (*static_cast<F *>(user))(begin, end, thread);
}

/// Runs f(begin, end, thread) over [0, n) on the context's threads
/// (contiguous chunks, one per thread), or on the caller alone when
/// `parallel` is false (work too small to share). f must not throw.
template <class F>
void parallel_for(lowbit_context_t *ctx, int64_t n, bool parallel, F &&f) {
  if (n <= 0)
    return;
  if (!parallel) {
    f(int64_t(0), n, 0);
    return;
  }
  if (lowbit_parallel_for(ctx, n, call_range<std::remove_reference_t<F>>,
                          &f) != LOWBIT_OK)
    throw Error(std::string("engine: ") + lowbit_last_error());
}

/// f(i, i + 1, thread) for every i in [0, n), each i taken by the next
/// free thread (lowbit_parallel_claim): a thread that has not started when
/// the caller runs out of items takes no part and is not waited for. On the
/// calling thread alone when `parallel` is false. f must not throw.
template <class F>
void claim_for(lowbit_context_t *ctx, int64_t n, bool parallel, F &&f) {
  if (!parallel) {
    for (int64_t i = 0; i < n; ++i)
      f(i, i + 1, 0);
    return;
  }
  if (lowbit_parallel_claim(ctx, n, call_range<std::remove_reference_t<F>>,
                            &f) != LOWBIT_OK)
    throw Error(std::string("engine: ") + lowbit_last_error());
}

/// Chunks per thread of run_tiles: enough that a thread that started late
/// or was preempted leaves little for the others to wait on, few enough
/// that each chunk is a long contiguous read.
constexpr int64_t kChunksPerThread = 4;

/// The first of a decode region's chunks holds this many times the tiles of
/// the last (run_tiles): the chunks shrink geometrically in between.
constexpr double kChunkTaper = 12;

/// Tiles of the largest tile group of the runtime's GEMM kernels (N > 1):
/// the config heuristic's vnni4 tile_m is 1, 2 or 4 tiles of 16 rows
/// (SelectConfig.cpp); the ggml rows GEMM takes 2 one-row tiles
/// (lowbit generate's TQ2_0 config). A prefill's chunks start on multiples
/// of it, so that no chunk ends in a partial group, whose tiles a kernel
/// runs one at a time (a Llama-2B-shaped layer's Q/K/V, 240 tiles in 8
/// chunks of 30, ran 2 tiles of each so).
constexpr int64_t kGemmGroupTiles = 4;

/// Queries of one head that attention takes together (Kernels::attend).
constexpr int64_t kQueries = 4;

/// The largest batch one forward pass takes; eval splits longer inputs.
constexpr int64_t kMaxBatch = 512;

} // namespace lowbit::engine

#endif // LOWBIT_ENGINE_MODEL_H
