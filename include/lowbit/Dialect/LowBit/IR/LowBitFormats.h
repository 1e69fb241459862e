//===- LowBitFormats.h - runtime format names of lowbit weights -*- C++ -*-===//
//
// The runtime spells a weight format as one name (`i2s`, `w2g64`, `q4_0`,
// ...); the dialect spells it as a #lowbit.weight plus the kind of its
// canonical #lowbit.layout. These functions convert between the two.
//
//===----------------------------------------------------------------------===//

#ifndef LOWBIT_DIALECT_LOWBIT_IR_LOWBITFORMATS_H
#define LOWBIT_DIALECT_LOWBIT_IR_LOWBITFORMATS_H

#include "lowbit/Dialect/LowBit/IR/LowBitAttrs.h"

#include <string>

namespace mlir::lowbit {

/// A runtime weight format as dialect attributes: what the codes mean and
/// the layout the runtime stores them in before any strategy repacks them.
struct WeightFormat {
  WeightAttr weight;
  LayoutKind layout;
};

/// Parses a runtime format name (`i2s`, `tl1`, `tl2`, `w<b>g<G>` with b in
/// 1..4 and G a positive multiple of 32, `q4_0`). Returns std::nullopt for
/// anything else.
std::optional<WeightFormat> parseFormatName(MLIRContext *ctx, StringRef name);

/// The runtime format name of `weight` stored in a layout of kind `layout`
/// (the kind only matters for ternary weights: i2s, tl1 or tl2; a repacked
/// layout such as vnni4 keeps the name of its source format, i2s).
std::string getFormatName(WeightAttr weight, LayoutKind layout);

} // namespace mlir::lowbit

#endif // LOWBIT_DIALECT_LOWBIT_IR_LOWBITFORMATS_H
