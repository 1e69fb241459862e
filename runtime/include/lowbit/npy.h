//===- npy.h - NumPy .npy reader and writer ---------------------*- C++ -*-===//
//
// lowbit exchanges arrays as .npy files: little-endian float32 ('<f4'),
// C order, 1-D or 2-D. The reader validates everything (magic, version,
// header dictionary syntax, dtype, order, shape, exact payload size) and
// throws Error with one line naming the file and the problem.
//
//===----------------------------------------------------------------------===//
#ifndef LOWBIT_NPY_H
#define LOWBIT_NPY_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace lowbit {

struct NpyArray {
  std::vector<int64_t> shape;
  std::vector<float> data;
};

/// Parses an in-memory .npy image; `what` names it in error messages.
NpyArray parse_npy(const uint8_t *bytes, size_t size, const std::string &what);
NpyArray read_npy(const std::string &path);
void write_npy(const std::string &path, const std::vector<int64_t> &shape,
               const float *data);

} // namespace lowbit

#endif // LOWBIT_NPY_H
