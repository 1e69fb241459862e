//===- gguf.cpp - GGUF v2/v3 reader and v3 writer --------------------------===//
//
// The container format of llama.cpp's ggml (ggml/src/gguf.cpp, docs/gguf.md),
// all little-endian:
//
//   "GGUF"  u32 version (2 or 3)  i64 n_tensors  i64 n_kv
//   n_kv times:      string key, i32 value type, value
//   n_tensors times: string name, u32 n_dims, i64 ne[n_dims], i32 ggml type,
//                    u64 offset (from the start of the data section)
//   zero padding to general.alignment (a u32 power of two, default 32)
//   the data section
//
// A string is a u64 byte count and the bytes (no NUL). An array value is an
// i32 element type, a u64 count and the elements (ggml rejects arrays of
// arrays; so does this reader). Everything is checked here before anything
// is returned, so that no accessor can read outside the file: each read is
// bounds-checked, counts are checked against the bytes left before anything
// is reserved, and every tensor must lie inside the file, aligned and apart
// from the others. This is an independent implementation; no ggml code.
//
//===----------------------------------------------------------------------===//

#include "lowbit/gguf.h"
#include "lowbit/error.h"

#include "byte_order.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace lowbit {

using namespace detail;

namespace {

constexpr uint8_t kMagic[4] = {'G', 'G', 'U', 'F'};
constexpr uint32_t kWriteVersion = 3;
constexpr uint64_t kDefaultAlignment = 32;
constexpr const char *kAlignmentKey = "general.alignment";
constexpr int kMaxDims = 4;
// The fewest bytes a metadata entry can take (an empty key, which is then
// refused, a type and a 1-byte value) and a tensor info (an empty name, one
// dimension).
constexpr uint64_t kMinKvBytes = 8 + 4 + 1;
constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 8 + 4 + 8;

const char *value_type_name(uint32_t type) {
  static const char *const names[] = {
      "uint8", "int8",  "uint16", "int16", "uint32", "int32",  "float32",
      "bool",  "string", "array", "uint64", "int64", "float64"};
  return type < sizeof(names) / sizeof(names[0]) ? names[type] : "unknown";
}

bool is_integer(GgufValue::Type t) {
  switch (t) {
  case GgufValue::UINT8:
  case GgufValue::INT8:
  case GgufValue::UINT16:
  case GgufValue::INT16:
  case GgufValue::UINT32:
  case GgufValue::INT32:
  case GgufValue::UINT64:
  case GgufValue::INT64:
    return true;
  default:
    return false;
  }
}

// Bytes of a fixed-size value type; 0 for STRING, ARRAY and unknown types.
uint64_t fixed_size(uint32_t type) {
  switch (type) {
  case GgufValue::UINT8:
  case GgufValue::INT8:
  case GgufValue::BOOL:
    return 1;
  case GgufValue::UINT16:
  case GgufValue::INT16:
    return 2;
  case GgufValue::UINT32:
  case GgufValue::INT32:
  case GgufValue::FLOAT32:
    return 4;
  case GgufValue::UINT64:
  case GgufValue::INT64:
  case GgufValue::FLOAT64:
    return 8;
  default:
    return 0;
  }
}

bool is_known_value_type(uint32_t type) { return type <= GgufValue::FLOAT64; }

// What a read is for, formatted only when it fails: `text`, then the key in
// quotes, then [index] for an array element.
struct What {
  const char *text;
  const std::string *key = nullptr;
  int64_t index = -1;

  std::string str() const {
    std::string s = text;
    if (key)
      s += " '" + *key + "'";
    if (index >= 0)
      s += key ? "[" + std::to_string(index) + "]" : " " + std::to_string(index);
    return s;
  }
};

// Bounds-checked little-endian reads over [data, data + size).
class Reader {
public:
  Reader(const uint8_t *data, size_t size, const std::string &what)
      : data_(data), size_(size), what_(what) {}

  [[noreturn]] void fail(const std::string &problem) const {
    throw Error(what_ + ": " + problem);
  }

  uint64_t pos() const { return pos_; }
  uint64_t left() const { return size_ - pos_; }

  void need(uint64_t n, const What &what) const {
    if (n > left())
      fail("truncated: " + what.str() + " at byte " + std::to_string(pos_) +
           " needs " + std::to_string(n) + " bytes, " +
           std::to_string(left()) + " left");
  }

  template <typename T> T read(const What &what) {
    need(sizeof(T), what);
    T v = load_le<T>(data_ + pos_);
    pos_ += sizeof(T);
    return v;
  }

  std::string string(const What &what) {
    const uint64_t n = read<uint64_t>(what);
    need(n, what);
    std::string s(reinterpret_cast<const char *>(data_ + pos_), size_t(n));
    pos_ += n;
    return s;
  }

private:
  const uint8_t *data_;
  uint64_t size_;
  uint64_t pos_ = 0;
  const std::string &what_;
};

GgufValue read_scalar(Reader &r, GgufValue::Type type, const What &what) {
  GgufValue v;
  v.type = type;
  switch (type) {
  case GgufValue::UINT8:
    v.u = r.read<uint8_t>(what), v.i = int64_t(v.u);
    break;
  case GgufValue::INT8:
    v.i = int8_t(r.read<uint8_t>(what));
    break;
  case GgufValue::UINT16:
    v.u = r.read<uint16_t>(what), v.i = int64_t(v.u);
    break;
  case GgufValue::INT16:
    v.i = int16_t(r.read<uint16_t>(what));
    break;
  case GgufValue::UINT32:
    v.u = r.read<uint32_t>(what), v.i = int64_t(v.u);
    break;
  case GgufValue::INT32:
    v.i = int32_t(r.read<uint32_t>(what));
    break;
  case GgufValue::UINT64:
    v.u = r.read<uint64_t>(what), v.i = int64_t(v.u);
    break;
  case GgufValue::INT64:
    v.i = int64_t(r.read<uint64_t>(what));
    break;
  case GgufValue::BOOL:
    // ggml reads an int8 and takes any non-zero byte as true.
    v.i = r.read<uint8_t>(what) != 0;
    break;
  case GgufValue::FLOAT32: {
    uint32_t bits = r.read<uint32_t>(what);
    float f;
    std::memcpy(&f, &bits, sizeof(f));
    v.f = f;
    break;
  }
  case GgufValue::FLOAT64: {
    uint64_t bits = r.read<uint64_t>(what);
    std::memcpy(&v.f, &bits, sizeof(v.f));
    break;
  }
  case GgufValue::STRING:
    v.s = r.string(what);
    break;
  case GgufValue::ARRAY: // read_value refuses arrays of arrays first
    r.fail(what.str() + ": nested arrays are not supported");
  }
  return v;
}

GgufValue read_value(Reader &r, const std::string &key) {
  const uint32_t type = r.read<uint32_t>({"the type of", &key});
  if (!is_known_value_type(type))
    r.fail("key '" + key + "' has unknown value type " + std::to_string(type));
  if (type != GgufValue::ARRAY)
    return read_scalar(r, GgufValue::Type(type), {"the value of", &key});

  const uint32_t element = r.read<uint32_t>({"the element type of", &key});
  if (!is_known_value_type(element))
    r.fail("key '" + key + "' is an array of unknown value type " +
           std::to_string(element));
  if (element == GgufValue::ARRAY)
    r.fail("key '" + key +
           "' is an array of arrays (not supported; ggml rejects them too)");
  const uint64_t n = r.read<uint64_t>({"the element count of", &key});
  // Each element takes at least its fixed size (a string its 8-byte length):
  // refuse a count the rest of the file cannot hold before reserving.
  const uint64_t min_bytes =
      element == GgufValue::STRING ? 8 : fixed_size(element);
  if (n > r.left() / min_bytes)
    r.fail("key '" + key + "' claims " + std::to_string(n) + " " +
           value_type_name(element) + " elements but only " +
           std::to_string(r.left()) + " bytes are left");
  GgufValue v;
  v.type = GgufValue::ARRAY;
  v.array_type = GgufValue::Type(element);
  v.array.reserve(size_t(n));
  for (uint64_t j = 0; j < n; ++j)
    v.array.push_back(read_scalar(r, GgufValue::Type(element),
                                  {"the value of", &key, int64_t(j)}));
  return v;
}

std::string shape_text(const std::vector<int64_t> &ne) {
  std::string s = "[";
  for (size_t i = 0; i < ne.size(); ++i)
    s += (i ? ", " : "") + std::to_string(ne[i]);
  return s + "]";
}

uint64_t align_up(uint64_t x, uint64_t alignment) {
  return (x + alignment - 1) / alignment * alignment;
}

} // namespace

int64_t GgufTensor::rows() const {
  int64_t r = 1;
  for (size_t i = 1; i < ne.size(); ++i)
    r *= ne[i];
  return r;
}

std::unique_ptr<GgufFile> GgufFile::parse(const uint8_t *bytes, size_t size,
                                          const std::string &what) {
  std::unique_ptr<GgufFile> file(new GgufFile());
  file->what_ = what;
  Reader r(bytes, size, file->what_);

  r.need(4, {"the magic"});
  if (std::memcmp(bytes, kMagic, 4) != 0)
    r.fail("not a GGUF file (the magic is not \"GGUF\")");
  r.read<uint32_t>({"the magic"});
  file->version_ = r.read<uint32_t>({"the version"});
  if (file->version_ != 2 && file->version_ != 3)
    r.fail("unsupported GGUF version " + std::to_string(file->version_) +
           " (expected 2 or 3)");
  const int64_t n_tensors = int64_t(r.read<uint64_t>({"the tensor count"}));
  const int64_t n_kv = int64_t(r.read<uint64_t>({"the metadata count"}));
  if (n_kv < 0 || uint64_t(n_kv) > r.left() / kMinKvBytes)
    r.fail("metadata count " + std::to_string(n_kv) +
           " does not fit the file (" + std::to_string(size) + " bytes)");
  if (n_tensors < 0 ||
      uint64_t(n_tensors) > (r.left() - uint64_t(n_kv) * kMinKvBytes) /
                                kMinTensorInfoBytes)
    r.fail("tensor count " + std::to_string(n_tensors) +
           " does not fit the file (" + std::to_string(size) + " bytes)");

  file->kv_.reserve(size_t(n_kv));
  for (int64_t i = 0; i < n_kv; ++i) {
    std::string key = r.string({"the key of metadata entry", nullptr, i});
    if (key.empty())
      r.fail("metadata entry " + std::to_string(i) + " has an empty key");
    if (file->kv_index_.count(key))
      r.fail("duplicate key '" + key + "'");
    GgufValue value = read_value(r, key);
    file->kv_index_.emplace(key, file->kv_.size());
    file->kv_.emplace_back(std::move(key), std::move(value));
  }

  if (const GgufValue *a = file->find(kAlignmentKey)) {
    if (a->type != GgufValue::UINT32)
      r.fail(std::string(kAlignmentKey) + " must be a uint32, not " +
             value_type_name(a->type));
    if (a->u == 0 || (a->u & (a->u - 1)) != 0)
      r.fail(std::string(kAlignmentKey) + " = " + std::to_string(a->u) +
             " is not a power of two");
    file->alignment_ = a->u;
  }

  file->tensors_.reserve(size_t(n_tensors));
  for (int64_t i = 0; i < n_tensors; ++i) {
    GgufTensor t;
    t.name = r.string({"the name of tensor", nullptr, i});
    const std::string what_t = "tensor '" + t.name + "'";
    if (file->tensor_index_.count(t.name))
      r.fail("duplicate tensor name '" + t.name + "'");
    const uint32_t n_dims = r.read<uint32_t>({"the rank of tensor", &t.name});
    if (n_dims < 1 || n_dims > uint32_t(kMaxDims))
      r.fail(what_t + " has " + std::to_string(n_dims) +
             " dimensions (expected 1 to 4)");
    int64_t count = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      const int64_t n =
          int64_t(r.read<uint64_t>({"the shape of tensor", &t.name}));
      t.ne.push_back(n);
      if (n < 1)
        r.fail(what_t + " has dimension " + std::to_string(d) + " = " +
               std::to_string(n) + " (must be >= 1)");
      if (count > std::numeric_limits<int64_t>::max() / n)
        r.fail(what_t + " has too many elements");
      count *= n;
    }
    const uint32_t type = r.read<uint32_t>({"the type of tensor", &t.name});
    if (!is_known_gguf_type(type)) {
      const std::string name = ggml_type_name_of(type);
      r.fail(what_t + " has ggml type " + std::to_string(type) +
             (name.empty() ? "" : " (" + name + ")") +
             ", which lowbit does not read (" + gguf_known_types() + ")");
    }
    t.type = GgufType(type);
    t.offset = r.read<uint64_t>({"the data offset of tensor", &t.name});
    try {
      t.bytes = gguf_tensor_bytes(t.type, t.rows(), t.K());
    } catch (const Error &e) {
      r.fail(what_t + " " + shape_text(t.ne) + ": " + e.what());
    }
    if (t.offset % file->alignment_ != 0)
      r.fail(what_t + " has data offset " + std::to_string(t.offset) +
             ", not a multiple of the alignment " +
             std::to_string(file->alignment_));
    file->tensor_index_.emplace(t.name, file->tensors_.size());
    file->tensors_.push_back(std::move(t));
  }

  if (!file->tensors_.empty()) {
    const uint64_t data_start = align_up(r.pos(), file->alignment_);
    if (data_start > size)
      r.fail("truncated: the data section would start at byte " +
             std::to_string(data_start) + ", past the end (" +
             std::to_string(size) + " bytes)");
    const uint64_t data_size = size - data_start;
    for (GgufTensor &t : file->tensors_) {
      if (t.offset > data_size || t.bytes > data_size - t.offset)
        r.fail("tensor '" + t.name + "' (" + std::to_string(t.bytes) +
               " bytes at data offset " + std::to_string(t.offset) +
               ") extends past the end of the file (" +
               std::to_string(data_size) + " bytes of data)");
      t.data = bytes + data_start + t.offset;
    }
    std::vector<const GgufTensor *> order;
    for (const GgufTensor &t : file->tensors_)
      order.push_back(&t);
    std::sort(order.begin(), order.end(),
              [](const GgufTensor *a, const GgufTensor *b) {
                return a->offset < b->offset;
              });
    for (size_t i = 1; i < order.size(); ++i)
      if (order[i - 1]->offset + order[i - 1]->bytes > order[i]->offset)
        r.fail("tensors '" + order[i - 1]->name + "' and '" + order[i]->name +
               "' overlap");
  }
  return file;
}

std::unique_ptr<GgufFile> GgufFile::open(const std::string &path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw Error(path + ": cannot open: " + std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throw Error(path + ": cannot stat: " + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(path + ": not a regular file");
  }
  const size_t size = size_t(st.st_size);
  void *map = nullptr;
  if (size > 0) {
    map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      throw Error(path + ": cannot map: " + std::strerror(err));
    }
  }
  ::close(fd); // the mapping stays valid
  try {
    std::unique_ptr<GgufFile> file =
        parse(static_cast<const uint8_t *>(map), size, path);
    file->map_ = map;
    file->map_size_ = size;
    return file;
  } catch (...) {
    if (map)
      ::munmap(map, size);
    throw;
  }
}

GgufFile::~GgufFile() {
  if (map_)
    ::munmap(map_, map_size_);
}

const GgufValue *GgufFile::find(const std::string &key) const {
  auto it = kv_index_.find(key);
  return it == kv_index_.end() ? nullptr : &kv_[it->second].second;
}

const GgufTensor *GgufFile::find_tensor(const std::string &name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

const GgufTensor &GgufFile::tensor(const std::string &name) const {
  if (const GgufTensor *t = find_tensor(name))
    return *t;
  throw Error(what_ + ": no tensor '" + name + "'");
}

static const GgufValue &typed(const GgufFile &file, const std::string &key,
                              const GgufValue *v, bool ok, const char *kind) {
  if (!v)
    throw Error(file.path() + ": missing key '" + key + "'");
  if (!ok)
    throw Error(file.path() + ": key '" + key + "' is " +
                (v->type == GgufValue::ARRAY
                     ? std::string("an array of ") +
                           value_type_name(v->array_type)
                     : std::string("a ") + value_type_name(v->type)) +
                ", not " + kind);
  return *v;
}

std::string GgufFile::get_string(const std::string &key) const {
  const GgufValue *v = find(key);
  return typed(*this, key, v, v && v->type == GgufValue::STRING, "a string").s;
}

int64_t GgufFile::get_int(const std::string &key) const {
  const GgufValue *v = find(key);
  const GgufValue &value =
      typed(*this, key, v, v && is_integer(v->type), "an integer");
  if (value.type == GgufValue::UINT64 &&
      value.u > uint64_t(std::numeric_limits<int64_t>::max()))
    throw Error(what_ + ": key '" + key + "' = " + std::to_string(value.u) +
                " does not fit an int64");
  return value.i;
}

int64_t GgufFile::get_int(const std::string &key, int64_t fallback) const {
  return find(key) ? get_int(key) : fallback;
}

double GgufFile::get_float(const std::string &key) const {
  const GgufValue *v = find(key);
  return typed(*this, key, v,
               v && (v->type == GgufValue::FLOAT32 ||
                     v->type == GgufValue::FLOAT64),
               "a float")
      .f;
}

double GgufFile::get_float(const std::string &key, double fallback) const {
  return find(key) ? get_float(key) : fallback;
}

//===----------------------------------------------------------------------===//
// Writer
//===----------------------------------------------------------------------===//

namespace {

void put_bytes(std::vector<uint8_t> &out, const void *p, size_t n) {
  const uint8_t *b = static_cast<const uint8_t *>(p);
  out.insert(out.end(), b, b + n);
}

template <typename T> void put(std::vector<uint8_t> &out, T v) {
  uint8_t b[sizeof(T)];
  store_le(b, v);
  put_bytes(out, b, sizeof(T));
}

void put_string(std::vector<uint8_t> &out, const std::string &s) {
  put(out, uint64_t(s.size()));
  put_bytes(out, s.data(), s.size());
}

// An integer value as the writer stores it: `u` for UINT64, else `i` (or `u`
// when only that is set, as GgufValue allows for unsigned types), checked
// against the type's range.
template <typename T>
T integer_of(const GgufValue &v, const std::string &key) {
  int64_t x = v.i;
  const bool is_unsigned = !std::numeric_limits<T>::is_signed;
  if (is_unsigned && x == 0 && v.u != 0)
    x = int64_t(v.u);
  if (x < int64_t(std::numeric_limits<T>::min()) ||
      (sizeof(T) < 8 && x > int64_t(std::numeric_limits<T>::max())))
    throw Error("GGUF key '" + key + "': " + std::to_string(x) +
                " does not fit " + value_type_name(v.type));
  return T(x);
}

void put_scalar(std::vector<uint8_t> &out, const GgufValue &v,
                GgufValue::Type type, const std::string &key) {
  if (v.type != type)
    throw Error("GGUF key '" + key + "': an element of type " +
                value_type_name(v.type) + " in an array of " +
                value_type_name(type));
  switch (type) {
  case GgufValue::UINT8:
    put(out, integer_of<uint8_t>(v, key));
    break;
  case GgufValue::INT8:
    put(out, uint8_t(integer_of<int8_t>(v, key)));
    break;
  case GgufValue::UINT16:
    put(out, integer_of<uint16_t>(v, key));
    break;
  case GgufValue::INT16:
    put(out, uint16_t(integer_of<int16_t>(v, key)));
    break;
  case GgufValue::UINT32:
    put(out, integer_of<uint32_t>(v, key));
    break;
  case GgufValue::INT32:
    put(out, uint32_t(integer_of<int32_t>(v, key)));
    break;
  case GgufValue::UINT64:
    put(out, v.u != 0 || v.i < 0 ? v.u : uint64_t(v.i));
    break;
  case GgufValue::INT64:
    put(out, uint64_t(v.i));
    break;
  case GgufValue::BOOL:
    put(out, uint8_t(v.i != 0));
    break;
  case GgufValue::FLOAT32: {
    float f = float(v.f);
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof(bits));
    put(out, bits);
    break;
  }
  case GgufValue::FLOAT64: {
    uint64_t bits;
    std::memcpy(&bits, &v.f, sizeof(bits));
    put(out, bits);
    break;
  }
  case GgufValue::STRING:
    put_string(out, v.s);
    break;
  case GgufValue::ARRAY:
    throw Error("GGUF key '" + key + "': arrays of arrays are not supported");
  }
}

void put_value(std::vector<uint8_t> &out, const std::string &key,
               const GgufValue &v) {
  if (!is_known_value_type(v.type))
    throw Error("GGUF key '" + key + "': unknown value type " +
                std::to_string(uint32_t(v.type)));
  put(out, uint32_t(v.type));
  if (v.type != GgufValue::ARRAY) {
    put_scalar(out, v, v.type, key);
    return;
  }
  if (!is_known_value_type(v.array_type) || v.array_type == GgufValue::ARRAY)
    throw Error("GGUF key '" + key + "': arrays of " +
                value_type_name(v.array_type) + " are not supported");
  put(out, uint32_t(v.array_type));
  put(out, uint64_t(v.array.size()));
  for (const GgufValue &e : v.array)
    put_scalar(out, e, v.array_type, key);
}

GgufValue scalar(GgufValue::Type type) {
  GgufValue v;
  v.type = type;
  return v;
}

struct FileCloser {
  void operator()(std::FILE *f) const { std::fclose(f); }
};

} // namespace

void GgufWriter::add(const std::string &key, GgufValue value) {
  if (key.empty())
    throw Error("GGUF metadata keys must not be empty");
  for (const auto &kv : kv_)
    if (kv.first == key)
      throw Error("duplicate GGUF key '" + key + "'");
  kv_.emplace_back(key, std::move(value));
}

void GgufWriter::add_string(const std::string &key, const std::string &value) {
  GgufValue v = scalar(GgufValue::STRING);
  v.s = value;
  add(key, std::move(v));
}

void GgufWriter::add_uint32(const std::string &key, uint32_t value) {
  GgufValue v = scalar(GgufValue::UINT32);
  v.i = value;
  v.u = value;
  add(key, std::move(v));
}

void GgufWriter::add_int32(const std::string &key, int32_t value) {
  GgufValue v = scalar(GgufValue::INT32);
  v.i = value;
  add(key, std::move(v));
}

void GgufWriter::add_float32(const std::string &key, float value) {
  GgufValue v = scalar(GgufValue::FLOAT32);
  v.f = value;
  add(key, std::move(v));
}

void GgufWriter::add_bool(const std::string &key, bool value) {
  GgufValue v = scalar(GgufValue::BOOL);
  v.i = value;
  add(key, std::move(v));
}

void GgufWriter::add_string_array(const std::string &key,
                                  const std::vector<std::string> &values) {
  GgufValue v = scalar(GgufValue::ARRAY);
  v.array_type = GgufValue::STRING;
  for (const std::string &s : values) {
    v.array.push_back(scalar(GgufValue::STRING));
    v.array.back().s = s;
  }
  add(key, std::move(v));
}

void GgufWriter::add_float32_array(const std::string &key,
                                   const std::vector<float> &values) {
  GgufValue v = scalar(GgufValue::ARRAY);
  v.array_type = GgufValue::FLOAT32;
  for (float f : values) {
    v.array.push_back(scalar(GgufValue::FLOAT32));
    v.array.back().f = f;
  }
  add(key, std::move(v));
}

void GgufWriter::add_int32_array(const std::string &key,
                                 const std::vector<int32_t> &values) {
  GgufValue v = scalar(GgufValue::ARRAY);
  v.array_type = GgufValue::INT32;
  for (int32_t x : values) {
    v.array.push_back(scalar(GgufValue::INT32));
    v.array.back().i = x;
  }
  add(key, std::move(v));
}

void GgufWriter::add_tensor(const std::string &name, GgufType type,
                            const std::vector<int64_t> &ne,
                            std::vector<uint8_t> bytes) {
  for (const Tensor &t : tensors_)
    if (t.name == name)
      throw Error("duplicate GGUF tensor name '" + name + "'");
  if (!is_known_gguf_type(uint32_t(type)))
    throw Error("GGUF tensor '" + name + "': unknown type " +
                std::to_string(uint32_t(type)));
  if (ne.empty() || ne.size() > size_t(kMaxDims))
    throw Error("GGUF tensor '" + name + "' has " + std::to_string(ne.size()) +
                " dimensions (expected 1 to 4)");
  GgufTensor info;
  info.ne = ne;
  for (int64_t n : ne)
    if (n < 1)
      throw Error("GGUF tensor '" + name + "' " + shape_text(ne) +
                  ": every dimension must be >= 1");
  uint64_t expected;
  try {
    expected = gguf_tensor_bytes(type, info.rows(), info.K());
  } catch (const Error &e) {
    throw Error("GGUF tensor '" + name + "' " + shape_text(ne) + ": " +
                e.what());
  }
  if (bytes.size() != expected)
    throw Error("GGUF tensor '" + name + "' " + shape_text(ne) + " of type " +
                gguf_type_name(type) + " needs " + std::to_string(expected) +
                " bytes, got " + std::to_string(bytes.size()));
  tensors_.push_back(Tensor{name, type, ne, std::move(bytes)});
}

void GgufWriter::write(const std::string &path) const {
  uint64_t alignment = kDefaultAlignment;
  for (const auto &kv : kv_) {
    if (kv.first != kAlignmentKey)
      continue;
    const GgufValue &a = kv.second;
    const uint64_t value = a.u ? a.u : uint64_t(a.i);
    if (a.type != GgufValue::UINT32 || value == 0 || value > 0xFFFFFFFFu ||
        (value & (value - 1)) != 0)
      throw Error(path + ": " + kAlignmentKey +
                  " must be a uint32 power of two");
    alignment = value;
  }

  std::vector<uint8_t> head;
  put_bytes(head, kMagic, 4);
  put(head, kWriteVersion);
  put(head, uint64_t(tensors_.size()));
  put(head, uint64_t(kv_.size()));
  for (const auto &kv : kv_) {
    put_string(head, kv.first);
    try {
      put_value(head, kv.first, kv.second);
    } catch (const Error &e) {
      throw Error(path + ": " + e.what());
    }
  }
  uint64_t offset = 0;
  for (const Tensor &t : tensors_) {
    put_string(head, t.name);
    put(head, uint32_t(t.ne.size()));
    for (int64_t n : t.ne)
      put(head, uint64_t(n));
    put(head, uint32_t(t.type));
    put(head, offset);
    offset = align_up(offset + t.bytes.size(), alignment);
  }
  if (!tensors_.empty())
    head.resize(size_t(align_up(head.size(), alignment)), 0);

  std::unique_ptr<std::FILE, FileCloser> f(std::fopen(path.c_str(), "wb"));
  auto fail = [&]() {
    throw Error(path + ": cannot write: " + std::strerror(errno));
  };
  if (!f)
    fail();
  if (std::fwrite(head.data(), 1, head.size(), f.get()) != head.size())
    fail();
  const std::vector<uint8_t> zeros(size_t(alignment), 0);
  for (const Tensor &t : tensors_) {
    if (!t.bytes.empty() &&
        std::fwrite(t.bytes.data(), 1, t.bytes.size(), f.get()) !=
            t.bytes.size())
      fail();
    const size_t pad =
        size_t(align_up(t.bytes.size(), alignment) - t.bytes.size());
    if (pad && std::fwrite(zeros.data(), 1, pad, f.get()) != pad)
      fail();
  }
  if (std::fclose(f.release()) != 0)
    fail();
}

} // namespace lowbit
