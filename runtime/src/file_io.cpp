//===- file_io.cpp - whole-file reads and writes --------------------------===//

#include "file_io.h"

#include "lowbit/error.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace lowbit::detail {

namespace {
struct FileCloser {
  void operator()(std::FILE *f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;
} // namespace

static Error io_error(const std::string &path, const char *verb) {
  return Error(path + ": cannot " + verb + ": " + std::strerror(errno));
}

std::vector<uint8_t> read_file(const std::string &path) {
  File file(std::fopen(path.c_str(), "rb"));
  if (!file)
    throw io_error(path, "read");
  // Read in chunks rather than trusting a size from fseek: works for pipes
  // and cannot be fooled by a file that changes size.
  std::vector<uint8_t> bytes;
  uint8_t chunk[1 << 16];
  size_t got;
  while ((got = std::fread(chunk, 1, sizeof(chunk), file.get())) > 0)
    bytes.insert(bytes.end(), chunk, chunk + got);
  if (std::ferror(file.get()))
    throw io_error(path, "read");
  return bytes;
}

void write_file(const std::string &path, const uint8_t *data, size_t size) {
  File file(std::fopen(path.c_str(), "wb"));
  if (!file)
    throw io_error(path, "write");
  if (std::fwrite(data, 1, size, file.get()) != size)
    throw io_error(path, "write");
  if (std::fclose(file.release()) != 0)
    throw io_error(path, "write");
}

} // namespace lowbit::detail
