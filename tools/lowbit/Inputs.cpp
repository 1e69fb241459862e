//===- Inputs.cpp - matrices the lowbit CLI reads or makes up -------------===//

#include "Inputs.h"
#include "Options.h"

#include "lowbit/error.h"
#include "lowbit/npy.h"

#include <filesystem>
#include <fstream>

namespace lowbit::cli {

Matrix readMatrix(const std::string &path, const std::string &role) {
  NpyArray array = read_npy(path);
  Matrix m;
  if (array.shape.size() == 1) {
    m.vector = true;
    m.rows = 1;
    m.cols = array.shape[0];
  } else {
    m.rows = array.shape[0];
    m.cols = array.shape[1];
  }
  if (m.rows == 0 || m.cols == 0)
    throw Error(path + ": " + role + " array is empty");
  m.data = std::move(array.data);
  return m;
}

void writeMatrix(const std::string &path, const Matrix &m) {
  std::vector<int64_t> shape;
  if (m.vector)
    shape = {m.cols};
  else
    shape = {m.rows, m.cols};
  write_npy(path, shape, m.data.data());
}

void requireWritable(const std::string &path) {
  std::error_code ec;
  const bool existed = std::filesystem::exists(path, ec);
  if (!std::ofstream(path, std::ios::app))
    throw Error("cannot write " + path);
  if (!existed)
    std::filesystem::remove(path, ec);
}

Matrix syntheticMatrix(int64_t rows, int64_t cols, uint64_t seed) {
  Matrix m;
  m.rows = rows;
  m.cols = cols;
  m.data.resize(static_cast<size_t>(rows * cols));
  // splitmix64: tiny, portable, and the same sequence everywhere.
  uint64_t state = seed;
  for (float &v : m.data) {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    v = static_cast<float>(z >> 40) * (2.0f / 16777216.0f) - 1.0f;
  }
  return m;
}

std::pair<int64_t, int64_t> parseShape(const std::string &text) {
  size_t x = text.find('x');
  if (x == std::string::npos)
    throw Error("shape '" + text + "': expected MxK, e.g. 2560x6912");
  return {parsePositive(text.substr(0, x), "shape '" + text + "'"),
          parsePositive(text.substr(x + 1), "shape '" + text + "'")};
}

GpuDType parseDtypeFor(const std::optional<std::string> &dtype,
                       jit::KernelChoice choice) {
  GpuDType type = parse_gpu_dtype(dtype.value_or("f32"));
  if (type != GpuDType::F32 && (!jit::isGpuTarget(choice.target) ||
                                choice.strategy == Strategy::Reference))
    throw Error("--dtype " + *dtype + " is for the GPU kernels (targets "
                "spirv-vulkan, spirv-xe2); " + target_name(choice.target) +
                " " + strategy_name(choice.strategy) +
                " takes f32 activations");
  return type;
}

} // namespace lowbit::cli
