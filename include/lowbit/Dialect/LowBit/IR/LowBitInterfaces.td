//===- LowBitInterfaces.td - lowbit attribute interfaces ---*- tablegen -*-===//
//
// The interface every strategy config attribute implements.
//
//===----------------------------------------------------------------------===//

#ifndef LOWBIT_DIALECT_LOWBIT_IR_LOWBITINTERFACES_TD
#define LOWBIT_DIALECT_LOWBIT_IR_LOWBITINTERFACES_TD

include "mlir/IR/OpBase.td"

def LowBit_StrategyConfigAttrInterface
    : AttrInterface<"StrategyConfigAttrInterface"> {
  let cppNamespace = "::mlir::lowbit";
  let description = [{
    A chosen kernel strategy and its tuned parameters, attached to
    `lowbit.mpgemm` as its `config` attribute. There is one attribute per
    strategy (`#lowbit.reference`, `#lowbit.upconvert<...>`,
    `#lowbit.lut_elementwise<...>`, `#lowbit.lut_bitserial<...>`).

    The attribute's own verifier checks what is true for every problem
    (positive tiles, alignment of a tile to the instruction). `verifyFor`
    checks what depends on the problem: whether the strategy supports the
    weight encoding and packed layout, and whether its tiles fit them. M and
    K are the static weight dimensions.
  }];
  // WeightAttr and LayoutAttr are passed by reference: this interface is
  // declared before them (the config attributes derive from its trait).
  let methods = [
    InterfaceMethod<[{
        Returns the strategy name as the `lowbit` CLI spells it
        (`reference`, `upconvert`, `lut-elementwise`, `lut-bitserial`).
      }],
      "::llvm::StringRef", "getStrategyName">,
    InterfaceMethod<[{
        Checks that this config can compute an M x K product with weights
        encoded as `weight` and packed as `layout`. Reports the first problem
        through `emitError` and fails.
      }],
      "::llvm::LogicalResult", "verifyFor",
      (ins "::llvm::function_ref<::mlir::InFlightDiagnostic()>":$emitError,
           "const ::mlir::lowbit::WeightAttr &":$weight,
           "const ::mlir::lowbit::LayoutAttr &":$layout,
           "int64_t":$m, "int64_t":$k)>,
    StaticInterfaceMethod<[{
        The tuner's search space of this strategy for `query` (weight,
        layout, shape, N class, the target's register facts): every point of
        the strategy's parameter grid, in grid order, that passes the
        attribute's own `verify` and `verifyFor` (invalid points are pruned
        by the very checks the dialect uses). Empty when the strategy does
        not apply to the query's weights or layout. Every element is a
        StrategyConfigAttrInterface (`getStrategySearchSpace` returns them
        as such).
      }],
      "::llvm::SmallVector<::mlir::Attribute>", "getSearchSpace",
      (ins "::mlir::MLIRContext *":$context,
           "const ::mlir::lowbit::SearchSpaceQuery &":$query)>
  ];
}

#endif // LOWBIT_DIALECT_LOWBIT_IR_LOWBITINTERFACES_TD
