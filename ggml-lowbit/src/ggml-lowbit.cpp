//===- ggml-lowbit.cpp - a ggml backend on lowbit's generated kernels -----===//
//
// An out-of-tree ggml backend, loaded by an unmodified llama.cpp through
// GGML_BACKEND_PATH (ggml-backend-reg.cpp's ggml_backend_load). It implements
// the interfaces of ggml-backend-impl.h the way ggml's own small backends do
// (ggml-blas; the former ggml-amx, which also repacked weights in its buffer
// type's set_tensor): a registry with one ACCEL device, whose buffer type is
// not host memory. llama.cpp's make_cpu_buft_list (src/llama-model.cpp)
// offers every weight to an ACCEL device's buffer type first, and keeps it
// there when the device's supports_op accepts the op that reads it. Such
// weights are repacked in set_tensor into the layout of the lowbit any-shape
// kernel of the host's best x86 ISA (weights.h). The device accepts every op
// ggml's CPU device accepts, so the scheduler gives it whole graphs;
// graph_compute runs them on a ggml-cpu backend of its own, with the
// products of our weights on lowbit's kernels inside that one computation.
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

#include <immintrin.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <functional>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <set>
#include <unordered_map>
#include <string>
#include <thread>
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
  int64_t packed_bytes = 0; // the packed weights of `taken`
  int reencoded = 0;        // weights whose ggml bytes are re-encoded
  int kept = 0;             // and those whose ggml bytes stay beside them
  int64_t kept_bytes = 0;
  int in_place = 0;         // packed into our pages under the weight
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

/// "12.3 MiB".
std::string mib(int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f MiB", double(bytes) / (1 << 20));
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
  if (!r.taken.empty())
    text += "; holds " + mib(r.packed_bytes) + " packed, ggml's bytes of " +
            std::to_string(r.reencoded) + " re-encoded from them, of " +
            std::to_string(r.kept) + " kept (" + mib(r.kept_bytes) + "); " +
            std::to_string(r.in_place) + " packed in its buffers' pages";
  log_line(GGML_LOG_LEVEL_INFO, text);
  r.taken.clear();
  r.left.clear();
  r.packed_bytes = r.kept_bytes = 0;
  r.reencoded = r.kept = r.in_place = 0;
}

// ---- Buffer: the weights repacked for the kernels, by tensor (not in
// tensor->extra: a reset buffer forgets its slots, and no tensor is left
// pointing at one), over memory that holds ggml's bytes only until a
// weight is repacked. Where the packed form gives ggml's bytes back
// exactly (encode_ggml_rows, checked against every byte once), the pages
// under the weight are returned to the system (MADV_DONTNEED) and
// get_tensor re-encodes: each such weight is held once, packed.
//
// llama.cpp's loader sets each weight whole, from one thread: the weight
// is packed straight from the caller's bytes (no copy into our pages) and
// checked, its tiles split over the loader's thread and a few of ours
// (load_parallel). The packed weights go into our pages under the weight
// (the block formats' tiles are ggml's bytes rearranged, i2s is smaller
// than TQ2_0, and buft_get_alloc_size gives a weight room for a layout
// larger than its bytes), so that the buffer holds them, faulted in by the
// threads that pack; w2g256 goes into memory of its own, and our pages
// stay untouched. ggml's bytes are written there only when the check fails and
// they must be kept. A weight set in pieces is gathered in our pages
// first.

struct WeightSlot {
  size_t written = 0; // bytes set since the last repack
  std::unique_ptr<PackedTensor> packed;
  std::string error;     // why the last repack failed
  bool released = false; // ggml's bytes are given back by re-encoding
  bool dirty = false;    // our pages under the weight may not be zero
};

/// Runs body over [0, count) on the loader's thread and a pool of the
/// backend's (lowbit::ThreadPool, lowbit_runtime: one thread per CPU, at
/// most 8 with the loader's, unpinned, created at the first weight that
/// needs it and asleep between weights), in chunks of kChunk tiles the
/// threads take in turn; ggml_lowbit::ParallelFor. A range that throws
/// stops the others at their next chunk, and its exception is thrown here.
void load_parallel(int64_t count,
                   const std::function<void(int64_t, int64_t)> &body) {
  constexpr int64_t kChunk = 4; // tiles of 16 rows per grab
  if (count <= kChunk) {
    body(0, count);
    return;
  }
  static std::mutex one_weight; // a pool runs one job at a time
  std::lock_guard<std::mutex> lock(one_weight);
  static lowbit::ThreadPool pool([] {
    lowbit::ThreadPool::Options options;
    options.threads = int(
        std::min(8u, std::max(1u, std::thread::hardware_concurrency())));
    options.pin = options.pin_caller = false; // the loader's thread is not ours
    options.seed_from_os = false;             // no scheduled runs
    return options;
  }());
  std::atomic<int64_t> next{0};
  pool.run_on_all([&](int) {
    for (;;) {
      const int64_t begin = next.fetch_add(kChunk);
      if (begin >= count)
        return;
      try {
        body(begin, std::min(count, begin + kChunk));
      } catch (...) {
        next = count;
        throw;
      }
    }
  });
}

struct BufferContext {
  void *base = nullptr;
  size_t mapped = 0;
  std::unordered_map<const ggml_tensor *, std::unique_ptr<WeightSlot>> slots;
};

ggml_backend_buffer_type *lowbit_buffer_type();

/// The tensor that owns t's memory.
const ggml_tensor *base_of(const ggml_tensor *t) {
  return t->view_src ? t->view_src : t;
}

bool in_lowbit_buffer(const ggml_tensor *t) {
  const ggml_backend_buffer_t buffer = base_of(t)->buffer;
  return buffer && buffer->buft == lowbit_buffer_type();
}

/// A tensor in a buffer of ours that no graph computes: a model's weight,
/// or one in the empty buffer llama.cpp's weight_buft_supported probes
/// with (usage "any"). Compute buffers are marked COMPUTE by ggml-alloc.
bool is_our_weight(const ggml_tensor *t) {
  return in_lowbit_buffer(t) &&
         ggml_backend_buffer_get_usage(base_of(t)->buffer) !=
             GGML_BACKEND_BUFFER_USAGE_COMPUTE;
}

/// A 2-D weight of a type we take: the tensors a slot is made for.
bool is_weight(const ggml_tensor *t) {
  return t->view_src == nullptr && t->ne[2] == 1 && t->ne[3] == 1 &&
         ggml_lowbit::takes_type(uint32_t(t->type), kernel_table());
}

void buffer_free(ggml_backend_buffer_t buffer) {
  auto *ctx = static_cast<BufferContext *>(buffer->context);
  munmap(ctx->base, ctx->mapped);
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
  else if (!ctx->slots.empty())
    ctx->slots.erase(tensor);
  return GGML_STATUS_SUCCESS;
}

/// The slot of a weight in a buffer of ours, else null.
WeightSlot *slot_of(ggml_backend_buffer_t buffer, const ggml_tensor *tensor) {
  auto *ctx = static_cast<BufferContext *>(buffer->context);
  auto it = ctx->slots.find(tensor);
  return it == ctx->slots.end() ? nullptr : it->second.get();
}

/// Returns the whole pages under `tensor`'s bytes to the system (reading
/// them gives zeros from then on); the pages it shares with a neighbour
/// stay.
void release_pages(const ggml_tensor *tensor) {
  const uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (uintptr_t(tensor->data) + page - 1) / page * page;
  const uintptr_t end =
      (uintptr_t(tensor->data) + ggml_nbytes(tensor)) / page * page;
  if (end > begin)
    madvise(reinterpret_cast<void *>(begin), end - begin, MADV_DONTNEED);
}

/// Writes ggml's bytes of a released weight back under it.
void restore_bytes(WeightSlot &slot, ggml_tensor *tensor) {
  auto *data = static_cast<uint8_t *>(tensor->data);
  if (slot.packed->in_place) { // its tiles are where the bytes go
    std::vector<uint8_t> bytes(ggml_nbytes(tensor));
    ggml_lowbit::encode_ggml_rows(*slot.packed, 0, tensor->ne[1],
                                  bytes.data());
    std::memcpy(data, bytes.data(), bytes.size());
  } else {
    ggml_lowbit::encode_ggml_rows(*slot.packed, 0, tensor->ne[1], data);
  }
  slot.released = false;
  slot.dirty = true;
}

/// Repacks a weight from `bytes`, all of ggml's bytes of it (the caller's,
/// or our pages under it), and keeps those bytes in our pages unless the
/// packed form gives every one back.
void repack(WeightSlot &slot, ggml_tensor *tensor, const uint8_t *bytes) {
  const std::string name = tensor->name;
  const size_t size = ggml_nbytes(tensor);
  slot.released = false;
  auto pack = [&](const ggml_lowbit::Place &place) {
    slot.packed = std::make_unique<PackedTensor>(ggml_lowbit::pack_tensor(
        uint32_t(tensor->type), bytes, size, tensor->ne[1], tensor->ne[0],
        kernel_table(), name, place,
        load_parallel));
  };
  try {
    // Our pages under the weight (buft_get_alloc_size: room for its
    // packed layout), unless they are the bytes read.
    ggml_lowbit::Place place;
    if (bytes != tensor->data) {
      place = {static_cast<uint8_t *>(tensor->data),
               ggml_backend_buffer_get_alloc_size(tensor->buffer, tensor)};
      if (slot.dirty)
        std::memset(place.bytes, 0, place.size);
      slot.dirty = true;
    }
    pack(place);
    if (slot.packed->in_place && !slot.packed->held_once)
      pack({}); // ggml's bytes must go there: the tiles elsewhere
    slot.released = slot.packed->held_once;
    LoadReport &r = load_report();
    std::lock_guard<std::mutex> lock(r.mutex);
    r.taken.emplace_back(name, slot.packed->conversion);
    r.packed_bytes += slot.packed->weights.packed_bytes();
    (slot.released ? r.reencoded : r.kept) += 1;
    r.in_place += slot.packed->in_place ? 1 : 0;
    if (!slot.released)
      r.kept_bytes += ggml_nbytes(tensor);
  } catch (const std::bad_alloc &) {
    slot.error = name + ": out of memory repacking it";
  } catch (const std::exception &e) {
    slot.error = e.what();
  }
  if (!slot.error.empty())
    log_line(GGML_LOG_LEVEL_ERROR, "ggml-lowbit: " + slot.error);
  if (bytes == tensor->data) {
    if (slot.released)
      release_pages(tensor);
  } else if (!slot.released) {
    std::memcpy(tensor->data, bytes, size);
  }
}

void buffer_set_tensor(ggml_backend_buffer_t buffer, ggml_tensor *tensor,
                       const void *data, size_t offset, size_t size) {
  WeightSlot *slot = slot_of(buffer, tensor);
  if (!slot) {
    std::memcpy(static_cast<char *>(tensor->data) + offset, data, size);
    return;
  }
  slot->error.clear();
  if (offset == 0 && size == ggml_nbytes(tensor) && slot->written == 0) {
    slot->packed.reset();
    repack(*slot, tensor, static_cast<const uint8_t *>(data)); // whole
    return;
  }
  // Loaders may set a tensor in pieces; repack once every byte is there.
  if (slot->released)
    restore_bytes(*slot, tensor); // a piece of it is set again
  slot->packed.reset();
  std::memcpy(static_cast<char *>(tensor->data) + offset, data, size);
  slot->dirty = true;
  slot->written += size;
  if (slot->written < ggml_nbytes(tensor))
    return;
  slot->written = 0;
  repack(*slot, tensor, static_cast<const uint8_t *>(tensor->data));
}

void buffer_get_tensor(ggml_backend_buffer_t buffer, const ggml_tensor *tensor,
                       void *data, size_t offset, size_t size) {
  const WeightSlot *slot = slot_of(buffer, tensor);
  if (!slot || !slot->released) {
    std::memcpy(data, static_cast<const char *>(tensor->data) + offset, size);
    return;
  }
  // ggml's bytes of the rows that hold [offset, offset + size).
  const size_t rowBytes = ggml_lowbit::ggml_row_bytes(*slot->packed);
  const int64_t r0 = int64_t(offset / rowBytes);
  const int64_t r1 = int64_t((offset + size + rowBytes - 1) / rowBytes);
  std::vector<uint8_t> rows(size_t(r1 - r0) * rowBytes);
  ggml_lowbit::encode_ggml_rows(*slot->packed, r0, r1, rows.data());
  std::memcpy(data, rows.data() + (offset - size_t(r0) * rowBytes), size);
}

void buffer_memset_tensor(ggml_backend_buffer_t buffer, ggml_tensor *tensor,
                          uint8_t value, size_t offset, size_t size) {
  WeightSlot *slot = slot_of(buffer, tensor);
  std::memset(static_cast<char *>(tensor->data) + offset, value, size);
  if (slot) {
    slot->packed.reset();
    slot->released = false;
    slot->dirty = true;
    slot->written = 0;
    slot->error = std::string(tensor->name) + ": cleared with memset";
  }
}

void buffer_clear(ggml_backend_buffer_t buffer, uint8_t value) {
  auto *ctx = static_cast<BufferContext *>(buffer->context);
  std::memset(ctx->base, value, buffer->size);
  for (auto &[tensor, slot] : ctx->slots) {
    slot->packed.reset();
    slot->released = false;
    slot->dirty = true;
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
  // Anonymous pages, committed as they are written (and returned when a
  // weight is released); at least one page (llama.cpp asks for 0 bytes).
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  const size_t mapped = std::max(page, (size + page - 1) / page * page);
  void *base = mmap(nullptr, mapped, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) {
    log_line(GGML_LOG_LEVEL_ERROR, "ggml-lowbit: cannot allocate " +
                                       std::to_string(size) + " bytes");
    return nullptr;
  }
  auto *ctx = new BufferContext();
  ctx->base = base;
  ctx->mapped = mapped;
  return ggml_backend_buffer_init(buft, kBufferInterface, ctx, size);
}

size_t buft_get_alignment(ggml_backend_buffer_type_t) { return kAlignment; }

/// A weight we take gets room for its packed layout where that is larger
/// than ggml's bytes (ggml_lowbit::buffer_bytes: TQ1_0's i2s, a ragged M's
/// padded tiles), so that every weight's tiles go under it in our pages
/// (repack's place), as ggml-amx sized its repacked weights; the pages
/// beyond what is written are never committed.
size_t buft_get_alloc_size(ggml_backend_buffer_type_t,
                           const ggml_tensor *tensor) {
  const size_t bytes = ggml_nbytes(tensor);
  return is_weight(tensor)
             ? ggml_lowbit::buffer_bytes(uint32_t(tensor->type), tensor->ne[1],
                                         tensor->ne[0], bytes)
             : bytes;
}

// ---- Backend: one graph_compute per split, the whole split on ggml-cpu.
//
// supports_op takes every op ggml's CPU device takes (below), so ggml's
// scheduler gives this backend whole graphs (the layers, not only the
// MUL_MATs) and there are no split changes, copies or extra launches
// between our products and the ops around them. graph_compute hands the
// split to a ggml-cpu backend of its own in one ggml_backend_graph_compute
// (one parallel region of ggml-cpu's threads for the whole split), with
// each MUL_MAT and GET_ROWS of our weights turned into a GGML_OP_CUSTOM
// node (ggml_custom_op_params: ggml-cpu calls fun(dst, ith, nth) on every
// thread) for the duration of the call, then restored. A product's threads
// quantize its activations, meet at a barrier of its own, and run their
// share of the kernel's tiles (lowbit::split_tiles); the products that read
// one input of one activation class (Q/K/V, gate/up) quantize it once.

/// The CPU device ggml registered (ggml-cpu), or null.
ggml_backend_dev_t cpu_device() {
  static std::atomic<ggml_backend_dev_t> device{nullptr};
  if (!device.load())
    device = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
  return device.load();
}

// ---- The profile (GGML_LOWBIT_PROFILE=1): where a split's time goes, per
// step of bench-model --profile, on each thread; the one-token splits
// (decode steps) and the others (prompts) apart.

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

/// GGML_LOWBIT_PROFILE set and not "0".
bool profiling() {
  static const bool on = [] {
    const char *env = std::getenv("GGML_LOWBIT_PROFILE");
    return env && std::strcmp(env, "0") != 0;
  }();
  return on;
}

/// The step of a token a node of ours belongs to, by its weight's name
/// (llama.cpp's tensor names); the steps of bench-model --profile.
enum Step { kQkv, kWo, kGateUp, kDown, kHead, kNorm, kAttn, kOtherStep, kSteps };
constexpr const char *kStepNames[kSteps] = {
    "qkv", "wo", "gate_up", "down", "head", "norm", "attention", "other"};

Step step_of(const ggml_tensor *weight) {
  const std::string name = weight->name;
  auto has = [&](const char *part) {
    return name.find(part) != std::string::npos;
  };
  if (has("attn_q.") || has("attn_k.") || has("attn_v.") || has("attn_qkv."))
    return kQkv;
  if (has("attn_output."))
    return kWo;
  if (has("ffn_gate.") || has("ffn_up."))
    return kGateUp;
  if (has("ffn_down."))
    return kDown;
  if (name.rfind("output.", 0) == 0 || name.rfind("token_embd.", 0) == 0)
    return kHead;
  return kOtherStep;
}

/// One thread's time in the nodes of one step, summed over the graphs.
struct ThreadTimes {
  double quantize = 0; // shaping and quantizing the activations
  double wait = 0;     // at the node's own barrier
  double kernel = 0;   // its share of the tiles (or rows, GET_ROWS)
};

struct Profile {
  int64_t graphs = 0; // splits
  int64_t tokens = 0; // those with layer 0's Q/K/V: one per forward pass
  double seconds = 0; // in graph_compute
  // Thread 0's time in ggml-cpu's nodes (and ggml's barriers) from the end
  // of the previous node of ours (or the graph's start) to a node of this
  // step; [kSteps]: after the last one.
  double before[kSteps + 1] = {};
  double node[kSteps] = {};  // thread 0, entry to exit of our nodes
  int64_t calls[kSteps] = {};
  int64_t bytes[kSteps] = {}; // packed weights read
  std::vector<std::array<ThreadTimes, kSteps>> threads; // by ith
  Clock::time_point last_end; // thread 0's end of the last node of ours
  // Outside graph_compute, from the end of one split of ours to the start
  // of the next: within a forward pass (the splits of llama.cpp's CPU
  // backend between ours, flash attention, and ggml's scheduler), and
  // from a pass's last split to the next pass's first (llama.cpp's own
  // per-token work: its batch, graph, scheduler and output copies, and
  // its caller's between tokens).
  double within = 0, between = 0, longest_between = 0;
  int64_t betweens = 0; // the gaps `between` sums
};

/// Activations of one class (lowbit::activation_class) of the rows of one
/// input tensor, shared by the products that read them.
struct ActivationKey {
  const ggml_tensor *x;
  int cls;
  bool operator==(const ActivationKey &o) const {
    return x == o.x && cls == o.cls;
  }
};
struct ActivationKeyHash {
  size_t operator()(const ActivationKey &k) const {
    return std::hash<const void *>()(k.x) * 31 + size_t(k.cls);
  }
};

/// What shape_activations makes of a buffer: N rows of K values of one
/// activation class (`format`: the first of its formats that shaped it).
struct ActivationShape {
  int cls;
  int64_t N, K;
  lowbit::Format format;
  bool same(const ActivationShape &o) const {
    return cls == o.cls && N == o.N && K == o.K;
  }
};

/// One node of a split that runs on our code, as a custom node: a product
/// or GET_ROWS of our weights, an RMS_NORM (with the MUL that reads it
/// where ggml-cpu would fuse them), or a prompt's flash attention.
struct BackendContext;

struct Job {
  enum Kind { MulMat, GetRows, RmsNorm, Attn } kind = MulMat;
  ggml_tensor *node = nullptr;
  const WeightSlot *slot = nullptr; // MulMat, GetRows
  ggml_tensor *mul = nullptr;       // RmsNorm: the MUL it computes, or null
  ggml_tensor *add = nullptr;       // RmsNorm: the ADD before it it computes
  ggml_tensor *glu = nullptr;       // RmsNorm: or the SWIGLU before it
  BackendContext *ctx = nullptr;
  int index = 0; // of its node in the graph
  // MulMat: the activations it reads (BackendContext::activations[act], or
  // for one row each thread's own copy unless `shared`), shaped when the
  // split was planned, and whether it quantizes them (the first product of
  // the split that reads them, unless the RMS_NORM that computes its input
  // quantized them: then `shared`).
  size_t act = 0;
  bool quantize = false;
  bool shared = false;
  // RmsNorm: the activation buffers it quantizes each of its rows into,
  // right after computing it (for the products that read its output).
  std::vector<size_t> quantize_into;
  // MulMat: the products after it in the graph (with only views between)
  // that read the same activations, whose tiles its node runs too (the
  // threads take the chunks of all of them from one counter: one barrier
  // after them where ggml-cpu had one per product); `merged` marks those
  // products, whose nodes are skipped.
  std::vector<Job *> members;
  bool merged = false;
  Job *leader = nullptr; // the product whose node runs a merged one
  // Its threads meet after quantizing the activations (more than one row),
  // and take chunks of its tiles from next_chunk.
  std::atomic<int> quantized{0};
  std::atomic<int64_t> next_chunk{0};
  std::atomic<bool> failed{false};
  std::string error;
  Profile *profile = nullptr; // while profiling
  Step step = kOtherStep;
  // The node as the graph had it (and the MUL's and ADD's ops).
  ggml_op op = GGML_OP_NONE, mul_op = GGML_OP_NONE, add_op = GGML_OP_NONE;
  ggml_op glu_op = GGML_OP_NONE;
  int32_t op_params[GGML_MAX_OP_PARAMS / sizeof(int32_t)] = {};
};

struct BackendContext {
  // The device this backend reports (ggml_backend_get_device): the
  // registry's device or compute_device's, copied so that its context is
  // this backend (supports_op asks it whether one-token attention is ours).
  ggml_backend_device device = {};
  // supports_op was asked about a prompt's flash attention
  // (kFlashAttnRows query rows or more) on this backend's device: from
  // then on a decode step's is ours too (dev_supports_op).
  std::atomic<bool> prompt_attention{false};
  int threads = GGML_DEFAULT_N_THREADS;
  ggml_backend_t cpu = nullptr;
  void (*cpu_set_threads)(ggml_backend_t, int) = nullptr;
  std::vector<std::unique_ptr<Job>> jobs; // reused; the first n_jobs count
  size_t n_jobs = 0;
  // Activation buffers, reused from graph to graph, each of one shape in a
  // split (shapes[act]: they are shaped before the split runs, so a
  // split's products reuse a buffer after its last reader only for the
  // same shape): a split holds as many as it has inputs alive at once. One-row products
  // quantize into each thread's own copy instead: own[thread][act].
  std::vector<std::unique_ptr<lowbit::PreparedActivations>> activations;
  std::vector<std::vector<std::unique_ptr<lowbit::PreparedActivations>>> own;
  std::vector<ActivationShape> shapes;
  // plan_jobs' scratch, kept from split to split so that planning one
  // allocates nothing once the graphs' sizes were seen: per job the input
  // it reads (keys), per input its last job and its first while it lives,
  // per buffer whether a live input holds it and whether a job of the
  // split reads it (2: shaped for the split).
  std::vector<ActivationKey> keys;
  std::unordered_map<ActivationKey, size_t, ActivationKeyHash> last, live;
  std::vector<char> busy, used;
  int64_t splits = 0, mul_mats = 0, get_rows = 0, cpu_nodes = 0;
  int64_t norms = 0, fused_muls = 0; // RMS_NORMs ours, MULs with them
  int64_t fused_adds = 0; // ADDs computed by the RMS_NORM after them
  int64_t fused_glus = 0; // SWIGLUs likewise
  int64_t merged = 0;     // MUL_MATs run in the node of the one before
  int64_t attentions = 0; // FLASH_ATTN_EXT on our code
  double seconds = 0; // inside graph_compute
  std::map<std::string, int64_t> by_conversion;
  // GGML_LOWBIT_PROFILE: the one-token splits, and those of more rows.
  Profile decode_profile, prompt_profile;
  // While profiling: the end of the last graph_compute, if any, and
  // whether the split being computed starts a forward pass.
  Clock::time_point last_compute_end;
  bool computed = false, pass_start = false;
};

/// Waits until all nth threads of a job have arrived at `counter` (a
/// one-shot barrier: each job runs once per graph_compute).
void arrive_and_wait(std::atomic<int> &counter, int nth) {
  counter.fetch_add(1, std::memory_order_acq_rel);
  while (counter.load(std::memory_order_acquire) < nth)
    _mm_pause();
}

/// Runs f, recording its exception in the job (the first one).
template <typename F> void guarded(Job &job, const F &f) {
  try {
    f();
  } catch (const std::exception &e) {
    if (!job.failed.exchange(true))
      job.error = e.what();
  } catch (...) {
    if (!job.failed.exchange(true))
      job.error = "unknown error";
  }
}

/// Adds one thread's times in a node of ours to the profile: [t0, t1)
/// quantizing, [t1, t2) at the node's barrier, [t2, t3) its share of the
/// work; thread 0 also the time in ggml-cpu since the previous node of ours.
void record(Job &job, int ith, Clock::time_point t0, Clock::time_point t1,
            Clock::time_point t2, Clock::time_point t3) {
  Profile &p = *job.profile;
  if (size_t(ith) < p.threads.size()) {
    ThreadTimes &t = p.threads[size_t(ith)][job.step];
    t.quantize += seconds_between(t0, t1);
    t.wait += seconds_between(t1, t2);
    t.kernel += seconds_between(t2, t3);
  }
  if (ith == 0) {
    p.before[job.step] += seconds_between(p.last_end, t0);
    p.node[job.step] += seconds_between(t0, t3);
    p.last_end = t3;
  }
}

/// Quantizes the activations of a product into the job's shared buffer
/// (shaped when the split was planned): its rows split over the threads
/// when there are enough of them, else on thread 0.
void quantize_shared(Job &job, const float *X, int64_t N, int64_t K,
                     lowbit::PreparedActivations &A, int ith, int nth) {
  constexpr int64_t kParallelValues = int64_t(1) << 15;
  const bool split = nth > 1 && N * K >= kParallelValues;
  const lowbit::TileRange r =
      split ? lowbit::split_tiles(N, nth, ith)
            : lowbit::TileRange{0, ith == 0 ? N : 0};
  if (!r.empty())
    guarded(job, [&] {
      lowbit::quantize_activation_rows(X, A, r.begin, r.end);
    });
}

/// Tiles per chunk of a product's work, so that a thread the OS or the
/// memory system slows down takes fewer chunks and the threads finish
/// within about a chunk of each other at ggml's barrier after the node.
/// One activation row: about 8 chunks per thread and at least 4 tiles (64
/// rows, ggml-cpu's chunk for one row). More rows: whole groups of
/// kGemmGroupTiles (the GEMM configs' largest tile_m is 64 rows, and a
/// kernel runs the tiles of a partial group one at a time; the engine's
/// prefill chunks are aligned the same way), as few as give a chunk 2^20
/// multiply-adds (a tile is 16 x N x K of them), at most the groups of 1/8
/// of a thread's share: one group (64 rows) of a 2560-wide weight for a
/// 128-token prompt, where 1/16 of its tiles was 10.
int64_t chunk_tiles(int64_t tiles, int nth, int64_t N, int64_t K) {
  const int64_t per_thread = tiles / (8 * int64_t(nth));
  if (N == 1)
    return std::max<int64_t>(4, per_thread);
  constexpr int64_t kGemmGroupTiles = 4;
  constexpr int64_t kChunkMacs = int64_t(1) << 20;
  const int64_t tile_macs = 16 * N * K;
  const int64_t groups =
      std::min(per_thread / kGemmGroupTiles,
               (kChunkMacs + tile_macs * kGemmGroupTiles - 1) /
                   (tile_macs * kGemmGroupTiles));
  return kGemmGroupTiles * std::max<int64_t>(1, groups);
}

/// The most products merged into one product's node.
constexpr size_t kMaxMerged = 3;

void run_mul_mat(Job &job, ggml_tensor *node, int ith, int nth) {
  const PackedTensor &packed = *job.slot->packed;
  const lowbit::UpconvertWeights &W = packed.weights;
  const ggml_tensor *x = node->src[1];
  const float *X = static_cast<const float *>(x->data);
  const int64_t N = ggml_nrows(x);
  BackendContext &ctx = *job.ctx;
  Clock::time_point t0, t1, t2;
  if (job.profile)
    t0 = t1 = Clock::now();
  // One row (a decode step): every thread quantizes it into its own copy,
  // a few microseconds, where sharing one copy would cost a barrier of the
  // threads per input (four per layer).
  const bool own = N == 1 && !job.shared && size_t(nth) <= ctx.own.size();
  lowbit::PreparedActivations &A =
      own ? *ctx.own[size_t(ith)][job.act] : *ctx.activations[job.act];
  if (job.quantize) {
    if (own)
      guarded(job, [&] { lowbit::quantize_activation_rows(X, A, 0, N); });
    else
      quantize_shared(job, X, N, W.K, A, ith, nth);
    if (job.profile)
      t1 = Clock::now();
    if (!own)
      arrive_and_wait(job.quantized, nth);
  }
  if (job.profile)
    t2 = Clock::now();
  // The tiles of this product and of those merged into it, in chunks the
  // threads take in turn (ggml-cpu's mul_mat does the same with an atomic
  // counter): each thread its first chunk, then the next free one. The
  // node's last nth chunks go in quarters (kTailSplit), so that the
  // threads reach ggml's barrier after the node within a quarter chunk of
  // each other instead of a chunk.
  constexpr int64_t kTailSplit = 4;
  const size_t parts = 1 + job.members.size();
  std::array<int64_t, kMaxMerged + 1> chunk{}, chunks{};
  int64_t total = 0;
  for (size_t p = 0; p < parts; ++p) {
    const lowbit::UpconvertWeights &Wp =
        p == 0 ? W : job.members[p - 1]->slot->packed->weights;
    const int64_t tiles = Wp.num_tiles();
    chunk[p] = chunk_tiles(tiles, nth, N, Wp.K);
    chunks[p] = (tiles + chunk[p] - 1) / chunk[p];
    total += chunks[p];
  }
  // The last part: its chunks before the tail, then the tail's tiles in
  // pieces of `piece`.
  const size_t last = parts - 1;
  const int64_t last_tiles =
      (last == 0 ? W : job.members[last - 1]->slot->packed->weights)
          .num_tiles();
  const int64_t tail_begin =
      std::max<int64_t>(0, chunks[last] - nth) * chunk[last];
  const int64_t piece = std::max<int64_t>(1, chunk[last] / kTailSplit);
  const int64_t head_chunks = tail_begin / chunk[last];
  total += head_chunks + (last_tiles - tail_begin + piece - 1) / piece -
           chunks[last];
  if (!job.failed) {
    for (int64_t c = ith; c < total;
         c = nth + job.next_chunk.fetch_add(1, std::memory_order_relaxed)) {
      size_t p = 0;
      int64_t local = c;
      while (p < last && local >= chunks[p])
        local -= chunks[p++];
      int64_t begin, end;
      if (p < last || local < head_chunks) {
        begin = local * chunk[p];
        end = begin + chunk[p];
      } else {
        begin = tail_begin + (local - head_chunks) * piece;
        end = begin + piece;
      }
      const Job &part = p == 0 ? job : *job.members[p - 1];
      const PackedTensor &pp = *part.slot->packed;
      const lowbit::UpconvertWeights &Wp = pp.weights;
      pp.kernel_for(N).any_fn(
          Wp.codes.data(), Wp.scales_or_null(), Wp.zeros_or_null(),
          A.xq.data(), A.x_scales.data(), A.x_sums.data(),
          static_cast<float *>(part.node->data), A.N, begin,
          std::min(Wp.num_tiles(), end), Wp.w_scale, Wp.M, Wp.K);
    }
  }
  if (job.profile)
    record(job, ith, t0, t1, t2, Clock::now());
}

/// GET_ROWS of a weight of ours (the token embedding of a model whose
/// output head is tied to it): ggml's bytes of each row (re-encoded where
/// they were released) through ggml's own to_float.
void run_get_rows(Job &job, ggml_tensor *node, int ith, int nth) {
  const ggml_tensor *w = node->src[0];
  const ggml_tensor *ids = node->src[1];
  const lowbit::TileRange r = lowbit::split_tiles(ids->ne[0], nth, ith);
  const ggml_to_float_t to_float = ggml_get_type_traits(w->type)->to_float;
  const PackedTensor &packed = *job.slot->packed;
  thread_local std::vector<uint8_t> bytes;
  bytes.resize(ggml_lowbit::ggml_row_bytes(packed));
  for (int64_t i = r.begin; i < r.end; ++i) {
    const int32_t id = *reinterpret_cast<const int32_t *>(
        static_cast<const char *>(ids->data) + i * ids->nb[0]);
    if (id < 0 || id >= w->ne[1]) {
      if (!job.failed.exchange(true))
        job.error = "row " + std::to_string(id) + " of " +
                    std::to_string(w->ne[1]);
      return;
    }
    const uint8_t *row = static_cast<const uint8_t *>(w->data) + id * w->nb[1];
    if (job.slot->released) {
      ggml_lowbit::encode_ggml_rows(packed, id, id + 1, bytes.data());
      row = bytes.data();
    }
    to_float(row, reinterpret_cast<float *>(static_cast<char *>(node->data) +
                                            i * node->nb[1]),
             w->ne[0]);
  }
}

/// e^x of 8 floats: lowbit's engine's exp8 (engine/kernels.cpp), within 2
/// ulp of expf for x in [-87, 88]: x = n ln2 + r, e^r by its Taylor series
/// to degree 7, times 2^n; below -87 (and -infinity), 0; above 88.72,
/// infinity.
__attribute__((target("avx2,fma"))) inline __m256 exp8(__m256 x) {
  const __m256 keep = _mm256_cmp_ps(x, _mm256_set1_ps(-87.0f), _CMP_GE_OQ);
  const __m256 overflow = _mm256_cmp_ps(x, _mm256_set1_ps(88.72f), _CMP_GT_OQ);
  x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-87.0f)),
                    _mm256_set1_ps(88.0f));
  const __m256 shifter = _mm256_set1_ps(12582912.0f); // rounds to integers
  const __m256 n = _mm256_sub_ps(
      _mm256_fmadd_ps(x, _mm256_set1_ps(1.44269504088896341f), shifter),
      shifter);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693145751953125f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(1.42860682030941723e-6f), r);
  __m256 p = _mm256_set1_ps(1.0f / 5040.0f);
  for (const float c : {1.0f / 720.0f, 1.0f / 120.0f, 1.0f / 24.0f,
                        1.0f / 6.0f, 0.5f, 1.0f, 1.0f})
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(c));
  const __m256i e = _mm256_slli_epi32(
      _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  const __m256 y = _mm256_and_ps(_mm256_mul_ps(p, _mm256_castsi256_ps(e)), keep);
  return _mm256_blendv_ps(y, _mm256_set1_ps(INFINITY), overflow);
}

/// y = silu(g) * u = g / (1 + e^-g) * u over n floats (ggml-cpu's SWIGLU,
/// ggml_vec_swiglu_f32, in the same order; e^x within 2 ulp of expf, as
/// ggml's own vector exp is). y may be g or u.
__attribute__((target("avx2,fma"))) void swiglu_row(const float *g,
                                                    const float *u, float *y,
                                                    int64_t n) {
  const __m256 one = _mm256_set1_ps(1.0f);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_loadu_ps(g + i);
    const __m256 e = exp8(_mm256_sub_ps(_mm256_setzero_ps(), x));
    _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_div_ps(x, _mm256_add_ps(one, e)),
                                          _mm256_loadu_ps(u + i)));
  }
  for (; i < n; ++i) {
    const float e = _mm256_cvtss_f32(exp8(_mm256_set1_ps(-g[i])));
    y[i] = g[i] / (1.0f + e) * u[i];
  }
}

// ---- RMS_NORM. ggml-cpu's loop (ggml_compute_forward_rms_norm_f32 in
// ops.cpp) adds the squares of a row one at a time into a double: one
// value per add latency (4 cycles), 5% of a BitNet-2B prompt's CPU time
// on this host (docs/perf/ggml-lowbit.md). Here the same float squares are
// summed in double over 16 lanes (AVX2, which every kernel table needs):
// another order of double sums (for a row of n values both orders are
// within n * 2^-53 of the exact sum: 2^-40 for a 6912-wide row, far below
// the float mean's rounding, 2^-24), then the same float mean, scale and
// products as ggml's.

/// The sum of x[i] * x[i] (each rounded to float) in double.
__attribute__((target("avx2"))) double sum_squares(const float *x,
                                                   int64_t n) {
  __m256d acc[4] = {_mm256_setzero_pd(), _mm256_setzero_pd(),
                    _mm256_setzero_pd(), _mm256_setzero_pd()};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 a = _mm256_loadu_ps(x + i), b = _mm256_loadu_ps(x + i + 8);
    const __m256 a2 = _mm256_mul_ps(a, a), b2 = _mm256_mul_ps(b, b);
    acc[0] = _mm256_add_pd(acc[0], _mm256_cvtps_pd(_mm256_castps256_ps128(a2)));
    acc[1] = _mm256_add_pd(acc[1], _mm256_cvtps_pd(_mm256_extractf128_ps(a2, 1)));
    acc[2] = _mm256_add_pd(acc[2], _mm256_cvtps_pd(_mm256_castps256_ps128(b2)));
    acc[3] = _mm256_add_pd(acc[3], _mm256_cvtps_pd(_mm256_extractf128_ps(b2, 1)));
  }
  const __m256d all = _mm256_add_pd(_mm256_add_pd(acc[0], acc[1]),
                                    _mm256_add_pd(acc[2], acc[3]));
  alignas(32) double lanes[4];
  _mm256_store_pd(lanes, all);
  double sum = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
  for (; i < n; ++i)
    sum += double(x[i] * x[i]);
  return sum;
}

/// y = x * scale, or (x * scale) * w: ggml's order of the float products.
/// y may be x.
__attribute__((target("avx2"))) void scale_row(const float *x, float scale,
                                               const float *w, float *y,
                                               int64_t n) {
  const __m256 s = _mm256_set1_ps(scale);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 v = _mm256_mul_ps(_mm256_loadu_ps(x + i), s);
    if (w)
      v = _mm256_mul_ps(v, _mm256_loadu_ps(w + i));
    _mm256_storeu_ps(y + i, v);
  }
  for (; i < n; ++i)
    y[i] = w ? x[i] * scale * w[i] : x[i] * scale;
}

/// y = a + b (ggml-cpu's ADD of F32 rows: one float add per value, so
/// any order gives its result). y may be a or b.
__attribute__((target("avx2"))) void add_row(const float *a, const float *b,
                                             float *y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(y + i, _mm256_add_ps(_mm256_loadu_ps(a + i),
                                          _mm256_loadu_ps(b + i)));
  for (; i < n; ++i)
    y[i] = a[i] + b[i];
}

/// The int32 codes of 8 values: (x * s + r) - r clamped to [lo, hi].
__attribute__((target("avx2"))) inline __m256i
codes8(const float *x, __m256 s, __m256 r, __m256 lo, __m256 hi) {
  const __m256 v =
      _mm256_sub_ps(_mm256_add_ps(_mm256_mul_ps(_mm256_loadu_ps(x), s), r), r);
  return _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(v, lo), hi));
}

/// Row n of X [P.N][P.K] quantized into P exactly as
/// lowbit::quantize_activation_rows does (runtime/src/upconvert.cpp and
/// activation.cpp: per block the largest |x| as integer bits, s = 127 /
/// max(amax, 1e-5), each value rounded by adding and subtracting 1.5 * 2^23,
/// clamped to int8; the row's padding zeroed; int32 sums of the codes per
/// sum_block), with AVX2: the runtime is compiled for any x86-64 CPU
/// (SSE2, no unsigned max or sign extension), and its loops took 2.3% of a
/// BitNet-2B prompt's samples on the norms' rows (docs/perf/ggml-lowbit.md).
/// The same float operations in the same order give the same codes and
/// scales; a block with a value that is not finite goes to the runtime's
/// loop, which throws the error naming it.
__attribute__((target("avx2"))) void quantize_row(const float *X,
                                                  lowbit::PreparedActivations &P,
                                                  int64_t n) {
  const int64_t blocks = P.Kp / P.block;
  const int64_t qblock = blocks == 1 ? P.K : P.block;
  int8_t *row = P.xq.data() + n * P.Kp;
  for (int64_t b = 0; b < blocks; ++b) {
    const float *x = X + n * P.K + b * qblock;
    int8_t *q = row + b * qblock;
    __m256i vmax = _mm256_setzero_si256();
    const __m256i abs_mask = _mm256_set1_epi32(0x7fffffff);
    int64_t k = 0;
    for (; k + 8 <= qblock; k += 8)
      vmax = _mm256_max_epu32(
          vmax, _mm256_and_si256(_mm256_loadu_si256(
                                     reinterpret_cast<const __m256i *>(x + k)),
                                 abs_mask));
    alignas(32) uint32_t lanes[8];
    _mm256_store_si256(reinterpret_cast<__m256i *>(lanes), vmax);
    uint32_t amax_bits = 0;
    for (const uint32_t l : lanes)
      amax_bits = std::max(amax_bits, l);
    for (; k < qblock; ++k) {
      uint32_t bits;
      std::memcpy(&bits, x + k, sizeof bits);
      amax_bits = std::max(amax_bits, bits & 0x7fffffffu);
    }
    if (amax_bits >= 0x7f800000u) { // the runtime's error
      lowbit::quantize_activation_rows(X, P, n, n + 1);
      return;
    }
    float amax;
    std::memcpy(&amax, &amax_bits, sizeof amax);
    const float s = 127.0f / std::max(amax, 1e-5f);
    P.x_scales[size_t(n * blocks + b)] = s;
    constexpr float kRound = 0x1.8p23f;
    const __m256 vs = _mm256_set1_ps(s), vr = _mm256_set1_ps(kRound);
    const __m256 lo = _mm256_set1_ps(-128.0f), hi = _mm256_set1_ps(127.0f);
    k = 0;
    for (; k + 32 <= qblock; k += 32) {
      const __m256i ab = _mm256_packs_epi32(codes8(x + k, vs, vr, lo, hi),
                                            codes8(x + k + 8, vs, vr, lo, hi));
      const __m256i cd = _mm256_packs_epi32(codes8(x + k + 16, vs, vr, lo, hi),
                                            codes8(x + k + 24, vs, vr, lo, hi));
      // packs interleaves the 128-bit lanes: 4-byte groups 0 2 4 6 1 3 5 7.
      const __m256i v = _mm256_permutevar8x32_epi32(
          _mm256_packs_epi16(ab, cd), _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
      _mm256_storeu_si256(reinterpret_cast<__m256i *>(q + k), v);
    }
    for (; k < qblock; ++k) {
      const float r = (x[k] * s + kRound) - kRound;
      q[k] = int8_t(std::clamp(r, -128.0f, 127.0f));
    }
  }
  std::fill(row + P.K, row + P.Kp, int8_t(0));
  // Sums of the codes per sum_block (16, 32 or the row, all multiples of
  // 16): |code + 128| summed by vpsadbw, less 128 a code.
  const int64_t sb = P.sum_block, sums = P.Kp / sb;
  const __m128i bias = _mm_set1_epi8(int8_t(0x80));
  for (int64_t b = 0; b < sums; ++b) {
    __m128i acc = _mm_setzero_si128();
    for (int64_t k = b * sb; k < (b + 1) * sb; k += 16)
      acc = _mm_add_epi64(
          acc, _mm_sad_epu8(_mm_xor_si128(_mm_loadu_si128(
                                              reinterpret_cast<const __m128i *>(
                                                  row + k)),
                                          bias),
                            _mm_setzero_si128()));
    const int64_t biased = _mm_cvtsi128_si64(acc) +
                           _mm_cvtsi128_si64(_mm_unpackhi_epi64(acc, acc));
    P.x_sums[size_t(n * sums + b)] = int32_t(biased - 128 * sb);
  }
}

/// Whether an RMS_NORM node runs as ours: F32 rows of contiguous values
/// in and out (what ggml-cpu's loop takes).
bool norm_takes(const ggml_tensor *node) {
  const ggml_tensor *x = node->src[0];
  return x->type == GGML_TYPE_F32 && node->type == GGML_TYPE_F32 &&
         x->nb[0] == sizeof(float) && node->nb[0] == sizeof(float) &&
         ggml_are_same_shape(x, node);
}

/// Whether graph node i, an element-wise op of two F32 operands that
/// `is_op` accepts (the residual ADD; the SWIGLU of gate and up, as
/// llama.cpp's FFN makes it), is computed by the RMS_NORM after it, which
/// reads it (norm_takes): operands of its shape (no broadcast), rows of
/// contiguous values. Its output is still written (the residual stream
/// reads the ADD's again).
template <typename IsOp>
bool fuses_into_norm(ggml_cgraph *graph, int i, IsOp is_op) {
  if (i + 1 >= ggml_graph_n_nodes(graph))
    return false;
  const ggml_tensor *node = ggml_graph_node(graph, i);
  const ggml_tensor *norm = ggml_graph_node(graph, i + 1);
  if (!is_op(node) || !node->src[1] || norm->op != GGML_OP_RMS_NORM ||
      norm->src[0] != node || !norm_takes(norm))
    return false;
  for (const ggml_tensor *t : {node->src[0], node->src[1]})
    if (t->type != GGML_TYPE_F32 || !ggml_are_same_shape(t, node) ||
        t->nb[0] != sizeof(float))
      return false;
  return node->type == GGML_TYPE_F32;
}

bool add_fuses(ggml_cgraph *graph, int i) {
  return fuses_into_norm(graph, i, [](const ggml_tensor *t) {
    return t->op == GGML_OP_ADD;
  });
}

bool glu_fuses(ggml_cgraph *graph, int i) {
  return fuses_into_norm(graph, i, [](const ggml_tensor *t) {
    return t->op == GGML_OP_GLU && ggml_get_glu_op(t) == GGML_GLU_OP_SWIGLU;
  });
}

/// The MUL after graph node i (an RMS_NORM) that ggml-cpu would fuse with
/// it (ggml_cpu_try_fuse_ops: ggml_can_fuse, F32, a weight row of the
/// norm's width), else null.
ggml_tensor *fused_mul(ggml_cgraph *graph, int i) {
  if (!ggml_can_fuse(graph, i, {GGML_OP_RMS_NORM, GGML_OP_MUL}))
    return nullptr;
  ggml_tensor *norm = ggml_graph_node(graph, i);
  ggml_tensor *mul = ggml_graph_node(graph, i + 1);
  const ggml_tensor *w = mul->src[0] == norm ? mul->src[1] : mul->src[0];
  const bool takes = mul->type == GGML_TYPE_F32 && w->type == GGML_TYPE_F32 &&
                     w->ne[0] == norm->ne[0] && w->nb[0] == sizeof(float) &&
                     mul->nb[0] == sizeof(float);
  return takes ? mul : nullptr;
}

/// The row (i1, i2, i3) of t.
float *row_of(const ggml_tensor *t, int64_t i1, int64_t i2, int64_t i3) {
  return reinterpret_cast<float *>(static_cast<char *>(t->data) +
                                   i1 * t->nb[1] + i2 * t->nb[2] +
                                   i3 * t->nb[3]);
}

/// This thread's rows of an RMS_NORM (into its MUL's output, times the
/// MUL's other source broadcast over the rows, when fused), each after the
/// ADD before it when it computes that too, and each quantized for the
/// products that read it (quantize_into).
void run_rms_norm(Job &job, int ith, int nth) {
  const ggml_tensor *x = job.node->src[0];
  ggml_tensor *y = job.mul ? job.mul : job.node;
  const ggml_tensor *w =
      !job.mul
          ? nullptr
          : (job.mul->src[0] == job.node ? job.mul->src[1] : job.mul->src[0]);
  float eps;
  std::memcpy(&eps, job.op_params, sizeof(float));
  const int64_t n = x->ne[0], rows = x->ne[1] * x->ne[2] * x->ne[3];
  // Chunks of kNormRows rows the threads take in turn (as a product's
  // tiles): a thread the OS slows down takes fewer of them. With the rows
  // split in halves, the main thread took 1.3x the other's time in a
  // prompt's norms (49 against 38 ms a pass, docs/perf/ggml-lowbit.md).
  constexpr int64_t kNormRows = 4;
  const int64_t chunks = (rows + kNormRows - 1) / kNormRows;
  for (int64_t c = ith; c < chunks;
       c = nth + job.next_chunk.fetch_add(1, std::memory_order_relaxed)) {
    const int64_t end = std::min(rows, (c + 1) * kNormRows);
    for (int64_t row = c * kNormRows; row < end; ++row) {
      const int64_t i1 = row % x->ne[1], i2 = row / x->ne[1] % x->ne[2],
                    i3 = row / (x->ne[1] * x->ne[2]);
      const float *xr = reinterpret_cast<const float *>(
          static_cast<const char *>(x->data) + i1 * x->nb[1] + i2 * x->nb[2] +
          i3 * x->nb[3]);
      if (job.add) // x is the ADD's output
        add_row(row_of(job.add->src[0], i1, i2, i3),
                row_of(job.add->src[1], i1, i2, i3),
                row_of(job.add, i1, i2, i3), n);
      if (job.glu) // or the SWIGLU's
        swiglu_row(row_of(job.glu->src[0], i1, i2, i3),
                   row_of(job.glu->src[1], i1, i2, i3),
                   row_of(job.glu, i1, i2, i3), n);
      float *yr = reinterpret_cast<float *>(static_cast<char *>(y->data) +
                                            i1 * y->nb[1] + i2 * y->nb[2] +
                                            i3 * y->nb[3]);
      const float *wr =
          !w ? nullptr
             : reinterpret_cast<const float *>(
                   static_cast<const char *>(w->data) +
                   i1 % w->ne[1] * w->nb[1] + i2 % w->ne[2] * w->nb[2] +
                   i3 % w->ne[3] * w->nb[3]);
      const float mean = float(sum_squares(xr, n) / double(n));
      scale_row(xr, 1.0f / std::sqrt(mean + eps), wr, yr, n);
      for (const size_t act : job.quantize_into)
        guarded(job, [&] {
          quantize_row(static_cast<const float *>(y->data),
                       *job.ctx->activations[act], row);
        });
    }
  }
}

// ---- A prompt's flash attention (FLASH_ATTN_EXT of kFlashAttnRows query
// rows or more, which supports_op puts in our split): F32 queries, F16 K
// and V (llama.cpp's default cache), an F16 mask or none, no ALiBi, logit
// softcap or sinks; any other runs ggml-cpu's. ggml-cpu's tiled loop
// (ggml_compute_forward_flash_attn_ext_tiled) converts and transposes each
// K tile for every tile of query rows and covers every tile the mask does
// not rule out whole; here each work item is kAttnRows query rows of one
// head over the positions their mask leaves (the mask's finite span):
// every K and V row is converted once for the item and read once for its
// rows, as lowbit's engine's attention does (engine/kernels.cpp, attend:
// scores, softmax, then the weighted sum of V over four queries at once).
// The softmax is not online: each row's scores are kept whole (one row of
// the mask's width per query row).

/// The fewest query rows of a flash attention the backend takes (a
/// prompt's): llama.cpp's own threshold for batches (graph_get_cb's 32).
constexpr int64_t kFlashAttnRows = 32;

/// Query rows of one head in a work item.
constexpr int64_t kAttnRows = 4;

constexpr uint16_t kMinusInf = 0xfc00; // F16 -infinity

/// Whether the backend runs this FLASH_ATTN_EXT itself (else ggml-cpu).
bool attn_takes(const ggml_tensor *node) {
  const ggml_tensor *q = node->src[0], *k = node->src[1], *v = node->src[2];
  const ggml_tensor *mask = node->src[3];
  float params[3];
  std::memcpy(params, node->op_params, sizeof(params)); // scale, bias, cap
  return q->type == GGML_TYPE_F32 && k->type == GGML_TYPE_F16 &&
         v->type == GGML_TYPE_F16 && node->type == GGML_TYPE_F32 &&
         q->nb[0] == sizeof(float) && k->nb[0] == 2 && v->nb[0] == 2 &&
         node->nb[0] == sizeof(float) && k->ne[0] == q->ne[0] &&
         v->ne[0] == k->ne[0] && k->ne[0] % 8 == 0 && v->ne[1] == k->ne[1] &&
         v->ne[2] == k->ne[2] && v->ne[3] == k->ne[3] &&
         q->ne[2] % k->ne[2] == 0 && q->ne[3] % k->ne[3] == 0 &&
         (!mask || (mask->type == GGML_TYPE_F16 && mask->nb[0] == 2 &&
                    mask->ne[0] >= k->ne[1] && mask->ne[1] >= q->ne[1])) &&
         !node->src[4] && params[1] == 0.0f && params[2] == 0.0f;
}

__attribute__((target("avx2,fma,f16c"))) inline __m256
load_f16(const ggml_fp16_t *p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p)));
}

__attribute__((target("avx2"))) inline float hsum8(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v),
                              _mm256_extractf128_ps(v, 1));
  const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(t, _mm_movehdup_ps(t)));
}


/// scale * dot plus mask value j of row m (F16; none when m is null), or
/// -infinity where the mask is.
__attribute__((target("avx2,f16c"))) inline float
masked_score(float dot, float scale, const uint16_t *m, int64_t j) {
  if (!m)
    return dot * scale;
  return m[j] == kMinusInf ? -INFINITY : dot * scale + _cvtsh_ss(m[j]);
}

/// [a, b): the span of mask row m (L F16 values) between its first and
/// last value that is not -infinity (a == b when there is none), 16 at a
/// time.
__attribute__((target("avx2"))) inline bool all_minus_inf16(const uint16_t *m) {
  return _mm256_movemask_epi8(_mm256_cmpeq_epi16(
             _mm256_loadu_si256(reinterpret_cast<const __m256i *>(m)),
             _mm256_set1_epi16(short(kMinusInf)))) == -1;
}

__attribute__((target("avx2"))) void finite_span(const uint16_t *m, int64_t L,
                                                 int64_t &a, int64_t &b) {
  a = 0;
  while (a + 16 <= L && all_minus_inf16(m + a))
    a += 16;
  while (a < L && m[a] == kMinusInf)
    ++a;
  b = L;
  while (b - 16 >= a && all_minus_inf16(m + b - 16))
    b -= 16;
  while (b > a && m[b - 1] == kMinusInf)
    --b;
}

/// One query row of a work item: row `row` of head `head`.
struct QueryRow {
  int64_t row, head;
};

/// The query rows qs[0, R) (R at most kAttnRows, heads of one K/V head),
/// batch i3: s is scratch of kAttnRows rows of k->ne[1] floats, seen of
/// k->ne[1].
__attribute__((target("avx2,fma,f16c"))) void
attend_rows(const ggml_tensor *node, float scale, const QueryRow *qs,
            int64_t R, int64_t i3, float *s, int32_t *seen) {
  const ggml_tensor *q = node->src[0], *k = node->src[1], *v = node->src[2];
  const ggml_tensor *mask = node->src[3];
  const int64_t D = k->ne[0], L = k->ne[1];
  const char *kbase = static_cast<const char *>(k->data) +
                      qs[0].head / (q->ne[2] / k->ne[2]) * k->nb[2] +
                      i3 / (q->ne[3] / k->ne[3]) * k->nb[3];
  const char *vbase = static_cast<const char *>(v->data) +
                      qs[0].head / (q->ne[2] / v->ne[2]) * v->nb[2] +
                      i3 / (q->ne[3] / v->ne[3]) * v->nb[3];
  // Rows past R repeat row 0 and see nothing (every loop below runs all
  // kAttnRows rows, in registers).
  const float *qr[kAttnRows];
  const uint16_t *mr[kAttnRows] = {};
  float *out[kAttnRows];
  int64_t lo = L, hi = 0; // the span any row's mask leaves
  bool none[kAttnRows];
  for (int64_t r = 0; r < kAttnRows; ++r) {
    if (r >= R) {
      qr[r] = qr[0];
      mr[r] = mr[0];
      none[r] = true;
      continue;
    }
    const int64_t row = qs[r].row, h = qs[r].head;
    qr[r] = reinterpret_cast<const float *>(
        static_cast<const char *>(q->data) + row * q->nb[1] + h * q->nb[2] +
        i3 * q->nb[3]);
    out[r] = reinterpret_cast<float *>(static_cast<char *>(node->data) +
                                       h * node->nb[1] + row * node->nb[2] +
                                       i3 * node->nb[3]);
    int64_t a = 0, b = L;
    if (mask) {
      mr[r] = reinterpret_cast<const uint16_t *>(
          static_cast<const char *>(mask->data) + row * mask->nb[1] +
          h % mask->ne[2] * mask->nb[2] + i3 % mask->ne[3] * mask->nb[3]);
      finite_span(mr[r], L, a, b);
    }
    none[r] = a >= b;
    if (!none[r]) {
      lo = std::min(lo, a);
      hi = std::max(hi, b);
    }
  }
  // Scores: scale * q . k plus the mask (-infinity where it is), three
  // positions at a time (12 sums in registers: each query load serves 3
  // keys, each key 4 queries, as the engine's scores_four does).
  int64_t j = lo;
  for (; j + 3 <= hi; j += 3) {
    const auto *k0 = reinterpret_cast<const ggml_fp16_t *>(kbase + j * k->nb[1]);
    const auto *k1 = reinterpret_cast<const ggml_fp16_t *>(kbase + (j + 1) * k->nb[1]);
    const auto *k2 = reinterpret_cast<const ggml_fp16_t *>(kbase + (j + 2) * k->nb[1]);
    __m256 acc[kAttnRows][3];
    for (int r = 0; r < kAttnRows; ++r)
      acc[r][0] = acc[r][1] = acc[r][2] = _mm256_setzero_ps();
    for (int64_t d = 0; d < D; d += 8) {
      const __m256 a = load_f16(k0 + d), b = load_f16(k1 + d),
                   c = load_f16(k2 + d);
      for (int r = 0; r < kAttnRows; ++r) {
        const __m256 x = _mm256_loadu_ps(qr[r] + d);
        acc[r][0] = _mm256_fmadd_ps(x, a, acc[r][0]);
        acc[r][1] = _mm256_fmadd_ps(x, b, acc[r][1]);
        acc[r][2] = _mm256_fmadd_ps(x, c, acc[r][2]);
      }
    }
    for (int r = 0; r < kAttnRows; ++r)
      for (int t = 0; t < 3; ++t)
        s[r * L + j + t] = masked_score(hsum8(acc[r][t]), scale, mr[r], j + t);
  }
  for (; j < hi; ++j) {
    const auto *kj = reinterpret_cast<const ggml_fp16_t *>(kbase + j * k->nb[1]);
    __m256 acc[kAttnRows];
    for (int r = 0; r < kAttnRows; ++r)
      acc[r] = _mm256_setzero_ps();
    for (int64_t d = 0; d < D; d += 8) {
      const __m256 kk = load_f16(kj + d);
      for (int r = 0; r < kAttnRows; ++r)
        acc[r] = _mm256_fmadd_ps(_mm256_loadu_ps(qr[r] + d), kk, acc[r]);
    }
    for (int r = 0; r < kAttnRows; ++r)
      s[r * L + j] = masked_score(hsum8(acc[r]), scale, mr[r], j);
  }
  // Softmax numerators in place; 1 / their sum.
  float inv[kAttnRows] = {};
  for (int r = 0; r < kAttnRows; ++r) {
    if (none[r])
      continue;
    float *sr = s + r * L;
    __m256 vmax = _mm256_set1_ps(-INFINITY);
    int64_t j = lo;
    for (; j + 8 <= hi; j += 8)
      vmax = _mm256_max_ps(vmax, _mm256_loadu_ps(sr + j));
    const __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(vmax),
                                 _mm256_extractf128_ps(vmax, 1));
    const __m128 m2 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
    float max = _mm_cvtss_f32(_mm_max_ss(m2, _mm_movehdup_ps(m2)));
    for (; j < hi; ++j)
      max = std::max(max, sr[j]);
    __m256 sum = _mm256_setzero_ps();
    j = lo;
    for (; j + 8 <= hi; j += 8) {
      const __m256 e = exp8(
          _mm256_sub_ps(_mm256_loadu_ps(sr + j), _mm256_set1_ps(max)));
      _mm256_storeu_ps(sr + j, e);
      sum = _mm256_add_ps(sum, e);
    }
    float tail = 0.0f;
    for (; j < hi; ++j) {
      sr[j] = _mm256_cvtss_f32(exp8(_mm256_set1_ps(sr[j] - max)));
      tail += sr[j];
    }
    inv[r] = 1.0f / (hsum8(sum) + tail);
  }
  // The positions some row sees (a position none sees is skipped: its
  // cells may hold anything), with each row's weight (0 for a row that
  // sees nothing: its scores were never made weights).
  int64_t n_seen = 0;
  for (int r = 0; r < kAttnRows; ++r)
    if (none[r])
      for (int64_t j = lo; j < hi; ++j)
        s[r * L + j] = 0.0f;
  for (int64_t j = lo; j < hi; ++j)
    if (s[j] != 0.0f || s[L + j] != 0.0f || s[2 * L + j] != 0.0f ||
        s[3 * L + j] != 0.0f)
      seen[n_seen++] = int32_t(j);
  // out = sum_j p_j V_j / sum, 16 columns (or 8) of the rows at a time in
  // registers.
  const int64_t step = D % 16 == 0 ? 16 : 8;
  for (int64_t d0 = 0; d0 < D; d0 += step) {
    __m256 o[kAttnRows][2];
    for (int r = 0; r < kAttnRows; ++r)
      o[r][0] = o[r][1] = _mm256_setzero_ps();
    for (int64_t i = 0; i < n_seen; ++i) {
      const int64_t j = seen[i];
      const auto *vj =
          reinterpret_cast<const ggml_fp16_t *>(vbase + j * v->nb[1]) + d0;
      const __m256 v0 = load_f16(vj);
      const __m256 v1 = step == 16 ? load_f16(vj + 8) : _mm256_setzero_ps();
      for (int r = 0; r < kAttnRows; ++r) {
        const __m256 p = _mm256_broadcast_ss(s + r * L + j);
        o[r][0] = _mm256_fmadd_ps(p, v0, o[r][0]);
        o[r][1] = _mm256_fmadd_ps(p, v1, o[r][1]);
      }
    }
    for (int64_t r = 0; r < R; ++r)
      for (int64_t c = 0; c < step / 8; ++c)
        _mm256_storeu_ps(out[r] + d0 + 8 * c,
                         _mm256_mul_ps(o[r][c], _mm256_set1_ps(inv[r])));
  }
}

/// This thread's work items of a flash attention, taken from the job's
/// counter (a causal mask gives the last rows the most positions). A
/// prompt's item is kAttnRows rows of one head; with fewer rows (a decode
/// step) an item is one row of up to kAttnRows heads that share a K/V head
/// (grouped-query attention: BitNet-2B's 20 heads read 5), so each K and V
/// row is converted once for them, as the engine's attention does for a
/// decode step's heads.
void run_attention(Job &job, ggml_tensor *node, int ith, int nth) {
  const ggml_tensor *q = node->src[0];
  float scale; // the node's op_params are the custom op's while it runs
  std::memcpy(&scale, job.op_params, sizeof(float));
  const int64_t rows = q->ne[1], heads = q->ne[2];
  const int64_t group = heads / node->src[1]->ne[2]; // heads per K/V head
  const bool by_rows = rows >= kAttnRows;
  // by_rows: blocks of rows, by head; else blocks of heads within a group.
  const int64_t per_group = (group + kAttnRows - 1) / kAttnRows;
  const int64_t blocks =
      by_rows ? (rows + kAttnRows - 1) / kAttnRows * heads
              : rows * (heads / group) * per_group;
  const int64_t items = blocks * q->ne[3];
  thread_local std::vector<float> scores;
  thread_local std::vector<int32_t> seen;
  scores.resize(size_t(kAttnRows * node->src[1]->ne[1]));
  seen.resize(size_t(node->src[1]->ne[1]));
  QueryRow qs[kAttnRows];
  for (int64_t c = ith; c < items;
       c = nth + job.next_chunk.fetch_add(1, std::memory_order_relaxed)) {
    const int64_t b = c % blocks, i3 = c / blocks;
    int64_t R = 0;
    if (by_rows) {
      const int64_t row_blocks = (rows + kAttnRows - 1) / kAttnRows;
      const int64_t r0 = b % row_blocks * kAttnRows, h = b / row_blocks;
      for (; R < kAttnRows && r0 + R < rows; ++R)
        qs[R] = {r0 + R, h};
    } else {
      const int64_t row = b % rows, g = b / rows;
      const int64_t h0 = g / per_group * group + g % per_group * kAttnRows;
      const int64_t h1 = std::min(h0 + kAttnRows, g / per_group * group + group);
      for (; h0 + R < h1; ++R)
        qs[R] = {row, h0 + R};
    }
    attend_rows(node, scale, qs, R, i3, scores.data(), seen.data());
  }
}

void run_job(ggml_tensor *node, int ith, int nth, void *userdata) {
  Job &job = *static_cast<Job *>(userdata);
  if (job.kind == Job::MulMat) {
    run_mul_mat(job, node, ith, nth);
    return;
  }
  const Clock::time_point t0 = job.profile ? Clock::now() : Clock::time_point();
  if (job.kind == Job::RmsNorm)
    run_rms_norm(job, ith, nth);
  else if (job.kind == Job::Attn)
    guarded(job, [&] { run_attention(job, node, ith, nth); });
  else
    guarded(job, [&] { run_get_rows(job, node, ith, nth); });
  if (job.profile)
    record(job, ith, t0, t0, t0, Clock::now());
}

/// The profile's lines for the splits of one kind (`kind`: "one-token",
/// "prompt"): per forward pass, the time in ggml-cpu's nodes before each
/// step's products, and per step thread 0's time in our nodes (with the
/// rate it read the packed weights at) and each thread's quantize / wait /
/// work times.
void log_profile(const Profile &p, const char *kind) {
  // Per forward pass (a decoded token, or a prompt's batch) where the
  // splits show them, else per split.
  const double g = double(p.tokens > 0 ? p.tokens : p.graphs), ms = 1e3 / g;
  auto fmt = [](const char *f, double v) {
    char text[32];
    std::snprintf(text, sizeof(text), f, v);
    return std::string(text);
  };
  double ours = 0, theirs = p.before[kSteps];
  for (int s = 0; s < kSteps; ++s) {
    ours += p.node[s];
    theirs += p.before[s];
  }
  log_line(GGML_LOG_LEVEL_INFO,
           "ggml-lowbit: profile of " + std::to_string(p.graphs) + " " +
               kind + " splits (" + std::to_string(p.tokens) +
               " forward passes), ms per " + (p.tokens > 0 ? "pass" : "split") +
               ": " + fmt("%.3f", p.seconds * ms) +
               " in graph_compute (not counting the splits of llama.cpp's "
               "CPU backend between ours: flash attention), " +
               fmt("%.3f", ours * ms) + " in our nodes (thread 0), " +
               fmt("%.3f", theirs * ms) + " in ggml-cpu's nodes between them");
  if (p.tokens > 0)
    log_line(GGML_LOG_LEVEL_INFO,
             "ggml-lowbit: profile " + std::string(kind) +
                 ", outside graph_compute, ms per pass: " +
                 fmt("%.3f", p.within * ms) +
                 " between the splits of one pass (llama.cpp's CPU "
                 "backend's splits: flash attention; ggml's scheduler), " +
                 fmt("%.3f", p.betweens > 0 ? p.between * 1e3 / double(p.betweens)
                                            : 0.0) +
                 " from a pass's last split to the next one's first "
                 "(llama.cpp's per-token work and its caller's; the longest " +
                 fmt("%.3f", p.longest_between * 1e3) + ")");
  for (int s = 0; s < kSteps; ++s) {
    if (p.calls[s] == 0)
      continue;
    std::string text = "ggml-lowbit: profile " + std::string(kind) + " " +
                       kStepNames[s] +
                       ": ggml-cpu before " + fmt("%.3f", p.before[s] * ms) +
                       ", " + fmt("%.1f", double(p.calls[s]) / g) +
                       " nodes " + fmt("%.3f", p.node[s] * ms);
    if (p.bytes[s] > 0 && p.node[s] > 0)
      text += " (" + fmt("%.1f", double(p.bytes[s]) / p.node[s] / 1e9) +
              " GB/s)";
    for (size_t i = 0; i < p.threads.size(); ++i) {
      const ThreadTimes &t = p.threads[i][s];
      text += "; thread " + std::to_string(i) + " quantize " +
              fmt("%.3f", t.quantize * ms) + " wait " + fmt("%.3f", t.wait * ms) +
              " work " + fmt("%.3f", t.kernel * ms);
    }
    log_line(GGML_LOG_LEVEL_INFO, text);
  }
  log_line(GGML_LOG_LEVEL_INFO, "ggml-lowbit: profile " + std::string(kind) +
                                    ": ggml-cpu after the last node of ours " +
                                    fmt("%.3f", p.before[kSteps] * ms));
}

const char *backend_get_name(ggml_backend_t) { return "LOWBIT"; }

void backend_free(ggml_backend_t backend) {
  auto *ctx = static_cast<BackendContext *>(backend->context);
  // The counter the tests read: every MUL_MAT the scheduler gave this
  // backend with a weight of ours ran on a kernel (graph_compute fails
  // otherwise); the other nodes ran on ggml-cpu.
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
  if (ctx->merged > 0)
    text += ", " + std::to_string(ctx->merged) +
            " of them in the node of the one before";
  text += "; " + std::to_string(ctx->get_rows) + " GET_ROWS of its weights, " +
          std::to_string(ctx->norms) + " RMS_NORM (" +
          std::to_string(ctx->fused_muls) + " with their MUL";
  if (ctx->fused_adds > 0)
    text += ", " + std::to_string(ctx->fused_adds) + " with the ADD before";
  if (ctx->fused_glus > 0)
    text += ", " + std::to_string(ctx->fused_glus) + " with the SWIGLU before";
  text += ")";
  if (ctx->attentions > 0)
    text += ", " + std::to_string(ctx->attentions) + " FLASH_ATTN_EXT";
  text += ", " + std::to_string(ctx->cpu_nodes) + " other nodes on ggml-cpu";
  log_line(GGML_LOG_LEVEL_INFO, text);
  if (ctx->decode_profile.graphs > 0)
    log_profile(ctx->decode_profile, "one-token");
  if (ctx->prompt_profile.graphs > 0)
    log_profile(ctx->prompt_profile, "prompt");
  if (ctx->cpu)
    ggml_backend_free(ctx->cpu);
  delete ctx;
  delete backend;
}

/// A job for `node`, reset (the first n_jobs are the split's).
Job &add_job(BackendContext &ctx, Job::Kind kind, ggml_tensor *node) {
  if (ctx.n_jobs == ctx.jobs.size())
    ctx.jobs.push_back(std::make_unique<Job>());
  Job &job = *ctx.jobs[ctx.n_jobs++];
  job.kind = kind;
  job.node = node;
  job.slot = nullptr;
  job.mul = nullptr;
  job.ctx = &ctx;
  job.act = 0;
  job.quantize = false;
  job.shared = false;
  job.quantize_into.clear();
  job.members.clear();
  job.merged = false;
  job.leader = nullptr;
  job.add = nullptr;
  job.glu = nullptr;
  job.index = 0;
  job.quantized = 0;
  job.next_chunk = 0;
  job.failed = false;
  job.error.clear();
  job.profile = nullptr;
  return job;
}

/// The jobs of `graph` (its MUL_MATs and GET_ROWS of our weights, its
/// RMS_NORMs) with their activation buffers, shaped; throws lowbit::Error
/// for a weight of ours that was not repacked.
void plan_jobs(BackendContext &ctx, ggml_cgraph *graph) {
  ctx.n_jobs = 0;
  bool one_token = true; // every product of ours has one activation row
  std::vector<ActivationKey> &keys = ctx.keys;
  keys.clear();
  for (int i = 0; i < ggml_graph_n_nodes(graph); ++i) {
    ggml_tensor *node = ggml_graph_node(graph, i);
    if (node->op == GGML_OP_FLASH_ATTN_EXT && attn_takes(node)) {
      add_job(ctx, Job::Attn, node).index = i;
      keys.push_back({nullptr, -1});
      continue;
    }
    const bool add = add_fuses(graph, i), glu = !add && glu_fuses(graph, i);
    if (add || glu || (node->op == GGML_OP_RMS_NORM && norm_takes(node))) {
      const int at = add || glu ? i + 1 : i; // the RMS_NORM
      Job &job = add_job(ctx, Job::RmsNorm, ggml_graph_node(graph, at));
      job.add = add ? node : nullptr;
      job.glu = glu ? node : nullptr;
      job.index = at;
      job.mul = fused_mul(graph, at);
      i = at + (job.mul ? 1 : 0);
      keys.push_back({nullptr, -1});
      continue;
    }
    const bool ours = (node->op == GGML_OP_MUL_MAT ||
                       node->op == GGML_OP_GET_ROWS) &&
                      is_our_weight(node->src[0]);
    if (!ours) {
      if (!ggml_op_is_empty(node->op) && !ggml_is_empty(node))
        ++ctx.cpu_nodes;
      continue;
    }
    if (ggml_is_empty(node))
      continue;
    const ggml_tensor *w = node->src[0];
    const WeightSlot *slot = w->view_src ? nullptr : slot_of(w->buffer, w);
    if (!slot || !slot->packed)
      throw lowbit::Error(std::string(w->name) + ": " +
                          (slot && !slot->error.empty()
                               ? slot->error
                               : "not repacked (its bytes were never set)"));
    Job &job = add_job(
        ctx, node->op == GGML_OP_MUL_MAT ? Job::MulMat : Job::GetRows, node);
    job.slot = slot;
    job.index = i;
    one_token = one_token && (job.kind == Job::GetRows ||
                              ggml_nrows(node->src[1]) == 1);
    keys.push_back({node->src[1], lowbit::activation_class(
                                      slot->packed->weights.format)});
    // A product right after one of the same activations (only views
    // between them: ggml's allocator gave no tensor memory between the
    // two nodes, so this one's output can be written at the first's) runs
    // in that one's node.
    if (job.kind == Job::MulMat && ctx.n_jobs >= 2) {
      Job &prev = *ctx.jobs[ctx.n_jobs - 2];
      Job &lead = prev.merged ? *prev.leader : prev;
      bool views = prev.kind == Job::MulMat && keys[ctx.n_jobs - 2] == keys.back() &&
                   lead.members.size() < kMaxMerged;
      for (int k = prev.index + 1; views && k < i; ++k)
        views = ggml_op_is_empty(ggml_graph_node(graph, k)->op);
      if (views) {
        job.merged = true;
        job.leader = &lead;
        lead.members.push_back(&job);
      }
    }
  }
  if (profiling() && ctx.n_jobs > 0) {
    Profile &p = one_token ? ctx.decode_profile : ctx.prompt_profile;
    p.threads.resize(size_t(std::max(ctx.threads, 1)));
    bool first_layer = false; // a token's first split reads layer 0's Q/K/V
    for (size_t j = 0; j < ctx.n_jobs; ++j) {
      Job &job = *ctx.jobs[j];
      job.profile = &p;
      job.step = job.kind == Job::RmsNorm   ? kNorm
                 : job.kind == Job::Attn    ? kAttn
                 : job.kind == Job::GetRows ? kOtherStep
                                            : step_of(job.node->src[0]);
      first_layer = first_layer ||
                    (job.step == kQkv &&
                     std::strncmp(job.node->src[0]->name, "blk.0.", 6) == 0);
      ++p.calls[job.step];
      if (job.kind == Job::MulMat)
        p.bytes[job.step] += job.slot->packed->weights.packed_bytes();
    }
    p.tokens += first_layer ? 1 : 0;
    ctx.pass_start = first_layer;
  }
  // Each input's activations live from its first product to its last, in
  // a buffer of their shape that no live input holds.
  auto &last = ctx.last, &live = ctx.live;
  last.clear();
  live.clear();
  for (size_t j = 0; j < ctx.n_jobs; ++j)
    if (ctx.jobs[j]->kind == Job::MulMat)
      last[keys[j]] = j;
  std::vector<char> &busy = ctx.busy, &used = ctx.used;
  busy.assign(ctx.activations.size(), 0);
  used.assign(ctx.activations.size(), 0);
  for (size_t j = 0; j < ctx.n_jobs; ++j) {
    Job &job = *ctx.jobs[j];
    if (job.kind != Job::MulMat)
      continue;
    auto it = live.find(keys[j]);
    if (it == live.end()) {
      const lowbit::UpconvertWeights &W = job.slot->packed->weights;
      const int64_t N = ggml_nrows(job.node->src[1]);
      const ActivationShape shape{keys[j].cls, N, W.K, W.format};
      // An idle buffer of this shape; else an idle one that no job of
      // this split reads before (shaped again: the buffers are as many as
      // one split needs, whatever N the graphs before had); else a new one.
      const size_t buffers = ctx.shapes.size();
      size_t a = 0;
      while (a < buffers && (busy[a] || !ctx.shapes[a].same(shape)))
        ++a;
      if (a == buffers) {
        a = 0;
        while (a < buffers && (busy[a] || used[a]))
          ++a;
        if (a == buffers) {
          ctx.activations.push_back(
              std::make_unique<lowbit::PreparedActivations>());
          ctx.shapes.push_back(shape);
          busy.push_back(0);
          used.push_back(0);
        }
        ctx.shapes[a] = shape;
        lowbit::shape_activations(W.format, N, W.K, *ctx.activations[a]);
        used[a] = 2;
      }
      busy[a] = 1;
      used[a] = std::max<char>(used[a], 1);
      job.act = a;
      // The RMS_NORM of this split that computes the input, when no
      // product runs between them (so that buffer a is free while it
      // runs), quantizes each row it computes (still in cache) into
      // buffer a; ggml-cpu's barrier after the norm publishes them, and
      // the products neither quantize nor meet at their own barrier.
      Job *norm = nullptr;
      for (size_t k = j; k-- > 0 && ctx.jobs[k]->kind != Job::MulMat;) {
        Job &prev = *ctx.jobs[k];
        const ggml_tensor *y = prev.mul ? prev.mul : prev.node;
        if (prev.kind == Job::RmsNorm && y == job.node->src[1]) {
          if (ggml_is_contiguous(y) && y->ne[0] == W.K && ggml_nrows(y) == N)
            norm = &prev;
          break;
        }
      }
      if (norm)
        norm->quantize_into.push_back(a);
      job.quantize = norm == nullptr;
      job.shared = norm != nullptr;
      it = live.emplace(keys[j], j).first;
    } else {
      job.act = ctx.jobs[it->second]->act;
      job.shared = ctx.jobs[it->second]->shared;
    }
    if (last[keys[j]] == j) {
      busy[job.act] = 0;
      live.erase(it);
    }
  }
  // Each thread's own copies of the one-row buffers (new, or shaped
  // again for this split).
  ctx.own.resize(size_t(std::max(ctx.threads, 1)));
  for (auto &copies : ctx.own)
    for (size_t a = 0; a < ctx.shapes.size(); ++a) {
      const bool fresh = a >= copies.size();
      if (fresh)
        copies.push_back(std::make_unique<lowbit::PreparedActivations>());
      const ActivationShape &shape = ctx.shapes[a];
      if (shape.N == 1 && (fresh || used[a] == 2))
        lowbit::shape_activations(shape.format, 1, shape.K, *copies[a]);
    }
}

ggml_status backend_graph_compute(ggml_backend_t backend, ggml_cgraph *graph) {
  auto *ctx = static_cast<BackendContext *>(backend->context);
  ++ctx->splits;
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
  try {
    plan_jobs(*ctx, graph);
  } catch (const std::bad_alloc &) {
    log_line(GGML_LOG_LEVEL_ERROR, "ggml-lowbit: out of memory");
    return GGML_STATUS_ALLOC_FAILED;
  } catch (const std::exception &e) {
    log_line(GGML_LOG_LEVEL_ERROR, std::string("ggml-lowbit: ") + e.what());
    return GGML_STATUS_FAILED;
  }
  for (size_t j = 0; j < ctx->n_jobs; ++j) {
    Job &job = *ctx->jobs[j];
    job.op = job.node->op;
    if (job.merged) { // run by its leader's node: ggml-cpu skips it
      job.node->op = GGML_OP_NONE;
      continue;
    }
    std::memcpy(job.op_params, job.node->op_params, sizeof(job.op_params));
    const ggml_custom_op_params params = {run_job, GGML_N_TASKS_MAX, &job};
    job.node->op = GGML_OP_CUSTOM;
    std::memcpy(job.node->op_params, &params, sizeof(params));
    if (job.mul) { // computed by the norm: ggml-cpu skips it (no barrier)
      job.mul_op = job.mul->op;
      job.mul->op = GGML_OP_NONE;
    }
    if (job.add) { // likewise
      job.add_op = job.add->op;
      job.add->op = GGML_OP_NONE;
    }
    if (job.glu) {
      job.glu_op = job.glu->op;
      job.glu->op = GGML_OP_NONE;
    }
  }
  if (ctx->cpu_set_threads)
    ctx->cpu_set_threads(ctx->cpu, ctx->threads);
  const bool profiled = ctx->n_jobs > 0 && ctx->jobs[0]->profile;
  if (profiled && ctx->computed) {
    Profile &p = *ctx->jobs[0]->profile;
    const double gap = seconds_between(ctx->last_compute_end, start);
    if (ctx->pass_start) {
      p.between += gap;
      p.longest_between = std::max(p.longest_between, gap);
      ++p.betweens;
    } else {
      p.within += gap;
    }
  }
  const Clock::time_point compute_start = Clock::now();
  if (profiled)
    ctx->jobs[0]->profile->last_end = compute_start;
  ggml_status result = ggml_backend_graph_compute(ctx->cpu, graph);
  if (profiled) {
    Profile &p = *ctx->jobs[0]->profile;
    const Clock::time_point end = Clock::now();
    p.before[kSteps] += seconds_between(p.last_end, end);
    p.seconds += seconds_between(compute_start, end);
    ++p.graphs;
    ctx->last_compute_end = end;
    ctx->computed = true;
  }
  for (size_t j = 0; j < ctx->n_jobs; ++j) {
    Job &job = *ctx->jobs[j];
    job.node->op = job.op;
    if (!job.merged)
      std::memcpy(job.node->op_params, job.op_params, sizeof(job.op_params));
    if (job.mul)
      job.mul->op = job.mul_op;
    if (job.add)
      job.add->op = job.add_op;
    if (job.glu)
      job.glu->op = job.glu_op;
    if (job.failed && result == GGML_STATUS_SUCCESS) {
      log_line(GGML_LOG_LEVEL_ERROR, std::string("ggml-lowbit: ") +
                                         job.node->name + ": " + job.error);
      result = GGML_STATUS_FAILED;
    }
    if (job.kind == Job::MulMat) {
      ++ctx->mul_mats;
      ++ctx->by_conversion[job.slot->packed->conversion];
      ctx->merged += job.merged ? 1 : 0;
    } else if (job.kind == Job::GetRows) {
      ++ctx->get_rows;
    } else if (job.kind == Job::Attn) {
      ++ctx->attentions;
    } else {
      ++ctx->norms;
      ctx->fused_muls += job.mul ? 1 : 0;
      ctx->fused_adds += job.add ? 1 : 0;
      ctx->fused_glus += job.glu ? 1 : 0;
    }
  }
  return result;
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

ggml_backend_dev_t compute_device(ggml_backend_reg_t reg);

/// GGML_LOWBIT_OWN_BUFFERS set and not "0": backends report the registry's
/// device, whose buffer type (ours) is then their default (see
/// compute_device).
bool own_buffers() {
  const char *env = std::getenv("GGML_LOWBIT_OWN_BUFFERS");
  return env && std::strcmp(env, "0") != 0;
}

ggml_backend_t dev_init_backend(ggml_backend_dev_t dev, const char *) {
  log_load_report();
  ggml_backend_dev_t cpu = cpu_device();
  ggml_backend_t cpu_backend = cpu ? ggml_backend_dev_init(cpu, nullptr) : nullptr;
  if (!cpu_backend) {
    log_line(GGML_LOG_LEVEL_ERROR,
             "ggml-lowbit: this process has no ggml CPU backend, which runs "
             "the ops around lowbit's products");
    return nullptr;
  }
  auto *ctx = new BackendContext();
  ctx->cpu = cpu_backend;
  ctx->cpu_set_threads = reinterpret_cast<void (*)(ggml_backend_t, int)>(
      ggml_backend_reg_get_proc_address(ggml_backend_dev_backend_reg(cpu),
                                        "ggml_backend_set_n_threads"));
  ctx->device = *(own_buffers() ? dev : compute_device(dev->reg));
  ctx->device.context = ctx;
  return new ggml_backend{backend_guid(), kBackendInterface, &ctx->device,
                          ctx};
}

ggml_backend_buffer_type_t dev_get_buffer_type(ggml_backend_dev_t) {
  return lowbit_buffer_type();
}

/// Why a MUL_MAT is not ours ("" when it is).
std::string mul_mat_refusal(const ggml_tensor *op) {
  const ggml_tensor *w = op->src[0];
  const ggml_tensor *x = op->src[1];
  if (!ggml_lowbit::takes_type(uint32_t(w->type), kernel_table())) {
    // A block type lowbit reads but the bundle has no kernel for.
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

/// Whether a GET_ROWS reads rows of a weight we would take (llama.cpp's
/// token embedding, which a tied output head multiplies, as in BitNet
/// files): its rows come from ggml's bytes, re-encoded from the packed
/// form. Every type we take is held once (weights.h, encode_ggml_rows),
/// so an untied embedding taken too costs no memory twice.
bool get_rows_takes(const ggml_tensor *op) {
  const ggml_tensor *w = op->src[0];
  const ggml_tensor *ids = op->src[1];
  return !w->view_src && w->ne[2] == 1 && w->ne[3] == 1 &&
         ggml_lowbit::takes_type(uint32_t(w->type), kernel_table()) &&
         ggml_lowbit::takes_shape(uint32_t(w->type), w->ne[0],
                                  kernel_table()) &&
         ids->type == GGML_TYPE_I32 && ids->ne[1] == 1 && ids->ne[2] == 1 &&
         ids->ne[3] == 1 && op->type == GGML_TYPE_F32;
}

bool dev_supports_op(ggml_backend_dev_t dev, const ggml_tensor *op) {
  if (ggml_op_is_empty(op->op))
    return true;
  // Flash attention runs in our split (attn_takes: on our code, else on
  // ggml-cpu's inside it), so a graph is one split, a prompt's and a
  // decode step's. But llama.cpp's default flash_attn "auto"
  // (resolve_fused_ops in llama-context.cpp) splits a graph of one token
  // per sequence first, before any other graph of the context, and keeps
  // flash attention only when that node is on the layer's device, the
  // CPU; otherwise it attends without it over a KV cache laid out for it,
  // copying every layer's V cache (ggml_cont of its transpose) for every
  // token (measured slower, docs/perf/ggml-lowbit.md). So a backend of ours
  // leaves flash attention of fewer than kFlashAttnRows query rows (a
  // decode step's) to llama.cpp's CPU backend until its device has been
  // asked about one of kFlashAttnRows rows or more (a prompt's: llama.cpp
  // reserves its prompt graph right after the probe); from then on a
  // decode step's is ours too, and the two splits per layer around it go.
  // A context whose batches stay below kFlashAttnRows rows keeps them.
  if (op->op == GGML_OP_FLASH_ATTN_EXT) {
    auto *backend = static_cast<BackendContext *>(dev->context);
    if (op->src[0]->ne[1] >= kFlashAttnRows) {
      if (backend)
        backend->prompt_attention = true;
    } else if (!backend || !backend->prompt_attention) {
      return false;
    }
  }
  if (op->op == GGML_OP_MUL_MAT) {
    // A weight in a buffer of ours (or in llama.cpp's probe of it), or a
    // leaf not placed yet (test-backend-ops asks before it allocates): a
    // product on our kernels or none. A weight elsewhere (a type we leave
    // to the CPU buffer) or a computed matrix (attention): ggml-cpu's.
    const ggml_tensor *w = base_of(op->src[0]);
    if (w->op == GGML_OP_NONE &&
        (!w->buffer || w->buffer->buft == lowbit_buffer_type())) {
      const std::string refusal = mul_mat_refusal(op);
      if (!refusal.empty() && w->buffer && w->name[0] != '\0') {
        // llama.cpp's weight_buft_supported: a weight we leave to the CPU
        // backend.
        LoadReport &r = load_report();
        std::lock_guard<std::mutex> lock(r.mutex);
        if (r.left_names.insert(w->name).second)
          r.left.emplace_back(w->name, refusal);
      }
      return refusal.empty();
    }
  } else {
    // Weights in our buffers are packed: only our MUL_MATs and GET_ROWS
    // read them, so llama.cpp's probe keeps every other weight (norms,
    // biases) in CPU buffers.
    for (int i = 0; i < GGML_MAX_SRC; ++i)
      if (op->src[i] && is_our_weight(op->src[i]))
        return op->op == GGML_OP_GET_ROWS && i == 0 && get_rows_takes(op);
  }
  ggml_backend_dev_t cpu = cpu_device();
  return cpu && ggml_backend_dev_supports_op(cpu, op);
}

bool dev_supports_buft(ggml_backend_dev_t, ggml_backend_buffer_type_t buft) {
  // Our buffers, and every buffer ggml-cpu reads (host memory, and its
  // extra buffer types such as CPU_REPACK, where llama.cpp puts weights we
  // leave to it): what the CPU backend holds is read where it is.
  if (buft == lowbit_buffer_type())
    return true;
  ggml_backend_dev_t cpu = cpu_device();
  return cpu ? ggml_backend_dev_supports_buft(cpu, buft)
             : ggml_backend_buft_is_host(buft);
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

ggml_backend_buffer_type_t compute_dev_get_buffer_type(ggml_backend_dev_t) {
  return ggml_backend_dev_buffer_type(cpu_device());
}

/// The device a backend of ours reports: the registry's device but for its
/// buffer type, the CPU's. llama.cpp places weights through the registry's
/// device (make_cpu_buft_list: our buffer type, packed) and the
/// scheduler's compute buffers through the backend's
/// (ggml_backend_get_default_buffer_type): so the activations are host
/// memory the CPU backend reads without copies, and ggml's scheduler moves
/// the nodes llama.cpp pins to the CPU backend (llama-context.cpp's
/// graph_get_cb: each layer's "norm" and "l_last" while a batch has fewer
/// than 32 tokens) to this backend, which has the same buffer type and a
/// higher priority (ggml_backend_sched_split_graph's pass 3, the path
/// ggml-blas takes): one split per graph. test-backend-ops allocates a
/// case's weights in the backend's default buffer type, so it needs
/// GGML_LOWBIT_OWN_BUFFERS=1 (own_buffers) to run them on our kernels.
ggml_backend_dev_t compute_device(ggml_backend_reg_t reg) {
  static const ggml_backend_device_i iface = [] {
    ggml_backend_device_i i = kDeviceInterface;
    i.get_buffer_type = compute_dev_get_buffer_type;
    return i;
  }();
  static ggml_backend_device device = {iface, reg, nullptr};
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
          /* .get_alloc_size = */ buft_get_alloc_size,
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
