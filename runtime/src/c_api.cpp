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
#include "lowbit/reference.h"
#include "lowbit/run_kernel.h"
#include "lowbit/thread_pool.h"
#include "lowbit/upconvert.h"

#include <algorithm>
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
  int64_t M = 0, K = 0, minN = 1;
  lowbit_kernel_fn fn = nullptr;
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

extern "C" {

const char *lowbit_last_error(void) { return lastError.c_str(); }

lowbit_status_t lowbit_register_kernels(const lowbit_kernel_entry_t *entries,
                                        size_t count) {
  return guarded([&] {
    require(entries || count == 0, "lowbit_register_kernels: entries is NULL");
    std::vector<Entry> table;
    for (size_t i = 0; i < count; ++i) {
      const lowbit_kernel_entry_t &e = entries[i];
      require(e.format && e.fn && e.M > 0 && e.K > 0 && e.min_n >= 1,
              "lowbit_register_kernels: an entry lacks its format, kernel, "
              "shape or min_n");
      lowbit::Format format = lowbit::Format::parse(e.format);
      table.push_back({format.name(), e.target ? e.target : "",
                       e.config ? e.config : "", e.M, e.K, e.min_n, e.fn});
    }
    std::lock_guard<std::mutex> lock(registryMutex);
    registry() = std::move(table);
  });
}

lowbit_status_t lowbit_pack(const char *format, const float *W, int64_t M,
                            int64_t K, lowbit_weights_t **out) {
  return guarded([&] {
    require(format && W && out, "lowbit_pack: NULL argument");
    *out = nullptr;
    lowbit::Format f = lowbit::Format::parse(format);
    f.check_shape(M, K);
    auto weights = std::make_unique<lowbit_weights_t>();
    weights->canonical = lowbit::quantize(f, W, M, K);
    {
      std::lock_guard<std::mutex> lock(registryMutex);
      for (const Entry &e : registry())
        if (e.format == f.name() && e.M == M && e.K == K)
          weights->kernels.push_back(e);
    }
    std::sort(weights->kernels.begin(), weights->kernels.end(),
              [](const Entry &a, const Entry &b) { return a.minN < b.minN; });
    // A kernel for N = 1 must exist when any does: smaller N would otherwise
    // have none. Without one, the reference runs every N.
    if (!weights->kernels.empty() && weights->kernels.front().minN != 1)
      weights->kernels.clear();
    if (!weights->kernels.empty()) {
      // One layout serves the shape's kernels (one strategy and target
      // per table).
      const Entry &kernel = weights->kernels.front();
      weights->prepared = lowbit::pack_for_kernel(
          weights->canonical, kernel.config, kernel.target);
    }
    *out = weights.release();
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
    if (context) {
      lowbit::run_kernel(kernel->fn, P, A, Y, W.M, *context->pool);
      return;
    }
    kernel->fn(P.codes.data(), P.scales_or_null(), P.zeros_or_null(),
               A.xq.data(), A.x_scales.data(), A.x_sums.data(), Y, A.N, 0,
               P.num_tiles(), P.w_scale);
  });
}

lowbit_status_t lowbit_reference_mpgemm(const lowbit_weights_t *weights,
                                        const float *X, int64_t N, float *Y) {
  return guarded([&] {
    require(weights && X && Y, "lowbit_reference_mpgemm: NULL argument");
    require(N >= 1, "lowbit_reference_mpgemm: N must be >= 1");
    lowbit::reference_mpgemm(weights->canonical, X, N, Y);
  });
}

} // extern "C"
