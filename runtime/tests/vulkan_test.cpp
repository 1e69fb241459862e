//===- vulkan_test.cpp - the GPU kernels' packing of the weights ----------===//
//
// pack_gpu_weights needs no device: its buffers are read back here with an
// independent transcription of vulkan.h (the b-bit codes, GGML SCALES) and
// must give the codes and the float scales of row_block_params bit for bit,
// in no more than the GGUF bytes plus the 2 bytes of half padding.

#include "lowbit/vulkan.h"

#include "test_util.h"

#include <cstring>
#include <random>

#include <gtest/gtest.h>

namespace lowbit {
namespace {

/// Bits [bit, bit + n) of a little-endian bit string of words.
uint32_t field(const std::vector<uint32_t> &words, int64_t bit, int n) {
  uint64_t v = words[size_t(bit / 32)];
  if (bit % 32 + n > 32)
    v |= uint64_t(words[size_t(bit / 32 + 1)]) << 32;
  return uint32_t(v >> (bit % 32)) & ((1u << n) - 1);
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, 4) == 0; }

TEST(GpuWeights, GgmlFormatsReadBackAsRowBlockParams) {
  int count = 0;
  const GgmlBlockType *types = ggml_block_types(&count);
  for (int t = 0; t < count; ++t) {
    const GgmlBlockType &type = types[t];
    const int64_t M = 19, K = 512;
    std::mt19937 rng(7 + t);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    std::vector<float> Wf(size_t(M * K));
    for (float &v : Wf)
      v = dist(rng);
    const PackedWeights W = quantize(Format::parse(type.name), Wf.data(), M, K);
    const GpuWeights G = pack_gpu_weights(W);
    const int b = type.code_bits;
    const int64_t gguf = M * (K / type.block) * type.block_bytes;
    EXPECT_EQ(G.codes.size() * 4, size_t(M * K * b / 8)) << type.name;
    EXPECT_LE(G.bytes(), size_t(gguf + 2)) << type.name;
    EXPECT_GE(G.bytes(), size_t(gguf)) << type.name;

    const int parts = type.has_min ? 2 : 1;
    const int subBlocks =
        type.sub_scale_bits ? type.block / type.scale_block : 0;
    const int64_t superWords =
        int64_t(parts) * subBlocks * type.sub_scale_bits / 32;
    const int64_t perRow = K / type.block, records = M * perRow;
    const int zero = type.has_min || type.codebook ? 0 : 1 << (b - 1);
    std::vector<int8_t> c(static_cast<size_t>(K));
    std::vector<float> s(static_cast<size_t>(K / type.scale_block));
    std::vector<float> o(s.size());
    for (int64_t m = 0; m < M; ++m) {
      row_block_params(W, m, c.data(), s.data(), o.data());
      for (int64_t k = 0; k < K; ++k) {
        const int q = int(field(G.codes, (m * K + k) * b, b));
        const int value = type.codebook ? type.codebook[q] : q - zero;
        ASSERT_EQ(value, c[size_t(k)])
            << type.name << " row " << m << " k " << k;
      }
      for (int64_t r = 0; r < perRow; ++r) {
        const int64_t record = m * perRow + r;
        auto half = [&](int64_t at) {
          return half_to_float(uint16_t(
              field(G.blocks, (2 * records * superWords + at) * 16, 16)));
        };
        const float d = half(record * parts);
        const float second = type.has_min ? half(record * parts + 1) : 0.0f;
        const int per = type.block / type.scale_block;
        for (int j = 0; j < per; ++j) {
          float sj = d, oj = second;
          if (subBlocks) {
            const int sb = type.sub_scale_bits;
            int sc =
                int(field(G.blocks, record * superWords * 32 + j * sb, sb));
            if (!type.has_min && sc >= 1 << (sb - 1))
              sc -= 1 << sb;
            sj = d * float(sc);
            if (type.has_min) {
              const int mj = int(
                  field(G.blocks,
                        record * superWords * 32 + (subBlocks + j) * sb, sb));
              oj = -(second * float(mj));
            }
          }
          const size_t at = size_t(r * per + j);
          EXPECT_TRUE(same_bits(sj, s[at]))
              << type.name << " row " << m << " s " << at;
          if (type.has_min)
            EXPECT_TRUE(same_bits(oj, o[at]))
                << type.name << " row " << m << " o " << at;
        }
      }
    }
  }
}

TEST(GpuWeights, RejectsFormatsWithoutAGpuKernel) {
  std::vector<float> W(64, 0.25f);
  const PackedWeights P = quantize(Format::parse("tl1"), W.data(), 1, 64);
  EXPECT_EQ(test::error_of([&] { pack_gpu_weights(P); }),
            "vulkan: no GPU kernel reads tl1 weights");
}

} // namespace
} // namespace lowbit
