//===- npy_fuzz.cpp - libFuzzer target for the .npy reader ----------------===//
//
// parse_npy must either return an array whose data matches its shape or
// throw lowbit::Error; any other exception, crash, leak or sanitizer report
// is a finding. What it accepts, write_npy must write back identically.
//
//===----------------------------------------------------------------------===//

#include "lowbit/error.h"
#include "lowbit/npy.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  lowbit::NpyArray array;
  try {
    array = lowbit::parse_npy(data, size, "fuzz.npy");
  } catch (const lowbit::Error &) {
    return 0;
  }
  size_t count = 1;
  for (int64_t d : array.shape)
    count *= size_t(d);
  if (array.shape.empty() || array.shape.size() > 2 ||
      array.data.size() != count)
    std::abort();
  return 0;
}
