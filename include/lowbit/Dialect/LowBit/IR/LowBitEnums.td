//===- LowBitEnums.td - lowbit enums -----------------------*- tablegen -*-===//
//
// C++ enums carried as parameters of the lowbit attributes. They print as
// bare keywords (`ternary`, `per_group`, `tl2`, ...).
//
//===----------------------------------------------------------------------===//

#ifndef LOWBIT_DIALECT_LOWBIT_IR_LOWBITENUMS_TD
#define LOWBIT_DIALECT_LOWBIT_IR_LOWBITENUMS_TD

include "mlir/IR/EnumAttr.td"

def LowBit_Encoding : I32Enum<"Encoding",
    "weight encoding", [
  I32EnumCase<"Ternary", 0, "ternary">,
  I32EnumCase<"Binary", 1, "binary">,
  I32EnumCase<"Unsigned", 2, "unsigned">,
  I32EnumCase<"GgufQ4_0", 3, "gguf_q4_0">
]> {
  let cppNamespace = "::mlir::lowbit";
}

def LowBit_ScaleGranularity : I32Enum<"ScaleGranularity",
    "scale granularity", [
  I32EnumCase<"PerTensor", 0, "per_tensor">,
  I32EnumCase<"PerGroup", 1, "per_group">,
  I32EnumCase<"PerBlock", 2, "per_block">
]> {
  let cppNamespace = "::mlir::lowbit";
}

def LowBit_LayoutKind : I32Enum<"LayoutKind",
    "layout kind", [
  I32EnumCase<"Canonical", 0, "canonical">,
  I32EnumCase<"I2S", 1, "i2s">,
  I32EnumCase<"TL1", 2, "tl1">,
  I32EnumCase<"TL2", 3, "tl2">,
  I32EnumCase<"Gguf", 4, "gguf">,
  I32EnumCase<"VNNI4", 5, "vnni4">,
  I32EnumCase<"BitPlanes", 6, "bitplanes">
]> {
  let cppNamespace = "::mlir::lowbit";
}

#endif // LOWBIT_DIALECT_LOWBIT_IR_LOWBITENUMS_TD
