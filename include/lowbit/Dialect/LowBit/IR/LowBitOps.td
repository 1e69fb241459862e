//===- LowBitOps.td - lowbit operations --------------------*- tablegen -*-===//
//
// Operations of the lowbit dialect.
//
//===----------------------------------------------------------------------===//

#ifndef LOWBIT_DIALECT_LOWBIT_IR_LOWBITOPS_TD
#define LOWBIT_DIALECT_LOWBIT_IR_LOWBITOPS_TD

include "lowbit/Dialect/LowBit/IR/LowBitBase.td"
include "lowbit/Dialect/LowBit/IR/LowBitAttrs.td"
include "lowbit/Dialect/LowBit/IR/LowBitMicrokernelOps.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class LowBit_Op<string mnemonic, list<Trait> traits = []>
    : Op<LowBit_Dialect, mnemonic, traits>;

def LowBit_MpGemmOp : LowBit_Op<"mpgemm", [Pure]> {
  let summary = "Mixed-precision matmul with packed low-bit weights";
  let description = [{
    Computes `Y[n, m] = sum_k X[n, k] * W[m, k]` where `X` is the fp32
    activation matrix `tensor<N x K x f32>` (N static or dynamic, K static),
    `W` the M x K weight matrix quantized as `weight` and packed as `layout`,
    and `Y` the fp32 result `tensor<N x M x f32>`. `config` names the kernel
    strategy and its tiles; it is absent until `lowbit-select-config` picks
    one.

    The packed weights are bytes (`i8` or `ui8`). For the `canonical`, `i2s`,
    `tl1`, `tl2` and `gguf` layouts they are a `tensor<M x R x i8>` with R
    bytes per row:

    | layout    | R                                                  |
    | --------- | -------------------------------------------------- |
    | canonical | K * bits / 8                                       |
    | i2s, tl1  | ceil(K / 4)                                        |
    | tl2       | ceil(K3/3 / 2) + ceil(K3/3 / 8) + ceil((K - K3)/4) |
    | gguf      | K / 32 * 18                                        |

    where, for tl2, K3 = 3 * floor(K / 3) less 3 when K - K3 is odd.

    A tiled `vnni4` layout (the up-convert layout of kernel_abi.h, written by
    `lowbit-pack-layout`) packs, per tile of `tile_m` rows, vectors of
    `tile_m` x 4 bytes, each byte holding `8 / bits` codes of one row (bit
    plane j = k offset 4j within the vector), so `tile_k` must be
    `32 / bits` and `interleave` 1. The packed weights are a
    `tensor<Mt x V x (4 * tile_m) x i8>` with Mt = ceil(M / tile_m) tiles and
    V = Kp * bits / 32 vectors per tile, Kp = K rounded up to 32. An untiled
    `vnni4` layout and `bitplanes` only need a static shape.

    The scales operand depends on the encoding:
    - ternary (per tensor): `tensor<1xf32>`;
    - binary (per group of G): `tensor<M x K/G x f16>`;
    - unsigned (per group of G): `tensor<M x K/G x 2 x f16>` holding
      (scale, zero point) pairs;
    - gguf_q4_0: none, the scales live in the blocks.

    Example:

    ```mlir
    %y = lowbit.mpgemm %x, %w, %s {
           weight = #lowbit.weight<bits = 2, encoding = ternary>,
           layout = #lowbit.layout<i2s>,
           config = #lowbit.reference}
         : (tensor<?x256xf32>, tensor<64x64xi8>, tensor<1xf32>)
         -> tensor<?x64xf32>
    %z = lowbit.mpgemm %x, %q {
           weight = #lowbit.weight<bits = 4, encoding = gguf_q4_0, group = 32, scale = per_block>,
           layout = #lowbit.layout<gguf>,
           config = #lowbit.upconvert<tile_m = 32, tile_k = 256, tile_n = 4>}
         : (tensor<?x256xf32>, tensor<64x144xi8>) -> tensor<?x64xf32>
    ```
  }];

  let arguments = (ins
    2DTensorOf<[F32]>:$x,
    RankedTensorOf<[I8, UI8]>:$packed,
    Optional<RankedTensorOf<[F32, F16]>>:$scales,
    LowBit_WeightAttr:$weight,
    LowBit_LayoutAttr:$layout,
    OptionalAttr<LowBit_StrategyConfigAttrInterface>:$config
  );
  let results = (outs 2DTensorOf<[F32]>:$result);

  let assemblyFormat = [{
    $x `,` $packed (`,` $scales^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;

  let extraClassDeclaration = [{
    /// Static number of output rows M (the weight matrix's rows).
    int64_t getM() {
      return ::llvm::cast<::mlir::RankedTensorType>(getResult().getType())
          .getDimSize(1);
    }
    /// Static reduction depth K.
    int64_t getK() {
      return ::llvm::cast<::mlir::RankedTensorType>(getX().getType())
          .getDimSize(1);
    }
  }];
}

#endif // LOWBIT_DIALECT_LOWBIT_IR_LOWBITOPS_TD
