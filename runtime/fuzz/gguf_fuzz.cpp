//===- gguf_fuzz.cpp - libFuzzer target for the GGUF reader ----------------===//
//
// GgufFile::parse must either return a file whose every tensor lies inside
// the input, or throw lowbit::Error; any other exception, crash, leak or
// sanitizer report is a finding. Every accepted tensor is then decoded row by
// row (reading all of its bytes) and imported into i2s, q4_0 and its
// default format (a block type's own: the copy and validate() path), each
// of which may only fail with lowbit::Error.
//
//===----------------------------------------------------------------------===//

#include "lowbit/error.h"
#include "lowbit/gguf.h"

#include <cstdlib>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::unique_ptr<lowbit::GgufFile> file;
  try {
    file = lowbit::GgufFile::parse(data, size, "fuzz.gguf");
  } catch (const lowbit::Error &) {
    return 0;
  }
  for (const lowbit::GgufTensor &t : file->tensors()) {
    if (t.data < data || t.bytes > size ||
        size_t(t.data - data) > size - t.bytes)
      std::abort();
    // Keep the work per input small: the fuzzer's inputs are, too.
    if (t.rows() * t.K() > (int64_t(1) << 16))
      continue;
    std::vector<float> row(size_t(t.K()));
    for (int64_t m = 0; m < t.rows(); ++m)
      lowbit::gguf_decode_row(t, m, row.data());
    std::string own;
    try {
      own = lowbit::gguf_default_format(t);
    } catch (const lowbit::Error &) {
    }
    for (const std::string &format : {std::string("i2s"), std::string("q4_0"),
                                      own}) {
      if (format.empty())
        continue;
      try {
        lowbit::import_tensor(t, lowbit::Format::parse(format));
      } catch (const lowbit::Error &) {
      }
    }
  }
  for (const auto &kv : file->metadata()) {
    try {
      (void)file->get_int(kv.first);
    } catch (const lowbit::Error &) {
    }
  }
  return 0;
}
