//===- kernels_select.cpp - the kernel table for this CPU -----------------===//
#include "kernels.h"

#include "lowbit/target.h"

#include <cstdlib>
#include <cstring>

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
  // LOWBIT_ENGINE_ISA=generic forces the portable table (tests, debugging).
  const char *force = std::getenv("LOWBIT_ENGINE_ISA");
  if (force && std::strcmp(force, "generic") == 0)
    return generic::table;
#ifdef LOWBIT_ENGINE_HAVE_AVX2
  // The runtime's feature check (lowbit/target.h: CPUID and the OS's saved
  // register state, as for the lowbit kernels of x86-avx2).
  if (host_runs(Target::X86Avx2))
    return avx2::table;
#endif
  return generic::table;
}

} // namespace lowbit::engine
