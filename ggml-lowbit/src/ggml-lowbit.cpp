//===- ggml-lowbit.cpp - a ggml backend on lowbit's generated kernels -----===//
//
// An out-of-tree ggml backend, loaded by an unmodified llama.cpp through
// GGML_BACKEND_PATH (ggml-backend-reg.cpp's ggml_backend_load). It implements
// the interfaces of ggml-backend-impl.h the way ggml's own small backends do
// (ggml-blas; the former ggml-amx, which also repacked weights in its buffer
// type's set_tensor): a registry with one ACCEL device, whose buffer type is
// not host memory. llama.cpp's make_cpu_buft_list (src/llama-model.cpp)
// offers every weight to an ACCEL device's buffer type first, and keeps it
// there when the device's supports_op accepts the MUL_MAT that reads it. Such
// weights are repacked in set_tensor into the layout of the lowbit any-shape
// kernel of the host's best x86 ISA (weights.h); graph_compute runs exactly
// those MUL_MATs; everything else stays on ggml's CPU backend.
//
//===----------------------------------------------------------------------===//
#include "weights.h"

#include "ggml-backend-impl.h"
#include "ggml-impl.h"

#include "lowbit/error.h"
#include "lowbit/format.h"
#include "lowbit/run_kernel.h"
#include "lowbit/scheduler.h"
#include "lowbit/thread_pool.h"
#include "lowbit/upconvert.h"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <iterator>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <set>
#include <unordered_map>
#include <string>
#include <vector>

#ifndef LOWBIT_GGML_VERSION
#error "LOWBIT_GGML_VERSION: the ggml version of the headers (CMakeLists.txt)"
#endif

namespace {

using ggml_lowbit::KernelTable;
using ggml_lowbit::PackedTensor;

/// The kernel table chosen when the registry was created.
KernelTable &kernel_table() {
  static KernelTable table;
  return table;
}

/// Our log lines go to ggml's log (llama.cpp's callback), or to stderr
/// alone when GGML_LOWBIT_STDERR is set and not "0": a program that shows
/// only errors (the tests' greedy driver) can still show them.
void log_line(ggml_log_level level, const std::string &text) {
  const char *env = std::getenv("GGML_LOWBIT_STDERR");
  if (env && std::strcmp(env, "0") != 0)
    std::fprintf(stderr, "%s\n", text.c_str());
  else
    ggml_log_internal(level, "%s\n", text.c_str());
}

// ---- What the buffers took and what supports_op left, for the load line.

struct LoadReport {
  std::mutex mutex;
  std::vector<std::pair<std::string, std::string>> taken; // name, conversion
  std::vector<std::pair<std::string, std::string>> left;  // name, why
  std::set<std::string> left_names;
};

LoadReport &load_report() {
  static LoadReport report;
  return report;
}

/// "blk.7.ffn_up.weight" -> "blk.*.ffn_up.weight".
std::string layer_pattern(const std::string &name) {
  if (name.rfind("blk.", 0) != 0)
    return name;
  const size_t dot = name.find('.', 4);
  return dot == std::string::npos ? name : "blk.*" + name.substr(dot);
}

/// "a x3 (tq2_0->i2s), b (q4_0->q4_0)": names grouped by layer pattern and
/// detail, in first-seen order.
std::string summarize(const std::vector<std::pair<std::string, std::string>> &items) {
  std::vector<std::pair<std::string, std::string>> keys;
  std::map<std::pair<std::string, std::string>, int> counts;
  for (const auto &[name, detail] : items) {
    auto key = std::make_pair(layer_pattern(name), detail);
    if (counts[key]++ == 0)
      keys.push_back(key);
  }
  std::string text;
  for (const auto &key : keys) {
    if (!text.empty())
      text += ", ";
    text += key.first;
    if (counts[key] > 1)
      text += " x" + std::to_string(counts[key]);
    text += " (" + key.second + ")";
  }
  return text;
}

/// One line: the weights taken since the last line and the MUL_MAT weights
/// left to the CPU backend. Printed when a backend is created, i.e. after
/// llama.cpp has loaded the model and before it computes anything.
void log_load_report() {
  LoadReport &r = load_report();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (r.taken.empty() && r.left.empty())
    return;
  std::string text = "ggml-lowbit: took " + std::to_string(r.taken.size()) +
                     " tensors for " + kernel_table().target + " kernels";
  if (!r.taken.empty())
    text += ": " + summarize(r.taken);
  text += "; left " + std::to_string(r.left.size()) +
          " to the CPU backend";
  if (!r.left.empty())
    text += ": " + summarize(r.left);
  log_line(GGML_LOG_LEVEL_INFO, text);
  r.taken.clear();
  r.left.clear();
}

// ---- Buffer: the tensors' bytes as ggml stores them, plus the weights
// repacked for the kernels, by tensor (not in tensor->extra: a reset buffer
// forgets its slots, and no tensor is left pointing at one).

struct WeightSlot {
  size_t written = 0; // bytes set since the last repack
  std::unique_ptr<PackedTensor> packed;
  std::string error; // why the last repack failed
};

struct BufferContext {
  void *base = nullptr;
  std::unordered_map<const ggml_tensor *, std::unique_ptr<WeightSlot>> slots;
};

ggml_backend_buffer_type *lowbit_buffer_type();

bool in_lowbit_buffer(const ggml_tensor *t) {
  const ggml_backend_buffer_t buffer =
      t->view_src ? t->view_src->buffer : t->buffer;
  return buffer && buffer->buft == lowbit_buffer_type();
}

/// A 2-D weight of a type we take: the tensors a slot is made for.
bool is_weight(const ggml_tensor *t) {
  return t->view_src == nullptr && t->ne[2] == 1 && t->ne[3] == 1 &&
         ggml_lowbit::takes_type(uint32_t(t->type), kernel_table());
}

void buffer_free(ggml_backend_buffer_t buffer) {
  auto *ctx = static_cast<BufferContext *>(buffer->context);
  std::free(ctx->base);
  delete ctx;
}

void *buffer_get_base(ggml_backend_buffer_t buffer) {
  return static_cast<BufferContext *>(buffer->context)->base;
}

ggml_status buffer_init_tensor(ggml_backend_buffer_t buffer,
                               ggml_tensor *tensor) {
  auto *ctx = static_cast<BufferContext *>(buffer->context);
  if (is_weight(tensor))
    ctx->slots[tensor] = std::make_unique<WeightSlot>();
  else
    ctx->slots.erase(tensor);
  return GGML_STATUS_SUCCESS;
}

/// The slot of a weight in a buffer of ours, else null.
WeightSlot *slot_of(ggml_backend_buffer_t buffer, const ggml_tensor *tensor) {
  auto *ctx = static_cast<BufferContext *>(buffer->context);
  auto it = ctx->slots.find(tensor);
  return it == ctx->slots.end() ? nullptr : it->second.get();
}

/// Repacks a weight whose bytes are all set.
void repack(WeightSlot &slot, const ggml_tensor *tensor) {
  const std::string name = tensor->name;
  try {
    slot.packed = std::make_unique<PackedTensor>(ggml_lowbit::pack_tensor(
        uint32_t(tensor->type), static_cast<const uint8_t *>(tensor->data),
        ggml_nbytes(tensor), tensor->ne[1], tensor->ne[0], kernel_table(),
        name));
    LoadReport &r = load_report();
    std::lock_guard<std::mutex> lock(r.mutex);
    r.taken.emplace_back(name, slot.packed->conversion);
  } catch (const std::bad_alloc &) {
    slot.error = name + ": out of memory repacking it";
  } catch (const std::exception &e) {
    slot.error = e.what();
  }
  if (!slot.error.empty())
    log_line(GGML_LOG_LEVEL_ERROR, "ggml-lowbit: " + slot.error);
}

void buffer_set_tensor(ggml_backend_buffer_t buffer, ggml_tensor *tensor,
                       const void *data, size_t offset, size_t size) {
  std::memcpy(static_cast<char *>(tensor->data) + offset, data, size);
  WeightSlot *slot = slot_of(buffer, tensor);
  if (!slot)
    return;
  // Loaders may set a tensor in pieces; repack once every byte is there.
  slot->packed.reset();
  slot->error.clear();
  slot->written += size;
  if (slot->written < ggml_nbytes(tensor))
    return;
  slot->written = 0;
  repack(*slot, tensor);
}

void buffer_get_tensor(ggml_backend_buffer_t, const ggml_tensor *tensor,
                       void *data, size_t offset, size_t size) {
  // The bytes as they were set: the repacked copy is the slot's.
  std::memcpy(data, static_cast<const char *>(tensor->data) + offset, size);
}

void buffer_memset_tensor(ggml_backend_buffer_t buffer, ggml_tensor *tensor,
                          uint8_t value, size_t offset, size_t size) {
  std::memset(static_cast<char *>(tensor->data) + offset, value, size);
  if (WeightSlot *slot = slot_of(buffer, tensor)) {
    slot->packed.reset();
    slot->written = 0;
    slot->error = std::string(tensor->name) + ": cleared with memset";
  }
}

void buffer_clear(ggml_backend_buffer_t buffer, uint8_t value) {
  auto *ctx = static_cast<BufferContext *>(buffer->context);
  std::memset(ctx->base, value, buffer->size);
  for (auto &[tensor, slot] : ctx->slots) {
    slot->packed.reset();
    slot->written = 0;
    slot->error = "the buffer was cleared";
  }
}

void buffer_reset(ggml_backend_buffer_t buffer) {
  static_cast<BufferContext *>(buffer->context)->slots.clear();
}

const ggml_backend_buffer_i kBufferInterface = {
    /* .free_buffer     = */ buffer_free,
    /* .get_base        = */ buffer_get_base,
    /* .init_tensor     = */ buffer_init_tensor,
    /* .memset_tensor   = */ buffer_memset_tensor,
    /* .set_tensor      = */ buffer_set_tensor,
    /* .get_tensor      = */ buffer_get_tensor,
    /* .set_tensor_2d   = */ nullptr,
    /* .get_tensor_2d   = */ nullptr,
    /* .cpy_tensor      = */ nullptr,
    /* .clear           = */ buffer_clear,
    /* .reset           = */ buffer_reset,
};

constexpr size_t kAlignment = 64; // the kernels' vectors and AlignedArray's

const char *buft_get_name(ggml_backend_buffer_type_t) { return "LOWBIT"; }

ggml_backend_buffer_t buft_alloc_buffer(ggml_backend_buffer_type_t buft,
                                        size_t size) {
  const size_t rounded = (size + kAlignment - 1) / kAlignment * kAlignment;
  void *base = std::aligned_alloc(kAlignment, rounded);
  if (!base) {
    log_line(GGML_LOG_LEVEL_ERROR, "ggml-lowbit: cannot allocate " +
                                       std::to_string(size) + " bytes");
    return nullptr;
  }
  auto *ctx = new BufferContext();
  ctx->base = base;
  return ggml_backend_buffer_init(buft, kBufferInterface, ctx, size);
}

size_t buft_get_alignment(ggml_backend_buffer_type_t) { return kAlignment; }

// ---- Threads.
//
// llama.cpp builds ggml-cpu with OpenMP by default: its MUL_MATs, norms and
// attention run on libgomp's team, whose threads spin for a while after each
// parallel region before they sleep. A second pool of our own would spin
// beside them on the same cores at every split boundary. So where the
// process has libgomp (GOMP_parallel, the entry point `#pragma omp
// parallel` compiles to, resolved in the process rather than linked), our
// work runs on that same team; otherwise (ggml-cpu without OpenMP, which
// then uses its own threadpool) on a lowbit::ThreadPool. GGML_LOWBIT_THREADS
// =pool forces the pool (to compare the two).

struct OpenMp {
  void (*parallel)(void (*)(void *), void *, unsigned, unsigned) = nullptr;
  int (*thread_num)() = nullptr;
  int (*num_threads)() = nullptr;
};

const OpenMp &process_openmp() {
  static const OpenMp omp = [] {
    OpenMp o;
    const char *env = std::getenv("GGML_LOWBIT_THREADS");
    if (env && std::strcmp(env, "pool") == 0)
      return o;
    o.parallel = reinterpret_cast<decltype(o.parallel)>(
        dlsym(RTLD_DEFAULT, "GOMP_parallel"));
    o.thread_num = reinterpret_cast<decltype(o.thread_num)>(
        dlsym(RTLD_DEFAULT, "omp_get_thread_num"));
    o.num_threads = reinterpret_cast<decltype(o.num_threads)>(
        dlsym(RTLD_DEFAULT, "omp_get_num_threads"));
    if (!o.parallel || !o.thread_num || !o.num_threads)
      o = OpenMp();
    return o;
  }();
  return omp;
}

// ---- Backend: runs the MUL_MATs of the splits ggml's scheduler gives it.

struct BackendContext {
  int threads = GGML_DEFAULT_N_THREADS;
  std::unique_ptr<lowbit::ThreadPool> pool;
  // Activations quantized for the weights of one class (run_mul_mat's cls)
  // and the tensor they came from, reused by the
  // MUL_MATs of one split that read the same input (Q/K/V, gate/up).
  lowbit::PreparedActivations activations[3];
  const ggml_tensor *activations_of[3] = {nullptr, nullptr, nullptr};
  int64_t splits = 0, mul_mats = 0;
  double seconds = 0; // inside graph_compute
  std::map<std::string, int64_t> by_conversion;
};

lowbit::ThreadPool &pool_of(BackendContext &ctx) {
  if (!ctx.pool || ctx.pool->size() != ctx.threads) {
    lowbit::ThreadPool::Options options;
    options.threads = ctx.threads;
    // llama.cpp's threads are not pinned, and neither are ours.
    options.pin = false;
    options.pin_caller = false;
    options.policy = lowbit::SchedulePolicy::Static;
    ctx.pool.reset();
    ctx.pool = std::make_unique<lowbit::ThreadPool>(options);
  }
  return *ctx.pool;
}

/// fn(begin, end) over contiguous, equal chunks of [0, n), one per thread
/// (lowbit::split_tiles), on the OpenMP team or the pool; the first
/// exception of any chunk is rethrown here.
template <typename F>
void parallel_for(BackendContext &ctx, int64_t n, const F &fn) {
  const OpenMp &omp = process_openmp();
  if (!omp.parallel) {
    pool_of(ctx).run(n, [&](int64_t begin, int64_t end, int) {
      fn(begin, end);
    });
    return;
  }
  struct Job {
    const F *fn;
    const OpenMp *omp;
    int64_t n;
    std::atomic<bool> failed{false};
    std::exception_ptr error;
  } job{&fn, &omp, n};
  omp.parallel(
      [](void *data) {
        Job &j = *static_cast<Job *>(data);
        const lowbit::TileRange r = lowbit::split_tiles(
            j.n, j.omp->num_threads(), j.omp->thread_num());
        if (r.empty())
          return;
        try {
          (*j.fn)(r.begin, r.end);
        } catch (...) {
          if (!j.failed.exchange(true))
            j.error = std::current_exception();
        }
      },
      &job, unsigned(ctx.threads), 0);
  if (job.error)
    std::rethrow_exception(job.error);
}

void run_mul_mat(BackendContext &ctx, ggml_tensor *node) {
  const ggml_tensor *w = node->src[0];
  const ggml_tensor *x = node->src[1];
  const WeightSlot *slot =
      in_lowbit_buffer(w) && !w->view_src ? slot_of(w->buffer, w) : nullptr;
  if (!slot || !slot->packed)
    throw lowbit::Error(std::string(w->name) + ": " +
                        (slot && !slot->error.empty()
                             ? slot->error
                             : "not repacked (its bytes were never set)"));
  const PackedTensor &packed = *slot->packed;
  const lowbit::UpconvertWeights &W = packed.weights;
  const int64_t N = ggml_nrows(x);

  // Ternary formats' activations (one scale per row), per-32 blocks with
  // sums per 32, or with sums per 16 (q2_k, q3_k, q6_k): a q6_k attn_v
  // beside q4_k attn_q/attn_k (llama.cpp's Q4_K_M) reads the input of
  // another class.
  const lowbit::GgmlBlockType *block = lowbit::ggml_block_type(W.format.kind);
  const int cls = W.format.is_ternary()              ? 1
                  : block && block->scale_block == 16 ? 2
                                                      : 0;
  lowbit::PreparedActivations &A = ctx.activations[cls];
  if (ctx.activations_of[cls] != x) {
    lowbit::shape_activations(W.format, N, W.K, A);
    const float *X = static_cast<const float *>(x->data);
    // A decode step's one row is quicker alone than a handoff.
    constexpr int64_t kParallelValues = int64_t(1) << 15;
    if (N < 2 || N * W.K < kParallelValues)
      lowbit::quantize_activation_rows(X, A, 0, N);
    else
      parallel_for(ctx, N, [&](int64_t begin, int64_t end) {
        lowbit::quantize_activation_rows(X, A, begin, end);
      });
    ctx.activations_of[cls] = x;
  }
  const lowbit_any_kernel_fn kernel = packed.kernel_for(N).any_fn;
  float *y = static_cast<float *>(node->data);
  parallel_for(ctx, W.num_tiles(), [&](int64_t begin, int64_t end) {
    kernel(W.codes.data(), W.scales_or_null(), W.zeros_or_null(), A.xq.data(),
           A.x_scales.data(), A.x_sums.data(), y, A.N, begin, end, W.w_scale,
           W.M, W.K);
  });
  ++ctx.mul_mats;
  ++ctx.by_conversion[packed.conversion];
}

const char *backend_get_name(ggml_backend_t) { return "LOWBIT"; }

void backend_free(ggml_backend_t backend) {
  auto *ctx = static_cast<BackendContext *>(backend->context);
  // The counter the tests read: every MUL_MAT the scheduler gave this
  // backend ran on a kernel (graph_compute fails otherwise).
  std::string text = "ggml-lowbit: ran " + std::to_string(ctx->mul_mats) +
                     " MUL_MAT on " + kernel_table().target + " kernels in " +
                     std::to_string(ctx->splits) + " splits, " +
                     std::to_string(int64_t(ctx->seconds * 1e3)) + " ms";
  std::string detail;
  for (const auto &[conversion, count] : ctx->by_conversion)
    detail += (detail.empty() ? "" : ", ") + conversion + ": " +
              std::to_string(count);
  if (!detail.empty())
    text += " (" + detail + ")";
  log_line(GGML_LOG_LEVEL_INFO, text);
  delete ctx;
  delete backend;
}

ggml_status backend_graph_compute(ggml_backend_t backend, ggml_cgraph *graph) {
  auto *ctx = static_cast<BackendContext *>(backend->context);
  ++ctx->splits;
  std::fill(std::begin(ctx->activations_of), std::end(ctx->activations_of),
            nullptr);
  const auto start = std::chrono::steady_clock::now();
  struct AddTime {
    BackendContext &ctx;
    std::chrono::steady_clock::time_point start;
    ~AddTime() {
      ctx.seconds += std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - start)
                         .count();
    }
  } add_time{*ctx, start};
  for (int i = 0; i < ggml_graph_n_nodes(graph); ++i) {
    ggml_tensor *node = ggml_graph_node(graph, i);
    switch (node->op) {
    case GGML_OP_NONE:
    case GGML_OP_RESHAPE:
    case GGML_OP_VIEW:
    case GGML_OP_PERMUTE:
    case GGML_OP_TRANSPOSE:
      continue;
    case GGML_OP_MUL_MAT:
      break;
    default:
      log_line(GGML_LOG_LEVEL_ERROR,
               std::string("ggml-lowbit: was given ") + ggml_op_name(node->op) +
                   " (" + node->name + "), which it does not compute");
      return GGML_STATUS_FAILED;
    }
    if (ggml_is_empty(node))
      continue;
    try {
      run_mul_mat(*ctx, node);
    } catch (const std::bad_alloc &) {
      log_line(GGML_LOG_LEVEL_ERROR, "ggml-lowbit: out of memory");
      return GGML_STATUS_ALLOC_FAILED;
    } catch (const std::exception &e) {
      log_line(GGML_LOG_LEVEL_ERROR, std::string("ggml-lowbit: ") +
                                         node->name + ": " + e.what());
      return GGML_STATUS_FAILED;
    }
  }
  return GGML_STATUS_SUCCESS;
}

const ggml_backend_i kBackendInterface = {
    /* .get_name            = */ backend_get_name,
    /* .free                = */ backend_free,
    /* .set_tensor_async    = */ nullptr,
    /* .get_tensor_async    = */ nullptr,
    /* .set_tensor_2d_async = */ nullptr,
    /* .get_tensor_2d_async = */ nullptr,
    /* .cpy_tensor_async    = */ nullptr,
    /* .synchronize         = */ nullptr,
    /* .graph_plan_create   = */ nullptr,
    /* .graph_plan_free     = */ nullptr,
    /* .graph_plan_update   = */ nullptr,
    /* .graph_plan_compute  = */ nullptr,
    /* .graph_compute       = */ backend_graph_compute,
    /* .event_record        = */ nullptr,
    /* .event_wait          = */ nullptr,
    /* .graph_optimize      = */ nullptr,
};

ggml_guid_t backend_guid() {
  static ggml_guid guid = {0x6c, 0x6f, 0x77, 0x62, 0x69, 0x74, 0x2d, 0x67,
                           0x67, 0x6d, 0x6c, 0x2d, 0x63, 0x70, 0x75, 0x01};
  return &guid;
}

/// llama.cpp sets its n_threads on every backend whose registry has this
/// function (llama-context.cpp) before each graph.
void set_n_threads(ggml_backend_t backend, int threads) {
  static_cast<BackendContext *>(backend->context)->threads =
      threads < 1 ? 1 : threads;
}

// ---- Device.

std::string &device_description() {
  static std::string text;
  return text;
}

const char *dev_get_name(ggml_backend_dev_t) { return "LOWBIT"; }

const char *dev_get_description(ggml_backend_dev_t) {
  return device_description().c_str();
}

void dev_get_memory(ggml_backend_dev_t, size_t *free, size_t *total) {
  // Host memory, which the CPU device reports.
  *free = 0;
  *total = 0;
}

enum ggml_backend_dev_type dev_get_type(ggml_backend_dev_t) {
  return GGML_BACKEND_DEVICE_TYPE_ACCEL;
}

void dev_get_props(ggml_backend_dev_t dev, ggml_backend_dev_props *props) {
  props->name = dev_get_name(dev);
  props->description = dev_get_description(dev);
  dev_get_memory(dev, &props->memory_free, &props->memory_total);
  props->type = dev_get_type(dev);
  props->device_id = nullptr;
  props->caps = {
      /* .async                = */ false,
      /* .host_buffer          = */ false,
      /* .buffer_from_host_ptr = */ false,
      /* .events               = */ false,
      /* .mmap_support         = */ false,
  };
}

ggml_backend_t dev_init_backend(ggml_backend_dev_t dev, const char *) {
  log_load_report();
  return new ggml_backend{backend_guid(), kBackendInterface, dev,
                          new BackendContext()};
}

ggml_backend_buffer_type_t dev_get_buffer_type(ggml_backend_dev_t) {
  return lowbit_buffer_type();
}

/// Why a MUL_MAT is not ours ("" when it is).
std::string mul_mat_refusal(const ggml_tensor *op) {
  const ggml_tensor *w = op->src[0];
  const ggml_tensor *x = op->src[1];
  if (!ggml_lowbit::takes_type(uint32_t(w->type), kernel_table())) {
    // A block type lowbit reads (iq4_nl) but has no any-shape kernel for.
    if (lowbit::ggml_block_type_by_id(uint32_t(w->type)))
      return std::string("type ") + ggml_type_name(w->type) +
             ": no lowbit kernel";
    return std::string("type ") + ggml_type_name(w->type);
  }
  if (w->view_src || w->ne[2] != 1 || w->ne[3] != 1 ||
      !ggml_is_contiguous(w))
    return "not a whole 2-D matrix";
  if (!ggml_lowbit::takes_shape(uint32_t(w->type), w->ne[0], kernel_table()))
    return "K = " + std::to_string(w->ne[0]) + " has no kernel";
  if (x->type != GGML_TYPE_F32 || op->type != GGML_TYPE_F32)
    return "activations not F32";
  if (!ggml_is_contiguous(x) || !ggml_is_contiguous(op))
    return "activations not contiguous";
  return "";
}

bool dev_supports_op(ggml_backend_dev_t, const ggml_tensor *op) {
  switch (op->op) {
  case GGML_OP_NONE:
  case GGML_OP_RESHAPE:
  case GGML_OP_VIEW:
  case GGML_OP_PERMUTE:
  case GGML_OP_TRANSPOSE:
    return true;
  case GGML_OP_MUL_MAT:
    break;
  default:
    return false;
  }
  const ggml_tensor *w = op->src[0];
  // A weight already placed elsewhere (the CPU buffer) is not ours; one not
  // placed yet (test-backend-ops asks before it allocates) is judged by its
  // type and shape.
  const ggml_backend_buffer_t buffer =
      w->view_src ? w->view_src->buffer : w->buffer;
  if (buffer && buffer->buft != lowbit_buffer_type())
    return false;
  const std::string refusal = mul_mat_refusal(op);
  if (!refusal.empty() && buffer && w->name[0] != '\0') {
    // llama.cpp's weight_buft_supported asks with the weight in a dummy
    // buffer of ours: a weight we leave to the CPU backend.
    LoadReport &r = load_report();
    std::lock_guard<std::mutex> lock(r.mutex);
    if (r.left_names.insert(w->name).second)
      r.left.emplace_back(w->name, refusal);
  }
  return refusal.empty();
}

bool dev_supports_buft(ggml_backend_dev_t, ggml_backend_buffer_type_t buft) {
  // Activations in host memory are read where they are, with no copy.
  return buft == lowbit_buffer_type() || ggml_backend_buft_is_host(buft);
}

const ggml_backend_device_i kDeviceInterface = {
    /* .get_name             = */ dev_get_name,
    /* .get_description      = */ dev_get_description,
    /* .get_memory           = */ dev_get_memory,
    /* .get_type             = */ dev_get_type,
    /* .get_props            = */ dev_get_props,
    /* .init_backend         = */ dev_init_backend,
    /* .get_buffer_type      = */ dev_get_buffer_type,
    /* .get_host_buffer_type = */ nullptr,
    /* .buffer_from_host_ptr = */ nullptr,
    /* .supports_op          = */ dev_supports_op,
    /* .supports_buft        = */ dev_supports_buft,
    /* .offload_op           = */ nullptr,
    /* .event_new            = */ nullptr,
    /* .event_free           = */ nullptr,
    /* .event_synchronize    = */ nullptr,
};

// ---- Registry.

const char *reg_get_name(ggml_backend_reg_t) { return "LOWBIT"; }

size_t reg_get_device_count(ggml_backend_reg_t) { return 1; }

ggml_backend_dev_t lowbit_device(ggml_backend_reg_t reg) {
  static ggml_backend_device device = {kDeviceInterface, reg, nullptr};
  return &device;
}

ggml_backend_dev_t reg_get_device(ggml_backend_reg_t reg, size_t index) {
  return index == 0 ? lowbit_device(reg) : nullptr;
}

void *reg_get_proc_address(ggml_backend_reg_t, const char *name) {
  if (std::strcmp(name, "ggml_backend_set_n_threads") == 0)
    return reinterpret_cast<void *>(set_n_threads);
  return nullptr;
}

const ggml_backend_reg_i kRegInterface = {
    /* .get_name         = */ reg_get_name,
    /* .get_device_count = */ reg_get_device_count,
    /* .get_device       = */ reg_get_device,
    /* .get_proc_address = */ reg_get_proc_address,
};

ggml_backend_reg *lowbit_reg_storage() {
  static ggml_backend_reg reg = {
      /* .api_version = */ GGML_BACKEND_API_VERSION,
      /* .iface       = */ kRegInterface,
      /* .context     = */ nullptr,
  };
  return &reg;
}

ggml_backend_buffer_type *lowbit_buffer_type() {
  static ggml_backend_buffer_type buft = {
      /* .iface = */ {
          /* .get_name       = */ buft_get_name,
          /* .alloc_buffer   = */ buft_alloc_buffer,
          /* .get_alignment  = */ buft_get_alignment,
          /* .get_max_size   = */ nullptr,
          /* .get_alloc_size = */ nullptr,
          /* .is_host        = */ nullptr,
      },
      /* .device  = */ lowbit_device(lowbit_reg_storage()),
      /* .context = */ nullptr,
  };
  return &buft;
}

/// The registry, or null (with one error line) when this process's ggml is
/// not the version the backend was built against or the CPU runs none of
/// the bundled x86 targets.
ggml_backend_reg_t lowbit_reg() {
  // ggml's loader compares api_version with its own, but the interfaces of
  // ggml-backend-impl.h change without it: the structs above are laid out
  // as in the headers of LOWBIT_GGML_VERSION, so any other ggml is refused.
  if (std::strcmp(ggml_version(), LOWBIT_GGML_VERSION) != 0) {
    log_line(GGML_LOG_LEVEL_ERROR,
             std::string("ggml-lowbit: built for ggml ") + LOWBIT_GGML_VERSION +
                 ", this process runs ggml " + ggml_version() +
                 "; not loading (rebuild it with -DLOWBIT_GGML_SOURCE= that "
                 "llama.cpp's source)");
    return nullptr;
  }
  KernelTable &table = kernel_table();
  if (table.target.empty())
    table = ggml_lowbit::select_kernel_table();
  if (table.target.empty()) {
    log_line(GGML_LOG_LEVEL_ERROR,
             "ggml-lowbit: this CPU runs none of x86-avx512vnni, "
             "x86-avxvnni, x86-avx2 (AVX2, FMA and F16C at least); not "
             "loading");
    return nullptr;
  }
  device_description() = "lowbit " + table.target + " kernels";
  return lowbit_reg_storage();
}

/// ggml_backend_load skips a library whose score is 0.
int lowbit_score() {
  return ggml_lowbit::select_kernel_table().target.empty() ? 0 : 1;
}

} // namespace

GGML_BACKEND_DL_IMPL(lowbit_reg)
GGML_BACKEND_DL_SCORE_IMPL(lowbit_score)
