//===- engine.h - a small inference engine on lowbit kernels ----*- C++ -*-===//
//
// Runs llama.cpp's `llama` and `bitnet` model graphs (and the BitNet b1.58
// 2B-4T variant with a squared-ReLU FFN) from a GGUF file, greedy decoding
// from token ids. Every linear layer goes through the lowbit C API
// (lowbit.h: lowbit_pack_gguf, lowbit_quantize_activations,
// lowbit_mpgemm_tiles on the engine's threads); norms, RoPE, attention and the FFN's element-wise
// work are plain C++ run on the same context's threads
// (lowbit_parallel_for). The kernels are whatever the process registered
// before Model::load: a bundle's lowbit_bundle_register() or the kernels
// `lowbit generate` JIT-compiles (lowbit_register_kernels).
//
// Plain C++17 over the runtime; no LLVM.
//
//===----------------------------------------------------------------------===//
#ifndef LOWBIT_ENGINE_ENGINE_H
#define LOWBIT_ENGINE_ENGINE_H

#include "lowbit/gguf.h"
#include "lowbit/lowbit.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace lowbit::engine {

enum class Arch {
  Llama,    // "llama" (LLM_ARCH_LLAMA): SiLU-gated FFN, NORM RoPE
  Bitnet,   // "bitnet" (LLM_ARCH_BITNET): attn_sub_norm, ffn_sub_norm,
            // NEOX RoPE
  Bitnet25, // BitNet b1.58 2B-4T: as Bitnet with a squared-ReLU FFN;
            // "bitnet-b1.58", "bitnet-25" (microsoft/BitNet's llama.cpp),
            // or "bitnet" whose bitnet.hidden_activation is "relu2"
};

struct Hparams {
  Arch arch = Arch::Llama;
  std::string arch_name; // general.architecture
  int64_t n_embd = 0, n_ff = 0, n_layer = 0, n_head = 0, n_head_kv = 0;
  int64_t n_vocab = 0, head_dim = 0, n_ctx_train = 0;
  float rms_eps = 1e-5f, rope_base = 10000.0f;
  bool rope_neox = false;   // NEOX (halves) or NORM (adjacent pairs) rotation
  bool tied_output = false; // output head = token_embd
  int64_t n_rot = 0;        // rotated dimensions of a head (<= head_dim)
  float rope_freq_scale = 1.0f; // 1 / rope.scaling.factor (linear scaling)
  float kq_scale = 0.0f;        // attention logit scale: 1/sqrt(head_dim)
                                // or llama's attention.scale
};

/// Reads and checks the hyperparameters of a GGUF model (Error naming the
/// key or tensor that is missing or disagrees with the metadata).
Hparams read_hparams(const GgufFile &file);

/// One linear layer's weight as the engine packs it.
struct LinearSpec {
  std::string tensor; // GGUF tensor name
  std::string format; // lowbit format it imports into ("" = kept in float)
  int64_t M = 0, K = 0;
};

/// The linear weights of the model and the lowbit format of each: the file's
/// own (gguf_default_format), or `format` for every ternary or float linear
/// weight of the layers when not empty (a q4_0 tensor stays q4_0). The
/// output head (last in the list) always keeps the file's own format: a
/// float head stays float ("", the engine's fp32 GEMV), so that a ternary
/// `format` never quantizes the vocabulary projection. The kernels a JIT or
/// a bundle must provide are the distinct (format, M, K) with a format.
std::vector<LinearSpec> linear_specs(const GgufFile &file,
                                     const std::string &format);

struct Options {
  std::string format; // "" follows the file's types
  int threads = 1;
  int64_t n_ctx = 512; // KV cache length (tokens)
  bool verbose = false; // Model::load logs its phases and their times on stderr
};

/// Where forward passes spend their time (Model::set_profile):
/// per step of the pass, how often it ran, its wall time and the weight
/// bytes its products read.
struct StepProfile {
  int64_t calls = 0;
  double seconds = 0;
  int64_t bytes = 0; // packed or float weight bytes its products read
  /// The parallel regions of a product step's packed weights: their wall
  /// time; the time threads spent in kernel calls, summed over the threads;
  /// and the threads' idle time from the region's start to their first
  /// chunk (a thread withdrawn from the region: all of it) and from their
  /// last chunk to the region's end, summed likewise. The rest of the
  /// threads x wall time is spent between chunks (claiming the next one).
  double region_seconds = 0, kernel_seconds = 0;
  double start_idle_seconds = 0, end_idle_seconds = 0;
};

struct DecodeProfile {
  int64_t tokens = 0; // forward passes (the decoded tokens when decoding)
  double seconds = 0; // the whole passes
  /// Parallel regions run: each activation class of a product's packed
  /// weights, each float GEMV, and each norm, RoPE, attention or gate step
  /// large enough to run on the context's threads.
  int64_t regions = 0;
  StepProfile qkv, wo, gate_up, down, head; // the products (with their
                                            // activation quantization)
  StepProfile attention; // scores, softmax and the sum over V
  StepProfile other;     // norms, RoPE, the cache copy, the gate, residuals
};

class Model {
public:
  /// Loads, imports and packs every weight (Error on any problem).
  static std::unique_ptr<Model> load(const std::string &path,
                                     const Options &options);
  /// The same from a file the caller opened, with its
  /// linear_specs(*file, options.format) (a caller that needed them before
  /// the load, to compile kernels, so reads a float file's values once, and
  /// maps the file once); the model keeps the file.
  static std::unique_ptr<Model> load(std::shared_ptr<const GgufFile> file,
                                     const std::vector<LinearSpec> &specs,
                                     const Options &options);
  ~Model();

  const Hparams &hparams() const;
  /// The KV cache length (Options::n_ctx).
  int64_t n_ctx() const;
  /// Bytes read per decoded token: every packed linear weight, the output
  /// head and the token's embedding row (the KV cache is added by
  /// kv_bytes()).
  int64_t weight_bytes() const;
  /// Bytes the linear weights (layers and output head) take as loaded:
  /// packed for their kernels, or the float bytes the engine's GEMV reads.
  int64_t linear_bytes() const;
  /// KV cache bytes read by one token at position `pos` (all layers).
  int64_t kv_bytes(int64_t pos) const;
  /// Which kernel each distinct (format, M, K) runs for N rows ("target
  /// config" or "reference"), for reporting.
  std::vector<std::string> kernel_report(int64_t N) const;

  /// Evaluates `n` tokens at positions [position(), position() + n), adding
  /// them to the KV cache. logits: [n][n_vocab] for every token when
  /// `all_logits`, else [1][n_vocab] for the last one; may be nullptr.
  /// Error (and nothing evaluated) for n < 1, a token id outside
  /// [0, n_vocab) or positions past n_ctx().
  void eval(const int32_t *tokens, int64_t n, float *logits, bool all_logits);
  int64_t position() const;
  /// Empties the KV cache.
  void reset();
  /// Adds the time of every later forward pass (one per eval of up to
  /// 512 tokens) to `profile` (nullptr stops); its `tokens` counts the
  /// passes.
  void set_profile(DecodeProfile *profile);

  /// Greedy decoding from an empty cache: evaluates the prompt, takes the
  /// argmax of its last logits as the first id, feeds each id back to get
  /// the next, and returns the n generated ids (n - 1 fed back). When
  /// `logits` is not null it receives one row per evaluated position
  /// (prompt.size() + n - 1 rows of n_vocab). `on_id`, when set, is called
  /// with each id as soon as it is decoded (before the next is evaluated).
  /// Error for an empty prompt, n < 1 or prompt.size() + n - 1 > n_ctx().
  std::vector<int32_t>
  generate(const std::vector<int32_t> &prompt, int64_t n,
           std::vector<float> *logits,
           const std::function<void(int32_t)> &on_id = nullptr);

private:
  struct Impl;
  explicit Model(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace lowbit::engine

#endif // LOWBIT_ENGINE_ENGINE_H
