//===- LowBitFormats.cpp - runtime format names of lowbit weights ---------===//

#include "lowbit/Dialect/LowBit/IR/LowBitFormats.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::lowbit;

namespace {
/// One of llama.cpp's block formats as the parameters of #lowbit.weight
/// (ggml-common.h's block structs, read by what their fields mean).
struct BlockFormat {
  const char *name;
  int64_t bits;
  Encoding encoding;
  int64_t group, codeOffset, superBlock, scaleBits;
  bool codebook;
};
} // namespace

static const BlockFormat kBlockFormats[] = {
    {"q8_0", 8, Encoding::Offset, 32, 128, 0, 0, false},
    {"q5_0", 5, Encoding::Offset, 32, 16, 0, 0, false},
    {"q4_1", 4, Encoding::Min, 32, 0, 0, 0, false},
    {"q5_1", 5, Encoding::Min, 32, 0, 0, 0, false},
    {"iq4_nl", 4, Encoding::Codebook, 32, 0, 0, 0, true},
    {"q2_k", 2, Encoding::Min, 16, 0, 256, 4, false},
    {"q3_k", 3, Encoding::Offset, 16, 4, 256, 6, false},
    {"q4_k", 4, Encoding::Min, 32, 0, 256, 6, false},
    {"q5_k", 5, Encoding::Min, 32, 0, 256, 6, false},
    {"q6_k", 6, Encoding::Offset, 16, 32, 256, 8, false},
};

/// The 16 values of IQ4_NL's non-linear codebook, in code order (ggml's
/// kvalues_iq4nl, a property of the format).
static const int8_t kIq4NlCodebook[16] = {-127, -104, -83, -65, -49, -35,
                                          -22,  -10,  1,   13,  25,  38,
                                          53,   69,   89,  113};

static WeightAttr getBlockWeight(MLIRContext *ctx, const BlockFormat &f) {
  DenseI8ArrayAttr codebook;
  if (f.codebook)
    codebook = DenseI8ArrayAttr::get(ctx, kIq4NlCodebook);
  return WeightAttr::get(ctx, f.bits, f.encoding, f.group,
                         ScaleGranularity::PerBlock, f.codeOffset,
                         f.superBlock, f.scaleBits, codebook);
}

std::optional<WeightFormat> mlir::lowbit::parseFormatName(MLIRContext *ctx,
                                                          StringRef name) {
  auto ternary = [&](LayoutKind kind) {
    return WeightFormat{WeightAttr::get(ctx, 2, Encoding::Ternary, 0,
                                        ScaleGranularity::PerTensor),
                        kind};
  };
  if (name == "i2s")
    return ternary(LayoutKind::I2S);
  if (name == "tl1")
    return ternary(LayoutKind::TL1);
  if (name == "tl2")
    return ternary(LayoutKind::TL2);
  if (name == "q4_0")
    return WeightFormat{WeightAttr::get(ctx, 4, Encoding::GgufQ4_0, 32,
                                        ScaleGranularity::PerBlock),
                        LayoutKind::Gguf};
  for (const BlockFormat &f : kBlockFormats)
    if (name == f.name)
      return WeightFormat{getBlockWeight(ctx, f), LayoutKind::Gguf};
  // w<b>g<G>: one digit b in 1..4, G without sign or leading zeros.
  if (name.size() < 4 || name[0] != 'w' || name[2] != 'g' || name[1] < '1' ||
      name[1] > '4')
    return std::nullopt;
  StringRef groupText = name.drop_front(3);
  int64_t group = 0;
  if (groupText.starts_with("0") ||
      !llvm::all_of(groupText, [](char c) { return llvm::isDigit(c); }) ||
      groupText.getAsInteger(10, group) || group <= 0 || group % 32 != 0 ||
      group > INT32_MAX)
    return std::nullopt;
  int64_t bits = name[1] - '0';
  Encoding encoding = bits == 1 ? Encoding::Binary : Encoding::Unsigned;
  return WeightFormat{
      WeightAttr::get(ctx, bits, encoding, group, ScaleGranularity::PerGroup),
      LayoutKind::Canonical};
}

std::string mlir::lowbit::getFormatName(WeightAttr weight, LayoutKind layout) {
  switch (weight.getEncoding()) {
  case Encoding::Ternary:
    if (layout == LayoutKind::TL1)
      return "tl1";
    if (layout == LayoutKind::TL2)
      return "tl2";
    return "i2s";
  case Encoding::GgufQ4_0:
    return "q4_0";
  case Encoding::Binary:
  case Encoding::Unsigned:
    return "w" + std::to_string(weight.getBits()) + "g" +
           std::to_string(weight.getGroup());
  case Encoding::Offset:
  case Encoding::Min:
  case Encoding::Codebook:
    for (const BlockFormat &f : kBlockFormats)
      if (getBlockWeight(weight.getContext(), f) == weight)
        return f.name;
    // A legal block description that no ggml type has.
    return "";
  }
  llvm_unreachable("unknown encoding");
}
