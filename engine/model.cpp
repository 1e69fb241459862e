//===- model.cpp - hyperparameters, linear specs and loading --------------===//
//
// Reads a llama.cpp GGUF model of the `llama`, `bitnet`, `bitnet-b1.58` or
// `bitnet-25` architecture, checks every tensor against the metadata and
// packs every linear weight for its kernels: read in place from the file
// mapping where the kernels read the GGUF rows as they are (TQ2_0 under
// kernels of kernel_abi.h's GGML ROWS LAYOUT), straight from the file into
// one allocation where the GGUF type packs directly (the runtime's
// gguf_pack_rows), else through the C API (lowbit_pack_gguf). The
// tensor names, the keys and the rope type follow llama.cpp (see
// engine/README.md for the files).
//
//===----------------------------------------------------------------------===//
#include "model.h"

#include "lowbit/error.h"
#include "lowbit/format.h"
#include "lowbit/upconvert.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <new>
#include <numeric>
#include <tuple>

#if __has_include(<sys/mman.h>)
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace lowbit::engine {
namespace {

[[noreturn]] void fail(const GgufFile &file, const std::string &message) {
  throw Error(file.path() + ": " + message);
}

std::string shape_string(const std::vector<int64_t> &ne) {
  std::string s = "[";
  for (size_t i = 0; i < ne.size(); ++i)
    s += (i ? ", " : "") + std::to_string(ne[i]);
  return s + "]";
}

/// ne without trailing 1s: ggml writes a vector as [n], some writers [n, 1].
std::vector<int64_t> dims(std::vector<int64_t> ne) {
  while (ne.size() > 1 && ne.back() == 1)
    ne.pop_back();
  return ne;
}

/// The tensor `name` of shape `ne` (ggml order: row length first); nullptr
/// when absent and not `required`. Throws on a shape that disagrees.
const GgufTensor *check_tensor(const GgufFile &file, const std::string &name,
                               const std::vector<int64_t> &ne, bool required) {
  const GgufTensor *t = file.find_tensor(name);
  if (!t) {
    if (required)
      fail(file, "missing tensor '" + name + "' (expected shape " +
                     shape_string(ne) + ")");
    return nullptr;
  }
  if (dims(t->ne) != dims(ne))
    fail(file, "tensor '" + name + "' has shape " + shape_string(t->ne) +
                   " but the metadata gives " + shape_string(ne));
  return t;
}

bool has_key(const GgufFile &file, const std::string &key) {
  return file.find(key) != nullptr;
}

int64_t require_int(const GgufFile &file, const std::string &key) {
  if (!has_key(file, key))
    fail(file, "missing metadata key '" + key + "'");
  return file.get_int(key);
}

std::string layer_tensor(int64_t layer, const char *name) {
  return "blk." + std::to_string(layer) + "." + name;
}

/// The base name of a linear weight ("blk.0.attn_q" of
/// "blk.0.attn_q.weight"), under which its optional bias and scale live.
std::string base_name(const std::string &weight) {
  const std::string suffix = ".weight";
  return weight.substr(0, weight.size() - suffix.size());
}

struct LinearShape {
  std::string tensor;
  int64_t M, K;
};

/// The linear weights of every layer in order (q, k, v, o, gate, up, down).
std::vector<LinearShape> layer_linears(const Hparams &hp) {
  const int64_t q = hp.n_head * hp.head_dim, kv = hp.n_head_kv * hp.head_dim;
  std::vector<LinearShape> out;
  for (int64_t l = 0; l < hp.n_layer; ++l) {
    out.push_back({layer_tensor(l, "attn_q.weight"), q, hp.n_embd});
    out.push_back({layer_tensor(l, "attn_k.weight"), kv, hp.n_embd});
    out.push_back({layer_tensor(l, "attn_v.weight"), kv, hp.n_embd});
    out.push_back({layer_tensor(l, "attn_output.weight"), hp.n_embd, q});
    out.push_back({layer_tensor(l, "ffn_gate.weight"), hp.n_ff, hp.n_embd});
    out.push_back({layer_tensor(l, "ffn_up.weight"), hp.n_ff, hp.n_embd});
    out.push_back({layer_tensor(l, "ffn_down.weight"), hp.n_embd, hp.n_ff});
  }
  return out;
}

/// Every tensor the graph reads, with its shape (required ones throw when
/// absent); optional biases, scales and rope factors are checked when there.
void check_tensors(const GgufFile &file, const Hparams &hp) {
  const int64_t E = hp.n_embd, q = hp.n_head * hp.head_dim;
  check_tensor(file, "token_embd.weight", {E, hp.n_vocab}, true);
  check_tensor(file, "output_norm.weight", {E}, true);
  check_tensor(file, "output.weight", {E, hp.n_vocab}, false);
  check_tensor(file, "rope_freqs.weight", {hp.n_rot / 2}, false);
  const bool sub_norms = hp.arch != Arch::Llama;
  for (int64_t l = 0; l < hp.n_layer; ++l) {
    check_tensor(file, layer_tensor(l, "attn_norm.weight"), {E}, true);
    check_tensor(file, layer_tensor(l, "ffn_norm.weight"), {E}, true);
    if (sub_norms) {
      check_tensor(file, layer_tensor(l, "attn_sub_norm.weight"), {q}, true);
      check_tensor(file, layer_tensor(l, "ffn_sub_norm.weight"), {hp.n_ff},
                   true);
    }
  }
  for (const LinearShape &s : layer_linears(hp)) {
    check_tensor(file, s.tensor, {s.K, s.M}, true);
    check_tensor(file, base_name(s.tensor) + ".bias", {s.M}, false);
    check_tensor(file, base_name(s.tensor) + ".scale", {1}, false);
  }
}

bool is_ternary_or_float(GgufType type) {
  switch (type) {
  case GgufType::F32:
  case GgufType::F16:
  case GgufType::BF16:
  case GgufType::TQ1_0:
  case GgufType::TQ2_0:
  case GgufType::I2_S:
    return true;
  default:
    return false;
  }
}

std::vector<float> decode_vector(const GgufTensor &t) {
  std::vector<float> out(t.K() * t.rows());
  for (int64_t r = 0; r < t.rows(); ++r)
    gguf_decode_row(t, r, out.data() + r * t.K());
  return out;
}

/// Drops the file pages of a tensor that is packed from this process's
/// memory (GgufFile::open maps the file private and read-only: a later read,
/// such as an embedding row of a tied head, faults them back in from the
/// page cache). Without it every packed tensor would be resident twice.
void release_pages(const uint8_t *data, uint64_t bytes) {
#if defined(MADV_DONTNEED)
  const uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (uintptr_t(data) + page - 1) / page * page;
  const uintptr_t end = (uintptr_t(data) + bytes) / page * page;
  if (end > begin)
    madvise(reinterpret_cast<void *>(begin), end - begin, MADV_DONTNEED);
#else
  (void)data;
  (void)bytes;
#endif
}

void release_pages(const GgufTensor &t) { release_pages(t.data, t.bytes); }

/// The optional bias and scale of a linear weight.
void load_extras(const GgufFile &file, const LinearSpec &spec, Linear &L) {
  const std::string base = base_name(spec.tensor);
  if (const GgufTensor *s = file.find_tensor(base + ".scale")) {
    L.scale = decode_vector(*s)[0];
    L.has_scale = true;
  }
  if (const GgufTensor *b = file.find_tensor(base + ".bias"))
    L.bias = decode_vector(*b);
}

/// Zero-filled memory for every directly packed weight, in one piece: an
/// anonymous mapping (the kernel zeroes its pages; nothing else writes them
/// before the packer). Not advised to transparent huge pages: on this
/// project's VM (Firecracker) fresh huge pages cost 2-3x the system time
/// of small ones (clear_page of memory the host had not backed yet;
/// docs/perf/llama-cpp.md).
std::shared_ptr<void> weight_arena(size_t bytes, uint8_t *&base) {
#if defined(MAP_ANONYMOUS)
  void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    throw Error("engine: the packed weights (" + std::to_string(bytes >> 20) +
                " MiB) do not fit in memory");
  base = static_cast<uint8_t *>(p);
  return std::shared_ptr<void>(p, [bytes](void *q) { munmap(q, bytes); });
#else
  base = static_cast<uint8_t *>(::operator new(
      bytes, std::align_val_t(kVectorAlignment)));
  std::memset(base, 0, bytes);
  return std::shared_ptr<void>(base, [](void *q) {
    ::operator delete(q, std::align_val_t(kVectorAlignment));
  });
#endif
}

/// Thread `thread` of `threads` faults in its share of the arena with one
/// call (MADV_POPULATE_WRITE, Linux 5.14) instead of a fault per page as
/// the packer writes; where the kernel refuses, the writes fault as usual.
void prefault(uint8_t *arena, size_t bytes, int64_t thread, int64_t threads) {
#if defined(MADV_POPULATE_WRITE)
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  const size_t share = (bytes / size_t(threads) + page - 1) / page * page;
  const size_t begin = size_t(thread) * share;
  if (begin < bytes)
    madvise(arena + begin, std::min(share, bytes - begin),
            MADV_POPULATE_WRITE);
#else
  (void)arena;
  (void)bytes;
  (void)thread;
  (void)threads;
#endif
}

/// Packs (or keeps in float) one linear weight with its optional bias and
/// scale. A packed weight keeps only its kernel's layout
/// (lowbit_weights_compact) and its file pages are released.
Linear load_linear(const GgufFile &file, const LinearSpec &spec) {
  const GgufTensor &t = file.tensor(spec.tensor);
  Linear L;
  L.tensor = spec.tensor;
  L.format = spec.format;
  L.M = spec.M;
  L.K = spec.K;
  if (!spec.format.empty()) {
    lowbit_weights_t *w = nullptr;
    if (lowbit_pack_gguf(spec.format.c_str(), gguf_type_name(t.type), t.data,
                         t.bytes, spec.M, spec.K, &w) != LOWBIT_OK)
      fail(file, "tensor '" + spec.tensor + "' (" + gguf_type_name(t.type) +
                     " -> " + spec.format + "): " + lowbit_last_error());
    L.packed.reset(w);
    if (lowbit_weights_compact(w) != LOWBIT_OK)
      fail(file, "tensor '" + spec.tensor + "': " + lowbit_last_error());
    release_pages(t);
    L.act_class = lowbit::activation_class(Format::parse(spec.format));
  } else if (t.type == GgufType::F32 || t.type == GgufType::F16 ||
             t.type == GgufType::BF16) {
    L.fdata = t.data; // read in place from the mapping
    L.ftype = t.type == GgufType::F32   ? FloatType::F32
              : t.type == GgufType::F16 ? FloatType::F16
                                        : FloatType::BF16;
  } else {
    L.f32_storage = decode_vector(t);
    L.fdata = L.f32_storage.data();
  }
  load_extras(file, spec, L);
  return L;
}

/// Model::load's phase log (Options::verbose): each phase's wall time since
/// the previous one, on stderr.
class PhaseLog {
public:
  explicit PhaseLog(bool on) : on_(on), last_(Clock::now()) {}
  void operator()(const char *phase) {
    if (!on_)
      return;
    const Clock::time_point now = Clock::now();
    std::fprintf(
        stderr, "lowbit: load: %-34s %8.1f ms\n", phase,
        std::chrono::duration<double, std::milli>(now - last_).count());
    last_ = now;
  }

private:
  using Clock = std::chrono::steady_clock;
  bool on_;
  Clock::time_point last_;
};

Arch parse_arch(const GgufFile &file, const std::string &name) {
  if (name == "llama")
    return Arch::Llama;
  if (name == "bitnet-b1.58" || name == "bitnet-25")
    return Arch::Bitnet25;
  if (name == "bitnet") {
    // llama.cpp's bitnet graph takes its FFN activation from
    // bitnet.hidden_activation (SiLU when absent); the 2B-4T checkpoint
    // declares relu2.
    const std::string key = "bitnet.hidden_activation";
    if (has_key(file, key)) {
      const std::string act = file.get_string(key);
      if (act == "relu2" || act == "relu_squared" || act == "relu_sqr")
        return Arch::Bitnet25;
      if (act != "silu" && act != "swish" && act != "swiglu")
        fail(file, "unsupported " + key + " '" + act +
                       "' (the engine runs silu and relu2)");
    }
    return Arch::Bitnet;
  }
  fail(file, "unknown architecture '" + name +
                 "' (the engine runs llama, bitnet, bitnet-b1.58, "
                 "bitnet-25)");
}

} // namespace

Hparams read_hparams(const GgufFile &file) {
  Hparams hp;
  if (!has_key(file, "general.architecture"))
    fail(file, "missing metadata key 'general.architecture'");
  hp.arch_name = file.get_string("general.architecture");
  hp.arch = parse_arch(file, hp.arch_name);
  const std::string a = hp.arch_name + ".";

  hp.n_embd = require_int(file, a + "embedding_length");
  hp.n_layer = require_int(file, a + "block_count");
  hp.n_ff = require_int(file, a + "feed_forward_length");
  hp.n_head = require_int(file, a + "attention.head_count");
  hp.n_head_kv = file.get_int(a + "attention.head_count_kv", hp.n_head);
  hp.n_ctx_train = file.get_int(a + "context_length", 0);
  if (!has_key(file, a + "attention.layer_norm_rms_epsilon"))
    fail(file,
         "missing metadata key '" + a + "attention.layer_norm_rms_epsilon'");
  hp.rms_eps = float(file.get_float(a + "attention.layer_norm_rms_epsilon"));
  hp.rope_base = float(file.get_float(a + "rope.freq_base", 10000.0));

  auto positive = [&](int64_t v, const std::string &key) {
    if (v < 1)
      fail(file, "metadata key '" + a + key + "' must be >= 1, got " +
                     std::to_string(v));
  };
  positive(hp.n_embd, "embedding_length");
  positive(hp.n_layer, "block_count");
  positive(hp.n_ff, "feed_forward_length");
  positive(hp.n_head, "attention.head_count");
  positive(hp.n_head_kv, "attention.head_count_kv");
  if (hp.n_head % hp.n_head_kv != 0)
    fail(file, "attention.head_count " + std::to_string(hp.n_head) +
                   " is not a multiple of attention.head_count_kv " +
                   std::to_string(hp.n_head_kv));
  if (!(hp.rms_eps >= 0.0f))
    fail(file, "layer_norm_rms_epsilon must be >= 0");

  if (has_key(file, a + "attention.key_length")) {
    hp.head_dim = file.get_int(a + "attention.key_length");
    if (file.get_int(a + "attention.value_length", hp.head_dim) != hp.head_dim)
      fail(file, "attention.key_length and attention.value_length differ");
  } else {
    if (hp.n_embd % hp.n_head != 0)
      fail(file, "embedding_length " + std::to_string(hp.n_embd) +
                     " is not a multiple of attention.head_count " +
                     std::to_string(hp.n_head));
    hp.head_dim = hp.n_embd / hp.n_head;
  }
  positive(hp.head_dim, "attention.key_length");
  hp.n_rot = file.get_int(a + "rope.dimension_count", hp.head_dim);
  if (hp.n_rot < 2 || hp.n_rot > hp.head_dim || hp.n_rot % 2 != 0)
    fail(file, "rope.dimension_count " + std::to_string(hp.n_rot) +
                   " must be even and in [2, head_dim = " +
                   std::to_string(hp.head_dim) + "]");
  // llama.cpp: LLAMA_ROPE_TYPE_NORM for llama, NEOX for the bitnet family.
  hp.rope_neox = hp.arch != Arch::Llama;

  if (has_key(file, a + "rope.scaling.type")) {
    const std::string type = file.get_string(a + "rope.scaling.type");
    if (type == "linear") {
      const double factor = file.get_float(a + "rope.scaling.factor", 1.0);
      if (!(factor > 0.0))
        fail(file, "rope.scaling.factor must be > 0");
      hp.rope_freq_scale = float(1.0 / factor);
    } else if (type != "none") {
      fail(file, "unsupported rope.scaling.type '" + type +
                     "' (the engine runs none and linear)");
    }
  } else if (has_key(file, a + "rope.scale_linear")) {
    const double factor = file.get_float(a + "rope.scale_linear");
    if (!(factor > 0.0))
      fail(file, "rope.scale_linear must be > 0");
    hp.rope_freq_scale = float(1.0 / factor);
  }
  hp.kq_scale = 1.0f / std::sqrt(float(hp.head_dim));
  if (hp.arch == Arch::Llama && has_key(file, a + "attention.scale")) {
    const float s = float(file.get_float(a + "attention.scale"));
    if (s != 0.0f)
      hp.kq_scale = s;
  }

  const GgufTensor *embd = file.find_tensor("token_embd.weight");
  if (!embd)
    fail(file, "missing tensor 'token_embd.weight'");
  if (has_key(file, a + "vocab_size")) {
    hp.n_vocab = file.get_int(a + "vocab_size");
  } else if (const GgufValue *tokens = file.find("tokenizer.ggml.tokens");
             tokens && tokens->type == GgufValue::ARRAY) {
    hp.n_vocab = int64_t(tokens->array.size());
  } else {
    hp.n_vocab = embd->rows();
  }
  positive(hp.n_vocab, "vocab_size");
  hp.tied_output = file.find_tensor("output.weight") == nullptr;
  check_tensors(file, hp);
  return hp;
}

std::vector<LinearSpec> linear_specs(const GgufFile &file,
                                     const std::string &format) {
  const Hparams hp = read_hparams(file);
  if (!format.empty())
    Format::parse(format); // an unknown name is an error before any work
  std::vector<LinearSpec> specs;
  for (const LinearShape &s : layer_linears(hp)) {
    const GgufTensor &t = file.tensor(s.tensor);
    std::string f = gguf_default_format(t);
    if (!format.empty() && is_ternary_or_float(t.type))
      f = format;
    specs.push_back({s.tensor, f, s.M, s.K});
  }
  const std::string head =
      hp.tied_output ? "token_embd.weight" : "output.weight";
  specs.push_back(
      {head, gguf_default_format(file.tensor(head)), hp.n_vocab, hp.n_embd});
  return specs;
}

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::~Model() = default;

std::unique_ptr<Model> Model::load(const std::string &path,
                                   const Options &options) {
  std::shared_ptr<const GgufFile> file = GgufFile::open(path);
  const std::vector<LinearSpec> specs = linear_specs(*file, options.format);
  return load(std::move(file), specs, options);
}

std::unique_ptr<Model> Model::load(std::shared_ptr<const GgufFile> opened,
                                   const std::vector<LinearSpec> &specs,
                                   const Options &options) {
  if (options.threads < 1)
    throw Error("engine: threads must be >= 1, got " +
                std::to_string(options.threads));
  if (options.n_ctx < 1)
    throw Error("engine: n_ctx must be >= 1, got " +
                std::to_string(options.n_ctx));
  PhaseLog phase(options.verbose);
  auto m = std::make_unique<Impl>();
  m->options = options;
  m->file = std::move(opened);
  const GgufFile &file = *m->file;
  m->hp = read_hparams(file);
  const Hparams &hp = m->hp;

  lowbit_context_t *ctx = nullptr;
  if (lowbit_context_create(options.threads, &ctx) != LOWBIT_OK)
    throw Error(std::string("engine: ") + lowbit_last_error());
  m->ctx.reset(ctx);
  m->threads = lowbit_context_threads(ctx);
  for (auto &a : m->acts) {
    lowbit_activations_t *acts = nullptr;
    if (lowbit_activations_create(&acts) != LOWBIT_OK)
      throw Error(std::string("engine: ") + lowbit_last_error());
    a.reset(acts);
  }

  // The caller's specs are linear_specs' of this file: a weight each, in
  // the order of `targets` below.
  const std::vector<LinearShape> shapes = layer_linears(hp);
  bool same = specs.size() == shapes.size() + 1 &&
              specs.back().tensor ==
                  (hp.tied_output ? "token_embd.weight" : "output.weight");
  for (size_t i = 0; same && i < shapes.size(); ++i)
    same = specs[i].tensor == shapes[i].tensor && specs[i].M == shapes[i].M &&
           specs[i].K == shapes[i].K;
  if (!same)
    fail(file, "the linear specs given are not linear_specs' of this file");
  phase("hyperparameters, context, checks");

  // Every linear weight imported once and packed, all on the context's
  // threads from the start. A TQ2_0 or TQ1_0 weight whose kernels read the
  // ggml rows layout is not packed at all: the kernels read the mapping, which
  // the model keeps, and the chunks only check its rows (codes, one
  // scale), faulting its pages in. A weight whose GGUF type packs into its
  // format's kernel layout directly (lowbit::gguf_packs_directly: the
  // ternary types into i2s, and into tl1 and tl2 in the lane order of
  // their kernels' layout descriptor; the block types into their own
  // format) is written straight from the file mapping into its place in one
  // allocation for all of them (no canonical copy), in chunks of rows
  // that any thread takes, each chunk's file pages released as soon as it
  // is packed; the others go through lowbit_pack_gguf as a whole.
  m->layers.resize(hp.n_layer);
  std::vector<Linear *> targets;
  for (Layer &layer : m->layers)
    for (Linear *L : {&layer.wq, &layer.wk, &layer.wv, &layer.wo, &layer.gate,
                      &layer.up, &layer.down})
      targets.push_back(L);
  targets.push_back(&m->head);
  const size_t count = targets.size();
  std::vector<const GgufTensor *> tensors(count);
  std::vector<Format> formats(count);
  std::vector<char> direct(count, 0), in_place(count, 0);
  std::vector<int> block_bytes(count, 0); // tq2_0, tq1_0: their blocks'
  std::vector<uint8_t> lane_orders(count, LOWBIT_LANE_ROWS); // tl1, tl2
  std::vector<size_t> offsets(count, 0);
  size_t arena_bytes = 0;
  for (size_t i = 0; i < count; ++i) {
    const LinearSpec &spec = specs[i];
    const GgufTensor &t = *(tensors[i] = &file.tensor(spec.tensor));
    if (spec.format.empty())
      continue;
    formats[i] = Format::parse(spec.format);
    block_bytes[i] = t.type == GgufType::TQ2_0   ? LOWBIT_GGML_ROWS_TQ2_0_BYTES
                     : t.type == GgufType::TQ1_0 ? LOWBIT_GGML_ROWS_TQ1_0_BYTES
                                                 : 0;
    in_place[i] = block_bytes[i] && t.rows() == spec.M && t.K() == spec.K &&
                  ggml_rows_error(formats[i], spec.K).empty() &&
                  ggml_rows_kernels_registered(formats[i], spec.M, spec.K,
                                               block_bytes[i]);
    direct[i] = gguf_packs_directly(t.type, formats[i]) &&
                t.rows() == spec.M && t.K() == spec.K &&
                formats[i].shape_error(spec.M, spec.K).empty() &&
                upconvert_kernels_registered(formats[i], spec.M, spec.K,
                                             &lane_orders[i]);
    if (direct[i] && !in_place[i]) {
      offsets[i] = arena_bytes;
      arena_bytes += size_t(upconvert_bytes(formats[i], spec.M, spec.K));
    }
  }
  uint8_t *arena = nullptr;
  if (arena_bytes)
    m->arena = weight_arena(arena_bytes, arena);
  phase("plan, one allocation for the weights");

  // The work: the weights that go through lowbit_pack_gguf, largest first
  // (the chunks fill in behind them), then the chunks of the direct ones
  // in file order, each about kChunkBytes of the file (whole tiles).
  constexpr uint64_t kChunkBytes = uint64_t(2) << 20;
  struct Chunk {
    size_t weight, index; // the weight's index-th chunk
    int64_t begin, end;   // rows
  };
  std::vector<size_t> whole;
  std::vector<size_t> by_offset;
  for (size_t i = 0; i < count; ++i)
    (direct[i] || in_place[i] ? by_offset : whole).push_back(i);
  std::stable_sort(whole.begin(), whole.end(), [&](size_t a, size_t b) {
    return tensors[a]->bytes > tensors[b]->bytes;
  });
  std::sort(by_offset.begin(), by_offset.end(), [&](size_t a, size_t b) {
    return tensors[a]->data < tensors[b]->data;
  });
  std::vector<UpconvertWeights> packed(count);
  std::vector<std::vector<GgufRowsCheck>> checks(count);
  std::vector<Chunk> chunks;
  for (size_t i : by_offset) {
    const int64_t M = specs[i].M;
    packed[i] =
        in_place[i]
            ? shape_ggml_rows(formats[i], M, specs[i].K, 0.0f,
                              const_cast<uint8_t *>(tensors[i]->data),
                              block_bytes[i])
            : shape_upconvert(formats[i], M, specs[i].K, arena + offsets[i],
                              lane_orders[i]);
    const uint64_t row_bytes = tensors[i]->bytes / uint64_t(M);
    const int64_t tile = packed[i].tile_rows;
    const int64_t rows = std::max<int64_t>(
        tile, int64_t(kChunkBytes / std::max<uint64_t>(row_bytes, 1)) / tile *
                  tile);
    for (int64_t r = 0; r < M; r += rows)
      chunks.push_back({i, size_t(r / rows), r, std::min(M, r + rows)});
    checks[i].resize(size_t((M + rows - 1) / rows));
  }
  std::vector<std::string> errors(count);
  std::vector<char> failed(count, 0);
  std::atomic<size_t> next{0};
  const size_t tasks = whole.size() + chunks.size();
  parallel_for(ctx, m->threads, true, [&](int64_t begin, int64_t end, int) {
    for (int64_t share = begin; share < end; ++share)
      prefault(arena, arena_bytes, share, m->threads);
    for (size_t n = next++; n < tasks; n = next++) {
      if (n < whole.size()) {
        const size_t i = whole[n];
        try {
          *targets[i] = load_linear(file, specs[i]);
        } catch (const std::exception &e) {
          errors[i] = e.what();
        }
        continue;
      }
      const Chunk &c = chunks[n - whole.size()];
      const GgufTensor &t = *tensors[c.weight];
      const uint64_t row_bytes = t.bytes / uint64_t(t.rows());
      try {
        checks[c.weight][c.index] =
            gguf_pack_rows(t, packed[c.weight], c.begin, c.end);
      } catch (const std::exception &) {
        failed[c.weight] = 1; // load_linear names the problem below
      }
      if (in_place[c.weight])
        continue; // the kernels read these pages
      // The chunk's pages and the kernel's fault-around window on either
      // side (Linux maps up to 64 KiB around a faulting page): a window that
      // reached into a neighbour already released would otherwise stay
      // mapped until the tensor is done. A neighbour still reading faults
      // those pages back from the page cache.
      constexpr uint64_t kFaultAround = uint64_t(64) << 10;
      const uint64_t from = std::max<uint64_t>(
          uint64_t(c.begin) * row_bytes, kFaultAround) - kFaultAround;
      const uint64_t to =
          std::min(uint64_t(c.end) * row_bytes + kFaultAround, t.bytes);
      release_pages(t.data + from, to - from);
    }
  });
  phase("import and pack, all threads");
  for (size_t i : by_offset) {
    Linear &L = *targets[i];
    const LinearSpec &spec = specs[i];
    // Again, whole: a page that two chunks share, or one that a chunk's
    // fault-around mapped after the chunk it belongs to was released.
    if (!in_place[i])
      release_pages(*tensors[i]);
    try {
      if (!failed[i])
        gguf_finish_rows(*tensors[i], packed[i], checks[i]);
    } catch (const std::exception &) {
      failed[i] = 1;
    }
    if (failed[i]) {
      // The weight's error as lowbit_pack_gguf gives it (the same checks).
      L = load_linear(file, spec);
      fail(file, "tensor '" + spec.tensor +
                     "': the direct import failed where lowbit_pack_gguf "
                     "did not");
    }
    L.tensor = spec.tensor;
    L.format = spec.format;
    L.M = spec.M;
    L.K = spec.K;
    L.packed.reset(upconvert_weights_handle(std::move(packed[i])));
    L.act_class = lowbit::activation_class(formats[i]);
    load_extras(file, spec, L);
  }
  for (const std::string &e : errors)
    if (!e.empty())
      throw Error(e);
  if (options.verbose) {
    size_t tq1 = 0, tq2 = 0;
    for (size_t i = 0; i < count; ++i)
      if (in_place[i])
        ++(block_bytes[i] == LOWBIT_GGML_ROWS_TQ1_0_BYTES ? tq1 : tq2);
    std::fprintf(stderr,
                 "lowbit: load: %zu weights read in place from the file "
                 "(%zu tq2_0, %zu tq1_0), %zu packed directly (%.1f MiB, %zu "
                 "chunks in all), %zu through lowbit_pack_gguf\n",
                 tq1 + tq2, tq2, tq1, by_offset.size() - (tq1 + tq2),
                 double(arena_bytes) / 1048576.0, chunks.size(),
                 whole.size());
  }
  phase("checks, weight handles");

  for (int64_t l = 0; l < hp.n_layer; ++l) {
    Layer &layer = m->layers[l];
    auto norm = [&](const char *name) {
      return decode_vector(file.tensor(layer_tensor(l, name)));
    };
    layer.attn_norm = norm("attn_norm.weight");
    layer.ffn_norm = norm("ffn_norm.weight");
    if (hp.arch != Arch::Llama) {
      layer.attn_sub_norm = norm("attn_sub_norm.weight");
      layer.ffn_sub_norm = norm("ffn_sub_norm.weight");
    }
  }
  m->tok_embd = &file.tensor("token_embd.weight");
  m->output_norm = decode_vector(file.tensor("output_norm.weight"));
  if (const GgufTensor *f = file.find_tensor("rope_freqs.weight"))
    m->rope_freqs = decode_vector(*f);
  m->kernels = &kernels();
  phase("norms, engine kernels");

  const int64_t n_ctx = options.n_ctx;
  const size_t cache = size_t(hp.n_layer * hp.n_head_kv * n_ctx * hp.head_dim);
  // Not initialized: a position is always written before it is read, and
  // the pages of positions never reached are never touched.
  m->kcache.reset(new (std::nothrow) float[cache]);
  m->vcache.reset(new (std::nothrow) float[cache]);
  if (!m->kcache || !m->vcache)
    throw Error("engine: the fp32 KV cache of " + std::to_string(n_ctx) +
                " tokens (" + std::to_string(2 * cache * sizeof(float) >> 20) +
                " MiB) does not fit in memory; lower n_ctx");

  // RoPE angles as ggml_rope_ext computes them (ext_factor 0, attn_factor
  // 1): theta = pos * freq_scale * base^(-2i / n_rot) / freq_factor[i],
  // evaluated in double.
  const int64_t half = hp.n_rot / 2;
  m->rope_cos.resize(size_t(n_ctx * half));
  m->rope_sin.resize(size_t(n_ctx * half));
  for (int64_t p = 0; p < n_ctx; ++p)
    for (int64_t i = 0; i < half; ++i) {
      double theta =
          double(p) * hp.rope_freq_scale *
          std::pow(double(hp.rope_base), -2.0 * double(i) / double(hp.n_rot));
      if (!m->rope_freqs.empty())
        theta /= m->rope_freqs[i];
      m->rope_cos[p * half + i] = float(std::cos(theta));
      m->rope_sin[p * half + i] = float(std::sin(theta));
    }
  m->scores.assign(size_t(m->threads * kQueries * n_ctx), 0.0f);
  m->last_logits.assign(size_t(hp.n_vocab), 0.0f);
  m->reserve(1);
  phase("KV cache, RoPE tables, scratch");
  return std::unique_ptr<Model>(new Model(std::move(m)));
}

const Hparams &Model::hparams() const { return impl_->hp; }
int64_t Model::n_ctx() const { return impl_->options.n_ctx; }
int64_t Model::position() const { return impl_->pos; }
void Model::reset() { impl_->pos = 0; }

int64_t Model::linear_bytes() const {
  const Impl &m = *impl_;
  int64_t bytes = engine::linear_bytes(m.head);
  for (const Layer &layer : m.layers)
    for (const Linear *L : {&layer.wq, &layer.wk, &layer.wv, &layer.wo,
                            &layer.gate, &layer.up, &layer.down})
      bytes += engine::linear_bytes(*L);
  return bytes;
}

int64_t Model::weight_bytes() const {
  const Impl &m = *impl_;
  return linear_bytes() + int64_t(m.tok_embd->bytes) / m.tok_embd->rows();
}

int64_t Model::kv_bytes(int64_t pos) const {
  const Hparams &hp = impl_->hp;
  return hp.n_layer * 2 * (pos + 1) * hp.n_head_kv * hp.head_dim *
         int64_t(sizeof(float));
}

std::vector<std::string> Model::kernel_report(int64_t N) const {
  const Impl &m = *impl_;
  std::vector<const Linear *> all;
  for (const Layer &layer : m.layers)
    for (const Linear *L : {&layer.wq, &layer.wk, &layer.wv, &layer.wo,
                            &layer.gate, &layer.up, &layer.down})
      all.push_back(L);
  all.push_back(&m.head);
  std::map<std::tuple<std::string, int64_t, int64_t>, bool> seen;
  std::vector<std::string> lines;
  for (const Linear *L : all) {
    if (seen[{L->format, L->M, L->K}])
      continue;
    seen[{L->format, L->M, L->K}] = true;
    const char *ftype = L->ftype == FloatType::F32   ? "f32"
                        : L->ftype == FloatType::F16 ? "f16"
                                                     : "bf16";
    std::string line = (L->format.empty() ? ftype : L->format) +
                       std::string(" ") + std::to_string(L->M) + "x" +
                       std::to_string(L->K) + ": ";
    if (!L->packed) {
      line += std::string("engine fp32 GEMV (") + m.kernels->isa + ")";
    } else {
      const std::string target = lowbit_weights_target(L->packed.get(), N);
      const std::string config = lowbit_weights_config(L->packed.get(), N);
      line += target == "reference"
                  ? "reference (no kernel registered for this format and "
                    "shape: the scalar C++)"
                  : target + " " + config;
    }
    lines.push_back(line);
  }
  return lines;
}

} // namespace lowbit::engine
