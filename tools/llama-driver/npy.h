// Minimal float32 .npy reading and writing for the llama.cpp driver
// programs (NumPy's format, version 1.0: magic, header dict, raw data).
#pragma once

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace npy {

/// A 2-D C-order float32 array.
struct Matrix {
  int64_t rows = 0, cols = 0;
  std::vector<float> data;
};

/// Reads a little-endian float32 C-order 2-D .npy; std::runtime_error
/// naming the problem otherwise.
inline Matrix read(const std::string &path) {
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f)
    throw std::runtime_error("cannot open " + path);
  auto bad = [&](const std::string &why) {
    std::fclose(f);
    return std::runtime_error(path + ": " + why);
  };
  unsigned char magic[10];
  if (std::fread(magic, 1, 10, f) != 10 ||
      std::string(reinterpret_cast<char *>(magic), 6) != "\x93NUMPY")
    throw bad("not a .npy file");
  size_t header_len = magic[8] | (size_t(magic[9]) << 8);
  if (magic[6] >= 2) { // versions 2 and 3: a 4-byte header length
    unsigned char more[2];
    if (std::fread(more, 1, 2, f) != 2)
      throw bad("truncated header");
    header_len |= (size_t(more[0]) << 16) | (size_t(more[1]) << 24);
  }
  std::string header(header_len, '\0');
  if (std::fread(header.data(), 1, header_len, f) != header_len)
    throw bad("truncated header");
  if (header.find("'descr': '<f4'") == std::string::npos)
    throw bad("not float32 (descr '<f4')");
  if (header.find("'fortran_order': False") == std::string::npos)
    throw bad("not C order");
  const size_t open = header.find("'shape': (");
  if (open == std::string::npos)
    throw bad("no shape");
  Matrix m;
  long long r = 0, c = 0;
  if (std::sscanf(header.c_str() + open, "'shape': (%lld, %lld)", &r, &c) !=
          2 ||
      r < 1 || c < 1)
    throw bad("not a non-empty 2-D array");
  m.rows = r;
  m.cols = c;
  m.data.resize(size_t(r) * size_t(c));
  if (std::fread(m.data.data(), sizeof(float), m.data.size(), f) !=
      m.data.size())
    throw bad("truncated data");
  std::fclose(f);
  return m;
}

/// Writes a float32 C-order [rows, cols] .npy.
inline void write(const std::string &path, int64_t rows, int64_t cols,
                  const float *data) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" +
                       std::to_string(rows) + ", " + std::to_string(cols) +
                       "), }";
  // Magic (6) + version (2) + length (2) + header + '\n', a multiple of 64.
  header.append(63 - (10 + header.size()) % 64, ' ');
  header += '\n';
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f)
    throw std::runtime_error("cannot write " + path);
  const unsigned char prefix[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                                    (unsigned char)(header.size() & 0xff),
                                    (unsigned char)(header.size() >> 8)};
  const size_t n = size_t(rows) * size_t(cols);
  const bool ok = std::fwrite(prefix, 1, 10, f) == 10 &&
                  std::fwrite(header.data(), 1, header.size(), f) ==
                      header.size() &&
                  std::fwrite(data, sizeof(float), n, f) == n;
  if (std::fclose(f) != 0 || !ok)
    throw std::runtime_error("cannot write " + path);
}

} // namespace npy
