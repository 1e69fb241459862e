//===- vulkan.h - running embedded SPIR-V kernels through Vulkan -*- C++ -*-===//
//
// The host side of the GPU targets (spirv-vulkan, spirv-xe2): a generated
// kernel is a SPIR-V binary embedded in C++ as two globals, and this
// launcher creates the Vulkan objects around it and dispatches it.
//
// GENERATED GLOBALS (lib/Conversion/LowBitToSPIRV)
//   uint32_t <name>_spirv[]  the SPIR-V module: entry point "mpgemm" and,
//                            when the scales are not fused, "act_scales"
//   int64_t  <name>_info[15] {abi version (3), M, K, Kw = 32-bit words per
//                            row (ceil(K / 16) for i2s, K b / 32 for
//                            w<b>gG and the ggml block formats with b-bit
//                            codes), invocations per workgroup, wg_tile_m,
//                            wg_tile_n, has the act_scales pre-kernel
//                            (1 / 0), SPIR-V word count, integer dot
//                            product (1 / 0: the device needs
//                            shaderIntegerDotProduct), weights (0: i2s,
//                            1..4: w1gG..w4gG, 6..13: a ggml block format
//                            (q4_0 ... iq4_nl), 6 + (1 with a min) + (2
//                            with scale blocks of 16) + (4 with a
//                            codebook); with the code bits b = 32 Kw / K
//                            and info[14] each format has its own: 6 q4_0,
//                            q5_0, q8_0; 7 q4_1, q5_1, q4_k, q5_k; 8 q3_k,
//                            q6_k; 9 q2_k; 10 iq4_nl), X / Y element
//                            type (0: f32,
//                            1: f16, 2: bf16), native 16-bit storage
//                            buffers (1 / 0: the device needs
//                            storageBuffer16BitAccess and shaderInt16;
//                            0 with a 16-bit type: the module packs two
//                            halves per 32-bit word itself), cooperative
//                            matrices (1 / 0: #lowbit.gpu matrix = true;
//                            the device needs VK_KHR_cooperative_matrix
//                            with the 8 x 16 x 32 int8 shape, and
//                            shaderInt8), the ggml format's sub-scale bits
//                            (the dialect's scale_bits: 4 q2_k, 6 q3_k,
//                            q4_k, q5_k, 8 q6_k; 0 otherwise)}
//
// BUFFERS (descriptor set 0, storage buffers, the same for both entries)
//   0  float    X [N][K]     activations (f16 / bf16: uint16_t bits)
//   1  uint32_t W [M][Kw]    i2s codes c = q + 1, 16 per word, code k of a
//                            row in bits [2 (k % 16), +2) of word k / 16
//                            (the canonical i2s row padded to 4 bytes)
//   2  float    Y [N][M]     output (f16 / bf16: uint16_t bits)
//   3  uint32_t params[2]    N, the bits of the float w_scale
//   4  float    scales [N]   i2s activation scales s = 127 / max(absmax,
//                            1e-5) (written by act_scales, read by mpgemm)
//   5  float    blocks [M][K / 32][2]  w<b>gG: per 32-block (s, z) of the
//                            weights (row_block_scales), z an integer
//      uint32_t blocks       the ggml block formats: GGML SCALES
//
// w<b>gG codes are the canonical rows (b bits, K a multiple of 32, so no
// padding; a 32-block is b words, 3-bit codes straddle words); w1gG codes c
// stand for 2c - 1 (no zero point). The ggml block formats are repacked by
// the host into rows of their codes, b bits each, in k order: q = c +
// 2^(b - 1) for the formats with a code offset (the dialect's code_offset
// z: W = s (q - z); q8_0 0..255, q6_k 0..63, q4_0 0..15), q = c with a min
// (W = s c + o), and iq4_nl's codebook indices (the kernel looks up
// codebook[q] + 128 and takes z = 128).
//
// GGML SCALES (uint32_t words, little-endian; a record is one ggml block of
// a row: 32 weights, or the 256 of a K-quant super-block; M K / block
// records, row after row)
//   first, K-quants only: per record, the sub-scales sc_j of its sub-blocks
//     j (8 of 32 weights: q4_k, q5_k; 16 of 16: q2_k, q3_k, q6_k) as one
//     bit string of info[14] = 4 (q2_k), 6 or 8 (q6_k) bits each, sub-block
//     j at bits [bits j, +bits), two's complement for q3_k (its 6-bit scale
//     - 32) and q6_k (its int8 scale), unsigned with a min; then (with a
//     min) the sub-minimums m_j likewise (unsigned): 2 16 4 (q2_k), 16 6
//     (q3_k), 2 8 6 (q4_k, q5_k), 16 8 (q6_k) bits, whole words;
//   then per record the fp16 d and, with a min, the fp16 m (q4_1, q5_1) or
//     dmin (K-quants), two to a word (low half first; the last word padded
//     with 0).
//   So a block's scales take ggml's own bits: the buffers W and blocks
//   together are the GGUF bytes plus at most 2 bytes (the half padding):
//   per 256 weights q4_0 144, q4_1 160, q5_0 176, q5_1 192, q8_0 272,
//   iq4_nl 144, q2_k 84, q3_k 110, q4_k 144, q5_k 176, q6_k 210 (before
//   ABI 3 the runtime stored s and o as floats: q8_0 288, q4_k 192, q6_k
//   256, q2_k 192, q3_k 160, q5_k 224, q4_0 and q4_1 192, q5_0 192, q5_1
//   224). The kernel decodes s = d and o = m, or for K-quants s_j = d *
//   (float)sc_j and o_j = -(dmin * (float)m_j), as ggml dequantizes and the
//   runtime's row_block_params computes them, so Y is the same as from
//   those floats. Activations are quantized per 32-block in the kernel,
//   and Y agrees with the reference within float summation order.
//
// DISPATCH
//   act_scales (when present): (N, 1, 1) workgroups, then a barrier;
//   mpgemm: (ceil(M / wg_tile_m), ceil(N / wg_tile_n), 1) workgroups.
//   Y equals the i2s reference bit for bit when the device rounds float
//   division correctly (lavapipe does; Vulkan allows 2.5 ulp).
//
// 16-BIT I/O
//   VulkanKernel::run still takes and returns float: the host rounds X to
//   the kernel's type to nearest even (float_to_half / float_to_bf16 of
//   format.h; a finite value that rounds to infinity is an Error) and
//   widens Y back exactly. The kernel computes Y in f32 from the widened X
//   and rounds it the same way, so an i2s Y equals round(reference(round(X)))
//   bit for bit.
//
// Built without Vulkan (LOWBIT_VULKAN off), vulkan_available() is false and
// VulkanKernel throws Error.
//
//===----------------------------------------------------------------------===//
#ifndef LOWBIT_VULKAN_H
#define LOWBIT_VULKAN_H

#include "lowbit/format.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace lowbit {

/// The element type of a GPU kernel's X and Y (info[11]).
enum class GpuDType { F32, F16, BF16 };
/// "f32", "f16", "bf16" (throws Error on anything else).
GpuDType parse_gpu_dtype(const std::string &name);
std::string gpu_dtype_name(GpuDType type);
/// v rounded to `type` to nearest even and widened back (exact for F32): the
/// value a kernel of that type reads for activation v, or writes for an f32
/// result v.
float round_to_dtype(GpuDType type, float v);

/// Whether this runtime has Vulkan and finds a device with a compute queue.
bool vulkan_available();
/// The name of that device, or "" without one.
std::string vulkan_device_name();

/// The two globals of one generated GPU kernel.
struct SpirvKernel {
  const uint32_t *words = nullptr;
  const int64_t *info = nullptr;
};

/// The weights as a GPU kernel's buffers W (codes) and blocks hold them
/// (BUFFERS, GGML SCALES), in 32-bit words.
struct GpuWeights {
  std::vector<uint32_t> codes;
  std::vector<uint32_t> blocks;
  /// Bytes of both: what the weights take on the device.
  size_t bytes() const;
};
/// Packs W (i2s, w<b>gG or a ggml block format) for the GPU kernels; needs
/// no device. Throws Error on another format or a non-finite fp16 scale.
GpuWeights pack_gpu_weights(const PackedWeights &W);

/// One kernel with its weights resident in a device buffer.
class VulkanKernel {
public:
  /// Checks the info block against W (format, M, K), repacks
  /// and uploads the weights and builds the pipelines. Throws Error.
  VulkanKernel(const SpirvKernel &kernel, const PackedWeights &W);
  ~VulkanKernel();
  VulkanKernel(const VulkanKernel &) = delete;
  VulkanKernel &operator=(const VulkanKernel &) = delete;

  /// Y [N][M] = X [N][K] * W^T: uploads X (rounded to the kernel's type),
  /// dispatches, waits, reads Y. Throws Error on a non-finite activation
  /// (or one the kernel's type cannot hold) or a Vulkan failure.
  void run(const float *X, int64_t N, float *Y);
  /// Seconds from submit to the fence of the last run (the dispatches
  /// only: no upload or read back).
  double last_dispatch_seconds() const;
  /// Bytes of the weights on the device (GpuWeights::bytes of W's packing).
  size_t weight_bytes() const;
  /// The kernel's X / Y element type.
  GpuDType dtype() const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace lowbit

#endif // LOWBIT_VULKAN_H
