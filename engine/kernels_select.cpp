//===- kernels_select.cpp - the kernel table for this CPU -----------------===//
#include "kernels.h"

namespace lowbit::engine {
namespace generic {
extern const Kernels table;
}
#ifdef LOWBIT_ENGINE_HAVE_AVX2
namespace avx2 {
extern const Kernels table;
}
#endif

const Kernels &kernels() {
  static const Kernels &chosen = []() -> const Kernels & {
#ifdef LOWBIT_ENGINE_HAVE_AVX2
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
      return avx2::table;
#endif
    return generic::table;
  }();
  return chosen;
}

} // namespace lowbit::engine
