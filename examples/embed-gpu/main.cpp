// Runs every shape of a GPU bundle (N = 1 and 16) through
// lowbit::VulkanKernel and compares Y with the runtime's reference on the
// same activations rounded to the bundle's dtype (lowbit/vulkan.h, 16-BIT
// I/O): ternary formats bit for bit, group formats within 1e-5 (normalized)
// plus the dtype's unit roundoff. Exit status 1 on a mismatch, 2 without a
// Vulkan device.
#include "lowbit_kernels.h"

#include "lowbit/error.h"
#include "lowbit/format.h"
#include "lowbit/reference.h"

#include <cmath>
#include <cstdio>
#include <vector>

namespace {

/// Deterministic values in [-1, 1).
std::vector<float> synthetic(int64_t count, uint32_t seed) {
  std::vector<float> v(static_cast<size_t>(count));
  for (float &x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = float(seed >> 8) / float(1u << 23) - 1.0f;
  }
  return v;
}

} // namespace

int main() {
  if (!lowbit::vulkan_available()) {
    std::printf("no Vulkan device\n");
    return 2;
  }
  const lowbit::Format format = lowbit::Format::parse(LOWBIT_BUNDLE_FORMAT);
  const lowbit::GpuDType dtype = lowbit::parse_gpu_dtype(LOWBIT_BUNDLE_DTYPE);
  const double roundoff = dtype == lowbit::GpuDType::F16    ? 0x1p-11
                          : dtype == lowbit::GpuDType::BF16 ? 0x1p-8
                                                            : 0.0;
  std::printf("bundle: %s, %s, %s X and Y, on %s\n", LOWBIT_BUNDLE_FORMAT,
              LOWBIT_BUNDLE_TARGET, LOWBIT_BUNDLE_DTYPE,
              lowbit::vulkan_device_name().c_str());
  bool ok = true;
  for (size_t s = 0; s < lowbit_bundle_num_shapes; ++s) {
    const lowbit_bundle_shape_t &shape = lowbit_bundle_shapes[s];
    std::vector<float> w = synthetic(shape.M * shape.K, 7 + uint32_t(s));
    lowbit::PackedWeights W =
        lowbit::quantize(format, w.data(), shape.M, shape.K);
    for (int64_t N : {int64_t(1), int64_t(16)}) {
      std::vector<float> X = synthetic(N * shape.K, 100 + uint32_t(N + s));
      std::vector<float> Y(size_t(N * shape.M)), R(Y.size());
      try {
        lowbit::VulkanKernel kernel(
            lowbit_bundle_spirv_kernel(shape.M, shape.K, N), W);
        kernel.run(X.data(), N, Y.data());
      } catch (const lowbit::Error &e) {
        std::printf("%s: %s\n", shape.name, e.what());
        return 1;
      }
      for (float &x : X)
        x = lowbit::round_to_dtype(dtype, x);
      lowbit::reference_mpgemm(W, X.data(), N, R.data());
      double diff = 0, norm = 0;
      bool exact = true;
      for (size_t i = 0; i < Y.size(); ++i) {
        const float want = format.is_ternary()
                               ? lowbit::round_to_dtype(dtype, R[i])
                               : R[i];
        exact &= Y[i] == want;
        diff += (double(Y[i]) - want) * (double(Y[i]) - want);
        norm += double(want) * want;
      }
      const double relative = norm > 0 ? std::sqrt(diff / norm) : 0;
      const bool pass =
          format.is_ternary() ? exact : relative <= 1e-5 + roundoff;
      ok &= pass;
      std::printf("%-12s M=%-5lld K=%-5lld N=%-3lld %s\n", shape.name,
                  (long long)shape.M, (long long)shape.K, (long long)N,
                  pass ? (exact ? "bit-exact" : "within bound")
                       : "MISMATCH");
    }
  }
  std::printf(ok ? "all shapes match the reference\n"
                 : "some shapes differ from the reference\n");
  return ok ? 0 : 1;
}
