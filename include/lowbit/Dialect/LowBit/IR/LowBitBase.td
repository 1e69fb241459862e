//===- LowBitBase.td - lowbit dialect definition -----------*- tablegen -*-===//
//
// The `lowbit` dialect: mixed-precision matrix multiplication with 1-4 bit
// weights and fp32 activations.
//
//===----------------------------------------------------------------------===//

#ifndef LOWBIT_DIALECT_LOWBIT_IR_LOWBITBASE_TD
#define LOWBIT_DIALECT_LOWBIT_IR_LOWBITBASE_TD

include "mlir/IR/OpBase.td"

def LowBit_Dialect : Dialect {
  let name = "lowbit";
  let cppNamespace = "::mlir::lowbit";
  let summary = "Mixed-precision matmul with 1-4 bit weights";
  let description = [{
    The `lowbit` dialect describes `Y[n, m] = sum_k X[n, k] * W[m, k]` where
    the activations `X` are fp32 and the weights `W` are quantized to 1-4 bits
    and packed into bytes. Three independent attributes say what the weights
    mean, how they are laid out in memory and how the product is computed:

    - `#lowbit.weight<...>`: the quantization math (bit width, encoding, group
      size along K, scale granularity);
    - `#lowbit.layout<...>`: the packed byte layout of the weight tensor;
    - a strategy config (`#lowbit.reference`, `#lowbit.upconvert<...>`,
      `#lowbit.lut_elementwise<...>`, `#lowbit.lut_bitserial<...>`): the
      kernel family and its tuned tile parameters. Every config implements
      `StrategyConfigAttrInterface`, which checks that the strategy supports
      a given weight encoding, layout and shape.

    Configuration selection and the tuner only ever rewrite these attributes;
    the lowering pipeline reads them. The module names the target they are
    chosen for in its `lowbit.target` attribute (a target name such as
    `"x86-avx2"`, set by `lowbit-select-config`), from which the lowerings
    take their TargetInfo.

    ```mlir
    %y = lowbit.mpgemm %x, %w, %s {
           weight = #lowbit.weight<bits = 2, encoding = ternary>,
           layout = #lowbit.layout<i2s>,
           config = #lowbit.upconvert<tile_m = 32, tile_k = 256, tile_n = 4>}
         : (tensor<?x256xf32>, tensor<64x64xi8>, tensor<1xf32>)
         -> tensor<?x64xf32>
    ```
  }];
  let useDefaultAttributePrinterParser = 1;
  // `lowbit.target`: the string naming the module's target.
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
}

#endif // LOWBIT_DIALECT_LOWBIT_IR_LOWBITBASE_TD
