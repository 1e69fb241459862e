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
  I32EnumCase<"GgufQ4_0", 3, "gguf_q4_0">,
  I32EnumCase<"Offset", 4, "offset">,
  I32EnumCase<"Min", 5, "min">,
  I32EnumCase<"Codebook", 6, "codebook">
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

// The byte order of a 64-byte vector of the tl1/tl2 interleaved layout
// (lut_abi.h, LANE ORDER): byte 4r + j (rows) or 16j + r (lanes) holds row r,
// slot j.
def LowBit_LaneOrder : I32Enum<"LaneOrder",
    "lane order", [
  I32EnumCase<"Rows", 0, "rows">,
  I32EnumCase<"Lanes", 1, "lanes">
]> {
  let cppNamespace = "::mlir::lowbit";
}

#endif // LOWBIT_DIALECT_LOWBIT_IR_LOWBITENUMS_TD
