// ggml-quantize: ggml's own quantizers and GGUF reader, as the oracle for
// the bytes lowbit writes.
//
//   ggml-quantize --type T --weights W.npy --out F.bin
//       quantizes the rows of W [M, K] to T with ggml_quantize_chunk and no
//       importance matrix, as llama-quantize does, and writes the M rows'
//       bytes. (Not the type traits' from_float_ref: for IQ4_NL that skips
//       the 7-step scale search quantize_iq4_nl does, so its bytes differ
//       from llama-quantize's.)
//   ggml-quantize --extract F.gguf --name NAME [--type T] --out F.bin
//       writes the data bytes of tensor NAME as ggml's GGUF reader finds
//       them (and checks its type is T).
//   ggml-quantize --tensors F.gguf
//       lists the file's tensors as ggml's GGUF reader sees them: name and
//       type, one per line.
//   ggml-quantize --types
//       lists the types ggml can quantize to without an importance matrix.
#include "ggml_types.h"
#include "npy.h"

#include "ggml.h"
#include "gguf.h"

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

const char *usage =
    "usage: ggml-quantize --type T --weights W.npy --out F.bin\n"
    "       ggml-quantize --extract F.gguf --name NAME [--type T] --out F.bin\n"
    "       ggml-quantize --tensors F.gguf\n"
    "       ggml-quantize --types\n";

void write_bytes(const std::string &path, const void *data, size_t n) {
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f)
    throw std::runtime_error("cannot write " + path);
  const bool ok = std::fwrite(data, 1, n, f) == n;
  if (std::fclose(f) != 0 || !ok)
    throw std::runtime_error("cannot write " + path);
}

void quantize(const std::string &type_name, const std::string &weights,
              const std::string &out) {
  const ggml_type type = ggml_types::named(type_name);
  const npy::Matrix w = npy::read(weights);
  const int64_t block = ggml_blck_size(type);
  if (w.cols % block != 0)
    throw std::runtime_error(weights + ": K = " + std::to_string(w.cols) +
                             " is not a multiple of " + ggml_type_name(type) +
                             "'s block of " + std::to_string(block));
  std::vector<unsigned char> bytes(ggml_row_size(type, w.cols) *
                                   size_t(w.rows));
  ggml_quantize_chunk(type, w.data.data(), bytes.data(), 0, w.rows, w.cols,
                      /*imatrix=*/nullptr);
  write_bytes(out, bytes.data(), bytes.size());
}

gguf_context *open_gguf(const std::string &path) {
  gguf_init_params params = {/*no_alloc=*/true, /*ctx=*/nullptr};
  gguf_context *ctx = gguf_init_from_file(path.c_str(), params);
  if (!ctx)
    throw std::runtime_error("ggml cannot read " + path + " as GGUF");
  return ctx;
}

void list_tensors(const std::string &path) {
  gguf_context *ctx = open_gguf(path);
  for (int64_t i = 0; i < gguf_get_n_tensors(ctx); ++i)
    std::printf("%s %s\n", gguf_get_tensor_name(ctx, i),
                ggml_type_name(gguf_get_tensor_type(ctx, i)));
  gguf_free(ctx);
}

void extract(const std::string &path, const std::string &name,
             const std::string &type_name, const std::string &out) {
  gguf_context *ctx = open_gguf(path);
  const int64_t id = gguf_find_tensor(ctx, name.c_str());
  if (id < 0) {
    gguf_free(ctx);
    throw std::runtime_error(path + " has no tensor '" + name + "'");
  }
  const ggml_type type = gguf_get_tensor_type(ctx, id);
  if (!type_name.empty() && type != ggml_types::named(type_name)) {
    gguf_free(ctx);
    throw std::runtime_error("tensor '" + name + "' is " +
                             ggml_type_name(type) + ", not " + type_name);
  }
  const size_t offset =
      gguf_get_data_offset(ctx) + gguf_get_tensor_offset(ctx, id);
  const size_t size = gguf_get_tensor_size(ctx, id);
  gguf_free(ctx);
  std::vector<unsigned char> bytes(size);
  FILE *f = std::fopen(path.c_str(), "rb");
  const bool ok = f && std::fseek(f, long(offset), SEEK_SET) == 0 &&
                  std::fread(bytes.data(), 1, size, f) == size;
  if (f)
    std::fclose(f);
  if (!ok)
    throw std::runtime_error(path + ": cannot read tensor '" + name + "'");
  write_bytes(out, bytes.data(), bytes.size());
}

int run(int argc, char **argv) {
  std::string type, weights, out, gguf, name, tensors;
  bool list = false;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "-h" || flag == "--help") {
      std::fputs(usage, stdout);
      return 0;
    }
    if (flag == "--types") {
      list = true;
      continue;
    }
    if (i + 1 >= argc)
      throw std::runtime_error("unknown option or missing value: " + flag);
    const std::string value = argv[++i];
    if (flag == "--type")
      type = value;
    else if (flag == "--weights")
      weights = value;
    else if (flag == "--out")
      out = value;
    else if (flag == "--extract")
      gguf = value;
    else if (flag == "--name")
      name = value;
    else if (flag == "--tensors")
      tensors = value;
    else
      throw std::runtime_error("unknown option: " + flag);
  }
  if (list) {
    for (int t = 0; t < GGML_TYPE_COUNT; ++t)
      if (ggml_types::quantizable(ggml_type(t)))
        std::printf("%s\n", ggml_type_name(ggml_type(t)));
    return 0;
  }
  if (!tensors.empty()) {
    list_tensors(tensors);
    return 0;
  }
  if (!gguf.empty()) {
    if (name.empty() || out.empty())
      throw std::runtime_error("--extract needs --name and --out");
    extract(gguf, name, type, out);
    return 0;
  }
  if (type.empty() || weights.empty() || out.empty())
    throw std::runtime_error("--type, --weights and --out are required");
  quantize(type, weights, out);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "ggml-quantize: error: %s\n", e.what());
    return 1;
  }
}
