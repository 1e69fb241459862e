// ggml-matmul-bench: ggml's own CPU matrix multiplication (MUL_MAT) timed as
// llama.cpp runs it, the peer that `lowbit bench` is compared with per type,
// shape and N (scripts/bench-vs-ggml.sh).
//
//   ggml-matmul-bench --type T[,T...] --shapes MxK[,MxK...] [--n 1,128]
//                     [-t T] [--reps R] [--warm] [--cold-mib MIB] [--seed S]
//   ggml-matmul-bench --types
//
// Per type and shape: M x K gaussian floats quantized by ggml_quantize_chunk
// with no importance matrix (as llama-quantize does), placed in the buffer
// type llama.cpp's loader gives a weight that a MUL_MAT reads (its CPU list:
// the CPU device's extra buffer types, then the plain CPU buffer; the first
// one the device supports the op with), float32 activations [N, K], and a
// graph of MUL_MATs computed by the CPU backend on a ggml threadpool of T
// threads with ggml's default parameters (what llama-bench attaches).
// Timing follows `lowbit bench`: N = 1 cold, each rep one graph of one
// MUL_MAT per distinct copy of the weights (>= 256 MiB of copies, so they
// come from memory, as a model's layers do); N > 1 warm, one MUL_MAT
// repeated for >= 20 ms per rep. Warm-up, then the median and min of R reps.
#include "ggml_types.h"

#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

const char *usage =
    "usage: ggml-matmul-bench --type T[,T...] --shapes MxK[,MxK...] [options]\n"
    "       ggml-matmul-bench --types\n"
    "\n"
    "Times ggml's CPU MUL_MAT of an M x K weight of ggml type T (quantized\n"
    "by ggml from gaussian floats, in the buffer type llama.cpp would give\n"
    "it) with float32 activations of N columns, as llama.cpp runs it.\n"
    "\n"
    "options:\n"
    "  --type T,...      ggml types (q4_K, q8_0, tq2_0, ...; case-insensitive)\n"
    "  --shapes MxK,...  weight shapes: M outputs, K inputs\n"
    "  --n N,...         activation columns (default 1,128)\n"
    "  -t, --threads T   threads (default: all CPUs)\n"
    "  --reps R          timed reps per case (default 5)\n"
    "  --warm            time N = 1 on one copy too (default: cold)\n"
    "  --cold-mib MIB    cold N = 1: bytes of distinct weight copies per rep\n"
    "                    (default 256)\n"
    "  --seed S          seed of the gaussian weights and activations\n"
    "  --types           list the types ggml quantizes to from floats\n"
    "\n"
    "Columns: buffer is the buffer type the weight got (CPU_REPACK: ggml's\n"
    "interleaved layouts); us and min_us the median and min over reps of one\n"
    "MUL_MAT; GB/s the weight bytes (ggml's row size x M) over us; GOPS\n"
    "2*M*K*N over us; rel_err the RMS error of the first copy's outputs\n"
    "(first and last column, up to 64 rows) against ggml's dequantized\n"
    "weights times the activations in double, over the reference's RMS\n"
    "(ggml quantizes the activations to 8 bits; > 0.05 is an error).\n";

struct Shape {
  int64_t M = 0, K = 0;
};

struct Args {
  std::vector<ggml_type> types;
  std::vector<Shape> shapes;
  std::vector<int64_t> ns = {1, 128};
  int threads = int(std::max(1u, std::thread::hardware_concurrency()));
  int reps = 5;
  int64_t cold_mib = 256;
  bool warm = false;
  bool list = false;
  uint64_t seed = 1;
};

std::vector<std::string> split(const std::string &list) {
  std::vector<std::string> items;
  size_t begin = 0;
  while (begin <= list.size()) {
    const size_t end = std::min(list.find(',', begin), list.size());
    items.push_back(list.substr(begin, end - begin));
    begin = end + 1;
  }
  return items;
}

int64_t positive(const std::string &flag, const std::string &text,
                 int64_t most = int64_t(1) << 40) {
  char *end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v < 1 || v > most)
    throw std::runtime_error(flag + ": '" + text +
                             "' is not a positive integer" +
                             (v > most ? " up to " + std::to_string(most) : ""));
  return v;
}

Shape parse_shape(const std::string &text) {
  const size_t x = text.find('x');
  if (x == std::string::npos)
    throw std::runtime_error("--shapes: '" + text + "' is not MxK");
  return {positive("--shapes", text.substr(0, x), int64_t(1) << 24),
          positive("--shapes", text.substr(x + 1), int64_t(1) << 24)};
}

Args parse(int argc, char **argv) {
  Args args;
  std::vector<std::string> type_names;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "-h" || flag == "--help") {
      std::fputs(usage, stdout);
      std::exit(0);
    }
    if (flag == "--types") {
      args.list = true;
      continue;
    }
    if (flag == "--warm") {
      args.warm = true;
      continue;
    }
    if (i + 1 >= argc)
      throw std::runtime_error("unknown option or missing value: " + flag);
    const std::string value = argv[++i];
    if (flag == "--type")
      type_names = split(value);
    else if (flag == "--shapes") {
      args.shapes.clear();
      for (const std::string &s : split(value))
        args.shapes.push_back(parse_shape(s));
    } else if (flag == "--n") {
      args.ns.clear();
      for (const std::string &n : split(value))
        args.ns.push_back(positive("--n", n, 1 << 16));
    } else if (flag == "-t" || flag == "--threads")
      args.threads = int(positive(flag, value, GGML_MAX_N_THREADS));
    else if (flag == "--reps")
      args.reps = int(positive(flag, value, 10000));
    else if (flag == "--cold-mib")
      args.cold_mib = positive(flag, value, 1 << 16);
    else if (flag == "--seed")
      args.seed = uint64_t(positive(flag, value));
    else
      throw std::runtime_error("unknown option: " + flag);
  }
  if (args.list)
    return args;
  if (type_names.empty() || args.shapes.empty())
    throw std::runtime_error("--type and --shapes are required (see --help)");
  for (const std::string &name : type_names) {
    const ggml_type type = ggml_types::named(name);
    for (const Shape &s : args.shapes)
      if (s.K % ggml_blck_size(type) != 0)
        throw std::runtime_error(
            "--shapes: K = " + std::to_string(s.K) + " is not a multiple of " +
            ggml_type_name(type) + "'s block of " +
            std::to_string(ggml_blck_size(type)));
    args.types.push_back(type);
  }
  return args;
}

void quiet_log(ggml_log_level level, const char *text, void *) {
  if (level == GGML_LOG_LEVEL_ERROR)
    std::fputs(text, stderr);
}

// Runs fn(chunk) for chunk in [0, chunks) on `threads` threads.
template <typename Fn> void parallel_chunks(int64_t chunks, int threads, Fn fn) {
  std::atomic<int64_t> next{0};
  auto work = [&] {
    for (int64_t c; (c = next++) < chunks;)
      fn(c);
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t)
    pool.emplace_back(work);
  work();
  for (std::thread &t : pool)
    t.join();
}

// Gaussian floats (mean 0, deviation 1), rows x cols, in chunks of 64 rows
// each drawn from its own generator seeded by (seed, chunk), so the values
// do not depend on the thread count; each chunk goes to sink(first row,
// rows, values).
template <typename Sink>
void gaussian_rows(int64_t rows, int64_t cols, uint64_t seed, int threads,
                   Sink sink) {
  constexpr int64_t chunk = 64;
  parallel_chunks((rows + chunk - 1) / chunk, threads, [&](int64_t c) {
    const int64_t first = c * chunk, n = std::min(chunk, rows - first);
    std::vector<float> values(size_t(n * cols));
    std::mt19937_64 gen(seed * 0x9E3779B97F4A7C15ull + uint64_t(c));
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (float &v : values)
      v = normal(gen);
    sink(first, n, values);
  });
}

// The buffer type llama.cpp's loader gives a [K, M] weight of `type` read by
// a MUL_MAT on the CPU (llama-model.cpp's CPU buffer list and the question
// llama-model-loader.cpp asks of each entry, written here from that
// description): the first of the CPU device's extra buffer types, then the
// plain CPU buffer type, whose device supports the MUL_MAT with the weight in
// a zero-size buffer of that type and float32 activations of 512 columns.
ggml_backend_buffer_type_t weight_buffer_type(ggml_backend_dev_t dev,
                                              ggml_type type, Shape s) {
  std::vector<ggml_backend_buffer_type_t> candidates;
  auto extra = reinterpret_cast<ggml_backend_dev_get_extra_bufts_t>(
      ggml_backend_reg_get_proc_address(ggml_backend_dev_backend_reg(dev),
                                        "ggml_backend_dev_get_extra_bufts"));
  if (extra)
    for (ggml_backend_buffer_type_t *b = extra(dev); b && *b; ++b)
      candidates.push_back(*b);
  candidates.push_back(ggml_backend_dev_buffer_type(dev));
  ggml_init_params params = {ggml_tensor_overhead() * 4, nullptr, true};
  ggml_context *ctx = ggml_init(params);
  ggml_tensor *w = ggml_new_tensor_2d(ctx, type, s.K, s.M);
  ggml_tensor *x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, s.K, 512);
  ggml_tensor *y = ggml_mul_mat(ctx, w, x);
  ggml_backend_buffer_type_t chosen = nullptr;
  for (ggml_backend_buffer_type_t buft : candidates) {
    w->buffer = ggml_backend_buft_alloc_buffer(buft, 0);
    const bool supported = ggml_backend_dev_supports_op(dev, y);
    ggml_backend_buffer_free(w->buffer);
    w->buffer = nullptr;
    if (supported) {
      chosen = buft;
      break;
    }
  }
  ggml_free(ctx);
  if (!chosen)
    throw std::runtime_error(std::string("ggml's CPU backend has no MUL_MAT "
                                         "for ") +
                             ggml_type_name(type) + " weights");
  return chosen;
}

struct Result {
  std::string buffer;
  int64_t copies = 1, calls = 1;
  double us = 0, min_us = 0, rel_err = 0;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// RMS of (y - reference) over the reference's RMS, for up to 64 rows of
// columns 0 and N - 1: the reference is ggml's own dequantization
// (to_float) of the weight bytes times the activations, in double.
double relative_error(ggml_type type, const std::vector<uint8_t> &weights,
                      const std::vector<float> &x, const std::vector<float> &y,
                      Shape s, int64_t N) {
  const ggml_type_traits *traits = ggml_get_type_traits(type);
  const size_t row_bytes = ggml_row_size(type, s.K);
  std::vector<float> w(size_t(s.K));
  double err = 0, ref = 0;
  for (int64_t m = 0; m < std::min<int64_t>(s.M, 64); ++m) {
    traits->to_float(weights.data() + size_t(m) * row_bytes, w.data(), s.K);
    for (int64_t n : {int64_t(0), N - 1}) {
      double dot = 0;
      for (int64_t k = 0; k < s.K; ++k)
        dot += double(w[size_t(k)]) * double(x[size_t(n * s.K + k)]);
      const double d = double(y[size_t(n * s.M + m)]) - dot;
      err += d * d;
      ref += dot * dot;
    }
  }
  return ref > 0 ? std::sqrt(err / ref) : std::sqrt(err);
}

Result time_case(ggml_backend_t backend, ggml_backend_dev_t dev,
                 ggml_type type, Shape s, int64_t N,
                 const std::vector<uint8_t> &weights, const Args &args) {
  const bool cold = N == 1 && !args.warm;
  const ggml_backend_buffer_type_t buft = weight_buffer_type(dev, type, s);
  Result result;
  result.buffer = ggml_backend_buft_name(buft);
  const int64_t bytes = int64_t(weights.size());
  const int64_t cold_bytes = args.cold_mib << 20;
  result.copies = cold ? std::max<int64_t>(1, (cold_bytes + bytes - 1) / bytes)
                       : 1;

  ggml_init_params wparams = {
      ggml_tensor_overhead() * size_t(result.copies), nullptr, true};
  ggml_context *wctx = ggml_init(wparams);
  std::vector<ggml_tensor *> copies;
  for (int64_t c = 0; c < result.copies; ++c)
    copies.push_back(ggml_new_tensor_2d(wctx, type, s.K, s.M));
  ggml_backend_buffer_t wbuf = ggml_backend_alloc_ctx_tensors_from_buft(wctx, buft);
  if (!wbuf) {
    ggml_free(wctx);
    throw std::runtime_error("cannot allocate " +
                             std::to_string(bytes * result.copies >> 20) +
                             " MiB of weights in " + result.buffer);
  }
  ggml_backend_buffer_set_usage(wbuf, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
  for (ggml_tensor *w : copies) // the repack buffer repacks here
    ggml_backend_tensor_set(w, weights.data(), 0, weights.size());

  const size_t graph_size = size_t(2 * result.copies + 8);
  ggml_init_params gparams = {
      ggml_tensor_overhead() * size_t(result.copies + 1) +
          ggml_graph_overhead_custom(graph_size, false),
      nullptr, true};
  ggml_context *gctx = ggml_init(gparams);
  ggml_tensor *x = ggml_new_tensor_2d(gctx, GGML_TYPE_F32, s.K, N);
  ggml_cgraph *graph = ggml_new_graph_custom(gctx, graph_size, false);
  std::vector<ggml_tensor *> outputs;
  for (ggml_tensor *w : copies) {
    outputs.push_back(ggml_mul_mat(gctx, w, x));
    ggml_build_forward_expand(graph, outputs.back());
  }
  ggml_backend_buffer_t gbuf =
      ggml_backend_alloc_ctx_tensors_from_buft(gctx, ggml_backend_cpu_buffer_type());
  auto release = [&] {
    ggml_backend_buffer_free(gbuf);
    ggml_free(gctx);
    ggml_backend_buffer_free(wbuf);
    ggml_free(wctx);
  };
  if (!gbuf) {
    ggml_backend_buffer_free(wbuf);
    ggml_free(gctx);
    ggml_free(wctx);
    throw std::runtime_error("cannot allocate the activations and outputs");
  }
  std::vector<float> xs(size_t(N * s.K));
  gaussian_rows(N, s.K, args.seed + 1, args.threads,
                [&](int64_t first, int64_t, const std::vector<float> &v) {
                  std::copy(v.begin(), v.end(), xs.begin() + first * s.K);
                });
  ggml_backend_tensor_set(x, xs.data(), 0, xs.size() * sizeof(float));

  using Clock = std::chrono::steady_clock;
  auto run = [&] {
    if (ggml_backend_graph_compute(backend, graph) != GGML_STATUS_SUCCESS) {
      release();
      throw std::runtime_error(std::string("ggml's graph compute failed for ") +
                               ggml_type_name(type));
    }
  };
  run(); // warm-up: one pass through every copy
  if (!cold) {
    const Clock::time_point start = Clock::now();
    run();
    const double one =
        std::max(std::chrono::duration<double>(Clock::now() - start).count(),
                 1e-7);
    result.calls = std::clamp<int64_t>(int64_t(std::ceil(0.02 / one)), 1,
                                       1000000);
  }
  std::vector<double> us;
  for (int r = 0; r < args.reps; ++r) {
    const Clock::time_point start = Clock::now();
    for (int64_t i = 0; i < result.calls; ++i)
      run();
    const double seconds =
        std::chrono::duration<double>(Clock::now() - start).count();
    us.push_back(seconds * 1e6 / double(result.calls * result.copies));
  }
  result.us = median(us);
  result.min_us = *std::min_element(us.begin(), us.end());

  std::vector<float> y(size_t(N * s.M));
  ggml_backend_tensor_get(outputs.front(), y.data(), 0, y.size() * sizeof(float));
  result.rel_err = relative_error(type, weights, xs, y, s, N);
  release();
  return result;
}

std::vector<uint8_t> quantized_weights(ggml_type type, Shape s, uint64_t seed,
                                       int threads) {
  const size_t row_bytes = ggml_row_size(type, s.K);
  std::vector<uint8_t> bytes(row_bytes * size_t(s.M));
  ggml_quantize_init(type);
  gaussian_rows(s.M, s.K, seed, threads,
                [&](int64_t first, int64_t rows, const std::vector<float> &v) {
                  ggml_quantize_chunk(type, v.data(),
                                      bytes.data() + size_t(first) * row_bytes,
                                      0, rows, s.K, /*imatrix=*/nullptr);
                });
  return bytes;
}

std::string cpu_features() {
  std::string out;
  const std::pair<const char *, int (*)()> features[] = {
      {"avx2", ggml_cpu_has_avx2},
      {"avx_vnni", ggml_cpu_has_avx_vnni},
      {"avx512", ggml_cpu_has_avx512},
      {"avx512_vnni", ggml_cpu_has_avx512_vnni},
      {"avx512_vbmi", ggml_cpu_has_avx512_vbmi},
      {"avx512_bf16", ggml_cpu_has_avx512_bf16},
      {"amx_int8", ggml_cpu_has_amx_int8},
      {"neon", ggml_cpu_has_neon},
      {"dotprod", ggml_cpu_has_dotprod},
      {"i8mm", ggml_cpu_has_matmul_int8},
      {"llamafile", ggml_cpu_has_llamafile}};
  for (const auto &[name, has] : features)
    if (has())
      out += std::string(out.empty() ? "" : " ") + name;
  return out.empty() ? "none" : out;
}

int run(int argc, char **argv) {
  const Args args = parse(argc, argv);
  if (args.list) {
    for (int t = 0; t < GGML_TYPE_COUNT; ++t)
      if (ggml_types::quantizable(ggml_type(t)))
        std::printf("%s\n", ggml_type_name(ggml_type(t)));
    return 0;
  }
  ggml_log_set(quiet_log, nullptr);
  ggml_backend_dev_t dev = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
  if (!dev)
    throw std::runtime_error("ggml has no CPU device");
  ggml_backend_t backend = ggml_backend_cpu_init();
  if (!backend)
    throw std::runtime_error("cannot start ggml's CPU backend");
  ggml_backend_cpu_set_n_threads(backend, args.threads);
  ggml_threadpool_params tpp = ggml_threadpool_params_default(args.threads);
  ggml_threadpool *threadpool = ggml_threadpool_new(&tpp);
  if (!threadpool) {
    ggml_backend_free(backend);
    throw std::runtime_error("cannot start a ggml threadpool of " +
                             std::to_string(args.threads) + " threads");
  }
  ggml_backend_cpu_set_threadpool(backend, threadpool);

  std::printf("ggml %s (%s), CPU backend (%s), %d threads (threadpool, "
              "poll %u)\n",
              ggml_version(), ggml_commit(), cpu_features().c_str(),
              args.threads, tpp.poll);
  std::printf("N = 1 %s; N > 1 warm (one MUL_MAT repeated for >= 20 ms per "
              "rep); median and min of %d reps\n",
              args.warm ? "warm"
                        : ("cold (each rep one graph of a MUL_MAT per "
                           "distinct weight copy, >= " +
                           std::to_string(args.cold_mib) + " MiB of copies)")
                              .c_str(),
              args.reps);
  std::printf("\n%-8s %-11s %-12s %5s %6s %7s %10s %10s %8s %9s %8s\n", "type",
              "buffer", "shape", "N", "copies", "calls", "us", "min_us",
              "GB/s", "GOPS", "rel_err");
  std::fflush(stdout);
  try {
    for (ggml_type type : args.types)
      for (const Shape &s : args.shapes) {
        const std::vector<uint8_t> weights =
            quantized_weights(type, s, args.seed, args.threads);
        for (int64_t N : args.ns) {
          const Result r = time_case(backend, dev, type, s, N, weights, args);
          const std::string shape =
              std::to_string(s.M) + "x" + std::to_string(s.K);
          std::printf("%-8s %-11s %-12s %5lld %6lld %7lld %10.1f %10.1f %8.1f "
                      "%9.1f %8.4f%s\n",
                      ggml_type_name(type), r.buffer.c_str(), shape.c_str(),
                      (long long)N, (long long)r.copies, (long long)r.calls,
                      r.us, r.min_us, double(weights.size()) / (r.us * 1e3),
                      2.0 * double(s.M) * double(s.K) * double(N) /
                          (r.us * 1e3),
                      r.rel_err, N == 1 && !args.warm ? "" : "  (warm)");
          std::fflush(stdout);
          if (!(r.rel_err <= 0.05))
            throw std::runtime_error(
                std::string(ggml_type_name(type)) + " " + shape +
                " N=" + std::to_string(N) + ": ggml's result is off by " +
                std::to_string(r.rel_err) +
                " (RMS, relative) from its own dequantized weights");
        }
      }
  } catch (...) {
    ggml_backend_free(backend);
    ggml_threadpool_free(threadpool);
    throw;
  }
  ggml_backend_free(backend);
  ggml_threadpool_free(threadpool);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "ggml-matmul-bench: error: %s\n", e.what());
    return 1;
  }
}
