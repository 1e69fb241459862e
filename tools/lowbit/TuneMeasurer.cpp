//===- TuneMeasurer.cpp - what `lowbit tune` measures with ----------------===//

#include "TuneMeasurer.h"
#include "Inputs.h"

#include "lowbit/error.h"
#include "lowbit/reference.h"
#include "lowbit/vulkan.h"

#include <chrono>
#include <cstring>

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

namespace lowbit::cli {

using namespace lowbit::jit;

using mlir::lowbit::Candidate;
using mlir::lowbit::Measurement;
using mlir::lowbit::TuningProblem;

namespace {

/// Runs `kernel` on the verification cases in a child process and compares
/// each Y with the reference's. Returns "" or what went wrong (a mismatch,
/// a crash with its signal, a hang past `deadline` seconds).
std::string verifyInChild(const CompiledKernel &kernel, PreparedWeights &W,
                          const std::vector<Matrix> &xs,
                          const std::vector<std::vector<float>> &wants,
                          int threads, double deadline) {
  int fds[2];
  if (pipe(fds) != 0)
    return "cannot create a pipe for the verification child";
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = fork();
  if (pid < 0)
    return "cannot fork the verification child";
  if (pid == 0) {
    close(fds[0]);
    std::string problem;
    try {
      ThreadPool pool(threads);
      for (size_t i = 0; i < xs.size() && problem.empty(); ++i) {
        std::vector<float> got(wants[i].size());
        runKernel(&kernel, W, xs[i].data.data(), xs[i].rows, got.data(), pool);
        problem = compareWithReference(*W.canonical, xs[i].data.data(),
                                       xs[i].rows, got, wants[i],
                                       GpuDType::F32, kernel.tableActGroup);
        if (!problem.empty())
          problem = "N=" + std::to_string(xs[i].rows) + ": " + problem;
      }
    } catch (const std::exception &e) {
      problem = e.what();
    }
    if (!problem.empty() && write(fds[1], problem.data(), problem.size()) < 0)
      _exit(3);
    _exit(problem.empty() ? 0 : 1);
  }
  close(fds[1]);
  // Read what the child reports until it closes the pipe (it finished or
  // crashed); a child that keeps it open past the deadline hangs and is
  // killed.
  std::string message;
  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
        .count();
  };
  bool hung = false;
  for (;;) {
    if (elapsed() > deadline) {
      hung = true;
      break;
    }
    pollfd ready{fds[0], POLLIN, 0};
    int events = poll(&ready, 1, 100);
    if (events <= 0)
      continue;
    char buffer[512];
    ssize_t n = read(fds[0], buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    message.append(buffer, size_t(n));
  }
  close(fds[0]);
  int status = 0;
  if (hung)
    kill(pid, SIGKILL);
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      return "cannot wait for the verification child";
  if (hung)
    return "hung (killed after " + std::to_string(int(deadline)) + " s)";
  if (WIFSIGNALED(status))
    return std::string("crashed (") + strsignal(WTERMSIG(status)) + ")";
  if (WEXITSTATUS(status) != 0)
    return message.empty() ? "failed (exit status " +
                                 std::to_string(WEXITSTATUS(status)) + ")"
                           : message;
  return "";
}

/// Runs a GPU kernel on the verification cases in this process (a child
/// forked after Vulkan started its threads is not safe, and a dispatch
/// waits on its fence) and compares each Y with the reference's.
std::string verifyOnGpu(VulkanKernel &kernel, const PackedWeights &W,
                        const std::vector<Matrix> &xs,
                        const std::vector<std::vector<float>> &wants) {
  for (size_t i = 0; i < xs.size(); ++i) {
    std::vector<float> got(wants[i].size());
    kernel.run(xs[i].data.data(), xs[i].rows, got.data());
    std::string problem =
        compareWithReference(W, xs[i].data.data(), xs[i].rows, got, wants[i],
                             GpuDType::F32, 0);
    if (!problem.empty())
      return "N=" + std::to_string(xs[i].rows) + ": " + problem;
  }
  return "";
}

} // namespace

/// The current problem's data: weights packed per strategy, activations,
/// and the verification cases with the reference's answers.
struct KernelMeasurer::Problem {
  Format format;
  Target target;
  int64_t M = 0, K = 0, N = 1;
  int threads = 1;
  PackedWeights canonical;
  std::map<Strategy, PreparedWeights> prepared;
  Matrix X;
  PreparedActivations A;
  std::vector<Matrix> checkXs;
  std::vector<std::vector<float>> checkWants;
};

KernelMeasurer::KernelMeasurer(ThreadPool &pool, ReadProbe &probe,
                               Int8Peak *peak, int reps, bool warm,
                               const volatile std::sig_atomic_t &stop)
    : pool_(pool), probe_(probe), peak_(peak), reps_(reps), warm_(warm),
      stop_(stop) {}

KernelMeasurer::~KernelMeasurer() = default;

std::string KernelMeasurer::prepare(const TuningProblem &problem,
                                    size_t index) {
  gpuKernels_.clear();
  kernels_.clear();
  problem_.reset();
  try {
    auto p = std::make_unique<Problem>();
    p->format = Format::parse(problem.key.format);
    p->target = parse_target(problem.key.target);
    p->M = problem.key.m;
    p->K = problem.key.k;
    p->N = problem.n;
    p->threads = int(problem.key.threads);
    Matrix Wf = syntheticMatrix(p->M, p->K, 11 + index);
    p->canonical = quantize(p->format, Wf.data.data(), p->M, p->K);
    p->X = syntheticMatrix(p->N, p->K, 7 + index);
    p->A = prepare_activations(p->format, p->X.data.data(), p->N, p->K);
    for (int64_t n : p->N == 1 ? std::vector<int64_t>{1, 3}
                               : std::vector<int64_t>{p->N, 5}) {
      p->checkXs.push_back(syntheticMatrix(n, p->K, 1000 + index + n));
      p->checkWants.emplace_back(size_t(n * p->M));
      reference_mpgemm(p->canonical, p->checkXs.back().data.data(), n,
                       p->checkWants.back().data());
    }
    problem_ = std::move(p);
    return "";
  } catch (const std::exception &e) {
    return e.what();
  }
}

PreparedWeights &KernelMeasurer::weightsFor(const CompiledKernel &kernel) {
  // One layout per strategy on one target: the first kernel's serves all.
  const Strategy strategy = kernel.choice.strategy;
  auto it = problem_->prepared.find(strategy);
  if (it == problem_->prepared.end())
    it = problem_->prepared
             .emplace(strategy, prepareWeights(problem_->canonical, &kernel))
             .first;
  return it->second;
}

std::vector<std::string>
KernelMeasurer::compile(const std::vector<Candidate> &batch) {
  const Problem &p = *problem_;
  KernelOptions options;
  options.threads = p.threads;
  std::vector<std::string> errors(batch.size());
  // Each candidate is generated alone first, so that a config the compiler
  // rejects is reported without failing its batch; a batch may mix
  // strategies (the compile flags are the target's).
  std::vector<size_t> generated;
  for (size_t i = 0; i < batch.size(); ++i) {
    try {
      generateKernelSource(p.format, target_name(p.target),
                           {p.M, p.K, p.N, batch[i].config}, options,
                           "lowbit_tune_check");
      generated.push_back(i);
    } catch (const std::exception &e) {
      errors[i] = e.what();
    }
  }
  auto collect = [&](const std::vector<size_t> &which) {
    std::vector<KernelShape> shapes;
    for (size_t i : which)
      shapes.push_back({p.M, p.K, p.N, batch[i].config});
    KernelChoice choice{parse_strategy(batch[which.front()].strategy),
                        p.target};
    std::vector<CompiledKernel> kernels =
        compileKernels(p.format, choice, shapes, options);
    for (size_t j = 0; j < which.size(); ++j) {
      kernels[j].choice = {parse_strategy(batch[which[j]].strategy), p.target};
      kernels_[batch[which[j]].config] = std::move(kernels[j]);
    }
  };
  if (generated.empty())
    return errors;
  try {
    collect(generated);
  } catch (const std::exception &) {
    // The batch's C++ does not compile: each candidate alone finds the
    // culprit.
    for (size_t i : generated) {
      try {
        collect({i});
      } catch (const std::exception &e) {
        errors[i] = e.what();
      }
    }
  }
  return errors;
}

std::string KernelMeasurer::verify(const Candidate &candidate,
                                   double deadline) {
  try {
    const CompiledKernel &kernel = kernels_.at(candidate.config);
    if (isGpuTarget(problem_->target))
      return verifyOnGpu(gpuKernel(candidate), problem_->canonical,
                         problem_->checkXs, problem_->checkWants);
    return verifyInChild(kernel, weightsFor(kernel),
                         problem_->checkXs, problem_->checkWants,
                         problem_->threads, deadline);
  } catch (const std::exception &e) {
    return e.what();
  }
}

VulkanKernel &KernelMeasurer::gpuKernel(const Candidate &candidate) {
  std::unique_ptr<VulkanKernel> &kernel = gpuKernels_[candidate.config];
  if (!kernel)
    kernel = std::make_unique<VulkanKernel>(kernels_.at(candidate.config).spirv,
                                            problem_->canonical);
  return *kernel;
}

double KernelMeasurer::gpuDispatch(const Candidate &candidate) {
  const Problem &p = *problem_;
  VulkanKernel &kernel = gpuKernel(candidate);
  std::vector<float> Y(size_t(p.N * p.M));
  kernel.run(p.X.data.data(), p.N, Y.data());
  return kernel.last_dispatch_seconds() * 1e6;
}

Measurement KernelMeasurer::gpuMedian(const Candidate &candidate) {
  std::vector<double> us;
  for (int r = 0; r < reps_; ++r)
    us.push_back(gpuDispatch(candidate));
  Measurement m;
  m.us = median(us);
  m.gbps = double(gpuKernel(candidate).weight_bytes()) / (m.us * 1e3);
  // No GPU read limit is measured: the score is the rate itself.
  m.score = 1.0 / m.us;
  return m;
}

Contender KernelMeasurer::contender(const Candidate &candidate) {
  const CompiledKernel &kernel = kernels_.at(candidate.config);
  return {kernel.loaded.fn, &*weightsFor(kernel).upconvert,
          &problem_->A, /*kernel_class=*/-1, pool_.policy()};
}

Measurement KernelMeasurer::time(const Candidate &candidate) {
  Measurement m;
  try {
    const Problem &p = *problem_;
    if (isGpuTarget(p.target)) {
      gpuDispatch(candidate); // the first run also builds the pipeline
      return gpuMedian(candidate);
    }
    Pairing pairing{&probe_, p.N == 1 ? nullptr : peak_};
    KernelTiming timing = time_contenders({contender(candidate)}, pool_,
                                          p.N == 1 && !warm_, reps_, pairing)
                              .front();
    m.us = timing.timing.us;
    m.gbps = timing.gbps;
    double paired = p.N == 1 ? timing.ratio : timing.gops_ratio;
    m.score = paired > 0 ? paired : 1.0 / m.us;
  } catch (const std::exception &e) {
    m.error = e.what();
  }
  return m;
}

std::vector<std::pair<Measurement, Measurement>>
KernelMeasurer::timeRounds(const Candidate &a, const Candidate &b,
                           int rounds) {
  std::vector<std::pair<Measurement, Measurement>> pairs;
  try {
    const Problem &p = *problem_;
    if (isGpuTarget(p.target)) {
      // A round is the median of reps_ dispatches of each: one dispatch
      // of a small kernel is within the scheduler's noise on lavapipe.
      gpuDispatch(a);
      gpuDispatch(b);
      for (int r = 0; r < rounds; ++r) {
        Measurement ma = gpuMedian(a);
        pairs.push_back({ma, gpuMedian(b)});
      }
      return pairs;
    }
    Pairing pairing{&probe_, p.N == 1 ? nullptr : peak_};
    std::vector<KernelTiming> timings =
        time_contenders({contender(a), contender(b)}, pool_,
                        p.N == 1 && !warm_, rounds, pairing);
    // Rep r of each, with the ratio to its own pairing pass (the medians
    // of these are what time() scores).
    double ops = 2.0 * double(p.M) * double(p.K) * double(p.N);
    auto rep = [&](const KernelTiming &t, size_t r) {
      Measurement m;
      double ns = t.timing.rep_us.at(r) * 1e3;
      m.us = t.timing.rep_us[r];
      m.gbps = double(t.packed_bytes) / ns;
      if (p.N == 1 && r < t.probe_gbps.size())
        m.score = m.gbps / t.probe_gbps[r];
      else if (p.N > 1 && r < t.peak_gops.size())
        m.score = ops / ns / t.peak_gops[r];
      else
        m.score = 1.0 / m.us;
      return m;
    };
    for (size_t r = 0; r < size_t(rounds); ++r)
      pairs.push_back({rep(timings[0], r), rep(timings[1], r)});
  } catch (const std::exception &e) {
    Measurement failed;
    failed.error = e.what();
    pairs.assign(size_t(rounds), {failed, failed});
  }
  return pairs;
}

} // namespace lowbit::cli
