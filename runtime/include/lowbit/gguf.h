//===- gguf.h - GGUF v3 files: reader, writer, tensor import ----*- C++ -*-===//
//
// The model files of llama.cpp (ggml's GGUF, version 3; versions 2 and 3
// share the layout read here): a header, metadata key/values, tensor infos,
// then the tensor data at an aligned offset. GgufFile maps a file read-only
// and validates all of it up front (every tensor inside the file, sizes
// consistent with its type and shape), throwing Error with one line naming
// the file and the problem; nothing after open() reads outside the mapping.
//
// Tensor types are ggml's (ggml.h's enum ggml_type, plus bitnet.cpp's I2_S).
// import_tensor turns a 2-D tensor into lowbit's canonical PackedWeights of
// a requested format, exactly where the values allow it and with an Error
// where they do not (runtime/README.md, "GGUF import").
//
//===----------------------------------------------------------------------===//
#ifndef LOWBIT_GGUF_H
#define LOWBIT_GGUF_H

#include "lowbit/format.h"
#include "lowbit/upconvert.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace lowbit {

/// ggml tensor types lowbit reads (the numbers are ggml's on-disk ids, ggml.h's
/// enum ggml_type). The block types Q4_0 ... IQ4_NL are format.h's
/// GgmlBlockType table (ggml_type = the id here).
enum class GgufType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  IQ4_NL = 20,
  BF16 = 30,
  TQ1_0 = 34,
  TQ2_0 = 35,
  I2_S = 36, // bitnet.cpp's ggml fork
};

/// "f32", "f16", "bf16", "tq1_0", "tq2_0", "i2_s" and the block types' names
/// ("q4_0", "q4_k", ...: lowbit's format names).
const char *gguf_type_name(GgufType type);
/// ggml's name of any ggml type id, also of those lowbit does not read
/// ("iq4_xs" for 23), or "" for an id ggml does not define (for errors).
const char *ggml_type_name_of(uint32_t id);
/// "f32 0, f16 1, bf16 30, ..., iq4_nl 20": every type lowbit reads with its
/// id (for errors).
std::string gguf_known_types();
/// The inverse of gguf_type_name (case-insensitive); throws Error listing the
/// accepted names.
GgufType parse_gguf_type(std::string_view name);
/// Whether `id` is a type of the enum above.
bool is_known_gguf_type(uint32_t id);
/// Bytes of `count` consecutive values (count a multiple of the block size,
/// else Error). I2_S: the packed codes and its trailing scale (see
/// runtime/README.md).
uint64_t gguf_tensor_bytes(GgufType type, int64_t rows, int64_t K);
/// One TQ1_0 (54 bytes) or TQ2_0 (66 bytes) block as ggml-common.h lays out
/// block_tq1_0 / block_tq2_0: the 256 trits t (0, 1, 2 for -1, 0, +1) and
/// the fp16 scale d (its bits). Error for another type.
void encode_tq_block(GgufType type, const uint8_t *t, uint16_t d,
                     uint8_t *out);
/// Values per block along the row (32 for q4_0/q8_0/..., 256 for the
/// K-quants and tq1_0/tq2_0, 1 for floats, the I2_S row multiple for i2_s).
int64_t gguf_block_size(GgufType type);

/// One metadata value. Arrays hold their elements in `array` (element type
/// `array_type`); scalars in the field of their type.
struct GgufValue {
  enum Type : uint32_t {
    UINT8 = 0, INT8 = 1, UINT16 = 2, INT16 = 3, UINT32 = 4, INT32 = 5,
    FLOAT32 = 6, BOOL = 7, STRING = 8, ARRAY = 9, UINT64 = 10, INT64 = 11,
    FLOAT64 = 12,
  };
  Type type = UINT32;
  Type array_type = UINT32; // ARRAY only
  int64_t i = 0;            // every integer type and BOOL
  uint64_t u = 0;           // UINT64 (also set for the other unsigned types)
  double f = 0.0;           // FLOAT32, FLOAT64
  std::string s;            // STRING
  std::vector<GgufValue> array;
};

/// A tensor of a GgufFile: ne[0] is the row length (K of a weight matrix),
/// ne[1] the number of rows (M), as ggml orders dimensions.
struct GgufTensor {
  std::string name;
  GgufType type = GgufType::F32;
  std::vector<int64_t> ne;
  uint64_t offset = 0;          // from the start of the data section
  const uint8_t *data = nullptr; // inside the mapping
  uint64_t bytes = 0;

  int64_t K() const { return ne.empty() ? 0 : ne[0]; }
  /// Product of ne[1..]: the rows of a matrix, 1 for a vector.
  int64_t rows() const;
};

/// A validated, read-only mapped GGUF file.
class GgufFile {
public:
  /// Maps and validates `path`; throws Error ("<path>: <problem>") for a
  /// missing file, a wrong magic or version, a truncated header or value,
  /// an unknown value or tensor type, a duplicate name, a tensor past the
  /// end of the file or overlapping another, a bad alignment.
  static std::unique_ptr<GgufFile> open(const std::string &path);
  /// The same checks over an in-memory image (the fuzzer's entry); `what`
  /// names it in errors. The bytes must outlive the GgufFile.
  static std::unique_ptr<GgufFile> parse(const uint8_t *bytes, size_t size,
                                         const std::string &what);
  ~GgufFile();
  GgufFile(const GgufFile &) = delete;
  GgufFile &operator=(const GgufFile &) = delete;

  const std::string &path() const { return what_; }
  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  const std::vector<std::pair<std::string, GgufValue>> &metadata() const {
    return kv_;
  }
  const std::vector<GgufTensor> &tensors() const { return tensors_; }

  /// nullptr when absent.
  const GgufValue *find(const std::string &key) const;
  const GgufTensor *find_tensor(const std::string &name) const;
  /// Typed getters: throw Error naming the key when it is absent or of
  /// another kind (any integer type converts to int64; FLOAT32/64 to double).
  std::string get_string(const std::string &key) const;
  int64_t get_int(const std::string &key) const;
  int64_t get_int(const std::string &key, int64_t fallback) const;
  double get_float(const std::string &key) const;
  double get_float(const std::string &key, double fallback) const;
  /// Throws Error naming the tensor when it is absent.
  const GgufTensor &tensor(const std::string &name) const;

private:
  GgufFile() = default;
  std::string what_;
  void *map_ = nullptr;
  size_t map_size_ = 0;
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  std::vector<std::pair<std::string, GgufValue>> kv_;
  std::vector<GgufTensor> tensors_;
  std::map<std::string, size_t> kv_index_, tensor_index_;
};

/// Writes a GGUF v3 file: metadata in the order added, then tensor infos and
/// data (aligned to `general.alignment`, default 32) in the order added.
/// add() throws Error on an empty or duplicate key; write() on values the
/// reader would refuse (arrays of arrays, an integer outside its type, a
/// general.alignment that is not a uint32 power of two). An integer value is
/// written from `i` (for unsigned types below 64 bits from `u` when `i` is
/// 0), a UINT64 from `u` (from a non-negative `i` when `u` is 0).
class GgufWriter {
public:
  void add(const std::string &key, GgufValue value);
  void add_string(const std::string &key, const std::string &value);
  void add_uint32(const std::string &key, uint32_t value);
  void add_int32(const std::string &key, int32_t value);
  void add_float32(const std::string &key, float value);
  void add_bool(const std::string &key, bool value);
  void add_string_array(const std::string &key,
                        const std::vector<std::string> &values);
  void add_float32_array(const std::string &key,
                         const std::vector<float> &values);
  void add_int32_array(const std::string &key,
                       const std::vector<int32_t> &values);
  /// `bytes` must hold gguf_tensor_bytes(type, rows, ne[0]) bytes.
  void add_tensor(const std::string &name, GgufType type,
                  const std::vector<int64_t> &ne, std::vector<uint8_t> bytes);
  /// Throws Error naming the path when it cannot be written.
  void write(const std::string &path) const;

private:
  std::vector<std::pair<std::string, GgufValue>> kv_;
  struct Tensor {
    std::string name;
    GgufType type;
    std::vector<int64_t> ne;
    std::vector<uint8_t> bytes;
  };
  std::vector<Tensor> tensors_;
};

/// Encodes `rows` x `K` fp32 values (row-major) in `type` as ggml's reference
/// quantizers do (the block types: byte-identical to quantize_row_<type>_ref
/// and quantize_iq4_nl, the same quantizer as quantize(); tq1_0, tq2_0:
/// ggml's quantize_row_tq*_0_ref; i2_s: bitnet.cpp's layout with one
/// per-tensor scale). Throws Error when K is not a multiple of the block.
std::vector<uint8_t> gguf_encode(GgufType type, const float *values,
                                 int64_t rows, int64_t K);

/// Decodes row `row` of a tensor to K floats (every type above).
void gguf_decode_row(const GgufTensor &tensor, int64_t row, float *out);

/// What import_tensor makes of `tensor` for `format` (for `lowbit gguf
/// info`): "" when it imports, else the one-line reason it cannot. It runs
/// the import, so it costs as much.
std::string gguf_import_error(const GgufTensor &tensor, const Format &format);

/// The lowbit format a tensor imports into by default: i2s for tq1_0, tq2_0,
/// i2_s and for float tensors whose values are ternary; a block type's own
/// format (q4_0, q8_0, q4_k, ...); "" for any other (a float matrix an
/// engine keeps in float).
std::string gguf_default_format(const GgufTensor &tensor);

/// The canonical packed weights of a 2-D tensor (M = rows(), K = K()) in
/// `format`:
///  - tq1_0, tq2_0, i2_s -> i2s, tl1, tl2: exact (q copied, s_w = the
///    tensor's one scale); Error when the blocks carry different scales.
///  - a block type (q4_0 ... iq4_nl) -> its own format: the bytes as they
///    are (lossless), then validate().
///  - f32, f16, bf16 -> any format: quantize(); a tensor whose values are
///    {-a, 0, a} imports into a ternary format with s_w = a exactly.
///  - anything else: Error naming the tensor, its type and the format.
PackedWeights import_tensor(const GgufTensor &tensor, const Format &format);

/// The same from raw bytes of `type` holding M rows of K values (what the C
/// API's lowbit_pack_gguf receives); `what` names the tensor in errors.
PackedWeights import_weights(GgufType type, const uint8_t *data, size_t bytes,
                             int64_t M, int64_t K, const Format &format,
                             const std::string &what);

/// Direct import (no canonical copy): whether a tensor of `type` packs
/// into `format`'s upconvert layout (lut_abi.h's for tl1, tl2) straight
/// from its bytes, a row range at a time (gguf_pack_rows): tq1_0, tq2_0
/// and i2_s into i2s, tl1 and tl2, a ggml block type into its own format.
/// The bytes written are pack_upconvert's (pack_lut's, in U's lane order)
/// of import_tensor's weights.
bool gguf_packs_directly(GgufType type, const Format &format);

/// What gguf_pack_rows saw of a range of rows, for gguf_finish_rows.
struct GgufRowsCheck {
  bool bad = false;   // a code 3 (ternary) or a block scale not finite
  bool any = false;   // a non-zero block (tq1_0, tq2_0) or value (i2_s)
  bool mixed = false; // a non-zero block whose fp16 d is not `first`
  uint16_t first = 0; // the fp16 d of the range's first non-zero block
};

/// Rows [m_begin, m_end) of `tensor` (m_begin a multiple of 16: tiles are
/// written whole) from tensor.data into U, which shape_upconvert(format,
/// tensor.rows(), tensor.K(), ...) made for a format gguf_packs_directly
/// accepts. Each value is checked as it moves (codes, block scales);
/// ranges may run on different threads. For a tq2_0 or tq1_0 tensor U may
/// instead be shape_ggml_rows(i2s, rows, K, ..., tensor.data, its block
/// bytes) (kernel_abi.h's GGML ROWS LAYOUT: the rows are the kernel's, any
/// m_begin): then the rows are only checked (tq1_0: the scales of its
/// blocks), which also faults their pages in. Throws import_tensor's Error when
/// the tensor's size or shape is wrong.
GgufRowsCheck gguf_pack_rows(const GgufTensor &tensor, UpconvertWeights &U,
                             int64_t m_begin, int64_t m_end);

/// After gguf_pack_rows covered every row: sets U.w_scale (the ternary
/// formats' one scale) from the ranges' checks, or throws import_tensor's
/// Error for the tensor (a code 3, scales that differ or are not finite).
void gguf_finish_rows(const GgufTensor &tensor, UpconvertWeights &U,
                      const std::vector<GgufRowsCheck> &checks);

/// If every value of W [count] is in {-a, 0, a} for one a > 0, returns a;
/// else 0. (A matrix of exact zeros returns 0.)
float exact_ternary_scale(const float *W, int64_t count);

} // namespace lowbit

#endif // LOWBIT_GGUF_H
