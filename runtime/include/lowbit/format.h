//===- format.h - weight formats and their exact semantics ------*- C++ -*-===//
//
// The weight formats of lowbit (see docs/design.md, "Formats and exact
// semantics", and runtime/README.md for the byte layouts). Everything here is
// the canonical, strategy-independent representation; kernel strategies repack
// from it into their own interleaved layouts.
//
//===----------------------------------------------------------------------===//
#ifndef LOWBIT_FORMAT_H
#define LOWBIT_FORMAT_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lowbit {

/// GgufQ4_0: q4_0, whose unpack_row codes are 0..15 with zero point 8 (the
/// kernels' w4 path); GgmlBlock: the other ggml block formats, read through
/// their GgmlBlockType and row_block_params.
enum class Encoding { Ternary, Binary, Unsigned, GgufQ4_0, GgmlBlock };

enum class FormatKind {
  I2S,   // ternary, 2-bit codes, per-tensor scale
  TL1,   // ternary, 2 weights -> 4-bit index
  TL2,   // ternary, 3 weights -> sign bit + 4-bit index, K tail via TL1
  Group, // w{1,2,3,4}g{G}: binary (1 bit) or unsigned with zero point
  // ggml's block types, byte-identical to ggml (GgmlBlockType below):
  Q4_0,
  Q8_0,
  Q4_1,
  Q5_0,
  Q5_1,
  Q2_K,
  Q3_K,
  Q4_K,
  Q5_K,
  Q6_K,
  IQ4_NL,
};

struct Format {
  FormatKind kind = FormatKind::I2S;
  int bits = 2;  // bits of one weight code: 2 for ternary, 1..4 group, the
                 // code bits of a ggml block type (q8_0 8, q6_k 6, ...)
  int group = 0; // group size along K: G for wbgG, the weights per scale of
                 // a ggml block type (32, or 16), 0 per-tensor

  /// Parses "i2s", "tl1", "tl2", "w1g128", "w2g64", "w3g32", "w4g128" and
  /// the ggml block types ("q4_0", "q8_0", "q4_k", ...; ggml_block_types()).
  /// Throws Error naming the accepted formats on anything else.
  static Format parse(std::string_view name);
  std::string name() const;
  Encoding encoding() const;
  bool is_ternary() const;
  /// Stored bits per weight including scales (i2s: 2, tl2: 5/3, w2g64: 2.5).
  double bits_per_weight() const;
  /// Returns "" if an M x K weight matrix is legal for this format, else a
  /// one-line reason (e.g. "w2g64 needs K % 64 == 0, got K = 100").
  std::string shape_error(int64_t M, int64_t K) const;
  /// Throws Error(shape_error(M, K)) when that is not empty.
  void check_shape(int64_t M, int64_t K) const;
};

/// "i2s, tl1, tl2, w<b>g<G> with b in 1..4 and G a multiple of 32, q4_0,
/// q8_0, ..." (Format::parse quotes it in its error message).
const char *format_names_help();

/// One ggml block type, in the spirit of ggml's type_traits table: the one
/// description of the block formats that sizes, shape rules, GGUF I/O,
/// validation, dequantization and the reference read (runtime/README.md,
/// "ggml block formats"). A row of K weights is K / block blocks of
/// block_bytes bytes, exactly as ggml stores them. Each scale block j of
/// scale_block weights dequantizes as
///   W[k] = s_j * c_k          (has_min false)
///   W[k] = s_j * c_k + o_j    (has_min true)
/// in float, with c_k = codebook ? codebook[q_k] : q_k - code_offset for the
/// stored code q_k of code_bits bits, and s_j, o_j computed as ggml's
/// dequantize_row_<type> computes them, so that W is bit-identical to it.
struct GgmlBlockType {
  FormatKind kind;
  const char *name;     // lowbit's format name, ggml's type name in lower case
  uint32_t ggml_type;   // ggml.h's enum ggml_type (the GGUF tensor type id)
  int block;            // weights per block: 32, or 256 (QK_K) for K-quants
  int block_bytes;      // sizeof(block_<type>)
  int code_bits;        // bits of one stored code q
  int scale_block;      // weights per scale s_j: 32, or 16
  bool has_min;         // an offset o_j per scale block (a min, or dmin * m_j)
  int sub_scale_bits;   // bits of the super-block's quantized scales (and
                        // mins) s_j = d * sc_j; 0: s_j is the block's fp16 d
  int code_offset;      // c = q - code_offset (no codebook)
  const int8_t *codebook; // iq4_nl's kvalues_iq4nl[16]; else null
  int d_offset;         // byte offset of the fp16 d in a block
  int min_offset;       // byte offset of the fp16 m / dmin, -1 without
};

/// The ggml block types, in ggml's type id order, and the count.
const GgmlBlockType *ggml_block_types(int *count);
/// The row of a format (null for i2s, tl1, tl2, w<b>g<G>).
const GgmlBlockType *ggml_block_type(FormatKind kind);
/// The row whose ggml_type is `id` (null when lowbit has no such format).
const GgmlBlockType *ggml_block_type_by_id(uint32_t id);

/// Weights in the canonical packed form of their format. See runtime/README.md
/// for the exact byte layout of `codes` per format.
struct PackedWeights {
  Format format;
  int64_t M = 0, K = 0;
  float tensor_scale = 0.0f;    // ternary formats: s_w
  std::vector<uint8_t> codes;   // M rows of row_bytes() bytes each
  std::vector<uint16_t> scales; // fp16 bits, [M][K/G], group formats only
  std::vector<uint16_t> zeros;  // fp16 bits, [M][K/G], w2..w4 only

  int64_t row_bytes() const;
};

/// Quantizes the M x K fp32 matrix W (row-major) and packs it canonically.
/// Throws Error on non-finite weights or an illegal shape.
PackedWeights quantize(const Format &format, const float *W, int64_t M,
                       int64_t K);

/// Integer weight codes of row m (K values): ternary -1/0/+1, binary -1/+1,
/// unsigned 0..2^b-1 (before subtracting the zero point), ggml block types
/// their stored code q (q4_0 0..15, q6_k 0..63, q8_0 its int8, iq4_nl the
/// codebook index 0..15).
void unpack_row(const PackedWeights &W, int64_t m, int8_t *q);

/// Row m of a ggml block format as the integers and floats of
/// GgmlBlockType's formula: c[0, K) the codes c_k (q8_0 -128..127, q4_0
/// -8..7, iq4_nl the codebook values), s[0, K / scale_block) the scales s_j
/// and o[0, K / scale_block) the offsets o_j (0 where the type has no min),
/// so that s_j * c_k (+ o_j) is bit-identical to ggml's dequantized value.
/// For the kernels' packers. Throws Error for other formats or a bad m.
void row_block_params(const PackedWeights &W, int64_t m, int8_t *c, float *s,
                      float *o);

/// Dequantized weights, M x K row-major.
void dequantize(const PackedWeights &W, float *out);

/// Checks the internal consistency of a PackedWeights (sizes, code ranges);
/// throws Error naming the first problem. Used by the packed-file loader.
void validate(const PackedWeights &W);

/// IEEE binary16 conversion, round-to-nearest-even (as F16C and ggml do).
uint16_t float_to_half(float f);
float half_to_float(uint16_t h);
/// bfloat16 (the top 16 bits of a float) conversion, round-to-nearest-even;
/// a NaN stays a quiet NaN with its sign. Widening is exact.
uint16_t float_to_bf16(float f);
float bf16_to_float(uint16_t h);

} // namespace lowbit

#endif // LOWBIT_FORMAT_H
