//===- packed_fuzz.cpp - libFuzzer target for the packed-file reader ------===//
//
// parse_packed must either return weights that validate() accepts and that
// unpack and dequantize cleanly, or throw lowbit::Error.
//
//===----------------------------------------------------------------------===//

#include "lowbit/error.h"
#include "lowbit/packed_file.h"

#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  lowbit::PackedWeights W;
  try {
    W = lowbit::parse_packed(data, size, "fuzz.lbw");
  } catch (const lowbit::Error &) {
    return 0;
  }
  // Accepted weights are small here (their bytes came from the input).
  std::vector<float> out(size_t(W.M * W.K));
  lowbit::dequantize(W, out.data());
  return 0;
}
