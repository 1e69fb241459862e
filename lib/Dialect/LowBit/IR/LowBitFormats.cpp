//===- LowBitFormats.cpp - runtime format names of lowbit weights ---------===//

#include "lowbit/Dialect/LowBit/IR/LowBitFormats.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::lowbit;

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
  }
  llvm_unreachable("unknown encoding");
}
