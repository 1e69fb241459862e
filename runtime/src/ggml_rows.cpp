//===- ggml_rows.cpp - the GGML ROWS layout of kernel_abi.h ---------------===//
//
// Ternary weights as ggml's TQ2_0 or TQ1_0 stores them, row after row: what a GGUF
// file holds, so that weights imported from one are a view of its mapping
// (gguf_import.cpp) and these packers only serve weights from elsewhere
// (lowbit run/verify/bench, the tests).
//
//===----------------------------------------------------------------------===//

#include "lowbit/error.h"
#include "lowbit/gguf.h"
#include "lowbit/upconvert.h"

#include <string>
#include <vector>

namespace lowbit {

std::string ggml_rows_error(const Format &format, int64_t K) {
  if (!format.is_ternary() || format.kind != FormatKind::I2S)
    return "the ggml rows layout (kernel_abi.h) holds i2s weights, not " +
           format.name();
  if (K % LOWBIT_GGML_ROWS_BLOCK != 0)
    return "the ggml rows layout (kernel_abi.h) needs K to be a multiple of " +
           std::to_string(LOWBIT_GGML_ROWS_BLOCK) + ", got K = " +
           std::to_string(K);
  return "";
}

UpconvertWeights shape_ggml_rows(const Format &format, int64_t M, int64_t K,
                                 float w_scale, uint8_t *rows,
                                 int block_bytes) {
  if (std::string problem = ggml_rows_error(format, K); !problem.empty())
    throw Error(problem);
  if (block_bytes != LOWBIT_GGML_ROWS_TQ2_0_BYTES &&
      block_bytes != LOWBIT_GGML_ROWS_TQ1_0_BYTES)
    throw Error("the ggml rows layout (kernel_abi.h) holds TQ2_0 (" +
                std::to_string(LOWBIT_GGML_ROWS_TQ2_0_BYTES) +
                " bytes) or TQ1_0 (" +
                std::to_string(LOWBIT_GGML_ROWS_TQ1_0_BYTES) +
                " bytes) blocks, not blocks of " +
                std::to_string(block_bytes) + " bytes");
  UpconvertWeights U;
  U.format = format;
  U.ggml_block_bytes = block_bytes;
  U.M = U.Mp = M;
  U.K = U.Kp = K;
  U.bits = 2;
  U.w_scale = w_scale;
  U.tile_rows = 1;
  const size_t bytes =
      size_t(M) * size_t(K / LOWBIT_GGML_ROWS_BLOCK) * size_t(block_bytes);
  U.codes = rows ? AlignedArray<uint8_t>::view(rows, bytes)
                 : AlignedArray<uint8_t>(bytes);
  return U;
}

UpconvertWeights pack_ggml_rows(const PackedWeights &canonical,
                                int block_bytes) {
  const Format &f = canonical.format;
  UpconvertWeights U = shape_ggml_rows(f, canonical.M, canonical.K,
                                       canonical.tensor_scale, nullptr,
                                       block_bytes);
  const GgufType type = block_bytes == LOWBIT_GGML_ROWS_TQ1_0_BYTES
                            ? GgufType::TQ1_0
                            : GgufType::TQ2_0;
  const int64_t K = canonical.K;
  const int64_t blocks = K / LOWBIT_GGML_ROWS_BLOCK;
  const uint16_t d = float_to_half(canonical.tensor_scale);
  std::vector<int8_t> q(static_cast<size_t>(K));
  std::vector<uint8_t> c(LOWBIT_GGML_ROWS_BLOCK);
  for (int64_t m = 0; m < canonical.M; ++m) {
    unpack_row(canonical, m, q.data());
    for (int64_t j = 0; j < blocks; ++j) {
      for (int64_t i = 0; i < LOWBIT_GGML_ROWS_BLOCK; ++i)
        c[size_t(i)] = uint8_t(q[size_t(j * LOWBIT_GGML_ROWS_BLOCK + i)] + 1);
      encode_tq_block(type, c.data(), d,
                      U.codes.data() + (m * blocks + j) * block_bytes);
    }
  }
  return U;
}

} // namespace lowbit
