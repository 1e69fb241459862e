//===- Inputs.h - matrices the lowbit CLI reads or makes up -----*- C++ -*-===//
#ifndef LOWBIT_TOOLS_LOWBIT_INPUTS_H
#define LOWBIT_TOOLS_LOWBIT_INPUTS_H

#include "lowbit/Jit/Jit.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lowbit::cli {

/// A row-major fp32 matrix. `vector` records that it came from (or goes to) a
/// 1-D .npy file, which is treated as a single row.
struct Matrix {
  int64_t rows = 0, cols = 0;
  bool vector = false;
  std::vector<float> data;
};

/// Reads a 1-D or 2-D float32 .npy; `role` ("weights", "activations") names
/// it in errors. Rejects empty arrays.
Matrix readMatrix(const std::string &path, const std::string &role);
void writeMatrix(const std::string &path, const Matrix &m);

/// Throws Error("cannot write PATH") when `path` cannot be written (a
/// missing directory, no permission), so that a command with an output
/// option fails before its long work rather than after it. Leaves an
/// existing file as it is and no new one behind.
void requireWritable(const std::string &path);

/// Deterministic pseudo-random matrix (uniform in [-1, 1)), identical on
/// every platform for a given seed.
Matrix syntheticMatrix(int64_t rows, int64_t cols, uint64_t seed);

/// Parses "MxK" (e.g. "2560x6912") into {M, K}.
std::pair<int64_t, int64_t> parseShape(const std::string &text);

/// The --dtype of a command for `choice` (absent: f32); throws Error for a
/// 16-bit type anywhere but a GPU kernel.
GpuDType parseDtypeFor(const std::optional<std::string> &dtype,
                       jit::KernelChoice choice);

} // namespace lowbit::cli

#endif // LOWBIT_TOOLS_LOWBIT_INPUTS_H
