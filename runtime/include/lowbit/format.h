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

enum class Encoding { Ternary, Binary, Unsigned, GgufQ4_0 };

enum class FormatKind {
  I2S,   // ternary, 2-bit codes, per-tensor scale
  TL1,   // ternary, 2 weights -> 4-bit index
  TL2,   // ternary, 3 weights -> sign bit + 4-bit index, K tail via TL1
  Group, // w{1,2,3,4}g{G}: binary (1 bit) or unsigned with zero point
  Q4_0,  // GGUF Q4_0, byte-identical to ggml
};

struct Format {
  FormatKind kind = FormatKind::I2S;
  int bits = 2;  // bits of one weight code: 2 for ternary, 1..4 group, 4 q4_0
  int group = 0; // group size along K: G for wbgG, 32 for q4_0, 0 per-tensor

  /// Parses "i2s", "tl1", "tl2", "w1g128", "w2g64", "w3g32", "w4g128",
  /// "q4_0". Throws Error naming the accepted formats on anything else.
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

/// "i2s, tl1, tl2, w<b>g<G> with b in 1..4 and G a multiple of 32, q4_0"
/// (Format::parse quotes it in its error message).
const char *format_names_help();

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
/// unsigned 0..2^b-1 (before subtracting the zero point), q4_0 0..15.
void unpack_row(const PackedWeights &W, int64_t m, int8_t *q);

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
