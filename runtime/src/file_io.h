//===- file_io.h - whole-file reads and writes ------------------*- C++ -*-===//
#ifndef LOWBIT_SRC_FILE_IO_H
#define LOWBIT_SRC_FILE_IO_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace lowbit::detail {

/// The bytes of the file; throws Error "path: cannot read: reason".
std::vector<uint8_t> read_file(const std::string &path);

/// Replaces the file's contents; throws Error "path: cannot write: reason".
void write_file(const std::string &path, const uint8_t *data, size_t size);

} // namespace lowbit::detail

#endif // LOWBIT_SRC_FILE_IO_H
