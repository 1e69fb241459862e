//===- LowerGpu.cpp - lowbit.mpgemm to a gpu.module kernel ----------------===//
//
// The Xe2 kernel of Intel's AI-PC/Xe2 paper ("Pushing the Envelope of LLM
// Inference on AI-PC and Intel GPUs", section III-E) in the gpu dialect:
// workgroup and subgroup tiles from #lowbit.gpu, activation scales fused or in
// a pre-kernel (w2gG: per 32-block, in registers), int8 quantization in
// registers, int32 products with the unpacked 2-bit codes (multiply-add, or
// the 4 x int8 dot product lowbit.uk.packed_dot with int_dot),
// dequantization by the product of the scales. The config comes from
// lowbit-select-config (the target's GpuTargetInfo defaults, a schedule, or
// the config option); the kernel is target-neutral gpu / arith / memref:
// lib/Conversion/LowBitToSPIRV gives it its SPIR-V forms (entry point,
// OpSUDot) and turns it into SPIR-V. The buffers are described in
// runtime/include/lowbit/vulkan.h.
//
// Cross-invocation sums go through workgroup memory rather than subgroup
// operations, so a "subgroup" here is `subgroup_size` consecutive
// invocations and the kernel is correct whatever subgroup size the device
// picks (lavapipe's is 8; Xe2's 16 matches the config).
//
// With `dtype` f16 or bf16, X and Y are 16-bit storage buffers (memref of
// i16 holding the bits): each X value is widened to f32 exactly in integer
// ops, the kernel computes the same f32 Y as for f32 I/O, and Y is rounded
// to nearest even in integer ops (no device conversion instruction, whose
// rounding Vulkan leaves open). Whether the i16 buffers are native 16-bit
// storage or packed in 32-bit words is the SPIR-V target's choice.
//
//===----------------------------------------------------------------------===//

#include "lowbit/Dialect/LowBit/Transforms/Passes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

namespace mlir::lowbit {
#define GEN_PASS_DEF_LOWBITLOWERGPU
#include "lowbit/Dialect/LowBit/Transforms/Passes.h.inc"
} // namespace mlir::lowbit

using namespace mlir;
using namespace mlir::lowbit;

/// 2-bit codes per 32-bit word of the weight buffer.
static constexpr int64_t kCodesPerWord = 16;
/// The gpu dialect's numeric workgroup memory space (what
/// convert-gpu-to-spirv maps to Workgroup).
static constexpr unsigned kWorkgroupMemorySpace = 3;

namespace {

/// The element type of X and Y.
enum class IoType { F32, F16, BF16 };

/// What a scale block's term needs (runtime/include/lowbit/vulkan.h):
/// ScaleZero (s, z) for wbgG; ScaleOffset (s, o) for the ggml formats with a
/// min, W = s c + o; Scale s alone for those with a code offset, W = s (q -
/// z) with z the format's constant code_offset (iq4_nl: 128, its codes
/// looked up as codebook[q] + 128).
enum class BlockParams { ScaleZero, ScaleOffset, Scale };

/// Everything the kernel body depends on.
struct GpuPlan {
  int64_t m = 0, k = 0, words = 0; // words: 32-bit code words per row
  int64_t wgM = 0, wgN = 0, sgM = 0, sgN = 0, kSplit = 1, lanes = 0;
  int64_t invocations = 0;
  bool fused = true;
  bool intDot = false;
  bool blockScales = false; // every format but i2s: per-block scales from
                            // the blocks buffer, no row scale
  bool binary = false;      // w1gG: code c stands for 2c - 1, no zero point
  int64_t bits = 2;         // bits per weight code (i2s: 2; wbgG: b; q4_0: 4;
                            // the ggml block formats their code bits)
  BlockParams params = BlockParams::ScaleZero;
  int64_t codeOffset = 0;   // BlockParams::Scale: the constant zero point
  int64_t scaleGroup = 32;  // weights per scale block: 32, or 16 (q2_k,
                            // q3_k, q6_k: two per 32-block)
  // The ggml block formats (q4_0 ... iq4_nl): the blocks buffer holds their
  // scales at ggml's bits (vulkan.h, GGML SCALES), not as floats: per block
  // the fp16 d (and m); K-quants per super-block the `scaleBits`-bit
  // sub-scales (and sub-minimums) and the fp16 d (and dmin).
  bool ggml = false;
  int64_t superBlock = 0, scaleBits = 0;
  // A codebook encoding (iq4_nl): the bytes codebook[q] + 128 of the 16
  // codes q, four to an i32, little-endian (from the weight attribute).
  SmallVector<int32_t, 4> codebookWords;
  bool matrix = false;      // cooperative-matrix tiles (buildMatrixTile)
  IoType io = IoType::F32;
};

/// The cooperative-matrix shape of `matrix = true` (Xe2 DPAS, int8):
/// C [kMatM x kMatN] += A [kMatM x kMatK] * B [kMatK x kMatN].
static constexpr int64_t kMatM = 8, kMatN = 16, kMatK = 32;

/// Builds the ops of one gpu.func body at the end of its entry block.
class GpuKernelBuilder {
public:
  GpuKernelBuilder(OpBuilder &b, Location loc, const GpuPlan &plan,
                   ValueRange args)
      : b(b), loc(loc), plan(plan), x(args[0]), w(args[1]), y(args[2]),
        params(args[3]), scales(args[4]), blockScales(args[5]) {}

  /// @act_scales: workgroup x writes scales[x] (rows x >= N do nothing:
  /// the dispatch covers exactly N workgroups).
  void buildActScales() {
    Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
    Value row = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
    Value amax = allocWorkgroup(plan.invocations);
    Value s = rowScale(row, tid, amax, cst(0));
    ifThen(eq(tid, cst(0)),
           [&] { memref::StoreOp::create(b, loc, s, scales, row); });
  }

  /// @mpgemm.
  void buildMpGemm() {
    Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
    Value blockM = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
    Value blockN = gpu::BlockIdOp::create(b, loc, gpu::Dimension::y);
    Value n = arith::IndexCastOp::create(
        b, loc, b.getIndexType(),
        memref::LoadOp::create(b, loc, params, cst(0)).getResult());
    Value wScale = arith::BitcastOp::create(
        b, loc, b.getF32Type(),
        memref::LoadOp::create(b, loc, params, cst(1)).getResult());
    Value rowBase = mul(blockN, cst(plan.wgN));
    Value lastRow = sub(n, cst(1));

    // 1. Ternary: the workgroup's per-row activation scales, in workgroup
    // memory. (Group formats scale each 32-block in registers.)
    Value rowScales;
    if (!plan.blockScales) {
      rowScales = allocWorkgroup(plan.wgN);
      if (plan.fused) {
        Value amax = allocWorkgroup(plan.wgN * plan.invocations);
        for (int64_t j = 0; j < plan.wgN; ++j) {
          Value row = min(add(rowBase, cst(j)), lastRow);
          Value s = rowScale(row, tid, amax, cst(j * plan.invocations));
          ifThen(eq(tid, cst(0)), [&] {
            memref::StoreOp::create(b, loc, s, rowScales, cst(j));
          });
        }
      } else {
        ifThen(ult(tid, cst(plan.wgN)), [&] {
          Value row = min(add(rowBase, tid), lastRow);
          Value s = memref::LoadOp::create(b, loc, scales, row);
          memref::StoreOp::create(b, loc, s, rowScales, tid);
        });
      }
      gpu::BarrierOp::create(b, loc);
    }

    if (plan.matrix)
      return buildMatrixTile(tid, blockM, rowBase, n, wScale, rowScales);

    // 2. This invocation's subgroup tile and share of K (in steps of one
    // word for ternary, one 32-block of two words for group formats).
    int64_t sgPerM = plan.wgM / plan.sgM, sgPerN = plan.wgN / plan.sgN;
    Value sg = div(tid, cst(plan.lanes));
    Value lane = rem(tid, cst(plan.lanes));
    Value sm = rem(sg, cst(sgPerM));
    Value sn = rem(div(sg, cst(sgPerM)), cst(sgPerN));
    Value ks = div(sg, cst(sgPerM * sgPerN));
    Value tileRow = add(mul(blockM, cst(plan.wgM)), mul(sm, cst(plan.sgM)));
    Value tileCol = mul(sn, cst(plan.sgN));
    SmallVector<Value> rows, xRows, colScales;
    for (int64_t i = 0; i < plan.sgM; ++i)
      rows.push_back(min(add(tileRow, cst(i)), cst(plan.m - 1)));
    for (int64_t j = 0; j < plan.sgN; ++j) {
      Value col = add(tileCol, cst(j));
      xRows.push_back(mul(min(add(rowBase, col), lastRow), cst(plan.k)));
      if (rowScales)
        colScales.push_back(memref::LoadOp::create(b, loc, rowScales, col));
    }
    int64_t steps = plan.blockScales ? plan.words / plan.bits : plan.words;
    int64_t chunk = llvm::divideCeil(steps, plan.kSplit);
    Value kBegin = mul(ks, cst(chunk));
    Value kEnd = min(add(kBegin, cst(chunk)), cst(steps));
    // Accumulators: the tile's sums (int32, or f32 for group formats),
    // then (ternary int_dot) the sgN activation sums.
    int64_t tileSize = plan.sgM * plan.sgN;
    Type accType = plan.blockScales ? Type(b.getF32Type()) : b.getI32Type();
    Value zero = plan.blockScales ? cstF32(0.0f) : cstI32(0);
    SmallVector<Value> zeros(tileSize, zero);
    if (plan.intDot && !plan.blockScales)
      zeros.append(plan.sgN, cstI32(0));
    auto loop = scf::ForOp::create(b, loc, add(kBegin, lane), kEnd,
                                   cst(plan.lanes), zeros);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      SmallVector<Value> acc(loop.getRegionIterArgs());
      if (plan.blockScales)
        accumulateBlock(loop.getInductionVar(), rows, xRows, acc);
      else
        accumulateWord(loop.getInductionVar(), rows, xRows, colScales, acc);
      scf::YieldOp::create(b, loc, acc);
    }

    // 3. Partial sums of all lanes and K parts, then y. With int_dot the
    // codes were c = q + 1: subtracting the activation sum gives sum q * x.
    Value partial = allocWorkgroup(plan.invocations * tileSize, accType);
    Value partialBase = mul(tid, cst(tileSize));
    for (int64_t a = 0; a < tileSize; ++a) {
      Value v = loop.getResult(a);
      if (plan.intDot && !plan.blockScales)
        v = arith::SubIOp::create(b, loc, v,
                                  loop.getResult(tileSize + a % plan.sgN));
      memref::StoreOp::create(b, loc, v, partial, add(partialBase, cst(a)));
    }
    gpu::BarrierOp::create(b, loc);
    // Lane l of K part 0 finishes tile elements l, l + lanes, ...
    ifThen(eq(ks, cst(0)), [&] {
      Value firstSg = add(mul(sn, cst(sgPerM)), sm);
      auto outputs = scf::ForOp::create(b, loc, lane, cst(tileSize),
                                        cst(plan.lanes));
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(outputs.getBody());
      Value a = outputs.getInductionVar();
      Value sum = zero;
      for (int64_t part = 0; part < plan.kSplit; ++part) {
        Value sgBase = mul(add(firstSg, cst(part * sgPerM * sgPerN)),
                           cst(plan.lanes * tileSize));
        auto lanes = scf::ForOp::create(b, loc, cst(0), cst(plan.lanes),
                                        cst(1), ValueRange{sum});
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPointToStart(lanes.getBody());
        Value at = add(add(sgBase, mul(lanes.getInductionVar(),
                                       cst(tileSize))),
                       a);
        Value v = memref::LoadOp::create(b, loc, partial, at);
        Value prev = lanes.getRegionIterArgs()[0];
        Value next = plan.blockScales
                         ? arith::AddFOp::create(b, loc, prev, v).getResult()
                         : arith::AddIOp::create(b, loc, prev, v).getResult();
        scf::YieldOp::create(b, loc, ValueRange{next});
        b.setInsertionPointAfter(lanes);
        sum = lanes.getResult(0);
      }
      Value i = div(a, cst(plan.sgN)), j = rem(a, cst(plan.sgN));
      Value row = add(tileRow, i);
      Value col = add(tileCol, j);
      Value actRow = add(rowBase, col);
      Value inside = arith::AndIOp::create(b, loc, ult(row, cst(plan.m)),
                                           ult(actRow, n));
      ifThen(inside, [&] {
        Value out = sum;
        if (!plan.blockScales) {
          Value s = memref::LoadOp::create(b, loc, rowScales, col);
          // (float)acc * w_scale / s_x: the reference's expression.
          Value f = arith::SIToFPOp::create(b, loc, b.getF32Type(), sum);
          Value scaled = arith::MulFOp::create(b, loc, f, wScale);
          out = arith::DivFOp::create(b, loc, scaled, s);
        }
        storeY(out, add(mul(actRow, cst(plan.m)), row));
      });
    });
  }

private:
  /// Steps 2-3 of `matrix = true` (i2s): subgroup s owns the 8 x 16 tile at
  /// (rows tileRow.., activation rows tileCol..) and, per 32 K, its lanes
  /// write A (codes c - 1) and B (activations quantized with their row
  /// scale; 0 past K) as int8 into the subgroup's workgroup scratch, then
  /// the subgroup multiplies them into the int32 cooperative matrix C. The
  /// loop has the same trip count in every subgroup, so the workgroup
  /// barriers around the scratch are uniform. C goes through workgroup
  /// memory to the lanes, which dequantize as the reference does.
  void buildMatrixTile(Value tid, Value blockM, Value rowBase, Value n,
                       Value wScale, Value rowScales) {
    MLIRContext *ctx = b.getContext();
    int64_t subgroups = plan.invocations / plan.lanes;
    int64_t sgPerM = plan.wgM / kMatM;
    Value sg = div(tid, cst(plan.lanes)), lane = rem(tid, cst(plan.lanes));
    Value tileRow = add(mul(blockM, cst(plan.wgM)),
                        mul(rem(sg, cst(sgPerM)), cst(kMatM)));
    Value tileCol = mul(div(sg, cst(sgPerM)), cst(kMatN));
    Type i8 = b.getI8Type(), i32 = b.getI32Type();
    Value aScratch = allocWorkgroup(subgroups * kMatM * kMatK, i8);
    Value bScratch = allocWorkgroup(subgroups * kMatK * kMatN, i8);
    Value cScratch = allocWorkgroup(subgroups * kMatM * kMatN, i32);
    Value aBase = mul(sg, cst(kMatM * kMatK));
    Value bBase = mul(sg, cst(kMatK * kMatN));
    Value cBase = mul(sg, cst(kMatM * kMatN));
    auto si8 = IntegerType::get(ctx, 8, IntegerType::Signed);
    auto aType = gpu::MMAMatrixType::get({kMatM, kMatK}, si8, "AOp");
    auto bType = gpu::MMAMatrixType::get({kMatK, kMatN}, si8, "BOp");
    auto cType = gpu::MMAMatrixType::get({kMatM, kMatN}, i32, "COp");
    Value c0 = gpu::SubgroupMmaConstantMatrixOp::create(b, loc, cType,
                                                        cstI32(0));
    int64_t steps = llvm::divideCeil(plan.k, kMatK);
    auto loop = scf::ForOp::create(b, loc, cst(0), cst(steps), cst(1),
                                   ValueRange{c0});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value k0 = mul(loop.getInductionVar(), cst(kMatK));
      // A [i][kk] = code(W[row i], k0 + kk) - 1, 0 past K.
      auto fillA = scf::ForOp::create(b, loc, lane, cst(kMatM * kMatK),
                                      cst(plan.lanes));
      {
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPointToStart(fillA.getBody());
        Value e = fillA.getInductionVar();
        Value row = min(add(tileRow, div(e, cst(kMatK))), cst(plan.m - 1));
        Value k = add(k0, rem(e, cst(kMatK)));
        Value kRead = min(k, cst(plan.k - 1));
        Value word = memref::LoadOp::create(
            b, loc, w,
            ValueRange{add(mul(row, cst(plan.words)),
                           div(kRead, cst(kCodesPerWord)))});
        Value shift = arith::IndexCastOp::create(
            b, loc, i32, mul(rem(kRead, cst(kCodesPerWord)), cst(2)));
        Value q = arith::SubIOp::create(
            b, loc,
            arith::AndIOp::create(
                b, loc, arith::ShRUIOp::create(b, loc, word, shift).getResult(),
                cstI32(3)),
            cstI32(1));
        q = arith::SelectOp::create(b, loc, ult(k, cst(plan.k)), q,
                                    cstI32(0));
        memref::StoreOp::create(b, loc, arith::TruncIOp::create(b, loc, i8, q),
                                aScratch, add(aBase, e));
      }
      // B [kk][j] = quantize(X[activation row j], k0 + kk), 0 past K.
      auto fillB = scf::ForOp::create(b, loc, lane, cst(kMatK * kMatN),
                                      cst(plan.lanes));
      {
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPointToStart(fillB.getBody());
        Value e = fillB.getInductionVar();
        Value col = add(tileCol, rem(e, cst(kMatN)));
        Value actRow = min(add(rowBase, col), sub(n, cst(1)));
        Value k = add(k0, div(e, cst(kMatN)));
        Value v = loadX(add(mul(actRow, cst(plan.k)),
                            min(k, cst(plan.k - 1))));
        Value s = memref::LoadOp::create(b, loc, rowScales, col);
        Value q = arith::SelectOp::create(b, loc, ult(k, cst(plan.k)),
                                          quantize(v, s), cstI32(0));
        memref::StoreOp::create(b, loc, arith::TruncIOp::create(b, loc, i8, q),
                                bScratch, add(bBase, e));
      }
      gpu::BarrierOp::create(b, loc);
      Value a = gpu::SubgroupMmaLoadMatrixOp::create(
          b, loc, aType, aScratch, ValueRange{aBase},
          b.getIndexAttr(kMatK), /*transpose=*/UnitAttr());
      Value bm = gpu::SubgroupMmaLoadMatrixOp::create(
          b, loc, bType, bScratch, ValueRange{bBase},
          b.getIndexAttr(kMatN), /*transpose=*/UnitAttr());
      Value c = gpu::SubgroupMmaComputeOp::create(
          b, loc, cType, a, bm, loop.getRegionIterArgs()[0],
          /*a_transpose=*/UnitAttr(), /*b_transpose=*/UnitAttr());
      // The next step overwrites the scratch this one read.
      gpu::BarrierOp::create(b, loc);
      scf::YieldOp::create(b, loc, c);
    }
    gpu::SubgroupMmaStoreMatrixOp::create(
        b, loc, loop.getResult(0), cScratch, ValueRange{cBase},
        b.getIndexAttr(kMatN), /*transpose=*/UnitAttr());
    gpu::BarrierOp::create(b, loc);
    auto outputs = scf::ForOp::create(b, loc, lane, cst(kMatM * kMatN),
                                      cst(plan.lanes));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(outputs.getBody());
    Value e = outputs.getInductionVar();
    Value row = add(tileRow, div(e, cst(kMatN)));
    Value col = add(tileCol, rem(e, cst(kMatN)));
    Value actRow = add(rowBase, col);
    Value inside = arith::AndIOp::create(b, loc, ult(row, cst(plan.m)),
                                         ult(actRow, n));
    ifThen(inside, [&] {
      Value acc = memref::LoadOp::create(b, loc, cScratch, add(cBase, e));
      // (float)acc * w_scale / s_x: the reference's expression.
      Value f = arith::SIToFPOp::create(b, loc, b.getF32Type(), acc);
      Value scaled = arith::MulFOp::create(b, loc, f, wScale);
      Value s = memref::LoadOp::create(b, loc, rowScales, col);
      storeY(arith::DivFOp::create(b, loc, scaled, s),
             add(mul(actRow, cst(plan.m)), row));
    });
  }

  /// acc[i * sgN + j] += sum over the 16 k of word `word` of
  /// (code(W[row i]) - 1) * quantize(X[row j]).
  void accumulateWord(Value word, ArrayRef<Value> rows,
                      ArrayRef<Value> xRows, ArrayRef<Value> colScales,
                      SmallVectorImpl<Value> &acc) {
    SmallVector<Value> wRows;
    for (Value row : rows)
      wRows.push_back(mul(row, cst(plan.words)));
    Value k0 = mul(word, cst(kCodesPerWord));
    bool ragged = plan.k % kCodesPerWord != 0;
    SmallVector<SmallVector<Value>> xq(plan.sgN);
    for (int64_t e = 0; e < kCodesPerWord; ++e) {
      Value k = add(k0, cst(e));
      // The last word of a ragged row reads the row's last value instead
      // of past it and multiplies by 0 instead.
      Value kRead = ragged ? min(k, cst(plan.k - 1)) : k;
      Value valid = ragged ? ult(k, cst(plan.k)) : Value();
      for (int64_t j = 0; j < plan.sgN; ++j) {
        Value v = loadX(add(xRows[j], kRead));
        Value q = quantize(v, colScales[j]);
        if (valid)
          q = arith::SelectOp::create(b, loc, valid, q, cstI32(0));
        xq[j].push_back(q);
      }
    }
    if (plan.intDot) {
      dotWord(word, wRows, xq, acc);
      return;
    }
    Value mask = cstI32(3), one = cstI32(1);
    for (int64_t i = 0; i < plan.sgM; ++i) {
      Value codes =
          memref::LoadOp::create(b, loc, w, ValueRange{add(wRows[i], word)});
      for (int64_t e = 0; e < kCodesPerWord; ++e) {
        Value c = arith::AndIOp::create(
            b, loc,
            arith::ShRUIOp::create(b, loc, codes, cstI32(2 * e)).getResult(),
            mask);
        Value q = arith::SubIOp::create(b, loc, c, one);
        for (int64_t j = 0; j < plan.sgN; ++j) {
          Value &a = acc[i * plan.sgN + j];
          a = arith::AddIOp::create(
              b, loc, a, arith::MulIOp::create(b, loc, q, xq[j][e]));
        }
      }
    }
  }

  /// The int_dot form of accumulateWord: plane e = 0..3 of a word,
  /// (word >> 2e) & 0x03030303, holds the unsigned codes of k = e, e + 4,
  /// e + 8, e + 12 in its bytes; OpSUDot multiplies it by the activations
  /// of those k packed as int8. acc[tileSize + j] collects the activation
  /// sums (OpSDot with 0x01010101) that finishing subtracts.
  void dotWord(Value word, ArrayRef<Value> wRows,
               ArrayRef<SmallVector<Value>> xq, SmallVectorImpl<Value> &acc) {
    int64_t tileSize = plan.sgM * plan.sgN;
    SmallVector<SmallVector<Value>> packed;
    for (int64_t j = 0; j < plan.sgN; ++j) {
      packed.push_back(packWord(xq[j]));
      for (Value p : packed.back())
        acc[tileSize + j] = arith::AddIOp::create(
            b, loc, acc[tileSize + j], dot(p, cstI32(0x01010101), true));
    }
    for (int64_t i = 0; i < plan.sgM; ++i) {
      Value codes =
          memref::LoadOp::create(b, loc, w, ValueRange{add(wRows[i], word)});
      for (int64_t j = 0; j < plan.sgN; ++j)
        acc[i * plan.sgN + j] = dotCodes(acc[i * plan.sgN + j], codes,
                                         packed[j]);
    }
  }

  /// The int8 activations (as i32) of one word of `bits`-bit codes (32,
  /// 16 or 8 of them) packed into 4-byte packs: with P = 8 / bits planes,
  /// pack e holds those of k = e, e + P, e + 2P, e + 3P (the order of the
  /// code planes of dotCodes); `bits` = 8 packs 4 consecutive activations.
  SmallVector<Value> packWord(ArrayRef<Value> xq, int64_t bits = 2) {
    SmallVector<Value> packed;
    Value byte = cstI32(0xff);
    int64_t planes = 8 / bits;
    for (int64_t e = 0; e < planes; ++e) {
      Value p = cstI32(0);
      for (int64_t lane = 0; lane < 4; ++lane) {
        Value v = arith::AndIOp::create(b, loc, xq[e + planes * lane], byte);
        if (lane > 0)
          v = arith::ShLIOp::create(b, loc, v, cstI32(8 * lane));
        p = arith::OrIOp::create(b, loc, p, v);
      }
      packed.push_back(p);
    }
    return packed;
  }

  /// acc + sum over the codes c of word `codes` (`bits`-bit) of c * x:
  /// plane e of P = 8 / bits, (codes >> bits e) masked to the low `bits` of
  /// each byte, holds the codes of k = e, e + P, e + 2P, e + 3P in its
  /// bytes, multiplied by pack e of packWord with OpSUDot.
  Value dotCodes(Value acc, Value codes, ArrayRef<Value> packed,
                 int64_t bits = 2) {
    Value mask = cstI32(int32_t(((1 << bits) - 1) * 0x01010101));
    for (int64_t e = 0; e < 8 / bits; ++e) {
      Value plane = e == 0 ? codes
                           : arith::ShRUIOp::create(b, loc, codes,
                                                    cstI32(bits * e))
                                 .getResult();
      plane = arith::AndIOp::create(b, loc, plane, mask);
      acc = arith::AddIOp::create(b, loc, acc, dot(packed[e], plane, false));
    }
    return acc;
  }

  /// The dot product of 4 packed signed bytes with 4 signed
  /// (`bothSigned`) or unsigned bytes (lowbit.uk.packed_dot).
  Value dot(Value lhs, Value rhs, bool bothSigned) {
    return UkPackedDotOp::create(b, loc, b.getI32Type(), lhs, rhs,
                                 /*unsignedRhs=*/!bothSigned);
  }

  /// Every format but i2s: acc[i * sgN + j] += t / s_x for 32-block `block`
  /// (its `bits` words from bits * block), where the activations of row j
  /// are quantized with their own block scale s_x (in registers) and t sums
  /// the block's one or two scale blocks h (scaleGroup 32 or 16) in order,
  /// with D_h the sum of codes times activations and S_h the activations'
  /// sum over h: the reference's per-block expression. Per h, from the
  /// blocks buffer (ggml formats: ggmlScales): (s, z) gives (float)(D - z
  /// S) * s (w1gG: (2D - S) * s, codes c standing for 2c - 1); (s, o) gives
  /// s (float)D + o (float)S (W = s c + o); s alone gives (float)(D - z S) *
  /// s with the format's constant code offset z (the runtime stores q = c +
  /// z; q4_0: z = 8; iq4_nl: the looked-up codebook[q] + 128, z = 128).
  void accumulateBlock(Value block, ArrayRef<Value> rows,
                       ArrayRef<Value> xRows, SmallVectorImpl<Value> &acc) {
    constexpr int64_t kBlock = 32;
    const int64_t perWord = 32 / plan.bits; // codes per word (1, 2, 4, 8 bits)
    const int64_t halves = kBlock / plan.scaleGroup;
    const int64_t perScale = plan.params == BlockParams::Scale ? 1 : 2;
    Value k0 = mul(block, cst(kBlock));
    int64_t scaleBlocks = plan.k / plan.scaleGroup;
    SmallVector<SmallVector<Value>> xq(plan.sgN), xSum(plan.sgN);
    SmallVector<Value> xScale;
    for (int64_t j = 0; j < plan.sgN; ++j) {
      SmallVector<Value> values;
      Value amax = cstF32(0.0f);
      for (int64_t e = 0; e < kBlock; ++e) {
        values.push_back(loadX(add(xRows[j], add(k0, cst(e)))));
        amax = fmax(amax, math::AbsFOp::create(b, loc, values.back()));
      }
      Value s = arith::DivFOp::create(b, loc, cstF32(127.0f),
                                      fmax(amax, cstF32(1e-5f)));
      xSum[j].assign(halves, cstI32(0));
      for (int64_t e = 0; e < kBlock; ++e) {
        xq[j].push_back(quantize(values[e], s));
        Value &sum = xSum[j][e / plan.scaleGroup];
        sum = arith::AddIOp::create(b, loc, sum, xq[j].back());
      }
      xScale.push_back(s);
    }
    // int_dot: the activations packed once, reused by every row: per word
    // in the byte planes of dotCodes where codes tile bytes (1, 2, 4, 8
    // bits), else per 4 consecutive k. Either way a pack lies inside one
    // scale block (a word of codes holds at most 16).
    bool planes = 8 % plan.bits == 0 && plan.codebookWords.empty();
    SmallVector<SmallVector<Value>> packed(plan.sgN);
    if (plan.intDot)
      for (int64_t j = 0; j < plan.sgN; ++j) {
        ArrayRef<Value> block(xq[j]);
        for (int64_t part = 0; part < (planes ? plan.bits : kBlock / 4);
             ++part) {
          SmallVector<Value> pack =
              planes ? packWord(block.slice(part * perWord, perWord),
                                plan.bits)
                     : packWord(block.slice(4 * part, 4), /*bits=*/8);
          packed[j].append(pack);
        }
      }
    for (int64_t i = 0; i < plan.sgM; ++i) {
      Value wordBase =
          add(mul(rows[i], cst(plan.words)), mul(block, cst(plan.bits)));
      // Per scale block h: s, and z (ScaleZero, ScaleOffset's o: second).
      SmallVector<Value> wScale, second;
      if (plan.ggml) {
        ggmlScales(rows[i], block, wScale, second);
      } else {
        Value firstScale =
            add(mul(rows[i], cst(scaleBlocks)), mul(block, cst(halves)));
        for (int64_t h = 0; h < halves; ++h) {
          Value at = mul(add(firstScale, cst(h)), cst(perScale));
          wScale.push_back(memref::LoadOp::create(b, loc, blockScales, at));
          if (perScale == 2 && !plan.binary)
            second.push_back(
                memref::LoadOp::create(b, loc, blockScales, add(at, cst(1))));
        }
      }
      // The block's `bits` words, each loaded where first needed.
      SmallVector<Value> words(plan.bits);
      auto word = [&](int64_t index) {
        if (!words[index])
          words[index] = memref::LoadOp::create(b, loc, w,
                                                add(wordBase, cst(index)));
        return words[index];
      };
      // dots[h][j]: D of scale block h and activation row j.
      SmallVector<SmallVector<Value>> dots(
          halves, SmallVector<Value>(plan.sgN, cstI32(0)));
      if (plan.intDot && planes) {
        int64_t perPack = 8 / plan.bits;
        for (int64_t part = 0; part < plan.bits; ++part)
          for (int64_t j = 0; j < plan.sgN; ++j) {
            Value &d = dots[part * perWord / plan.scaleGroup][j];
            d = dotCodes(
                d, word(part),
                ArrayRef<Value>(packed[j]).slice(part * perPack, perPack),
                plan.bits);
          }
      } else if (plan.intDot) {
        for (int64_t g = 0; g < kBlock / 4; ++g) {
          Value codes = weightCode(word, 4 * g);
          for (int64_t r = 1; r < 4; ++r)
            codes = arith::OrIOp::create(
                b, loc, codes, shl(weightCode(word, 4 * g + r), 8 * r));
          for (int64_t j = 0; j < plan.sgN; ++j) {
            Value &d = dots[4 * g / plan.scaleGroup][j];
            d = arith::AddIOp::create(b, loc, d,
                                      dot(packed[j][g], codes, false));
          }
        }
      } else {
        for (int64_t kk = 0; kk < kBlock; ++kk) {
          Value c = weightCode(word, kk);
          for (int64_t j = 0; j < plan.sgN; ++j) {
            Value &d = dots[kk / plan.scaleGroup][j];
            d = arith::AddIOp::create(
                b, loc, d, arith::MulIOp::create(b, loc, c, xq[j][kk]));
          }
        }
      }
      for (int64_t j = 0; j < plan.sgN; ++j) {
        Value t;
        for (int64_t h = 0; h < halves; ++h) {
          Value term = scaleBlockTerm(dots[h][j], xSum[j][h], wScale[h],
                                      second.empty() ? Value() : second[h]);
          t = t ? arith::AddFOp::create(b, loc, t, term).getResult() : term;
        }
        Value &a = acc[i * plan.sgN + j];
        a = arith::AddFOp::create(b, loc, a,
                                  arith::DivFOp::create(b, loc, t, xScale[j]));
      }
    }
  }

  /// The float term of one scale block with code-activation sum D,
  /// activation sum S, scale s and `second` (z as a float for ScaleZero, o
  /// for ScaleOffset, null otherwise); see accumulateBlock.
  Value scaleBlockTerm(Value dots, Value xSum, Value s, Value second) {
    auto toFloat = [&](Value v) {
      return arith::SIToFPOp::create(b, loc, b.getF32Type(), v).getResult();
    };
    if (plan.params == BlockParams::ScaleOffset)
      return arith::AddFOp::create(
          b, loc, arith::MulFOp::create(b, loc, s, toFloat(dots)),
          arith::MulFOp::create(b, loc, second, toFloat(xSum)));
    // w1gG: sum (2c - 1) x = 2D - S; else sum (c - z) x = D - z S.
    Value blockAcc;
    if (plan.binary) {
      blockAcc = arith::SubIOp::create(b, loc, shl(dots, 1), xSum);
    } else {
      Value zeroPoint =
          second ? arith::FPToSIOp::create(b, loc, b.getI32Type(), second)
                       .getResult()
                 : cstI32(int32_t(plan.codeOffset));
      blockAcc = arith::SubIOp::create(
          b, loc, dots, arith::MulIOp::create(b, loc, zeroPoint, xSum));
    }
    return arith::MulFOp::create(b, loc, toFloat(blockAcc), s);
  }

  /// The scales of the scale blocks h of 32-block `block` of weight row
  /// `row`, decoded from the ggml bits of the blocks buffer (vulkan.h, GGML
  /// SCALES) into what the runtime's row_block_params computes, so the terms
  /// are those of float parameters: s = d (and o = m) for the formats with
  /// one fp16 scale per block; for the K-quants with sub-block j, s = d *
  /// (float)sc_j and o = -(dmin * (float)m_j), ggml's dequantization.
  void ggmlScales(Value row, Value block, SmallVectorImpl<Value> &wScale,
                  SmallVectorImpl<Value> &second) {
    const int64_t halves = 32 / plan.scaleGroup;
    const bool withMin = plan.params == BlockParams::ScaleOffset;
    const int64_t perRecord = withMin ? 2 : 1; // fp16 fields per record
    if (plan.superBlock == 0) {
      Value at = mul(add(mul(row, cst(plan.k / 32)), block), cst(perRecord));
      wScale.push_back(half(at));
      if (withMin)
        second.push_back(half(add(at, cst(1))));
      return;
    }
    const int64_t blocksPerSuper = plan.superBlock / 32;
    const int64_t subBlocks = plan.superBlock / plan.scaleGroup;
    const int64_t superWords = ggmlSuperWords();
    const int64_t records = plan.m * (plan.k / plan.superBlock);
    Value record = add(mul(row, cst(plan.k / plan.superBlock)),
                       div(block, cst(blocksPerSuper)));
    // The fp16 fields follow the sub-scale words of every record.
    Value dAt = add(cst(2 * records * superWords), mul(record, cst(perRecord)));
    Value d = half(dAt);
    Value dmin = withMin ? half(add(dAt, cst(1))) : Value();
    Value firstWord = mul(record, cst(superWords));
    Value firstSub = mul(rem(block, cst(blocksPerSuper)), cst(halves));
    auto toFloat = [&](Value v) {
      return arith::SIToFPOp::create(b, loc, b.getF32Type(), v).getResult();
    };
    for (int64_t h = 0; h < halves; ++h) {
      Value j = add(firstSub, cst(h));
      // Sub-scales signed without a min (q3_k, q6_k), unsigned with one.
      Value sc = subScaleField(firstWord, mul(j, cst(plan.scaleBits)),
                               /*sign=*/!withMin);
      wScale.push_back(arith::MulFOp::create(b, loc, d, toFloat(sc)));
      if (!withMin)
        continue;
      Value m = subScaleField(
          firstWord,
          mul(add(j, cst(subBlocks)), cst(plan.scaleBits)), /*sign=*/false);
      second.push_back(arith::NegFOp::create(
          b, loc, arith::MulFOp::create(b, loc, dmin, toFloat(m))));
    }
  }

  /// 32-bit words of one super-block's sub-scales (and sub-minimums).
  int64_t ggmlSuperWords() const {
    const int64_t parts = plan.params == BlockParams::ScaleOffset ? 2 : 1;
    return parts * (plan.superBlock / plan.scaleGroup) * plan.scaleBits / 32;
  }

  /// The `scaleBits`-bit field at bit `bit` (an index) of the little-endian
  /// bit string from word `firstWord` of the blocks buffer, as an i32
  /// (sign-extended with `sign`). A 6-bit field may straddle two words;
  /// the next word always exists (the fp16 fields follow the sub-scales).
  Value subScaleField(Value firstWord, Value bit, bool sign) {
    Value at = add(firstWord, div(bit, cst(32)));
    Value shift = arith::IndexCastOp::create(b, loc, b.getI32Type(),
                                             rem(bit, cst(32)));
    Value v = arith::ShRUIOp::create(
        b, loc, memref::LoadOp::create(b, loc, blockScales, at), shift);
    if (32 % plan.scaleBits != 0) {
      // (next << 1) << (31 - shift): next's low bits above the field's
      // first part, without a shift by 32 when shift is 0.
      Value next = memref::LoadOp::create(b, loc, blockScales,
                                          add(at, cst(1)));
      Value high = arith::ShLIOp::create(
          b, loc, shl(next, 1),
          arith::SubIOp::create(b, loc, cstI32(31), shift));
      v = arith::OrIOp::create(b, loc, v, high);
    }
    int32_t unused = int32_t(32 - plan.scaleBits);
    if (sign)
      return arith::ShRSIOp::create(b, loc, shl(v, unused), cstI32(unused));
    return andI(v, (int64_t(1) << plan.scaleBits) - 1);
  }

  /// The fp16 value at half index `at` of the blocks buffer, as f32.
  Value half(Value at) {
    Value word = memref::LoadOp::create(b, loc, blockScales, div(at, cst(2)));
    Value shift = arith::IndexCastOp::create(
        b, loc, b.getI32Type(), mul(rem(at, cst(2)), cst(16)));
    return halfToF32(
        andI(arith::ShRUIOp::create(b, loc, word, shift), 0xffff));
  }

  /// Code kk of a 32-block as the dot products take it: its stored code,
  /// or (codebook) codebook[q] + 128, byte q & 3 of word q >> 2 of the
  /// table (picked by two selects).
  Value weightCode(function_ref<Value(int64_t)> word, int64_t kk) {
    Value q = blockCode(word, kk);
    if (plan.codebookWords.empty())
      return q;
    auto pick = [&](int64_t bit, Value ifSet, Value ifClear) {
      Value set = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                        andI(q, bit), cstI32(0));
      return arith::SelectOp::create(b, loc, set, ifSet, ifClear).getResult();
    };
    ArrayRef<int32_t> t = plan.codebookWords;
    Value tableWord = pick(8, pick(4, cstI32(t[3]), cstI32(t[2])),
                           pick(4, cstI32(t[1]), cstI32(t[0])));
    Value shift = shl(andI(q, 3), 3);
    return andI(arith::ShRUIOp::create(b, loc, tableWord, shift), 0xff);
  }

  /// Code kk (0..31) of a 32-block: bits [bits kk, +bits) of its bit
  /// stream, the little-endian words `word(0..bits-1)` (3-bit codes 10 and
  /// 21 straddle two words).
  Value blockCode(function_ref<Value(int64_t)> word, int64_t kk) {
    int64_t pos = plan.bits * kk, index = pos / 32, shift = pos % 32;
    Value c = arith::ShRUIOp::create(b, loc, word(index), cstI32(shift));
    if (shift + plan.bits > 32)
      c = arith::OrIOp::create(b, loc, c, shl(word(index + 1), 32 - shift));
    return arith::AndIOp::create(b, loc, c, cstI32((1 << plan.bits) - 1));
  }

  /// int8 code of activation v with scale s, as an i32:
  /// clamp(round_half_even(v * s), -128, 127).
  Value quantize(Value v, Value s) {
    Value r = math::RoundEvenOp::create(
        b, loc, arith::MulFOp::create(b, loc, v, s).getResult());
    r = fmax(r, cstF32(-128.0f));
    r = arith::MinNumFOp::create(b, loc, r, cstF32(127.0f), finiteMath());
    return arith::FPToSIOp::create(b, loc, b.getI32Type(), r);
  }

  /// The scale 127 / max(max_k |X[row, k]|, 1e-5) of activation row `row`,
  /// computed by all invocations with `amax[base ...]` as scratch. Every
  /// invocation returns the same value.
  Value rowScale(Value row, Value tid, Value amax, Value base) {
    Value rowStart = mul(row, cst(plan.k));
    auto loop = scf::ForOp::create(b, loc, tid, cst(plan.k),
                                   cst(plan.invocations),
                                   ValueRange{cstF32(0.0f)});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value v = loadX(add(rowStart, loop.getInductionVar()));
      Value m = fmax(loop.getRegionIterArgs()[0],
                     math::AbsFOp::create(b, loc, v).getResult());
      scf::YieldOp::create(b, loc, m);
    }
    memref::StoreOp::create(b, loc, loop.getResult(0), amax, add(base, tid));
    gpu::BarrierOp::create(b, loc);
    // Every invocation reads all partial maxima (max is exact in any order).
    auto all = scf::ForOp::create(b, loc, cst(0), cst(plan.invocations),
                                  cst(1), ValueRange{cstF32(1e-5f)});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(all.getBody());
      Value v = memref::LoadOp::create(b, loc, amax,
                                       add(base, all.getInductionVar()));
      scf::YieldOp::create(
          b, loc,
          ValueRange{fmax(all.getRegionIterArgs()[0], v)});
    }
    return arith::DivFOp::create(b, loc, cstF32(127.0f), all.getResult(0));
  }

  /// X[at] as f32: f16 / bf16 bits widened exactly.
  Value loadX(Value at) {
    Value v = memref::LoadOp::create(b, loc, x, at);
    if (plan.io == IoType::F32)
      return v;
    Value h = arith::ExtUIOp::create(b, loc, b.getI32Type(), v);
    if (plan.io == IoType::BF16)
      return bitsToF32(shl(h, 16));
    return halfToF32(h);
  }

  /// The f32 value of the f16 bits `h` (an i32 below 2^16): sign, then
  /// exponent and mantissa moved to the f32 positions with the exponent
  /// rebiased (normals; the runtime rejects infinities), or a subnormal's
  /// mantissa * 2^-24 (exact).
  Value halfToF32(Value h) {
    Value sign = shl(andI(h, 0x8000), 16);
    Value magnitude = andI(h, 0x7fff);
    Value normal = arith::AddIOp::create(b, loc, shl(magnitude, 13),
                                         cstI32((127 - 15) << 23));
    Value subnormal = arith::BitcastOp::create(
        b, loc, b.getI32Type(),
        arith::MulFOp::create(
            b, loc,
            arith::UIToFPOp::create(b, loc, b.getF32Type(), magnitude),
            cstF32(0x1p-24f))
            .getResult());
    Value bits = arith::SelectOp::create(
        b, loc, ultI(magnitude, 0x400), subnormal, normal);
    return bitsToF32(arith::OrIOp::create(b, loc, sign, bits));
  }

  /// Y[at] = v, rounded to f16 / bf16 to nearest even in integer ops (the
  /// runtime's float_to_half / float_to_bf16; Y is finite or infinite,
  /// never NaN).
  void storeY(Value v, Value at) {
    if (plan.io != IoType::F32) {
      Value u = arith::BitcastOp::create(b, loc, b.getI32Type(), v);
      Value h = plan.io == IoType::BF16 ? bf16Bits(u) : f16Bits(v, u);
      v = arith::TruncIOp::create(b, loc, b.getI16Type(), h);
    }
    memref::StoreOp::create(b, loc, v, y, at);
  }

  /// (u + 0x7fff + ((u >> 16) & 1)) >> 16: ties to even, carries into the
  /// exponent, overflows to infinity.
  Value bf16Bits(Value u) {
    Value odd = andI(shr(u, 16), 1);
    Value biased = arith::AddIOp::create(
        b, loc, u, arith::AddIOp::create(b, loc, odd, cstI32(0x7fff)));
    return shr(biased, 16);
  }

  /// f16 bits of f32 `v` (bits `u`): normals keep the top 10 mantissa bits
  /// with the exponent rebiased, plus one where the dropped 13 bits are
  /// above half or exactly half with the kept part odd (a carry bumps the
  /// exponent; past 65504 the result is clamped to infinity, 0x7c00);
  /// below 2^-14, |v| * 2^24 rounded to even is the subnormal (exact).
  Value f16Bits(Value v, Value u) {
    Value sign = andI(shr(u, 16), 0x8000);
    Value a = andI(u, 0x7fffffff);
    Value kept = arith::SubIOp::create(b, loc, shr(a, 13),
                                       cstI32((127 - 15) << 10));
    Value dropped = andI(a, 0x1fff);
    Value above = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                                        dropped, cstI32(0x1000));
    Value tie = arith::AndIOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, dropped,
                              cstI32(0x1000)),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                              andI(kept, 1), cstI32(0)));
    Value up = arith::ExtUIOp::create(
        b, loc, b.getI32Type(), arith::OrIOp::create(b, loc, above, tie));
    Value normal = arith::MinUIOp::create(
        b, loc, arith::AddIOp::create(b, loc, kept, up), cstI32(0x7c00));
    Value scaled = arith::MulFOp::create(
        b, loc, math::AbsFOp::create(b, loc, v), cstF32(0x1p24f));
    Value subnormal = arith::FPToUIOp::create(
        b, loc, b.getI32Type(), math::RoundEvenOp::create(b, loc, scaled));
    Value bits = arith::SelectOp::create(
        b, loc, ultI(a, 0x38800000), subnormal, normal);
    return arith::OrIOp::create(b, loc, sign, bits);
  }

  Value bitsToF32(Value bits) {
    return arith::BitcastOp::create(b, loc, b.getF32Type(), bits);
  }
  Value andI(Value v, int64_t mask) {
    return arith::AndIOp::create(b, loc, v, cstI32(int32_t(mask)));
  }
  Value shl(Value v, int32_t n) {
    return arith::ShLIOp::create(b, loc, v, cstI32(n));
  }
  Value shr(Value v, int32_t n) {
    return arith::ShRUIOp::create(b, loc, v, cstI32(n));
  }
  Value ultI(Value v, int64_t bound) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, v,
                                 cstI32(int32_t(bound)));
  }

  /// The runtime rejects non-finite activations before the dispatch, so
  /// min / max need no NaN handling.
  static arith::FastMathFlags finiteMath() {
    return arith::FastMathFlags::nnan | arith::FastMathFlags::ninf;
  }
  Value fmax(Value l, Value r) {
    return arith::MaxNumFOp::create(b, loc, l, r, finiteMath());
  }

  Value allocWorkgroup(int64_t size, Type type = {}) {
    auto memrefType = MemRefType::get(
        {size}, type ? type : b.getF32Type(), MemRefLayoutAttrInterface(),
        b.getI64IntegerAttr(kWorkgroupMemorySpace));
    return memref::AllocOp::create(b, loc, memrefType);
  }

  void ifThen(Value cond, function_ref<void()> body) {
    auto ifOp = scf::IfOp::create(b, loc, cond, /*withElse=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    body();
  }

  Value cst(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value cstI32(int32_t v) {
    return arith::ConstantIntOp::create(b, loc, v, 32);
  }
  Value cstF32(float v) {
    return arith::ConstantFloatOp::create(b, loc, b.getF32Type(),
                                          APFloat(v));
  }
  Value add(Value l, Value r) { return arith::AddIOp::create(b, loc, l, r); }
  Value sub(Value l, Value r) { return arith::SubIOp::create(b, loc, l, r); }
  Value mul(Value l, Value r) { return arith::MulIOp::create(b, loc, l, r); }
  Value div(Value l, Value r) { return arith::DivUIOp::create(b, loc, l, r); }
  Value rem(Value l, Value r) { return arith::RemUIOp::create(b, loc, l, r); }
  Value min(Value l, Value r) { return arith::MinUIOp::create(b, loc, l, r); }
  Value eq(Value l, Value r) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, l, r);
  }
  Value ult(Value l, Value r) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, l, r);
  }

  OpBuilder &b;
  Location loc;
  const GpuPlan &plan;
  Value x, w, y, params, scales, blockScales;
};

class LowerGpuPass : public lowbit::impl::LowBitLowerGpuBase<LowerGpuPass> {
public:
  using LowBitLowerGpuBase::LowBitLowerGpuBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<std::pair<func::FuncOp, MpGemmOp>> work;
    module.walk([&](MpGemmOp op) {
      work.push_back({op->getParentOfType<func::FuncOp>(), op});
    });
    if (work.empty())
      return;
    FailureOr<std::unique_ptr<GpuTargetInfo>> info =
        lookupGpuTargetInfo(module);
    if (failed(info))
      return signalPassFailure();
    targetInfo = std::move(*info);
    for (auto [func, op] : work)
      if (failed(lower(module, func, op)))
        return signalPassFailure();
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    UnitAttr::get(&getContext()));
  }

private:
  LogicalResult lower(ModuleOp module, func::FuncOp func, MpGemmOp op) {
    if (!func || func.getBody().front().getOperations().size() != 2)
      return op.emitOpError() << "lowbit-lower-gpu needs a function whose "
                                 "body is the op and its return";
    auto gpuConfig = dyn_cast_or_null<GpuAttr>(op.getConfigAttr());
    if (!gpuConfig) {
      InFlightDiagnostic diag = op.emitOpError()
                                << "lowbit-lower-gpu needs a #lowbit.gpu "
                                   "config (from lowbit-select-config with a "
                                   "GPU target), ";
      if (op.getConfigAttr())
        return diag << "got " << op.getConfigAttr();
      return diag << "got none";
    }
    if (failed(gpuConfig.verifyFor([&] { return op.emitOpError(); },
                                   op.getWeight(), op.getLayout(), op.getM(),
                                   op.getK())))
      return failure();

    GpuPlan plan;
    plan.m = op.getM();
    plan.k = op.getK();
    Encoding encoding = op.getWeight().getEncoding();
    plan.bits = encoding == Encoding::Ternary ? 2 : op.getWeight().getBits();
    plan.words = llvm::divideCeil(plan.k * plan.bits, 32);
    plan.wgM = gpuConfig.getWgTileM();
    plan.wgN = gpuConfig.getWgTileN();
    plan.sgM = gpuConfig.getSgTileM();
    plan.sgN = gpuConfig.getSgTileN();
    plan.kSplit = gpuConfig.getKSplit();
    plan.lanes = gpuConfig.getSubgroupSize();
    plan.invocations = gpuConfig.getWorkgroupSize();
    plan.fused = gpuConfig.getFuseActQuant();
    plan.intDot = gpuConfig.getIntDot();
    plan.matrix = gpuConfig.getMatrix();
    plan.blockScales = encoding != Encoding::Ternary;
    plan.binary = encoding == Encoding::Binary;
    WeightAttr weight = op.getWeight();
    plan.ggml = encoding == Encoding::GgufQ4_0 || weight.isBlockEncoding();
    if (encoding == Encoding::Min) {
      plan.params = BlockParams::ScaleOffset;
    } else if (encoding == Encoding::Offset) {
      plan.params = BlockParams::Scale;
      plan.codeOffset = weight.getCodeOffset();
    } else if (encoding == Encoding::GgufQ4_0) {
      // ggml's Q4_0: W = d (q - 8).
      plan.params = BlockParams::Scale;
      plan.codeOffset = 8;
    } else if (encoding == Encoding::Codebook) {
      // W = d codebook[q] = d ((codebook[q] + 128) - 128): the looked-up
      // byte as an unsigned code with code offset 128.
      plan.params = BlockParams::Scale;
      plan.codeOffset = 128;
      ArrayRef<int8_t> codebook = weight.getCodebook().asArrayRef();
      plan.codebookWords.assign(4, 0);
      for (auto [q, value] : llvm::enumerate(codebook))
        plan.codebookWords[q / 4] |= int32_t(uint32_t(uint8_t(value + 128))
                                             << (8 * (q % 4)));
    }
    if (weight.isBlockEncoding()) {
      plan.scaleGroup = weight.getGroup();
      plan.superBlock = weight.getSuperBlock();
      plan.scaleBits = weight.getScaleBits();
    }
    if (dtype == "f16")
      plan.io = IoType::F16;
    else if (dtype == "bf16")
      plan.io = IoType::BF16;
    else if (dtype != "f32")
      return op.emitOpError() << "lowbit-lower-gpu: unknown dtype '" << dtype
                              << "' (expected f32, f16, bf16)";
    // Workgroup memory: row scales, fused absmax scratch, partial sums.
    int64_t tileSize = plan.sgM * plan.sgN;
    int64_t rowScaleBytes =
        plan.blockScales
            ? 0
            : 4 * plan.wgN * (plan.fused ? plan.invocations + 1 : 1);
    // Matrix path: per subgroup int8 A and B and int32 C scratch; else the
    // partial sums of every invocation.
    int64_t sharedBytes =
        rowScaleBytes +
        (plan.matrix ? plan.invocations / plan.lanes *
                           (kMatM * kMatK + kMatK * kMatN + 4 * kMatM * kMatN)
                     : 4 * plan.invocations * tileSize);
    if (sharedBytes > targetInfo->getMaxWorkgroupBytes())
      return op.emitOpError()
             << "lowbit-lower-gpu: config " << gpuConfig << " needs "
             << sharedBytes << " bytes of workgroup memory, more than "
             << targetInfo->getMaxWorkgroupBytes() << " ("
             << targetInfo->getName() << ")";

    Location loc = func.getLoc();
    OpBuilder b(func);
    auto gpuModule = gpu::GPUModuleOp::create(b, loc, func.getSymName());
    b.setInsertionPointToStart(gpuModule.getBody());
    Type f32 = b.getF32Type(), i32 = b.getI32Type();
    Type io = plan.io == IoType::F32 ? f32 : b.getI16Type();
    auto dynamic = [&](Type t) {
      return MemRefType::get({ShapedType::kDynamic}, t);
    };
    SmallVector<Type> args = {dynamic(io),
                              MemRefType::get({plan.m * plan.words}, i32),
                              dynamic(io), MemRefType::get({2}, i32),
                              dynamic(f32), dynamic(plan.ggml ? i32 : f32)};
    auto blockSize =
        b.getDenseI32ArrayAttr({static_cast<int32_t>(plan.invocations), 1, 1});
    auto makeKernel = [&](StringRef name, bool scalesOnly) {
      auto kernel = gpu::GPUFuncOp::create(b, loc, name,
                                           b.getFunctionType(args, {}));
      kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                      b.getUnitAttr());
      kernel.setKnownBlockSizeAttr(blockSize);
      Block &entry = kernel.getBody().front();
      OpBuilder body = OpBuilder::atBlockEnd(&entry);
      GpuKernelBuilder builder(body, loc, plan, entry.getArguments());
      if (scalesOnly)
        builder.buildActScales();
      else
        builder.buildMpGemm();
      gpu::ReturnOp::create(body, loc);
    };
    if (!plan.fused && !plan.blockScales)
      makeKernel("act_scales", /*scalesOnly=*/true);
    makeKernel("mpgemm", /*scalesOnly=*/false);
    gpuModule->setAttr("lowbit.config", gpuConfig);
    func.erase();
    return success();
  }

  std::shared_ptr<const GpuTargetInfo> targetInfo;
};

} // namespace
