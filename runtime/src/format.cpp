//===- format.cpp - format names, shape rules and layout sizes ------------===//

#include "lowbit/format.h"
#include "lowbit/error.h"
#include "lowbit/reference.h"

#include "bitstream.h"
#include "layout.h"

#include <climits>

namespace lowbit {

using namespace detail;

const char *format_names_help() {
  return "i2s, tl1, tl2, w<b>g<G> with b in 1..4 and G a multiple of 32, "
         "q4_0, q4_1, q5_0, q5_1, q8_0, q2_k, q3_k, q4_k, q5_k, q6_k, iq4_nl";
}

// Parses a positive decimal without sign or leading zero that fits in int.
static bool parse_positive_int(std::string_view digits, int &value) {
  if (digits.empty() || digits[0] == '0')
    return false;
  long long v = 0;
  for (char c : digits) {
    if (c < '0' || c > '9')
      return false;
    v = v * 10 + (c - '0');
    if (v > INT_MAX)
      return false;
  }
  value = int(v);
  return true;
}

Format Format::parse(std::string_view name) {
  if (name == "i2s")
    return {FormatKind::I2S, 2, 0};
  if (name == "tl1")
    return {FormatKind::TL1, 2, 0};
  if (name == "tl2")
    return {FormatKind::TL2, 2, 0};
  int count = 0;
  const GgmlBlockType *types = ggml_block_types(&count);
  for (int i = 0; i < count; ++i)
    if (name == types[i].name)
      return {types[i].kind, types[i].code_bits, types[i].scale_block};
  int group = 0;
  if (name.size() >= 4 && name[0] == 'w' && name[1] >= '1' && name[1] <= '4' &&
      name[2] == 'g' && parse_positive_int(name.substr(3), group) &&
      group % 32 == 0)
    return {FormatKind::Group, name[1] - '0', group};
  throw Error("unknown format '" + std::string(name) + "' (expected " +
              format_names_help() + ")");
}

std::string Format::name() const {
  switch (kind) {
  case FormatKind::I2S:
    return "i2s";
  case FormatKind::TL1:
    return "tl1";
  case FormatKind::TL2:
    return "tl2";
  case FormatKind::Group:
    return "w" + std::to_string(bits) + "g" + std::to_string(group);
  default:
    break;
  }
  const GgmlBlockType *type = ggml_block_type(kind);
  return type ? type->name : "?";
}

Encoding Format::encoding() const {
  switch (kind) {
  case FormatKind::I2S:
  case FormatKind::TL1:
  case FormatKind::TL2:
    return Encoding::Ternary;
  case FormatKind::Group:
    return bits == 1 ? Encoding::Binary : Encoding::Unsigned;
  case FormatKind::Q4_0:
    return Encoding::GgufQ4_0;
  default:
    return Encoding::GgmlBlock;
  }
}

bool Format::is_ternary() const { return encoding() == Encoding::Ternary; }

double Format::bits_per_weight() const {
  switch (encoding()) {
  case Encoding::Ternary:
    // tl2 stores 5 bits (sign + 4-bit index) per 3 weights.
    return kind == FormatKind::TL2 ? 5.0 / 3.0 : 2.0;
  case Encoding::Binary:
    return bits + 16.0 / group; // fp16 scale per group
  case Encoding::Unsigned:
    return bits + 32.0 / group; // fp16 scale and fp16 zero point per group
  case Encoding::GgufQ4_0:
  case Encoding::GgmlBlock: {
    const GgmlBlockType *type = ggml_block_type(kind);
    return type ? 8.0 * type->block_bytes / type->block : 0.0;
  }
  }
  return 0.0;
}

// Whether the fields are those Format::parse produces; a hand-built Format
// such as {Group, 5, 0} is rejected before its group is divided by.
static bool fields_consistent(const Format &f) {
  switch (f.kind) {
  case FormatKind::I2S:
  case FormatKind::TL1:
  case FormatKind::TL2:
    return f.bits == 2 && f.group == 0;
  case FormatKind::Group:
    return f.bits >= 1 && f.bits <= 4 && f.group > 0 && f.group % 32 == 0;
  default: {
    const GgmlBlockType *type = ggml_block_type(f.kind);
    return type && f.bits == type->code_bits && f.group == type->scale_block;
  }
  }
}

std::string Format::shape_error(int64_t M, int64_t K) const {
  if (!fields_consistent(*this))
    return "invalid format fields (kind " + std::to_string(int(kind)) +
           ", bits " + std::to_string(bits) + ", group " +
           std::to_string(group) + ")";
  if (M < 1)
    return "M must be >= 1, got M = " + std::to_string(M);
  if (K < 1)
    return "K must be >= 1, got K = " + std::to_string(K);
  if (M > kMaxWeights / K)
    return "M x K = " + std::to_string(M) + " x " + std::to_string(K) +
           " is too large (at most 2^40 weights)";
  std::string prefix = name() + " needs ";
  if (is_ternary() && K > max_reduction_length())
    return prefix + "K <= " + std::to_string(max_reduction_length()) +
           " (int32 accumulation limit), got K = " + std::to_string(K);
  if ((kind == FormatKind::TL1 || kind == FormatKind::TL2) && K % 2 != 0)
    return prefix + "K even, got K = " + std::to_string(K);
  const GgmlBlockType *type = ggml_block_type(kind);
  const int64_t multiple = type ? type->block : group;
  if (multiple > 0 && K % multiple != 0)
    return prefix + "K % " + std::to_string(multiple) +
           " == 0, got K = " + std::to_string(K);
  return "";
}

void Format::check_shape(int64_t M, int64_t K) const {
  std::string error = shape_error(M, K);
  if (!error.empty())
    throw Error(error);
}

int64_t PackedWeights::row_bytes() const { return code_row_bytes(format, K); }

namespace detail {

Tl2Split tl2_split(int64_t K) {
  int64_t k3 = K / 3 * 3;
  // The tl1 tail must be even; K is even, so move one triple into it.
  if ((K - k3) % 2 != 0)
    k3 -= 3;
  return {k3 / 3, K - k3};
}

int64_t code_row_bytes(const Format &format, int64_t K) {
  switch (format.kind) {
  case FormatKind::I2S:
    return stream_bytes(K, 2);
  case FormatKind::TL1:
    return stream_bytes(K / 2, 4);
  case FormatKind::TL2: {
    Tl2Split split = tl2_split(K);
    return stream_bytes(split.triples, 4) + stream_bytes(split.triples, 1) +
           stream_bytes(split.tail / 2, 4);
  }
  case FormatKind::Group:
    return stream_bytes(K, format.bits);
  default: {
    const GgmlBlockType *type = ggml_block_type(format.kind);
    return type ? K / type->block * type->block_bytes : 0;
  }
  }
}

int64_t scales_per_row(const Format &format, int64_t K) {
  return format.kind == FormatKind::Group ? K / format.group : 0;
}

bool has_zeros(const Format &format) {
  return format.encoding() == Encoding::Unsigned;
}

static void check_size(const PackedWeights &W, const char *array, size_t actual,
                       int64_t expected) {
  if (actual != uint64_t(expected))
    throw Error(W.format.name() + " weights [" + std::to_string(W.M) + ", " +
                std::to_string(W.K) + "]: " + array + " has " +
                std::to_string(actual) + " entries, expected " +
                std::to_string(expected));
}

void check_layout(const PackedWeights &W) {
  W.format.check_shape(W.M, W.K);
  check_size(W, "codes", W.codes.size(), W.M * W.row_bytes());
  int64_t scales = W.M * scales_per_row(W.format, W.K);
  check_size(W, "scales", W.scales.size(), scales);
  check_size(W, "zeros", W.zeros.size(), has_zeros(W.format) ? scales : 0);
}

} // namespace detail
} // namespace lowbit
