//===- engine_test.cpp - the inference engine on tiny GGUF models ---------===//
//
// Tiny models written here with GgufWriter + gguf_encode, run with no
// kernels registered (the C API then runs the exact scalar reference):
//  - a batch gives the logits of token-by-token decoding (KV cache), and so
//    does any thread count;
//  - reset() and generate() repeat themselves; generate's shapes and its
//    greedy ids;
//  - a model whose linears are kept in float (no quantization anywhere)
//    against an independent fp64 forward written here from llama.cpp's
//    graphs, for llama (NORM RoPE, SiLU) and the bitnet family (NEOX RoPE,
//    sub-norms, SiLU or relu^2, biases and scales);
//  - tq2_0 and f32 {-a, 0, a} linears give the same logits;
//  - errors: token ids, missing tensors, shapes, architecture, context.
//
//===----------------------------------------------------------------------===//
#include "engine.h"
#include "kernels.h"
#include "test_util.h"

#include "lowbit/error.h"
#include "lowbit/format.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <stdlib.h>
#include <string>
#include <unistd.h>
#include <vector>

namespace lowbit::engine {
namespace {

using test::error_of;

struct Spec {
  std::string arch = "bitnet";
  int64_t E = 64, F = 96, L = 2, H = 4, Hkv = 2, V = 50;
  GgufType linear = GgufType::F32;
  GgufType embd = GgufType::F16;
  bool ternary = true;           // linear values {-a, 0, a}, else gaussian
  float a = 0.125f;              // the ternary scale (exact in fp16)
  bool output = false;           // an output.weight (else tied to token_embd)
  GgufType head = GgufType::F32; // output.weight's type
  bool biases = false;           // q/k/v/o and ffn biases
  bool scales = false;           // `.scale` tensors on every linear
  std::string hidden_act;        // bitnet.hidden_activation when not empty
  float rope_base = 10000.0f, eps = 1e-5f;
  std::set<std::string> skip;                     // tensors left out
  std::map<std::string, std::vector<int64_t>> ne; // shapes overridden
  uint64_t seed = 7;
};

/// All tensors of a spec: name -> (shape, values).
struct Tensors {
  std::vector<std::string> order;
  std::map<std::string, std::vector<int64_t>> ne;
  std::map<std::string, std::vector<float>> values;
  std::map<std::string, GgufType> type;
};

std::string blk(int64_t l, const std::string &name) {
  return "blk." + std::to_string(l) + "." + name;
}

Tensors make_tensors(const Spec &s) {
  std::mt19937_64 rng(s.seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Tensors t;
  auto add = [&](const std::string &name, std::vector<int64_t> ne,
                 GgufType type, const std::function<float()> &value) {
    int64_t count = 1;
    for (int64_t d : ne)
      count *= d;
    std::vector<float> v(static_cast<size_t>(count));
    for (float &x : v)
      x = value();
    t.order.push_back(name);
    t.ne[name] = ne;
    t.values[name] = v;
    t.type[name] = type;
  };
  auto gauss = [&](float sd) { return [&, sd] { return sd * normal(rng); }; };
  auto norm_w = [&] { return 1.0f + 0.1f * normal(rng); };
  const int64_t D = s.E / s.H;
  const bool bitnet = s.arch != "llama";
  add("token_embd.weight", {s.E, s.V}, s.embd, gauss(1.0f));
  add("output_norm.weight", {s.E}, GgufType::F32, norm_w);
  if (s.output)
    add("output.weight", {s.E, s.V}, s.head,
        gauss(2.0f / std::sqrt(float(s.E))));
  auto linear = [&](int64_t l, const char *name, int64_t M, int64_t K) {
    if (s.ternary) {
      add(blk(l, std::string(name) + ".weight"), {K, M}, s.linear,
          [&] { return s.a * float(int(rng() % 3) - 1); });
    } else {
      add(blk(l, std::string(name) + ".weight"), {K, M}, s.linear,
          gauss(1.0f / std::sqrt(float(K))));
    }
    if (s.biases)
      add(blk(l, std::string(name) + ".bias"), {M}, GgufType::F32, gauss(0.1f));
    if (s.scales)
      add(blk(l, std::string(name) + ".scale"), {1}, GgufType::F32,
          [&] { return 0.5f + float(rng() % 100) / 100.0f; });
  };
  for (int64_t l = 0; l < s.L; ++l) {
    add(blk(l, "attn_norm.weight"), {s.E}, GgufType::F32, norm_w);
    linear(l, "attn_q", s.H * D, s.E);
    linear(l, "attn_k", s.Hkv * D, s.E);
    linear(l, "attn_v", s.Hkv * D, s.E);
    if (bitnet)
      add(blk(l, "attn_sub_norm.weight"), {s.E}, GgufType::F32, norm_w);
    linear(l, "attn_output", s.E, s.H * D);
    add(blk(l, "ffn_norm.weight"), {s.E}, GgufType::F32, norm_w);
    linear(l, "ffn_gate", s.F, s.E);
    linear(l, "ffn_up", s.F, s.E);
    if (bitnet)
      add(blk(l, "ffn_sub_norm.weight"), {s.F}, GgufType::F32, norm_w);
    linear(l, "ffn_down", s.E, s.F);
  }
  return t;
}

/// The values as the file stores them (what a reader decodes).
std::vector<float> stored(const Tensors &t, const std::string &name) {
  const std::vector<float> &v = t.values.at(name);
  const std::vector<int64_t> &ne = t.ne.at(name);
  const int64_t K = ne[0], rows = int64_t(v.size()) / K;
  std::vector<uint8_t> bytes = gguf_encode(t.type.at(name), v.data(), rows, K);
  GgufTensor g;
  g.name = name;
  g.type = t.type.at(name);
  g.ne = ne;
  g.data = bytes.data();
  g.bytes = bytes.size();
  std::vector<float> out(v.size());
  for (int64_t r = 0; r < rows; ++r)
    gguf_decode_row(g, r, out.data() + r * K);
  return out;
}

std::string temp_path(const std::string &name) {
  return ::testing::TempDir() + "lowbit_engine_" + std::to_string(getpid()) +
         "_" + name + ".gguf";
}

std::string write_model(const Spec &s, const Tensors &t,
                        const std::string &name) {
  GgufWriter w;
  const std::string a = s.arch + ".";
  w.add_string("general.architecture", s.arch);
  w.add_uint32(a + "context_length", 256);
  w.add_uint32(a + "embedding_length", uint32_t(s.E));
  w.add_uint32(a + "feed_forward_length", uint32_t(s.F));
  w.add_uint32(a + "block_count", uint32_t(s.L));
  w.add_uint32(a + "attention.head_count", uint32_t(s.H));
  w.add_uint32(a + "attention.head_count_kv", uint32_t(s.Hkv));
  w.add_float32(a + "attention.layer_norm_rms_epsilon", s.eps);
  w.add_float32(a + "rope.freq_base", s.rope_base);
  w.add_uint32(a + "rope.dimension_count", uint32_t(s.E / s.H));
  w.add_uint32(a + "vocab_size", uint32_t(s.V));
  if (!s.hidden_act.empty())
    w.add_string(a + "hidden_activation", s.hidden_act);
  for (const std::string &n : t.order) {
    if (s.skip.count(n))
      continue;
    const std::vector<float> &v = t.values.at(n);
    const std::vector<int64_t> &ne = t.ne.at(n);
    std::vector<int64_t> shape = s.ne.count(n) ? s.ne.at(n) : ne;
    const int64_t K = shape[0];
    int64_t count = 1;
    for (int64_t d : shape)
      count *= d;
    std::vector<float> values(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i)
      values[i] = v[size_t(i) % v.size()];
    w.add_tensor(n, t.type.at(n), shape,
                 gguf_encode(t.type.at(n), values.data(), count / K, K));
  }
  const std::string path = temp_path(name);
  w.write(path);
  return path;
}

std::string write_model(const Spec &s, const std::string &name) {
  return write_model(s, make_tensors(s), name);
}

std::unique_ptr<Model> load(const std::string &path, int threads = 1,
                            int64_t n_ctx = 64,
                            const std::string &format = "") {
  Options o;
  o.threads = threads;
  o.n_ctx = n_ctx;
  o.format = format;
  return Model::load(path, o);
}

/// max |a - b| / max(1, max |b|).
double max_rel(const std::vector<float> &a, const std::vector<float> &b) {
  EXPECT_EQ(a.size(), b.size());
  double diff = 0.0, scale = 1.0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    diff = std::max(diff, double(std::fabs(a[i] - b[i])));
    scale = std::max(scale, double(std::fabs(b[i])));
  }
  return diff / scale;
}

const std::vector<int32_t> kPrompt = {3, 17, 0, 42, 8, 8, 29, 1, 49};

/// 70 tokens: more than two blocks of 32 cached rows in the weighted sums.
std::vector<int32_t> long_prompt() {
  std::vector<int32_t> ids;
  for (int i = 0; i < 70; ++i)
    ids.push_back((i * 13 + 5) % 50);
  return ids;
}

std::vector<float> batch_logits(Model &m, const std::vector<int32_t> &ids) {
  m.reset();
  std::vector<float> out(ids.size() * m.hparams().n_vocab);
  m.eval(ids.data(), int64_t(ids.size()), out.data(), true);
  return out;
}

std::vector<float> stepwise_logits(Model &m, const std::vector<int32_t> &ids) {
  m.reset();
  const int64_t V = m.hparams().n_vocab;
  std::vector<float> out(ids.size() * V);
  for (size_t i = 0; i < ids.size(); ++i)
    m.eval(&ids[i], 1, out.data() + i * V, false);
  return out;
}

// ---- An independent fp64 forward for models whose linears stay in float.

struct Reference {
  Spec s;
  Tensors t;
  std::map<std::string, std::vector<double>> w; // stored values, in double

  Reference(const Spec &spec, const Tensors &tensors) : s(spec), t(tensors) {
    for (const std::string &n : t.order) {
      std::vector<float> v = stored(t, n);
      w[n] = std::vector<double>(v.begin(), v.end());
    }
  }

  const std::vector<double> &get(const std::string &n) const { return w.at(n); }
  bool has(const std::string &n) const { return w.count(n) != 0; }

  void rms(std::vector<double> &x, const std::vector<double> &g) const {
    double ss = 0.0;
    for (double v : x)
      ss += v * v;
    const double r = 1.0 / std::sqrt(ss / double(x.size()) + s.eps);
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = x[i] * r * g[i];
  }

  std::vector<double> linear(int64_t l, const std::string &name,
                             const std::vector<double> &x) const {
    const std::string base = l < 0 ? name : blk(l, name);
    const std::vector<double> &W = get(base + ".weight");
    const int64_t K = int64_t(x.size()), M = int64_t(W.size()) / K;
    std::vector<double> y(size_t(M), 0.0);
    for (int64_t m = 0; m < M; ++m)
      for (int64_t k = 0; k < K; ++k)
        y[m] += W[m * K + k] * x[k];
    if (has(base + ".scale"))
      for (double &v : y)
        v *= get(base + ".scale")[0];
    if (has(base + ".bias"))
      for (int64_t m = 0; m < M; ++m)
        y[m] += get(base + ".bias")[m];
    return y;
  }

  void rope(std::vector<double> &x, int64_t heads, int64_t pos) const {
    const int64_t D = s.E / s.H;
    const bool neox = s.arch != "llama";
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < D / 2; ++i) {
        const double theta =
            double(pos) * std::pow(double(s.rope_base), -2.0 * i / double(D));
        const int64_t a = h * D + (neox ? i : 2 * i);
        const int64_t b = a + (neox ? D / 2 : 1);
        const double x0 = x[a], x1 = x[b];
        x[a] = x0 * std::cos(theta) - x1 * std::sin(theta);
        x[b] = x0 * std::sin(theta) + x1 * std::cos(theta);
      }
  }

  /// Logits [n][V] of `ids` from position 0.
  std::vector<float> forward(const std::vector<int32_t> &ids) const {
    const int64_t n = int64_t(ids.size()), E = s.E, D = E / s.H;
    const bool bitnet = s.arch != "llama";
    const bool relu2 = s.arch == "bitnet-b1.58" || s.arch == "bitnet-25" ||
                       s.hidden_act == "relu2";
    std::vector<std::vector<double>> x(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      const std::vector<double> &emb = get("token_embd.weight");
      x[i].assign(emb.begin() + ids[i] * E, emb.begin() + (ids[i] + 1) * E);
    }
    for (int64_t l = 0; l < s.L; ++l) {
      std::vector<std::vector<double>> q(n), k(n), v(n);
      for (int64_t i = 0; i < n; ++i) {
        std::vector<double> h = x[i];
        rms(h, get(blk(l, "attn_norm.weight")));
        q[i] = linear(l, "attn_q", h);
        k[i] = linear(l, "attn_k", h);
        v[i] = linear(l, "attn_v", h);
        rope(q[i], s.H, i);
        rope(k[i], s.Hkv, i);
      }
      for (int64_t i = 0; i < n; ++i) {
        std::vector<double> att(size_t(s.H * D), 0.0);
        for (int64_t h = 0; h < s.H; ++h) {
          const int64_t g = h / (s.H / s.Hkv);
          std::vector<double> sc(size_t(i + 1));
          double mx = -1e300;
          for (int64_t j = 0; j <= i; ++j) {
            double d = 0.0;
            for (int64_t e = 0; e < D; ++e)
              d += q[i][h * D + e] * k[j][g * D + e];
            sc[j] = d / std::sqrt(double(D));
            mx = std::max(mx, sc[j]);
          }
          double sum = 0.0;
          for (double &z : sc)
            sum += (z = std::exp(z - mx));
          for (int64_t j = 0; j <= i; ++j)
            for (int64_t e = 0; e < D; ++e)
              att[h * D + e] += sc[j] / sum * v[j][g * D + e];
        }
        if (bitnet)
          rms(att, get(blk(l, "attn_sub_norm.weight")));
        std::vector<double> o = linear(l, "attn_output", att);
        for (int64_t e = 0; e < E; ++e)
          x[i][e] += o[e];
        std::vector<double> h = x[i];
        rms(h, get(blk(l, "ffn_norm.weight")));
        std::vector<double> gate = linear(l, "ffn_gate", h);
        std::vector<double> up = linear(l, "ffn_up", h);
        for (size_t f = 0; f < gate.size(); ++f) {
          const double a = gate[f];
          const double act = relu2 ? std::max(a, 0.0) * std::max(a, 0.0)
                                   : a / (1 + std::exp(-a));
          gate[f] = act * up[f];
        }
        if (bitnet)
          rms(gate, get(blk(l, "ffn_sub_norm.weight")));
        std::vector<double> d = linear(l, "ffn_down", gate);
        for (int64_t e = 0; e < E; ++e)
          x[i][e] += d[e];
      }
    }
    std::vector<float> logits;
    const std::string head = s.output ? "output" : "token_embd";
    for (int64_t i = 0; i < n; ++i) {
      std::vector<double> h = x[i];
      rms(h, get("output_norm.weight"));
      std::vector<double> y = linear(-1, head, h);
      logits.insert(logits.end(), y.begin(), y.end());
    }
    return logits;
  }
};

// ---------------------------------------------------------------------------

TEST(Engine, HparamsAndSpecs) {
  Spec s;
  const std::string path = write_model(s, "hparams");
  auto file = GgufFile::open(path);
  Hparams hp = read_hparams(*file);
  EXPECT_EQ(hp.arch, Arch::Bitnet);
  EXPECT_EQ(hp.n_embd, 64);
  EXPECT_EQ(hp.n_ff, 96);
  EXPECT_EQ(hp.n_layer, 2);
  EXPECT_EQ(hp.n_head, 4);
  EXPECT_EQ(hp.n_head_kv, 2);
  EXPECT_EQ(hp.head_dim, 16);
  EXPECT_EQ(hp.n_vocab, 50);
  EXPECT_TRUE(hp.rope_neox);
  EXPECT_TRUE(hp.tied_output);
  std::vector<LinearSpec> specs = linear_specs(*file, "");
  ASSERT_EQ(specs.size(), 2u * 7u + 1u);
  EXPECT_EQ(specs[0].tensor, "blk.0.attn_q.weight");
  EXPECT_EQ(specs[0].format, "i2s"); // f32 {-a, 0, a}
  EXPECT_EQ(specs[1].M, 32);         // attn_k: 2 KV heads of 16
  EXPECT_EQ(specs[6].M, 64);         // ffn_down
  EXPECT_EQ(specs[6].K, 96);
  EXPECT_EQ(specs.back().tensor, "token_embd.weight");
  EXPECT_EQ(specs.back().format, ""); // an f16 head stays float
  EXPECT_EQ(specs.back().M, 50);
  // A format applies to the layers' ternary/float weights, not the head.
  specs = linear_specs(*file, "tl2");
  EXPECT_EQ(specs[3].format, "tl2");
  EXPECT_EQ(specs.back().format, "");
  std::remove(path.c_str());
}

TEST(Engine, BatchMatchesTokenByToken) {
  struct Case {
    const char *arch;
    int64_t E, H, Hkv; // head_dim 32, 16, 64, 12; query heads per KV head
                       // 2, 4 (one decode item), 8 (two), 1
  };
  for (Case c : {Case{"bitnet", 128, 4, 2}, Case{"bitnet-b1.58", 128, 8, 2},
                 Case{"llama", 128, 2, 1}, Case{"llama", 48, 4, 4},
                 Case{"llama", 128, 8, 1}}) {
    const char *arch = c.arch;
    SCOPED_TRACE(std::string(arch) + " E " + std::to_string(c.E) + " H " +
                 std::to_string(c.H) + "/" + std::to_string(c.Hkv));
    Spec s;
    s.arch = arch;
    s.E = c.E;
    s.H = c.H;
    s.Hkv = c.Hkv;
    const std::string path =
        write_model(s, std::string("batch_") + arch + std::to_string(c.E) +
                           "_" + std::to_string(c.H));
    auto m = load(path);
    const std::vector<float> a = batch_logits(*m, kPrompt);
    const std::vector<float> b = stepwise_logits(*m, kPrompt);
    EXPECT_LT(max_rel(a, b), 1e-5);
    EXPECT_EQ(a, b); // every row is computed the same way in both
    EXPECT_EQ(m->position(), int64_t(kPrompt.size()));
    // A prompt in two batches, the last logits only.
    m->reset();
    std::vector<float> last(s.V);
    m->eval(kPrompt.data(), 4, nullptr, false);
    m->eval(kPrompt.data() + 4, int64_t(kPrompt.size()) - 4, last.data(),
            false);
    std::vector<float> want(a.end() - s.V, a.end());
    EXPECT_LT(max_rel(last, want), 1e-5);
    std::remove(path.c_str());
  }
}

TEST(Engine, ThreadsGiveTheSameLogits) {
  Spec s;
  s.E = 128;
  s.H = 8;
  s.F = 160;
  const std::string path = write_model(s, "threads");
  auto one = load(path, 1);
  auto three = load(path, 3);
  std::vector<int32_t> ids;
  for (int i = 0; i < 40; ++i)
    ids.push_back((i * 7 + 3) % int32_t(s.V));
  EXPECT_LT(max_rel(batch_logits(*three, ids), batch_logits(*one, ids)), 1e-6);
  EXPECT_LT(max_rel(stepwise_logits(*three, ids), batch_logits(*one, ids)),
            1e-5);
  std::remove(path.c_str());
}

TEST(Engine, ResetAndGenerateRepeat) {
  Spec s;
  const std::string path = write_model(s, "generate");
  auto m = load(path);
  const int64_t n = 6, P = int64_t(kPrompt.size()), V = s.V;
  std::vector<float> logits1, logits2;
  std::vector<int32_t> ids1 = m->generate(kPrompt, n, &logits1);
  std::vector<int32_t> ids2 = m->generate(kPrompt, n, &logits2);
  ASSERT_EQ(int64_t(ids1.size()), n);
  EXPECT_EQ(ids1, ids2);
  ASSERT_EQ(int64_t(logits1.size()), (P + n - 1) * V);
  EXPECT_EQ(logits1, logits2);
  EXPECT_EQ(ids1, m->generate(kPrompt, n, nullptr));
  // Each id is the argmax of the row before it, and the rows are those of
  // evaluating prompt + fed-back ids.
  for (int64_t i = 0; i < n; ++i) {
    const float *row = logits1.data() + (P - 1 + i) * V;
    EXPECT_EQ(ids1[i], std::max_element(row, row + V) - row);
  }
  std::vector<int32_t> all = kPrompt;
  all.insert(all.end(), ids1.begin(), ids1.end() - 1);
  EXPECT_LT(max_rel(logits1, batch_logits(*m, all)), 1e-5);
  std::remove(path.c_str());
}

TEST(Engine, GenerateReportsEachIdAsItIsDecoded) {
  Spec s;
  const std::string path = write_model(s, "on_id");
  auto m = load(path);
  const int64_t n = 5, P = int64_t(kPrompt.size());
  std::vector<int32_t> seen;
  std::vector<int64_t> positions; // the KV cache's length at each call
  const std::vector<int32_t> ids =
      m->generate(kPrompt, n, nullptr, [&](int32_t id) {
        seen.push_back(id);
        positions.push_back(m->position());
      });
  EXPECT_EQ(seen, ids);
  // Id i comes from the logits of position P - 1 + i, before id i is fed
  // back: the callback runs before the next evaluation, not at the end.
  ASSERT_EQ(int64_t(positions.size()), n);
  for (int64_t i = 0; i < n; ++i)
    EXPECT_EQ(positions[i], P + i);
  std::remove(path.c_str());
}

TEST(Engine, FloatModelsMatchAnFp64Forward) {
  struct Case {
    const char *arch;
    bool output, biases, scales;
    const char *act;
    int64_t E, H, Hkv;   // head_dim 16, 64 (the 8-key and 64-column blocks
                         // of the attention loops) and 12 (not a multiple
                         // of 8: the scalar loops)
    GgufType embd, head; // the head's GEMV reads f32, f16 or bf16
  };
  const GgufType f32 = GgufType::F32, f16 = GgufType::F16,
                 bf16 = GgufType::BF16;
  for (Case c :
       {Case{"llama", true, false, false, "", 64, 4, 2, f32, f16},
        Case{"llama", false, true, false, "", 128, 2, 1, f16, f32},
        Case{"bitnet", false, false, true, "", 48, 4, 4, bf16, f32},
        Case{"bitnet", false, true, true, "relu2", 64, 4, 2, f32, f32},
        Case{"bitnet-b1.58", true, true, false, "", 128, 2, 2, f16, bf16},
        Case{"bitnet-25", false, false, false, "", 64, 4, 1, f32, f32}}) {
    SCOPED_TRACE(std::string(c.arch) + (c.output ? " output" : " tied") +
                 (c.biases ? " biases" : "") + (c.scales ? " scales" : "") +
                 " " + c.act + " E " + std::to_string(c.E) + " H " +
                 std::to_string(c.H) + "/" + std::to_string(c.Hkv));
    Spec s;
    s.arch = c.arch;
    s.E = c.E;
    s.H = c.H;
    s.Hkv = c.Hkv;
    s.ternary = false; // gaussian f32 linears stay float: no quantization
    s.embd = c.embd;
    s.head = c.head;
    s.output = c.output;
    s.biases = c.biases;
    s.scales = c.scales;
    s.hidden_act = c.act;
    s.rope_base = 500.0f; // large angles at small positions
    const Tensors t = make_tensors(s);
    const std::string path = write_model(s, t, std::string("fp64_") + c.arch);
    auto m = load(path, 2, 128);
    for (const std::string &line : m->kernel_report(1))
      EXPECT_NE(line.find("engine fp32 GEMV"), std::string::npos) << line;
    EXPECT_EQ(m->kernel_report(1).back().substr(0, 4),
              c.output ? (c.head == f32   ? "f32 "
                          : c.head == f16 ? "f16 "
                                          : "bf16")
                       : (c.embd == f32   ? "f32 "
                          : c.embd == f16 ? "f16 "
                                          : "bf16"));
    const std::vector<int32_t> ids = long_prompt();
    const std::vector<float> want = Reference(s, t).forward(ids);
    const std::vector<float> batch = batch_logits(*m, ids);
    EXPECT_LT(max_rel(batch, want), 2e-5);
    EXPECT_EQ(batch, stepwise_logits(*m, ids));
    std::remove(path.c_str());
  }
}

TEST(Engine, FloatGemvReadsEveryHalf) {
  // Every f16 and bf16 value (but NaNs) through the GEMV of both tables:
  // W [65536][1] times x = 1 gives the values themselves.
  std::vector<uint16_t> W(65536);
  for (uint32_t i = 0; i < 65536; ++i)
    W[i] = uint16_t(i);
  const float one = 1.0f;
  for (const char *isa : {"generic", "native"}) {
    SCOPED_TRACE(isa);
    if (std::string(isa) == "generic")
      setenv("LOWBIT_ENGINE_ISA", "generic", 1);
    const Kernels &k = kernels();
    unsetenv("LOWBIT_ENGINE_ISA");
    std::vector<float> Y(65536);
    k.gemv(W.data(), FloatType::F16, 1, &one, 1, Y.data(), 65536, 0, 65536);
    for (uint32_t i = 0; i < 65536; ++i) {
      const float want = half_to_float(uint16_t(i));
      if (!std::isnan(want))
        ASSERT_EQ(Y[i], want) << "f16 0x" << std::hex << i;
    }
    k.gemv(W.data(), FloatType::BF16, 1, &one, 1, Y.data(), 65536, 0, 65536);
    for (uint32_t i = 0; i < 65536; ++i) {
      const float want = bf16_to_float(uint16_t(i));
      if (!std::isnan(want))
        ASSERT_EQ(Y[i], want) << "bf16 0x" << std::hex << i;
    }
    // A long row: 8-wide blocks and the scalar tail.
    std::vector<uint16_t> row(45);
    std::vector<float> x(45);
    double want = 0.0;
    for (int i = 0; i < 45; ++i) {
      row[i] = float_to_half(0.25f * float(i % 7) - 0.5f);
      x[i] = float(i) / 8.0f;
      want += double(half_to_float(row[i])) * x[i];
    }
    float y = 0.0f;
    k.gemv(row.data(), FloatType::F16, 45, x.data(), 1, &y, 1, 0, 1);
    EXPECT_NEAR(y, want, 1e-5);
  }
}

TEST(Engine, GateActivations) {
  // SiLU through the vectorized exp, and relu^2, against double, on both
  // tables; lengths with a scalar tail.
  std::vector<float> x, u;
  for (int i = -4000; i <= 4000; ++i) {
    x.push_back(float(i) / 40.0f); // [-100, 100]
    u.push_back(1.0f + float(i % 7) / 8.0f);
  }
  x.push_back(-1e-30f);
  u.push_back(1.0f);
  for (const char *isa : {"generic", "native"}) {
    SCOPED_TRACE(isa);
    if (std::string(isa) == "generic")
      setenv("LOWBIT_ENGINE_ISA", "generic", 1);
    const Kernels &k = kernels();
    unsetenv("LOWBIT_ENGINE_ISA");
    for (bool relu2 : {false, true}) {
      std::vector<float> g = x;
      k.glu(g.data(), u.data(), int64_t(g.size()), relu2);
      for (size_t i = 0; i < x.size(); ++i) {
        const double a = x[i];
        const double want = (relu2 ? std::max(a, 0.0) * std::max(a, 0.0)
                                   : a / (1.0 + std::exp(-a))) *
                            u[i];
        ASSERT_NEAR(g[i], want, 4e-7 * std::fabs(want) + 1e-36)
            << (relu2 ? "relu2 " : "silu ") << x[i];
      }
    }
  }
}

TEST(Engine, GenericKernelsMatchAnFp64Forward) {
  Spec s;
  s.arch = "llama";
  s.ternary = false;
  s.embd = GgufType::F32;
  s.E = 128;
  s.H = 2;
  s.Hkv = 1;
  const Tensors t = make_tensors(s);
  const std::string path = write_model(s, t, "generic");
  setenv("LOWBIT_ENGINE_ISA", "generic", 1);
  auto m = load(path, 1, 128);
  unsetenv("LOWBIT_ENGINE_ISA");
  EXPECT_NE(m->kernel_report(1).back().find("(generic)"), std::string::npos);
  const std::vector<int32_t> ids = long_prompt();
  const std::vector<float> want = Reference(s, t).forward(ids);
  EXPECT_LT(max_rel(batch_logits(*m, ids), want), 2e-5);
  EXPECT_EQ(batch_logits(*m, ids), stepwise_logits(*m, ids));
  std::remove(path.c_str());
}

TEST(Engine, Tq2MatchesTernaryFloats) {
  Spec s;
  s.E = 256; // tq2_0 blocks of 256
  s.F = 512;
  s.arch = "bitnet-b1.58";
  s.embd = GgufType::Q4_0;
  const Tensors t = make_tensors(s);
  const std::string f32 = write_model(s, t, "ternary_f32");
  Tensors tq = t;
  for (auto &[name, type] : tq.type)
    if (name.rfind("blk.", 0) == 0 && name.find("norm") == std::string::npos)
      type = GgufType::TQ2_0;
  const std::string tq2 = write_model(s, tq, "ternary_tq2");
  auto a = load(f32), b = load(tq2);
  EXPECT_EQ(a->kernel_report(1).front(),
            "i2s 256x256: reference (no kernel registered for this format "
            "and shape: the scalar C++)");
  EXPECT_EQ(a->weight_bytes(), b->weight_bytes());
  EXPECT_EQ(batch_logits(*a, kPrompt), batch_logits(*b, kPrompt));
  // q4_0 head through the C API, tl1 layers: still batch == stepwise.
  auto c = load(tq2, 1, 64, "tl1");
  EXPECT_EQ(c->kernel_report(1).back(),
            "q4_0 50x256: reference (no kernel registered for this format "
            "and shape: the scalar C++)");
  EXPECT_LT(max_rel(batch_logits(*c, kPrompt), stepwise_logits(*c, kPrompt)),
            1e-5);
  EXPECT_EQ(batch_logits(*c, kPrompt), batch_logits(*a, kPrompt));
  std::remove(f32.c_str());
  std::remove(tq2.c_str());
}

TEST(Engine, BytesRead) {
  Spec s;
  const std::string path = write_model(s, "bytes");
  auto m = load(path);
  const int64_t D = 16;
  EXPECT_EQ(m->kv_bytes(0), 2 * 2 * 1 * 2 * D * 4);
  EXPECT_EQ(m->kv_bytes(9), 2 * 2 * 10 * 2 * D * 4);
  // The packed linears, the f16 head read in place (V x E x 2) and one f16
  // embedding row.
  EXPECT_GT(m->weight_bytes(), 50 * 64 * 2 + 64 * 2);
  EXPECT_LT(m->weight_bytes(), 50 * 64 * 2 + 64 * 2 + 2 * 20000);
  std::remove(path.c_str());
}

// Model::set_profile: every forward pass, a batch as one (bench-model's
// prefill profile), each step once per layer (the rest between them: 5 laps
// per layer and 2 around the head, 1 without logits), the products' bytes
// adding up to the linear weights, and 4 product regions per layer plus the
// head's (this model is too small for any other step to run on the
// threads), each timed.
TEST(Engine, DecodeProfileCountsEachStep) {
  Spec s;
  const std::string path = write_model(s, "profile");
  auto m = load(path, 2);
  DecodeProfile batch;
  m->set_profile(&batch);
  m->eval(kPrompt.data(), 3, nullptr, false); // one pass, no head
  EXPECT_EQ(batch.tokens, 1);
  for (const StepProfile *step : {&batch.qkv, &batch.wo, &batch.gate_up,
                                  &batch.down, &batch.attention})
    EXPECT_EQ(step->calls, s.L);
  EXPECT_EQ(batch.head.calls, 0);
  EXPECT_EQ(batch.other.calls, 5 * s.L + 1);
  EXPECT_EQ(batch.regions, 4 * s.L);

  DecodeProfile p;
  m->set_profile(&p);
  std::vector<float> logits(s.V);
  for (int i = 0; i < 2; ++i)
    m->eval(&kPrompt[size_t(i)], 1, logits.data(), false);
  m->set_profile(nullptr);
  m->eval(&kPrompt[0], 1, logits.data(), false);
  EXPECT_EQ(p.tokens, 2);
  for (const StepProfile *step : {&p.qkv, &p.wo, &p.gate_up, &p.down,
                                  &p.attention})
    EXPECT_EQ(step->calls, 2 * s.L);
  EXPECT_EQ(p.head.calls, 2);
  EXPECT_EQ(p.other.calls, 2 * (5 * s.L + 2));
  EXPECT_EQ(p.qkv.bytes + p.wo.bytes + p.gate_up.bytes + p.down.bytes +
                p.head.bytes,
            2 * m->linear_bytes());
  EXPECT_EQ(p.attention.bytes, 0);
  EXPECT_EQ(p.regions, 2 * (4 * s.L + 1));
  // The batch read every layer weight once, as each one-token pass did.
  EXPECT_EQ(2 * (batch.qkv.bytes + batch.wo.bytes + batch.gate_up.bytes +
                 batch.down.bytes),
            2 * m->linear_bytes() - p.head.bytes);
  double steps = 0;
  for (const StepProfile *step : {&p.qkv, &p.wo, &p.gate_up, &p.down,
                                  &p.head, &p.attention, &p.other})
    steps += step->seconds;
  EXPECT_GT(p.seconds, 0.0);
  EXPECT_LE(steps, p.seconds * (1 + 1e-9));
  // The packed products' regions lie within their steps, and the two
  // threads' kernel time and idle time before their first and after their
  // last chunk fit in 2 x the regions' wall time. The f32 head runs the
  // engine's GEMV, not tiles: no region times.
  for (const StepProfile *step : {&p.qkv, &p.wo, &p.gate_up, &p.down}) {
    EXPECT_GT(step->region_seconds, 0.0);
    EXPECT_LE(step->region_seconds, step->seconds);
    EXPECT_GT(step->kernel_seconds, 0.0);
    EXPECT_GE(step->start_idle_seconds, 0.0);
    EXPECT_GE(step->end_idle_seconds, 0.0);
    EXPECT_LE(step->kernel_seconds + step->start_idle_seconds +
                  step->end_idle_seconds,
              2 * step->region_seconds * (1 + 1e-9));
  }
  for (const StepProfile *step : {&p.head, &p.attention, &p.other})
    EXPECT_EQ(step->region_seconds, 0.0);
  std::remove(path.c_str());
}

// A caller's open file and specs (lowbit generate's: it needs the specs
// before the load) give the model load(path) gives; specs of another file
// are refused.
TEST(Engine, LoadFromAnOpenFile) {
  Spec s;
  const std::string path = write_model(s, "open_file");
  std::shared_ptr<const GgufFile> file = GgufFile::open(path);
  std::vector<LinearSpec> specs = linear_specs(*file, "");
  Options o;
  o.n_ctx = 64;
  auto shared = Model::load(file, specs, o);
  auto own = load(path);
  std::vector<int32_t> ids(kPrompt.begin(), kPrompt.end());
  const std::vector<float> a = batch_logits(*shared, ids),
                           b = batch_logits(*own, ids);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i)
    ASSERT_EQ(a[i], b[i]) << i;
  specs.pop_back();
  EXPECT_NE(error_of([&] { Model::load(file, specs, o); })
                .find("the linear specs given are not linear_specs' of this "
                      "file"),
            std::string::npos);
  std::remove(path.c_str());
}

TEST(Engine, Errors) {
  Spec s;
  const std::string path = write_model(s, "errors");
  auto m = load(path, 1, 16);
  const int32_t bad[] = {1, 50};
  EXPECT_NE(error_of([&] {
              m->eval(bad, 2, nullptr, false);
            }).find("token id 50 out of range [0, 50)"),
            std::string::npos);
  const int32_t negative = -1;
  EXPECT_NE(error_of([&] {
              m->eval(&negative, 1, nullptr, false);
            }).find("token id -1"),
            std::string::npos);
  EXPECT_EQ(m->position(), 0); // nothing was evaluated
  std::vector<int32_t> long_prompt(17, 1);
  EXPECT_NE(error_of([&] {
              m->eval(long_prompt.data(), 17, nullptr, false);
            }).find("exceed the context of 16"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              m->generate(kPrompt, 9, nullptr);
            }).find("exceed the context"),
            std::string::npos);
  EXPECT_NE(error_of([&] { m->generate({}, 1, nullptr); }).find("empty"),
            std::string::npos);

  // A pack that fails on a worker thread: the first failing weight, named.
  const std::string pack_error = error_of([&] { load(path, 2, 16, "w4g64"); });
  EXPECT_NE(pack_error.find("tensor 'blk.0.ffn_down.weight' (f32 -> w4g64)"),
            std::string::npos)
      << pack_error;
  EXPECT_NE(pack_error.find("K % 64"), std::string::npos) << pack_error;
  EXPECT_NE(error_of([&] { load(path, 1, 16, "i3s"); }).find("i3s"),
            std::string::npos);

  Spec missing = s;
  missing.skip = {"blk.1.ffn_up.weight"};
  const std::string p1 = write_model(missing, "missing");
  EXPECT_NE(
      error_of([&] { load(p1); }).find("missing tensor 'blk.1.ffn_up.weight'"),
      std::string::npos);
  Spec sub = s;
  sub.skip = {"blk.0.attn_sub_norm.weight"};
  const std::string p2 = write_model(sub, "missing_sub");
  EXPECT_NE(error_of([&] { load(p2); }).find("blk.0.attn_sub_norm.weight"),
            std::string::npos);
  Spec shape = s;
  shape.ne["blk.0.attn_k.weight"] = {64, 64}; // 2 KV heads of 16: [64, 32]
  const std::string p3 = write_model(shape, "shape");
  EXPECT_NE(error_of([&] { load(p3); })
                .find("tensor 'blk.0.attn_k.weight' has shape [64, 64] but "
                      "the metadata gives [64, 32]"),
            std::string::npos);
  Spec arch = s;
  arch.arch = "gpt2";
  const std::string p4 = write_model(arch, "arch");
  EXPECT_NE(error_of([&] { load(p4); }).find("unknown architecture 'gpt2'"),
            std::string::npos);
  for (const std::string &p : {path, p1, p2, p3, p4})
    std::remove(p.c_str());
}

} // namespace
} // namespace lowbit::engine
