//===- synth.cpp - synthetic GGUF models ----------------------------------===//

#include "synth.h"

#include "lowbit/error.h"
#include "lowbit/format.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <mutex>
#include <random>
#include <sys/stat.h>
#include <thread>
#include <vector>

namespace lowbit::engine {
namespace {

/// llama.cpp's enum llama_ftype of a file whose linear weights are `type`
/// (bitnet.cpp's LLAMA_FTYPE_MOSTLY_I2_S for i2_s; the K-quants' _S variant,
/// whose linear weights are all of the one type).
uint32_t file_type_of(GgufType type) {
  switch (type) {
  case GgufType::F32: return 0;
  case GgufType::F16: return 1;
  case GgufType::Q4_0: return 2;
  case GgufType::Q4_1: return 3;
  case GgufType::Q8_0: return 7;
  case GgufType::Q5_0: return 8;
  case GgufType::Q5_1: return 9;
  case GgufType::Q2_K: return 10;
  case GgufType::Q3_K: return 11;
  case GgufType::Q4_K: return 14;
  case GgufType::Q5_K: return 16;
  case GgufType::Q6_K: return 18;
  case GgufType::IQ4_NL: return 25;
  case GgufType::BF16: return 32;
  case GgufType::TQ1_0: return 36;
  case GgufType::TQ2_0: return 37;
  case GgufType::I2_S: return 40;
  }
  return 0;
}

bool is_ternary_type(GgufType type) {
  return type == GgufType::TQ1_0 || type == GgufType::TQ2_0 ||
         type == GgufType::I2_S;
}

/// FNV-1a of a tensor name, mixed with the seed by splitmix64: every tensor
/// gets its own stream, independent of the order tensors are made in.
uint64_t tensor_seed(uint64_t seed, const std::string &name) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : name)
    h = (h ^ c) * 1099511628211ull;
  uint64_t z = seed + h + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// Values drawn from mt19937_64 by formulas of our own (the standard
/// distributions are implementation-defined), so a seed gives the same
/// model with every standard library.
class Draw {
public:
  explicit Draw(uint64_t seed) : rng_(seed) {}

  /// Standard normal (Box-Muller on two 53-bit uniforms in (0, 1]).
  double gaussian() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double u1 = ((rng_() >> 11) + 1) * 0x1.0p-53;
    double u2 = ((rng_() >> 11) + 1) * 0x1.0p-53;
    double r = std::sqrt(-2.0 * std::log(u1));
    spare_ = r * std::sin(6.283185307179586 * u2);
    has_spare_ = true;
    return r * std::cos(6.283185307179586 * u2);
  }

  /// -1, 0 or 1 with probability 1/3 each (bytes of the stream below 255,
  /// modulo 3).
  int trit() {
    for (;;) {
      if (bytes_left_ == 0) {
        bits_ = rng_();
        bytes_left_ = 8;
      }
      unsigned byte = bits_ & 0xFF;
      bits_ >>= 8;
      --bytes_left_;
      if (byte < 255)
        return int(byte % 3) - 1;
    }
  }

private:
  std::mt19937_64 rng_;
  double spare_ = 0.0;
  bool has_spare_ = false;
  uint64_t bits_ = 0;
  int bytes_left_ = 0;
};

enum class Fill { Ternary, Gaussian, Norm };

struct TensorPlan {
  std::string name;
  GgufType type;
  int64_t rows, K; // ne = {K, rows}; rows = 1 for a vector
  Fill fill;
  double scale; // ternary a, or the gaussian's standard deviation
  bool vector;
};

/// fp16 of 1 / sqrt(2K/3): the ternary scale every type holds exactly.
double ternary_scale(int64_t K) {
  return half_to_float(float_to_half(float(1.0 / std::sqrt(2.0 * K / 3.0))));
}

std::vector<TensorPlan> plan_tensors(const SynthSpec &s) {
  bool bitnet = s.arch == "bitnet";
  bool ternary = bitnet || is_ternary_type(s.linear_type);
  int64_t head_dim = s.n_embd / s.n_head;
  int64_t kv_dim = head_dim * s.n_head_kv;
  double head_std = 4.0 / std::sqrt(double(s.n_embd));

  std::vector<TensorPlan> plan;
  auto norm = [&](const std::string &name, int64_t n) {
    plan.push_back({name, GgufType::F32, 1, n, Fill::Norm, 0.1, true});
  };
  auto linear = [&](const std::string &name, int64_t M, int64_t K) {
    if (ternary)
      plan.push_back({name, s.linear_type, M, K, Fill::Ternary,
                      ternary_scale(K), false});
    else
      plan.push_back({name, s.linear_type, M, K, Fill::Gaussian,
                      1.0 / std::sqrt(double(K)), false});
  };

  plan.push_back({"token_embd.weight", s.head_type, s.n_vocab, s.n_embd,
                  Fill::Gaussian, head_std, false});
  for (int64_t l = 0; l < s.n_layer; ++l) {
    std::string blk = "blk." + std::to_string(l) + ".";
    norm(blk + "attn_norm.weight", s.n_embd);
    linear(blk + "attn_q.weight", s.n_embd, s.n_embd);
    linear(blk + "attn_k.weight", kv_dim, s.n_embd);
    linear(blk + "attn_v.weight", kv_dim, s.n_embd);
    if (bitnet)
      norm(blk + "attn_sub_norm.weight", s.n_embd);
    linear(blk + "attn_output.weight", s.n_embd, s.n_embd);
    norm(blk + "ffn_norm.weight", s.n_embd);
    linear(blk + "ffn_gate.weight", s.n_ff, s.n_embd);
    linear(blk + "ffn_up.weight", s.n_ff, s.n_embd);
    if (bitnet)
      norm(blk + "ffn_sub_norm.weight", s.n_ff);
    linear(blk + "ffn_down.weight", s.n_embd, s.n_ff);
  }
  norm("output_norm.weight", s.n_embd);
  if (!s.tied)
    plan.push_back({"output.weight", s.head_type, s.n_vocab, s.n_embd,
                    Fill::Gaussian, head_std, false});
  return plan;
}

void fill_values(Draw &draw, const TensorPlan &t, float *out, int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    switch (t.fill) {
    case Fill::Ternary:
      out[i] = float(t.scale * draw.trit());
      break;
    case Fill::Gaussian:
      out[i] = float(t.scale * draw.gaussian());
      break;
    case Fill::Norm:
      out[i] = float(1.0 + t.scale * draw.gaussian());
      break;
    }
  }
}

/// The tensor's bytes in its type. Rows are drawn and encoded a slice at a
/// time (at most 16 Mi values of float at once), except i2_s, whose one
/// scale trails the whole tensor.
std::vector<uint8_t> make_tensor(const TensorPlan &t, uint64_t seed) {
  Draw draw(tensor_seed(seed, t.name));
  int64_t slice_rows = t.type == GgufType::I2_S
                           ? t.rows
                           : std::max<int64_t>(1, (int64_t(1) << 24) / t.K);
  std::vector<uint8_t> bytes;
  bytes.reserve(gguf_tensor_bytes(t.type, t.rows, t.K));
  std::vector<float> values;
  for (int64_t r = 0; r < t.rows; r += slice_rows) {
    int64_t n = std::min(slice_rows, t.rows - r);
    values.resize(size_t(n * t.K));
    fill_values(draw, t, values.data(), n * t.K);
    std::vector<uint8_t> part = gguf_encode(t.type, values.data(), n, t.K);
    bytes.insert(bytes.end(), part.begin(), part.end());
  }
  return bytes;
}

/// llama.h's enum llama_token_type, as tokenizer.ggml.token_type stores it.
enum TokenType : int32_t {
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUnused = 5,
  kByte = 6
};

/// The "llama" vocabulary (synth.h): tokens, scores and types of n_vocab
/// ids, and the special ids and flags llama.cpp's SPM loader reads.
void add_llama_vocab(GgufWriter &w, int64_t n_vocab) {
  std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
  std::vector<int32_t> types = {kUnknown, kControl, kControl};
  static const char hex[] = "0123456789ABCDEF";
  for (int b = 0; b < 256; ++b) {
    tokens.push_back(std::string("<0x") + hex[b >> 4] + hex[b & 15] + ">");
    types.push_back(kByte);
  }
  tokens.push_back("\xE2\x96\x81"); // U+2581, sentencepiece's space
  types.push_back(kNormal);
  std::vector<float> scores(tokens.size(), 0.0f);
  for (int64_t id = int64_t(tokens.size()); id < n_vocab; ++id) {
    tokens.push_back("[PAD" + std::to_string(id) + "]");
    types.push_back(kUnused);
    scores.push_back(-1000.0f);
  }
  w.add_string("tokenizer.ggml.model", "llama");
  w.add_string_array("tokenizer.ggml.tokens", tokens);
  w.add_float32_array("tokenizer.ggml.scores", scores);
  w.add_int32_array("tokenizer.ggml.token_type", types);
  w.add_uint32("tokenizer.ggml.bos_token_id", 1);
  w.add_uint32("tokenizer.ggml.eos_token_id", 2);
  w.add_uint32("tokenizer.ggml.unknown_token_id", 0);
  w.add_bool("tokenizer.ggml.add_bos_token", true);
  w.add_bool("tokenizer.ggml.add_eos_token", false);
}

void check_k(const char *what, int64_t K, GgufType type) {
  int64_t block = gguf_block_size(type);
  if (K % block != 0)
    throw Error(std::string(what) + " = " + std::to_string(K) +
                " is not a multiple of " + std::to_string(block) +
                ", the block of " + gguf_type_name(type) +
                " (K of the weights that read it)");
}

bool contains(const std::vector<GgufType> &types, GgufType type) {
  return std::find(types.begin(), types.end(), type) != types.end();
}

std::string type_names(const std::vector<GgufType> &types) {
  std::string names;
  for (GgufType t : types)
    names += std::string(names.empty() ? "" : ", ") + gguf_type_name(t);
  return names;
}

std::vector<GgufType> block_types() {
  int count = 0;
  const GgmlBlockType *rows = ggml_block_types(&count);
  std::vector<GgufType> types;
  for (int i = 0; i < count; ++i)
    types.push_back(GgufType(rows[i].ggml_type));
  return types;
}

} // namespace

const std::vector<GgufType> &synth_linear_types() {
  static const std::vector<GgufType> types = [] {
    std::vector<GgufType> t = {GgufType::TQ2_0, GgufType::TQ1_0,
                               GgufType::I2_S};
    for (GgufType b : block_types())
      t.push_back(b);
    t.push_back(GgufType::F16);
    t.push_back(GgufType::F32);
    return t;
  }();
  return types;
}

const std::vector<GgufType> &synth_head_types() {
  static const std::vector<GgufType> types = [] {
    std::vector<GgufType> t = block_types();
    t.push_back(GgufType::F16);
    t.push_back(GgufType::F32);
    return t;
  }();
  return types;
}

SynthSpec synth_preset(const std::string &preset, const std::string &arch) {
  SynthSpec s;
  if (arch != "bitnet" && arch != "llama")
    throw Error("unknown architecture '" + arch + "' (expected bitnet or llama)");
  s.arch = arch;
  if (preset == "tiny") {
    s.n_embd = 256;
    s.n_ff = 512;
    s.n_layer = 2;
    s.n_head = 4;
    s.n_head_kv = 2;
    s.n_vocab = 288;
    s.n_ctx = 256;
    s.head_type = GgufType::F16;
  } else if (preset == "bitnet-2b") {
    s.n_embd = 2560;
    s.n_ff = 6912;
    s.n_layer = 30;
    s.n_head = 20;
    s.n_head_kv = 5;
    s.n_vocab = 128256;
    s.n_ctx = 4096;
    s.rope_base = 500000.0f;
    s.head_type = GgufType::Q4_0;
  } else {
    throw Error("unknown preset '" + preset + "' (expected tiny or bitnet-2b)");
  }
  s.name = "lowbit synthetic " + arch + " " + preset;
  s.linear_type = arch == "bitnet" ? GgufType::TQ2_0 : GgufType::Q4_0;
  s.tied = arch == "bitnet";
  return s;
}

void check_synth_spec(const SynthSpec &s) {
  if (s.arch != "bitnet" && s.arch != "llama")
    throw Error("unknown architecture '" + s.arch +
                "' (expected bitnet or llama)");
  const std::pair<const char *, int64_t> sizes[] = {
      {"n_embd", s.n_embd},   {"n_ff", s.n_ff},
      {"n_layer", s.n_layer}, {"n_head", s.n_head},
      {"n_head_kv", s.n_head_kv}, {"n_vocab", s.n_vocab},
      {"n_ctx", s.n_ctx}};
  for (const auto &[what, value] : sizes)
    if (value < 1 || value > (int64_t(1) << 31))
      throw Error(std::string(what) + " must be in 1..2^31, got " +
                  std::to_string(value));
  if (s.n_embd % s.n_head != 0)
    throw Error("n_head = " + std::to_string(s.n_head) +
                " does not divide n_embd = " + std::to_string(s.n_embd));
  if ((s.n_embd / s.n_head) % 2 != 0)
    throw Error("the head size n_embd / n_head = " +
                std::to_string(s.n_embd / s.n_head) +
                " must be even (RoPE rotates pairs)");
  if (s.n_head % s.n_head_kv != 0)
    throw Error("n_head_kv = " + std::to_string(s.n_head_kv) +
                " does not divide n_head = " + std::to_string(s.n_head));
  if (!contains(synth_linear_types(), s.linear_type))
    throw Error(std::string("linear type ") + gguf_type_name(s.linear_type) +
                " is not made here (expected " +
                type_names(synth_linear_types()) + ")");
  if (!contains(synth_head_types(), s.head_type))
    throw Error(std::string("head type ") + gguf_type_name(s.head_type) +
                " is not made here (expected " +
                type_names(synth_head_types()) + ")");
  if (s.vocab != "llama" && s.vocab != "none")
    throw Error("unknown vocabulary '" + s.vocab +
                "' (expected llama or none)");
  if (s.vocab == "llama" && s.n_vocab < kSynthLlamaVocabTokens)
    throw Error("n_vocab = " + std::to_string(s.n_vocab) + " is below the " +
                std::to_string(kSynthLlamaVocabTokens) +
                " tokens of the llama vocabulary (<unk>, <s>, </s>, 256 "
                "bytes, U+2581); with --vocab none any size");
  if (s.arch == "bitnet" && !s.tied)
    throw Error("llama.cpp's bitnet graph has no output.weight (its head is "
                "token_embd): a bitnet model must be tied");
  check_k("n_embd", s.n_embd, s.linear_type);
  check_k("n_ff", s.n_ff, s.linear_type);
  check_k("n_embd", s.n_embd, s.head_type);
  if (!(s.rope_base > 0.0f) || !(s.rms_eps > 0.0f))
    throw Error("rope base and rms epsilon must be positive");
}

uint64_t write_synthetic_model(const SynthSpec &s, const std::string &path,
                               const SynthProgress &progress) {
  check_synth_spec(s);
  const std::string &a = s.arch;
  GgufWriter w;
  w.add_string("general.architecture", a);
  w.add_string("general.name", s.name);
  w.add_uint32("general.alignment", 32);
  w.add_uint32("general.file_type", file_type_of(s.linear_type));
  w.add_uint32("general.quantization_version", 2);
  w.add_uint32(a + ".context_length", uint32_t(s.n_ctx));
  w.add_uint32(a + ".embedding_length", uint32_t(s.n_embd));
  w.add_uint32(a + ".feed_forward_length", uint32_t(s.n_ff));
  w.add_uint32(a + ".block_count", uint32_t(s.n_layer));
  w.add_uint32(a + ".attention.head_count", uint32_t(s.n_head));
  w.add_uint32(a + ".attention.head_count_kv", uint32_t(s.n_head_kv));
  w.add_float32(a + ".attention.layer_norm_rms_epsilon", s.rms_eps);
  w.add_uint32(a + ".rope.dimension_count", uint32_t(s.n_embd / s.n_head));
  w.add_float32(a + ".rope.freq_base", s.rope_base);
  w.add_uint32(a + ".vocab_size", uint32_t(s.n_vocab));
  if (s.vocab == "llama")
    add_llama_vocab(w, s.n_vocab);
  else
    w.add_string("tokenizer.ggml.model", "no_vocab");

  // The tensors are made on every CPU (each from its own stream, so the
  // file does not depend on the thread count), then added in order.
  std::vector<TensorPlan> plan = plan_tensors(s);
  int64_t total = 0;
  for (const TensorPlan &t : plan)
    total += t.rows * t.K;
  std::vector<std::vector<uint8_t>> bytes(plan.size());
  std::atomic<size_t> next{0};
  std::mutex mutex;
  size_t done = 0;
  int64_t values = 0;
  std::exception_ptr failure;
  auto work = [&] {
    for (size_t i; (i = next++) < plan.size();) {
      try {
        bytes[i] = make_tensor(plan[i], s.seed);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex);
        if (!failure)
          failure = std::current_exception();
        next = plan.size();
        return;
      }
      std::lock_guard<std::mutex> lock(mutex);
      values += plan[i].rows * plan[i].K;
      if (progress)
        progress(++done, plan.size(), values, total, plan[i].name);
    }
  };
  unsigned threads = std::max(1u, std::min(std::thread::hardware_concurrency(),
                                           unsigned(plan.size())));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t)
    pool.emplace_back(work);
  work();
  for (std::thread &t : pool)
    t.join();
  if (failure)
    std::rethrow_exception(failure);
  for (size_t i = 0; i < plan.size(); ++i) {
    std::vector<int64_t> ne = {plan[i].K};
    if (!plan[i].vector)
      ne.push_back(plan[i].rows);
    w.add_tensor(plan[i].name, plan[i].type, ne, std::move(bytes[i]));
  }
  w.write(path);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw Error(path + ": written but cannot be read back");
  return uint64_t(st.st_size);
}

} // namespace lowbit::engine
