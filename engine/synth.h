//===- synth.h - synthetic GGUF models for tests and benchmarks -*- C++ -*-===//
//
// Writes a GGUF file of llama.cpp's `bitnet` or `llama` architecture with
// random weights of any shape, that llama.cpp loads as it is and that
// `lowbit generate` runs. The metadata keys and tensor names are
// llama.cpp's (src/llama-arch.cpp, src/llama-model.cpp's load_hparams and
// tensor lists):
//
//   general.architecture, general.name, general.alignment,
//   general.file_type, general.quantization_version,
//   <arch>.context_length, .embedding_length, .feed_forward_length,
//   .block_count, .attention.head_count, .attention.head_count_kv,
//   .attention.layer_norm_rms_epsilon, .rope.dimension_count,
//   .rope.freq_base, .vocab_size, tokenizer.ggml.model, and with the
//   "llama" vocabulary tokenizer.ggml.{tokens, scores, token_type,
//   bos_token_id, eos_token_id, unknown_token_id, add_bos_token,
//   add_eos_token}
//
//   token_embd.weight, output_norm.weight, output.weight (llama, untied),
//   blk.N.{attn_norm, attn_q, attn_k, attn_v, attn_output, ffn_norm,
//   ffn_gate, ffn_up, ffn_down}.weight, and for bitnet
//   blk.N.{attn_sub_norm, ffn_sub_norm}.weight
//
// llama.cpp's `bitnet` graph has no output.weight: its head is always
// token_embd, so a bitnet spec must be tied.
//
// The vocabulary, so that llama.cpp's text tools (llama-perplexity,
// llama-cli) run on the file:
//  - "llama" (the default): a sentencepiece vocabulary for llama.cpp's SPM
//    tokenizer (src/llama-vocab.cpp, LLAMA_VOCAB_TYPE_SPM), laid out as
//    LLaMA's: <unk>, <s>, </s> at ids 0, 1, 2 (llama.cpp's SPM defaults),
//    the 256 byte-fallback tokens <0x00> ... <0xFF> at 3 ... 258 (the
//    spelling llama_vocab::byte_to_token looks up), and U+2581 "▁",
//    sentencepiece's word boundary that the tokenizer writes for every
//    space, at 259. Any text tokenizes (a character with no token of its
//    own falls back to its UTF-8 bytes), ASCII text to one token per
//    character, and every token detokenizes. Ids 260 up to n_vocab are
//    padding "[PAD<id>]", type UNUSED and score -1000, as llama.cpp's
//    converter (convert_hf_to_gguf.py) pads a sentencepiece vocabulary. SPM rather than
//    a byte-level "gpt2" BPE: it needs no merges list and no pre-tokenizer
//    (llama.cpp warns about a BPE file without tokenizer.ggml.pre), and
//    its byte fallback covers every input with no extra table;
//  - "none": tokenizer.ggml.model = "no_vocab" and no tokens, which
//    llama.cpp takes as `<arch>.vocab_size` dummy tokens (token ids in and
//    out only, as llama-driver and llama-bench use it): any n_vocab.
//
// Weights (deterministic in the seed: each tensor draws from its own
// mt19937_64 seeded from the seed and the tensor's name):
//  - ternary linears (bitnet, or any tq1_0 / tq2_0 / i2_s tensor): values
//    a * q with q uniform in {-1, 0, 1} (a third zeros) and one scale per
//    tensor a = 1 / sqrt(2K/3) rounded to fp16, so that every ternary type
//    holds it exactly (tq*_0 blocks store d = a as fp16, i2_s a float32,
//    f16 {-a, 0, a} as llama.cpp's BitNet converter writes) and an output
//    has unit variance for unit inputs;
//  - other linears (llama): gaussian, standard deviation 1 / sqrt(K);
//  - token_embd and output.weight: gaussian, standard deviation
//    4 / sqrt(n_embd), so that logits of a unit-RMS hidden state have a
//    standard deviation of about 4 (well spread: greedy ids are stable);
//  - norm weights: f32, 1 + 0.1 * gaussian.
// Every linear's output stays O(1) (its input is RMS-normed), so the
// residual stream grows like sqrt(layers) and no activation saturates.
//
//===----------------------------------------------------------------------===//
#ifndef LOWBIT_ENGINE_SYNTH_H
#define LOWBIT_ENGINE_SYNTH_H

#include "lowbit/gguf.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace lowbit::engine {

struct SynthSpec {
  std::string arch = "bitnet"; // "bitnet" or "llama"
  std::string name = "lowbit synthetic";
  int64_t n_embd = 256, n_ff = 512, n_layer = 2, n_head = 4, n_head_kv = 2;
  int64_t n_vocab = 288, n_ctx = 256;
  /// "llama" (an SPM vocabulary: n_vocab >= kSynthLlamaVocabTokens) or
  /// "none" (no_vocab).
  std::string vocab = "llama";
  float rope_base = 10000.0f, rms_eps = 1e-5f;
  /// The linear weights (attn_q/k/v/output, ffn_gate/up/down): any type
  /// lowbit writes but bf16.
  GgufType linear_type = GgufType::TQ2_0;
  /// token_embd and, when not tied, output.weight: a block type (q4_0 ...
  /// iq4_nl, format.h's GgmlBlockType), f16 or f32.
  GgufType head_type = GgufType::F16;
  bool tied = true; // no output.weight: the head is token_embd
  uint64_t seed = 1;
};

/// The tokens of the "llama" vocabulary before its padding: <unk>, <s>,
/// </s>, 256 bytes and "▁".
constexpr int64_t kSynthLlamaVocabTokens = 260;

/// The types a spec takes, in the order `lowbit gguf synth --help` lists
/// them: for the linear weights, tq2_0, tq1_0, i2_s, the ggml block types
/// (q4_0 ... iq4_nl, format.h's ggml_block_types), f16 and f32; for the
/// embedding and output head, the block types, f16 and f32.
const std::vector<GgufType> &synth_linear_types();
const std::vector<GgufType> &synth_head_types();

/// The presets: "tiny" (n_embd 256, n_ff 512, 2 layers, 4 heads / 2 KV
/// heads, vocab 288 (the llama vocabulary's 260 tokens and 28 of padding),
/// context 256: the smallest K that tq1_0 / tq2_0 blocks of 256 allow, for
/// tests) and "bitnet-2b" (BitNet b1.58 2B's shapes:
/// n_embd 2560, n_ff 6912, 30 layers, 20 / 5 heads, vocab 128256, context
/// 4096, rope base 500000, q4_0 embedding). `arch` sets the architecture
/// and its defaults (bitnet: tq2_0 linears, tied; llama: q4_0 linears,
/// separate output head). Error for an unknown preset or architecture.
SynthSpec synth_preset(const std::string &preset, const std::string &arch);

/// Checks a spec (Error naming the problem): architecture, positive sizes,
/// heads dividing n_embd (even head size for RoPE) and KV heads dividing
/// heads, K (n_embd, n_ff) a multiple of each type's block, the types
/// allowed where they are used, bitnet tied, the vocabulary known and
/// n_vocab large enough for it.
void check_synth_spec(const SynthSpec &spec);

/// Called after each tensor is made (from the thread that made it, one call
/// at a time): (tensors done, tensors in all, values done, values in all,
/// the tensor's name).
using SynthProgress =
    std::function<void(size_t, size_t, int64_t, int64_t, const std::string &)>;

/// Writes the model (Error on a bad spec or when the file cannot be
/// written), making the tensors on every CPU. Returns the file's size in
/// bytes.
uint64_t write_synthetic_model(const SynthSpec &spec, const std::string &path,
                               const SynthProgress &progress = nullptr);

} // namespace lowbit::engine

#endif // LOWBIT_ENGINE_SYNTH_H
