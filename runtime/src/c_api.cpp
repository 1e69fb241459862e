//===- c_api.cpp - the C API of lowbit.h ----------------------------------===//
//
// Thin wrappers over the C++ runtime: every entry point catches exceptions
// and turns them into a status plus a thread-local message. The kernel table
// is whatever a bundle registered; the runtime itself holds no generated code.
//
//===----------------------------------------------------------------------===//

#include "lowbit/lowbit.h"

#include "lowbit/error.h"
#include "lowbit/format.h"
#include "lowbit/gguf.h"
#include "lowbit/lut.h"
#include "lowbit/reference.h"
#include "lowbit/run_kernel.h"
#include "lowbit/thread_pool.h"
#include "lowbit/upconvert.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <vector>

namespace {

thread_local std::string lastError;

struct Entry {
  std::string format, target, config;
  int64_t M = 0, K = 0, minN = 1; // M = K = 0: an any-shape kernel
  lowbit_layout_t layout{};       // what lowbit_pack packs for it
  lowbit_kernel_fn fn = nullptr;
  lowbit_any_kernel_fn anyFn = nullptr;

  /// The rows of tiles [begin, end) of Y (kernel_abi.h's call).
  void call(const lowbit::UpconvertWeights &W,
            const lowbit::PreparedActivations &A, float *Y, int64_t begin,
            int64_t end) const {
    if (fn)
      fn(W.codes.data(), W.scales_or_null(), W.zeros_or_null(), A.xq.data(),
         A.x_scales.data(), A.x_sums.data(), Y, A.N, begin, end, W.w_scale);
    else
      anyFn(W.codes.data(), W.scales_or_null(), W.zeros_or_null(),
            A.xq.data(), A.x_scales.data(), A.x_sums.data(), Y, A.N, begin,
            end, W.w_scale, W.M, W.K);
  }
  /// All of Y on the pool.
  void run(const lowbit::UpconvertWeights &W,
           const lowbit::PreparedActivations &A, float *Y,
           lowbit::ThreadPool &pool) const {
    if (fn)
      lowbit::run_kernel(fn, W, A, Y, W.M, pool);
    else
      lowbit::run_any_kernel(anyFn, W, A, Y, pool);
  }
};

const std::string referenceName = "reference";

std::mutex registryMutex;
std::vector<Entry> &registry() {
  static std::vector<Entry> entries;
  return entries;
}

template <typename F> lowbit_status_t guarded(F &&body) {
  try {
    body();
    lastError.clear();
    return LOWBIT_OK;
  } catch (const std::bad_alloc &) {
    lastError = "out of memory";
    return LOWBIT_ERROR_OUT_OF_MEMORY;
  } catch (const lowbit::Error &e) {
    lastError = e.what();
    return LOWBIT_ERROR_INVALID_ARGUMENT;
  } catch (const std::exception &e) {
    lastError = e.what();
    return LOWBIT_ERROR_INTERNAL;
  } catch (...) {
    lastError = "unknown error";
    return LOWBIT_ERROR_INTERNAL;
  }
}

void require(bool condition, const char *message) {
  if (!condition)
    throw lowbit::Error(message);
}

} // namespace

struct lowbit_weights_t {
  lowbit::PackedWeights canonical;
  std::optional<lowbit::UpconvertWeights> prepared; // with a kernel only
  std::vector<Entry> kernels; // of this shape, by increasing minN
  bool compacted = false; // lowbit_weights_compact freed canonical's data

  /// The kernel for N rows, or nullptr for the reference.
  const Entry *kernelFor(int64_t N) const {
    const Entry *best = nullptr;
    for (const Entry &e : kernels)
      if (e.minN <= N)
        best = &e;
    return best;
  }
};

struct lowbit_context_t {
  std::unique_ptr<lowbit::ThreadPool> pool;
};

struct lowbit_activations_t {
  bool ternary = false; // quantized per row (ternary) or per 32-block
  int act_class = 0;     // lowbit::activation_class of the weights it fits
  lowbit::PreparedActivations prepared; // kernel_abi.h's arrays

  /// The same values as the reference reads them (rows without padding).
  lowbit::QuantizedActivations quantized() const {
    const lowbit::PreparedActivations &P = prepared;
    lowbit::QuantizedActivations A;
    A.N = P.N;
    A.K = P.K;
    A.block = ternary ? P.K : P.block;
    A.q.resize(size_t(P.N * P.K));
    for (int64_t n = 0; n < P.N; ++n)
      std::copy_n(P.xq.data() + n * P.Kp, P.K, A.q.data() + n * P.K);
    A.scales.assign(P.x_scales.data(),
                    P.x_scales.data() + P.N * (P.Kp / P.block));
    return A;
  }
};

extern "C" {

const char *lowbit_last_error(void) { return lastError.c_str(); }

lowbit_status_t lowbit_register_kernels(const lowbit_kernel_entry_t *entries,
                                        size_t count) {
  return guarded([&] {
    require(entries || count == 0, "lowbit_register_kernels: entries is NULL");
    std::vector<Entry> table;
    for (size_t i = 0; i < count; ++i) {
      const lowbit_kernel_entry_t &e = entries[i];
      const bool exact = e.fn && !e.any_fn && e.M > 0 && e.K > 0;
      const bool any = !e.fn && e.any_fn && e.M == 0 && e.K == 0;
      require(e.format && (exact || any) && e.min_n >= 1,
              "lowbit_register_kernels: an entry needs a format, min_n >= 1 "
              "and either fn with M, K > 0 or any_fn with M = K = 0");
      lowbit::Format format = lowbit::Format::parse(e.format);
      if (std::string problem = lowbit::layout_error(e.layout, format);
          !problem.empty())
        throw lowbit::Error(
            "lowbit_register_kernels: the " + format.name() + " kernel (" +
            (e.target ? e.target : "no target") + "): " + problem);
      table.push_back({format.name(), e.target ? e.target : "",
                       e.config ? e.config : "", e.M, e.K, e.min_n, e.layout,
                       e.fn, e.any_fn});
    }
    std::lock_guard<std::mutex> lock(registryMutex);
    registry() = std::move(table);
  });
}

/// The registered kernels of (format, M, K), by increasing minN: the
/// shape's own, else the format's any-shape kernels; none without one for
/// N = 1. Error when they read different layouts.
static std::vector<Entry> kernelsFor(const lowbit::Format &f, int64_t M,
                                     int64_t K) {
  std::vector<Entry> kernels;
  {
    std::lock_guard<std::mutex> lock(registryMutex);
    for (const Entry &e : registry())
      if (e.format == f.name() && e.M == M && e.K == K)
        kernels.push_back(e);
    if (kernels.empty())
      for (const Entry &e : registry())
        if (e.format == f.name() && e.anyFn &&
            lowbit::any_kernel_shape_error(
                f, K, e.layout.family == LOWBIT_LAYOUT_BITPLANES)
                .empty())
          kernels.push_back(e);
  }
  std::sort(kernels.begin(), kernels.end(),
            [](const Entry &a, const Entry &b) { return a.minN < b.minN; });
  // A kernel for N = 1 must exist when any does: smaller N would otherwise
  // have none. Without one, the reference runs every N.
  if (!kernels.empty() && kernels.front().minN != 1)
    kernels.clear();
  // One layout serves the shape's kernels (one strategy and target per
  // table).
  for (const Entry &e : kernels)
    if (std::memcmp(&e.layout, &kernels.front().layout, sizeof(e.layout)) !=
        0)
      throw lowbit::Error(
          "lowbit_pack: the " + f.name() + " kernels of M = " +
          std::to_string(M) + ", K = " + std::to_string(K) +
          " read different layouts (" +
          lowbit::layout_name(kernels.front().layout) + ", " +
          lowbit::layout_name(e.layout) + ")");
  return kernels;
}

/// Weights for canonical packed ones: the registered kernels of their
/// (format, M, K), repacked into those kernels' layout.
static std::unique_ptr<lowbit_weights_t>
withKernels(lowbit::PackedWeights canonical) {
  auto weights = std::make_unique<lowbit_weights_t>();
  weights->canonical = std::move(canonical);
  const lowbit::PackedWeights &W = weights->canonical;
  weights->kernels = kernelsFor(W.format, W.M, W.K);
  if (!weights->kernels.empty())
    weights->prepared =
        lowbit::pack_for_kernel(W, weights->kernels.front().layout);
  return weights;
}

} // extern "C"

namespace {
/// Whether the first of `kernels` (kernelsFor's order) reads `format` in the
/// layout `family` of kernel_abi.h: LOWBIT_LAYOUT_VNNI4, LOWBIT_LAYOUT_LUT
/// or LOWBIT_LAYOUT_GGML_ROWS.
bool first_reads(const std::vector<Entry> &kernels,
                 const lowbit::Format &format, uint8_t family) {
  return !kernels.empty() && kernels.front().layout.family == family &&
         lowbit::layout_error(kernels.front().layout, format).empty();
}
} // namespace

bool lowbit::upconvert_kernels_registered(const Format &format, int64_t M,
                                          int64_t K, uint8_t *lane_order) {
  const std::vector<Entry> kernels = kernelsFor(format, M, K);
  if (!first_reads(kernels, format,
                   has_lut_layout(format) ? LOWBIT_LAYOUT_LUT
                                          : LOWBIT_LAYOUT_VNNI4))
    return false;
  if (lane_order)
    *lane_order = kernels.front().layout.lane_order;
  return true;
}

bool lowbit::ggml_rows_kernels_registered(const Format &format, int64_t M,
                                          int64_t K, int block_bytes) {
  const std::vector<Entry> kernels = kernelsFor(format, M, K);
  return first_reads(kernels, format, LOWBIT_LAYOUT_GGML_ROWS) &&
         kernels.front().layout.block_bytes == block_bytes;
}

lowbit_weights_t *lowbit::upconvert_weights_handle(UpconvertWeights U) {
  auto weights = std::make_unique<lowbit_weights_t>();
  lowbit::PackedWeights &W = weights->canonical; // format and shape only
  W.format = U.format;
  W.M = U.M;
  W.K = U.K;
  W.tensor_scale = U.w_scale;
  std::vector<Entry> kernels = kernelsFor(U.format, U.M, U.K);
  const bool rows = U.tile_rows == 1, lut = has_lut_layout(U.format);
  const bool lanes = U.lane_order == LOWBIT_LANE_LANES;
  if (!first_reads(kernels, U.format,
                   rows  ? LOWBIT_LAYOUT_GGML_ROWS
                   : lut ? LOWBIT_LAYOUT_LUT
                         : LOWBIT_LAYOUT_VNNI4) ||
      (lut && kernels.front().layout.lane_order != U.lane_order))
    throw Error("upconvert_weights_handle: no registered " + U.format.name() +
                " kernel of M = " + std::to_string(U.M) + ", K = " +
                std::to_string(U.K) + " reads the " +
                (rows  ? "ggml rows"
                 : lut ? (lanes ? "lut (lanes)" : "lut (rows)")
                       : "upconvert") +
                " layout");
  if (rows && kernels.front().layout.block_bytes != U.ggml_block_bytes)
    throw Error("upconvert_weights_handle: the registered " +
                U.format.name() + " kernel of M = " + std::to_string(U.M) +
                ", K = " + std::to_string(U.K) + " reads ggml rows of " +
                std::to_string(kernels.front().layout.block_bytes) +
                "-byte blocks, the weights have " +
                std::to_string(U.ggml_block_bytes));
  weights->kernels = std::move(kernels);
  weights->prepared = std::move(U);
  weights->compacted = true;
  return weights.release();
}

extern "C" {

lowbit_status_t lowbit_pack(const char *format, const float *W, int64_t M,
                            int64_t K, lowbit_weights_t **out) {
  return guarded([&] {
    require(format && W && out, "lowbit_pack: NULL argument");
    *out = nullptr;
    lowbit::Format f = lowbit::Format::parse(format);
    f.check_shape(M, K);
    *out = withKernels(lowbit::quantize(f, W, M, K)).release();
  });
}

lowbit_status_t lowbit_pack_gguf(const char *format, const char *gguf_type,
                                 const void *data, size_t bytes, int64_t M,
                                 int64_t K, lowbit_weights_t **out) {
  return guarded([&] {
    require(format && gguf_type && data && out,
            "lowbit_pack_gguf: NULL argument");
    *out = nullptr;
    lowbit::Format f = lowbit::Format::parse(format);
    f.check_shape(M, K);
    *out = withKernels(lowbit::import_weights(
                           lowbit::parse_gguf_type(gguf_type),
                           static_cast<const uint8_t *>(data), bytes, M, K, f,
                           "lowbit_pack_gguf"))
               .release();
  });
}

int64_t lowbit_weights_bytes(const lowbit_weights_t *weights) {
  if (!weights)
    return 0;
  if (weights->prepared)
    return weights->prepared->packed_bytes();
  const lowbit::PackedWeights &W = weights->canonical;
  return int64_t(W.codes.size() + 2 * (W.scales.size() + W.zeros.size()));
}

lowbit_status_t lowbit_weights_compact(lowbit_weights_t *weights) {
  return guarded([&] {
    require(weights != nullptr, "lowbit_weights_compact: weights is NULL");
    if (!weights->prepared)
      return; // the reference reads the canonical copy
    // Format, M and K stay: activations are shaped and checked against them.
    lowbit::PackedWeights &W = weights->canonical;
    std::vector<uint8_t>().swap(W.codes); // clear() would keep the memory
    std::vector<uint16_t>().swap(W.scales);
    std::vector<uint16_t>().swap(W.zeros);
    weights->compacted = true;
  });
}

void lowbit_free_weights(lowbit_weights_t *weights) { delete weights; }

const char *lowbit_weights_target(const lowbit_weights_t *weights, int64_t N) {
  if (!weights)
    return "";
  const Entry *e = weights->kernelFor(N);
  return e ? e->target.c_str() : referenceName.c_str();
}

const char *lowbit_weights_config(const lowbit_weights_t *weights, int64_t N) {
  if (!weights)
    return "";
  const Entry *e = weights->kernelFor(N);
  return e ? e->config.c_str() : referenceName.c_str();
}

lowbit_status_t lowbit_context_create(int threads, lowbit_context_t **out) {
  return guarded([&] {
    require(out != nullptr, "lowbit_context_create: out is NULL");
    *out = nullptr;
    if (threads < 1)
      throw lowbit::Error("lowbit_context_create: threads must be >= 1, got " +
                          std::to_string(threads));
    lowbit::ThreadPool::Options options;
    options.threads = threads;
    options.pin = false; // an engine's threads are its own business
    options.pin_caller = false;
    auto context = std::make_unique<lowbit_context_t>();
    context->pool = std::make_unique<lowbit::ThreadPool>(options);
    *out = context.release();
  });
}

void lowbit_context_free(lowbit_context_t *context) { delete context; }

lowbit_status_t lowbit_mpgemm(const lowbit_weights_t *weights, const float *X,
                              int64_t N, float *Y, lowbit_context_t *context) {
  return guarded([&] {
    require(weights && X && Y, "lowbit_mpgemm: NULL argument");
    require(N >= 1, "lowbit_mpgemm: N must be >= 1");
    const lowbit::PackedWeights &W = weights->canonical;
    const Entry *kernel = weights->kernelFor(N);
    if (!kernel) {
      lowbit::reference_mpgemm(W, X, N, Y);
      return;
    }
    lowbit::PreparedActivations A =
        lowbit::prepare_activations(W.format, X, N, W.K);
    const lowbit::UpconvertWeights &P = *weights->prepared;
    if (context)
      kernel->run(P, A, Y, *context->pool);
    else
      kernel->call(P, A, Y, 0, P.num_tiles());
  });
}

lowbit_status_t lowbit_activations_create(lowbit_activations_t **out) {
  return guarded([&] {
    require(out != nullptr, "lowbit_activations_create: out is NULL");
    *out = new lowbit_activations_t();
  });
}

void lowbit_activations_free(lowbit_activations_t *activations) {
  delete activations;
}

lowbit_status_t lowbit_quantize_activations(const lowbit_weights_t *like,
                                            const float *X, int64_t N,
                                            lowbit_activations_t *activations,
                                            lowbit_context_t *context) {
  return guarded([&] {
    require(like && X && activations,
            "lowbit_quantize_activations: NULL argument");
    const lowbit::Format &f = like->canonical.format;
    activations->ternary = f.is_ternary();
    activations->act_class = lowbit::activation_class(f);
    lowbit::PreparedActivations &P = activations->prepared;
    lowbit::shape_activations(f, N, like->canonical.K, P);
    // A decode step's one row is quicker alone than a handoff; prefill rows
    // are split over the threads.
    constexpr int64_t kParallelValues = int64_t(1) << 15;
    if (!context || N < 2 || N * P.K < kParallelValues) {
      lowbit::quantize_activation_rows(X, P, 0, N);
      return;
    }
    context->pool->run(N, [&](int64_t begin, int64_t end, int) {
      lowbit::quantize_activation_rows(X, P, begin, end);
    });
  });
}

/// Throws unless `A` was quantized for weights like `weights`.
static void requireMatching(const lowbit_weights_t &weights,
                            const lowbit_activations_t &A, const char *what) {
  const lowbit::PackedWeights &W = weights.canonical;
  if (A.prepared.N < 1 || A.prepared.K != W.K ||
      A.act_class != lowbit::activation_class(W.format))
    throw lowbit::Error(
        std::string(what) + ": activations of K = " +
        std::to_string(A.prepared.K) + " (activation class " +
        std::to_string(A.act_class) + ") do not fit " + W.format.name() +
        " weights of K = " + std::to_string(W.K) + " (class " +
        std::to_string(lowbit::activation_class(W.format)) + ")" +
        (A.prepared.N < 1 ? " (not quantized yet)" : ""));
}

/// Rows [tile_begin, tile_end) * 16 of Y by the scalar reference.
static void referenceTiles(const lowbit::PackedWeights &W,
                           const lowbit::QuantizedActivations &A, float *Y,
                           int64_t tile_begin, int64_t tile_end) {
  const int64_t rows = lowbit::kUpconvertTileRows;
  lowbit::reference_mpgemm_rows(W, A, Y, std::min(W.M, tile_begin * rows),
                                std::min(W.M, tile_end * rows));
}

int64_t lowbit_weights_tiles(const lowbit_weights_t *weights) {
  if (!weights)
    return 0;
  if (weights->prepared)
    return weights->prepared->num_tiles();
  const int64_t rows = lowbit::kUpconvertTileRows;
  return (weights->canonical.M + rows - 1) / rows;
}

lowbit_status_t lowbit_mpgemm_quantized(const lowbit_weights_t *weights,
                                        const lowbit_activations_t *activations,
                                        float *Y, lowbit_context_t *context) {
  return guarded([&] {
    require(weights && activations && Y,
            "lowbit_mpgemm_quantized: NULL argument");
    requireMatching(*weights, *activations, "lowbit_mpgemm_quantized");
    const lowbit::PreparedActivations &A = activations->prepared;
    const Entry *kernel = weights->kernelFor(A.N);
    if (!kernel) {
      const lowbit::QuantizedActivations Q = activations->quantized();
      const int64_t tiles = lowbit_weights_tiles(weights);
      if (context)
        context->pool->run(tiles, [&](int64_t begin, int64_t end, int) {
          referenceTiles(weights->canonical, Q, Y, begin, end);
        });
      else
        referenceTiles(weights->canonical, Q, Y, 0, tiles);
      return;
    }
    const lowbit::UpconvertWeights &P = *weights->prepared;
    if (context)
      kernel->run(P, A, Y, *context->pool);
    else
      kernel->call(P, A, Y, 0, P.num_tiles());
  });
}

lowbit_status_t lowbit_mpgemm_tiles(const lowbit_weights_t *weights,
                                    const lowbit_activations_t *activations,
                                    float *Y, int64_t tile_begin,
                                    int64_t tile_end) {
  return guarded([&] {
    require(weights && activations && Y, "lowbit_mpgemm_tiles: NULL argument");
    requireMatching(*weights, *activations, "lowbit_mpgemm_tiles");
    const int64_t tiles = lowbit_weights_tiles(weights);
    if (tile_begin < 0 || tile_end > tiles || tile_begin > tile_end)
      throw lowbit::Error("lowbit_mpgemm_tiles: tiles [" +
                          std::to_string(tile_begin) + ", " +
                          std::to_string(tile_end) + ") outside [0, " +
                          std::to_string(tiles) + ")");
    if (tile_begin == tile_end)
      return;
    const lowbit::PreparedActivations &A = activations->prepared;
    const Entry *kernel = weights->kernelFor(A.N);
    if (!kernel) {
      referenceTiles(weights->canonical, activations->quantized(), Y,
                     tile_begin, tile_end);
      return;
    }
    kernel->call(*weights->prepared, A, Y, tile_begin, tile_end);
  });
}

int lowbit_context_threads(const lowbit_context_t *context) {
  return context ? context->pool->size() : 1;
}

lowbit_status_t lowbit_parallel_for(lowbit_context_t *context, int64_t n,
                                    lowbit_range_fn fn, void *user) {
  return guarded([&] {
    require(fn != nullptr, "lowbit_parallel_for: fn is NULL");
    require(n >= 0, "lowbit_parallel_for: n must be >= 0");
    if (n == 0)
      return;
    if (!context) {
      fn(user, 0, n, 0);
      return;
    }
    context->pool->run(n, [&](int64_t begin, int64_t end, int thread) {
      fn(user, begin, end, thread);
    });
  });
}

lowbit_status_t lowbit_parallel_claim(lowbit_context_t *context, int64_t n,
                                      lowbit_range_fn fn, void *user) {
  return guarded([&] {
    require(fn != nullptr, "lowbit_parallel_claim: fn is NULL");
    require(n >= 0, "lowbit_parallel_claim: n must be >= 0");
    if (!context || n < 2 || context->pool->size() == 1) {
      for (int64_t i = 0; i < n; ++i)
        fn(user, i, i + 1, 0);
      return;
    }
    std::atomic<int64_t> next{0};
    context->pool->run_elastic([&](int thread) {
      for (int64_t i = next.fetch_add(1, std::memory_order_relaxed); i < n;
           i = next.fetch_add(1, std::memory_order_relaxed))
        fn(user, i, i + 1, thread);
    });
  });
}

lowbit_status_t lowbit_reference_mpgemm(const lowbit_weights_t *weights,
                                        const float *X, int64_t N, float *Y) {
  return guarded([&] {
    require(weights && X && Y, "lowbit_reference_mpgemm: NULL argument");
    require(N >= 1, "lowbit_reference_mpgemm: N must be >= 1");
    require(!weights->compacted,
            "lowbit_reference_mpgemm: these weights were compacted "
            "(lowbit_weights_compact): only their kernel's layout is left");
    lowbit::reference_mpgemm(weights->canonical, X, N, Y);
  });
}

} // extern "C"
