//===- naive.h - independent oracles for the runtime tests ------*- C++ -*-===//
//
// Straight transcriptions of the formulas in runtime/README.md, written
// separately from the runtime (no runtime code is called except
// Format::parse for the format's fields): fp16 through the compiler's
// _Float16, bits placed one at a time, int64 accumulators.
//
//===----------------------------------------------------------------------===//
#ifndef LOWBIT_TESTS_NAIVE_H
#define LOWBIT_TESTS_NAIVE_H

#include "lowbit/format.h"

#include <cstdint>
#include <vector>

namespace lowbit::test {

/// IEEE binary16 conversion by the compiler (round to nearest even).
uint16_t ref_half(float f);
float ref_float(uint16_t h);

struct NaiveWeights {
  float tensor_scale = 0.0f;
  std::vector<int8_t> q;        // [M][K], what unpack_row must return
  std::vector<uint8_t> codes;   // canonical bytes
  std::vector<uint16_t> scales; // [M][K/G]
  std::vector<uint16_t> zeros;  // [M][K/G], w2..w4
  std::vector<float> block_s;   // [M][K/32], non-ternary: W ~= s (q - z)
  std::vector<int> block_z;     // [M][K/32]
  std::vector<float> dequant;   // [M][K]
};

NaiveWeights naive_quantize(const Format &format, const std::vector<float> &W,
                            int64_t M, int64_t K);

struct NaiveActivations {
  int64_t block = 0;
  std::vector<int8_t> q; // [N][K]
  std::vector<float> s;  // [N][K/block]
};

NaiveActivations naive_activations(const std::vector<float> &X, int64_t N,
                                   int64_t K, int64_t block);

/// The reference formula with int64 accumulators: Y [N][M].
std::vector<float> naive_mpgemm(const Format &format, const NaiveWeights &W,
                                const NaiveActivations &A, int64_t M, int64_t N,
                                int64_t K);

} // namespace lowbit::test

#endif // LOWBIT_TESTS_NAIVE_H
