//===- forward.cpp - the forward pass, eval and greedy generation ---------===//
//
// One forward pass over a batch of n tokens at positions [pos, pos + n),
// as llama.cpp's graphs compute it (engine/README.md):
//
//   x = token_embd[tokens]
//   per layer:
//     h = rms_norm(x) * attn_norm
//     q, k, v = h Wq, h Wk, h Wv            (one activation quantization)
//     rope(q), rope(k); append k, v to the cache
//     a = softmax(q k^T * kq_scale + causal mask) v   per head (GQA)
//     a = rms_norm(a) * attn_sub_norm        (bitnet family only)
//     x = x + a Wo
//     h = rms_norm(x) * ffn_norm
//     g, u = h Wgate, h Wup                 (one activation quantization)
//     f = silu(g) * u   (relu(g)^2 * u for bitnet-b1.58)
//     f = rms_norm(f) * ffn_sub_norm         (bitnet family only)
//     x = x + f Wdown
//   logits = (rms_norm(x) * output_norm) Whead
//
// A linear y = (x W^T) * scale + bias: scale and bias only where the file
// has them. The products with packed weights of one input are one parallel
// region for all n rows (lowbit_mpgemm_tiles on chunks of their tiles); the
// rest runs on the same context's threads through lowbit_parallel_for when
// it is big enough to gain from it.
//
//===----------------------------------------------------------------------===//
#include "model.h"

#include "lowbit/error.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>

namespace lowbit::engine {
namespace {

/// Element work below which a step runs on the calling thread: waking the
/// pool costs a few microseconds.
constexpr int64_t kParallelWork = 1 << 15;

void check(lowbit_status_t status, const Linear &L) {
  if (status != LOWBIT_OK)
    throw Error("engine: " + L.tensor + ": " + lowbit_last_error());
}

using Clock = std::chrono::steady_clock;

/// Times the steps of one forward pass into a DecodeProfile (no-op when
/// `profile` is null): lap(step, bytes) charges the time since the last lap
/// to `step`, and the region times run_tiles summed into `regions` since.
class Laps {
public:
  Laps(DecodeProfile *profile, StepProfile &regions)
      : profile_(profile), regions_(regions),
        start_(profile ? Clock::now() : Clock::time_point()), mark_(start_) {}
  void lap(StepProfile DecodeProfile::*step, int64_t bytes = 0) {
    if (!profile_)
      return;
    const Clock::time_point now = Clock::now();
    StepProfile &s = profile_->*step;
    ++s.calls;
    s.seconds += std::chrono::duration<double>(now - mark_).count();
    s.bytes += bytes;
    s.region_seconds += regions_.region_seconds;
    s.kernel_seconds += regions_.kernel_seconds;
    s.start_idle_seconds += regions_.start_idle_seconds;
    s.end_idle_seconds += regions_.end_idle_seconds;
    regions_ = StepProfile();
    mark_ = now;
  }
  void finish(int64_t regions) {
    if (!profile_)
      return;
    lap(&DecodeProfile::other);
    ++profile_->tokens;
    profile_->regions += regions;
    profile_->seconds +=
        std::chrono::duration<double>(Clock::now() - start_).count();
  }

private:
  DecodeProfile *profile_;
  StepProfile &regions_;
  Clock::time_point start_, mark_;
};

} // namespace

void Model::Impl::reserve(int64_t n) {
  if (n <= batch)
    return;
  const Hparams &h = hp;
  const int64_t q_width = h.n_head * h.head_dim;
  const int64_t kv_width = h.n_head_kv * h.head_dim;
  x.resize(size_t(n * h.n_embd));
  xn.resize(size_t(n * std::max(h.n_embd, q_width)));
  q.resize(size_t(n * q_width));
  k.resize(size_t(n * kv_width));
  v.resize(size_t(n * kv_width));
  attn.resize(size_t(n * q_width));
  ff_gate.resize(size_t(n * h.n_ff));
  ff_up.resize(size_t(n * h.n_ff));
  head_in.resize(size_t(n * h.n_embd));
  batch = n;
}

void Model::Impl::project(std::initializer_list<Product> products,
                          const float *X, int64_t n,
                          lowbit_activations_t *acts) {
  // Packed weights: X quantized once per activation class (usually one:
  // Q/K/V or gate/up share a format; a Q4_K_M layer has Q4_K and Q6_K),
  // then one region over the union of all their tiles.
  spans.clear();
  int64_t total = 0;
  lowbit_activations_t *quantized = acts;
  for (const int act_class : {0, 1, 2}) {
    bool first = true;
    for (const Product &p : products) {
      const Linear &L = *p.L;
      if (!L.packed || L.act_class != act_class)
        continue;
      if (first) {
        if (!spans.empty()) { // a second class: the next activations object
          auto &next = class_acts[quantized == acts ? 0 : 1];
          if (!next) {
            lowbit_activations_t *created = nullptr;
            if (lowbit_activations_create(&created) != LOWBIT_OK)
              throw Error(std::string("engine: ") + lowbit_last_error());
            next.reset(created);
          }
          quantized = next.get();
        }
        check(lowbit_quantize_activations(L.packed.get(), X, n, quantized,
                                          ctx.get()),
              L);
        first = false;
      }
      spans.push_back({&L, p.Y, total, quantized});
      total += lowbit_weights_tiles(L.packed.get());
    }
  }
  if (!spans.empty())
    run_tiles(total, /*decode=*/n == 1);
  for (const Product &p : products) {
    const Linear &L = *p.L;
    if (!L.packed) {
      constexpr int64_t kRows = 16;
      ++regions;
      const Kernels &kn = *kernels;
      parallel_for(ctx.get(), (L.M + kRows - 1) / kRows, true,
                   [&](int64_t begin, int64_t end, int) {
                     kn.gemv(L.fdata, L.ftype, L.K, X, n, p.Y, L.M,
                             begin * kRows, std::min(L.M, end * kRows));
                   });
    }
    if (L.has_scale || !L.bias.empty()) {
      const float scale = L.scale;
      const float *bias = L.bias.empty() ? nullptr : L.bias.data();
      for (int64_t i = 0; i < n; ++i) {
        float *y = p.Y + i * L.M;
        if (L.has_scale)
          for (int64_t j = 0; j < L.M; ++j)
            y[j] *= scale;
        if (bias)
          for (int64_t j = 0; j < L.M; ++j)
            y[j] += bias[j];
      }
    }
  }
}

void Model::Impl::run_tiles(int64_t total, bool decode) {
  // Tiles [begin, end) of the union: each span's part of it.
  auto run = [&](int64_t begin, int64_t end) {
    for (size_t i = 0; i < spans.size(); ++i) {
      const TileSpan &s = spans[i];
      const int64_t last =
          i + 1 < spans.size() ? spans[i + 1].first : total;
      const int64_t b = std::max(begin, s.first), e = std::min(end, last);
      if (b < e && lowbit_mpgemm_tiles(s.L->packed.get(), s.acts, s.Y,
                                       b - s.first, e - s.first) != LOWBIT_OK)
        return false;
    }
    return true;
  };
  const int64_t chunks =
      threads > 1 ? std::min(total, kChunksPerThread * threads) : 1;
  ++regions;
  const bool timed = profile != nullptr;
  const Clock::time_point begin = timed ? Clock::now() : Clock::time_point();
  if (timed)
    thread_times.assign(size_t(threads), ThreadTimes());
  // Runs chunk tiles [b, e) on `thread`, timed when profiling.
  auto chunk = [&](int64_t b, int64_t e, int thread) {
    if (!timed)
      return run(b, e);
    const Clock::time_point start = Clock::now();
    const bool ok = run(b, e);
    ThreadTimes &t = thread_times[size_t(thread)];
    t.last = Clock::now();
    t.busy += std::chrono::duration<double>(t.last - start).count();
    if (!t.ran)
      t.first = start;
    t.ran = true;
    return ok;
  };
  // Charges the region to region_times (Laps::lap moves them to the step).
  auto charge = [&] {
    if (!timed)
      return;
    const Clock::time_point end = Clock::now();
    auto seconds = [](Clock::time_point a, Clock::time_point b) {
      return std::chrono::duration<double>(b - a).count();
    };
    region_times.region_seconds += seconds(begin, end);
    for (const ThreadTimes &t : thread_times) {
      region_times.kernel_seconds += t.busy;
      region_times.start_idle_seconds += seconds(begin, t.ran ? t.first : end);
      region_times.end_idle_seconds += t.ran ? seconds(t.last, end) : 0.0;
    }
  };
  if (chunks <= 1) {
    if (!chunk(0, total, 0))
      throw Error(std::string("engine: ") + lowbit_last_error());
    charge();
    return;
  }
  // Chunk c is tiles [first(c), first(c + 1)). Each thread claims the next
  // chunk not taken, as llama.cpp's ggml-cpu mul_mat claims its chunks: the
  // threads finish within about a chunk of each other even when one of them
  // starts late or loses its core for a while, and each chunk is one
  // contiguous stream of weights. A thread that has not started by the time
  // the caller finds every chunk taken is not waited for (claim_for): on a
  // busy host a worker kept off its core for a scheduler time slice held
  // every region up until it had run its first chunk. A batch's chunks are
  // equal (c * total / chunks), rounded down to a multiple of
  // kGemmGroupTiles. A decoded token's (`decode`) shrink geometrically, the
  // first kChunkTaper times the last, as guided self-scheduling
  // (Polychronopoulos and Kuck) hands out ever smaller parts: the chunks
  // claimed last are small, so the threads end closer together than within
  // 1/chunks of the region (with equal chunks a thread sat idle for 5-10% of
  // a region's thread time; docs/perf/decode.md).
  chunk_bounds.resize(size_t(chunks) + 1);
  const double q = std::pow(1.0 / kChunkTaper, 1.0 / double(chunks - 1));
  for (int64_t c = 0; c < chunks; ++c)
    chunk_bounds[size_t(c)] =
        decode ? int64_t(double(total) * (1.0 - std::pow(q, double(c))) /
                         (1.0 - std::pow(q, double(chunks))))
               : c * total / chunks / kGemmGroupTiles * kGemmGroupTiles;
  chunk_bounds[size_t(chunks)] = total;
  auto first = [&](int64_t c) { return chunk_bounds[size_t(c)]; };
  std::atomic<bool> failed{false};
  std::string error; // the first failure's message
  claim_for(ctx.get(), chunks, true, [&](int64_t c, int64_t, int thread) {
    if (failed.load(std::memory_order_relaxed))
      return;
    if (!chunk(first(c), first(c + 1), thread) && !failed.exchange(true))
      error = lowbit_last_error();
  });
  if (failed)
    throw Error("engine: " + error);
  charge();
}

void Model::Impl::norm_rows(const float *X, const std::vector<float> &w,
                            int64_t n, int64_t width, float *Y) {
  regions += n * width >= kParallelWork;
  parallel_for(ctx.get(), n, n * width >= kParallelWork,
               [&](int64_t begin, int64_t end, int) {
                 for (int64_t i = begin; i < end; ++i)
                   kernels->rms_norm(X + i * width, w.data(), width, hp.rms_eps,
                                     Y + i * width);
               });
}

/// NORM rotates pairs (2j, 2j+1), NEOX pairs (j, j + n_rot/2).
void Model::Impl::rope(float *X, int64_t n, int64_t heads, int64_t p0) {
  const int64_t D = hp.head_dim, half = hp.n_rot / 2;
  const int64_t stride0 = hp.rope_neox ? 1 : 2;
  const int64_t offset1 = hp.rope_neox ? half : 1;
  regions += n * heads * half >= kParallelWork;
  parallel_for(ctx.get(), n, n * heads * half >= kParallelWork,
               [&](int64_t begin, int64_t end, int) {
                 for (int64_t i = begin; i < end; ++i) {
                   const float *cs = rope_cos.data() + (p0 + i) * half;
                   const float *sn = rope_sin.data() + (p0 + i) * half;
                   for (int64_t h = 0; h < heads; ++h) {
                     float *x = X + (i * heads + h) * D;
                     for (int64_t j = 0; j < half; ++j) {
                       float &a = x[j * stride0], &b = x[j * stride0 + offset1];
                       const float x0 = a, x1 = b;
                       a = x0 * cs[j] - x1 * sn[j];
                       b = x0 * sn[j] + x1 * cs[j];
                     }
                   }
                 }
               });
}

/// x += y over n rows of `width`.
void Model::Impl::add_rows(float *x, const float *y, int64_t n, int64_t width) {
  regions += n * width >= 4 * kParallelWork;
  parallel_for(ctx.get(), n, n * width >= 4 * kParallelWork,
               [&](int64_t begin, int64_t end, int) {
                 for (int64_t j = begin * width; j < end * width; ++j)
                   x[j] += y[j];
               });
}

void Model::Impl::forward(const int32_t *tokens, int64_t n, float *logits,
                          bool all_logits) {
  reserve(n);
  const Hparams &h = hp;
  const int64_t E = h.n_embd, D = h.head_dim, H = h.n_head;
  const int64_t Hkv = h.n_head_kv, F = h.n_ff, n_ctx = options.n_ctx;
  const int64_t qw = H * D;
  const int64_t p0 = pos;
  lowbit_context_t *c = ctx.get();
  const bool sub_norms = h.arch != Arch::Llama;
  Laps laps(profile, region_times);
  regions = n * E >= kParallelWork;

  parallel_for(c, n, n * E >= kParallelWork,
               [&](int64_t begin, int64_t end, int) {
                 for (int64_t i = begin; i < end; ++i)
                   gguf_decode_row(*tok_embd, tokens[i], x.data() + i * E);
               });

  for (int64_t l = 0; l < h.n_layer; ++l) {
    const Layer &L = layers[l];
    norm_rows(x.data(), L.attn_norm, n, E, xn.data());
    laps.lap(&DecodeProfile::other);
    project({{&L.wq, q.data()}, {&L.wk, k.data()}, {&L.wv, v.data()}},
            xn.data(), n, acts[0].get());
    laps.lap(&DecodeProfile::qkv, engine::linear_bytes(L.wq) +
                                      engine::linear_bytes(L.wk) +
                                      engine::linear_bytes(L.wv));
    rope(q.data(), n, H, p0);
    rope(k.data(), n, Hkv, p0);

    float *kc = kcache.get() + l * Hkv * n_ctx * D;
    float *vc = vcache.get() + l * Hkv * n_ctx * D;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t g = 0; g < Hkv; ++g) {
        std::memcpy(kc + (g * n_ctx + p0 + i) * D, k.data() + (i * Hkv + g) * D,
                    size_t(D) * sizeof(float));
        std::memcpy(vc + (g * n_ctx + p0 + i) * D, v.data() + (i * Hkv + g) * D,
                    size_t(D) * sizeof(float));
      }

    // Attention. A batch: one item per (head, block of kQueries tokens),
    // head-major so that every thread's contiguous share mixes short
    // (early) and long (late) rows. One token: one item per kQueries query
    // heads of a KV head (GQA), which then read the cache once.
    const int64_t group = H / Hkv;
    const int64_t work = n * H * (p0 + n) * D;
    const Kernels &kn = *kernels;
    regions += work >= kParallelWork;
    laps.lap(&DecodeProfile::other);
    if (n == 1) {
      const int64_t chunks = (group + kQueries - 1) / kQueries;
      // Items claimed one by one (claim_for): a worker kept off its core
      // is not waited for.
      claim_for(c, Hkv * chunks, work >= kParallelWork,
                [&](int64_t item, int64_t, int thread) {
                  float *s = scores.data() + thread * kQueries * n_ctx;
                  const int64_t g = item / chunks;
                  const int64_t h0 = g * group + (item % chunks) * kQueries;
                  const int64_t nq = std::min(kQueries, (g + 1) * group - h0);
                  kn.attend(q.data() + h0 * D, D, nq, kc + g * n_ctx * D,
                            vc + g * n_ctx * D, p0 + 1, 0, D, h.kq_scale, s,
                            attn.data() + h0 * D, D);
                });
    } else {
      const int64_t blocks = (n + kQueries - 1) / kQueries;
      parallel_for(c, blocks * H, work >= kParallelWork,
                   [&](int64_t begin, int64_t end, int thread) {
                     float *s = scores.data() + thread * kQueries * n_ctx;
                     for (int64_t item = begin; item < end; ++item) {
                       const int64_t hd = item / blocks;
                       const int64_t i0 = (item % blocks) * kQueries;
                       const int64_t nq = std::min(kQueries, n - i0);
                       const int64_t g = hd / group;
                       kn.attend(q.data() + (i0 * H + hd) * D, H * D, nq,
                                 kc + g * n_ctx * D, vc + g * n_ctx * D,
                                 p0 + i0 + 1, 1, D, h.kq_scale, s,
                                 attn.data() + (i0 * H + hd) * D, H * D);
                     }
                   });
    }
    laps.lap(&DecodeProfile::attention);
    if (sub_norms)
      norm_rows(attn.data(), L.attn_sub_norm, n, qw, attn.data());
    laps.lap(&DecodeProfile::other);
    project({{&L.wo, xn.data()}}, attn.data(), n, acts[1].get());
    laps.lap(&DecodeProfile::wo, engine::linear_bytes(L.wo));
    add_rows(x.data(), xn.data(), n, E);

    norm_rows(x.data(), L.ffn_norm, n, E, xn.data());
    laps.lap(&DecodeProfile::other);
    project({{&L.gate, ff_gate.data()}, {&L.up, ff_up.data()}}, xn.data(), n,
            acts[0].get());
    laps.lap(&DecodeProfile::gate_up,
             engine::linear_bytes(L.gate) + engine::linear_bytes(L.up));
    const bool relu2 = h.arch == Arch::Bitnet25;
    constexpr int64_t kChunk = 1024;
    regions += n * F >= kParallelWork;
    parallel_for(c, (n * F + kChunk - 1) / kChunk, n * F >= kParallelWork,
                 [&](int64_t begin, int64_t end, int) {
                   const int64_t i0 = begin * kChunk;
                   const int64_t i1 = std::min(n * F, end * kChunk);
                   kn.glu(ff_gate.data() + i0, ff_up.data() + i0, i1 - i0,
                          relu2);
                 });
    if (sub_norms)
      norm_rows(ff_gate.data(), L.ffn_sub_norm, n, F, ff_gate.data());
    laps.lap(&DecodeProfile::other);
    project({{&L.down, xn.data()}}, ff_gate.data(), n, acts[2].get());
    laps.lap(&DecodeProfile::down, engine::linear_bytes(L.down));
    add_rows(x.data(), xn.data(), n, E);
  }

  if (logits) {
    const int64_t first = all_logits ? 0 : n - 1;
    const int64_t rows = n - first;
    norm_rows(x.data() + first * E, output_norm, rows, E, head_in.data());
    laps.lap(&DecodeProfile::other);
    project({{&head, logits}}, head_in.data(), rows, acts[0].get());
    laps.lap(&DecodeProfile::head, engine::linear_bytes(head));
  }
  pos = p0 + n;
  laps.finish(regions);
}

void Model::eval(const int32_t *tokens, int64_t n, float *logits,
                 bool all_logits) {
  Impl &m = *impl_;
  if (n < 1)
    throw Error("eval: n must be >= 1, got " + std::to_string(n));
  if (!tokens)
    throw Error("eval: tokens is NULL");
  for (int64_t i = 0; i < n; ++i)
    if (tokens[i] < 0 || tokens[i] >= m.hp.n_vocab)
      throw Error("eval: token id " + std::to_string(tokens[i]) +
                  " out of range [0, " + std::to_string(m.hp.n_vocab) + ")");
  if (m.pos + n > m.options.n_ctx)
    throw Error("eval: positions [" + std::to_string(m.pos) + ", " +
                std::to_string(m.pos + n) + ") exceed the context of " +
                std::to_string(m.options.n_ctx) + " tokens");
  const int64_t V = m.hp.n_vocab;
  for (int64_t done = 0; done < n;) {
    const int64_t chunk = std::min(n - done, kMaxBatch);
    const bool last = done + chunk == n;
    float *out = nullptr;
    if (logits && all_logits)
      out = logits + done * V;
    else if (logits && last)
      out = logits;
    m.forward(tokens + done, chunk, out, all_logits);
    done += chunk;
  }
}

void Model::set_profile(DecodeProfile *profile) { impl_->profile = profile; }

std::vector<int32_t>
Model::generate(const std::vector<int32_t> &prompt, int64_t n,
                std::vector<float> *logits,
                const std::function<void(int32_t)> &on_id) {
  Impl &m = *impl_;
  if (prompt.empty())
    throw Error("generate: the prompt is empty");
  if (n < 1)
    throw Error("generate: n must be >= 1, got " + std::to_string(n));
  const int64_t P = int64_t(prompt.size()), V = m.hp.n_vocab;
  if (P + n - 1 > m.options.n_ctx)
    throw Error("generate: " + std::to_string(P) + " prompt tokens and " +
                std::to_string(n - 1) + " fed back exceed the context of " +
                std::to_string(m.options.n_ctx) + " tokens");
  reset();
  const float *last = nullptr;
  if (logits) {
    logits->assign(size_t((P + n - 1) * V), 0.0f);
    eval(prompt.data(), P, logits->data(), true);
    last = logits->data() + (P - 1) * V;
  } else {
    eval(prompt.data(), P, m.last_logits.data(), false);
    last = m.last_logits.data();
  }
  std::vector<int32_t> ids;
  for (int64_t step = 0;; ++step) {
    const int32_t id = int32_t(std::max_element(last, last + V) - last);
    ids.push_back(id);
    if (on_id)
      on_id(id);
    if (step + 1 == n)
      break;
    float *row =
        logits ? logits->data() + (P + step) * V : m.last_logits.data();
    eval(&id, 1, row, false);
    last = row;
  }
  return ids;
}

} // namespace lowbit::engine
