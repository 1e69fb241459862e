//===- weights.h - ggml weight tensors packed for lowbit's kernels -*- C++ -*-//
//
// The part of ggml-lowbit that knows nothing of ggml's backend interface:
// which ggml block types it takes, the kernel table of the host's ISA, and
// repacking one tensor's bytes (as ggml stores them) into the layout of that
// table's any-shape kernel.
//
//===----------------------------------------------------------------------===//
#ifndef GGML_LOWBIT_WEIGHTS_H
#define GGML_LOWBIT_WEIGHTS_H

#include "lowbit/kernel_abi.h"
#include "lowbit/lowbit.h"
#include "lowbit/upconvert.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace ggml_lowbit {

/// The any-shape kernels of one x86 target, one or two per lowbit format
/// (GEMV and GEMM configs, by min_n).
struct KernelTable {
  std::string target; // "x86-avx2", "x86-avxvnni", "x86-avx512vnni"
  std::vector<lowbit_kernel_entry_t> any;
  std::vector<uint32_t> types; // the ggml types whose formats all have one

  /// The entries of `format`, by increasing min_n (empty: none).
  std::vector<const lowbit_kernel_entry_t *>
  kernels_of(const std::string &format) const;
};

/// The table of the best x86 target this CPU runs (x86-avx512vnni, then
/// x86-avxvnni, then x86-avx2, each as lowbit::host_runs decides), or a
/// table with an empty target when it runs none of them.
KernelTable select_kernel_table();

/// Whether ggml type `ggml_type` (ggml.h's enum, the GGUF type id) is one
/// ggml-lowbit takes: a type of weights.cpp's table whose lowbit formats
/// all have any-shape kernels in `table` (table.types).
bool takes_type(uint32_t ggml_type, const KernelTable &table);
/// Whether every lowbit format of `ggml_type` has a kernel in `table` for
/// rows of K weights (lowbit::any_kernel_shape_error: the ternary
/// any-shape kernels stop at LOWBIT_ANY_SHAPE_MAX_TERNARY_K). Remembered
/// per thread: the scheduler asks for every MUL_MAT of every graph.
bool takes_shape(uint32_t ggml_type, int64_t K, const KernelTable &table);
/// Lower-case name of a type takes_type knows ("tq2_0"), else "".
const char *type_name(uint32_t ggml_type);
/// The bytes an M x K weight of `ggml_type` (ggml_bytes of them as ggml
/// stores it) takes in a buffer of ours: ggml's, or the layout its type
/// packs into directly where that is larger (TQ1_0's i2s, 2 bits a weight
/// against 1.69; a ragged M's padded tiles), so that pack_tensor can
/// place the packed weight there, as it does every other.
size_t buffer_bytes(uint32_t ggml_type, int64_t M, int64_t K,
                    size_t ggml_bytes);

/// One weight matrix in the layout of its kernels.
struct PackedTensor {
  lowbit::UpconvertWeights weights;
  std::vector<const lowbit_kernel_entry_t *> kernels; // by increasing min_n
  std::string conversion; // e.g. "tq2_0->i2s"
  uint32_t ggml_type = 0; // the type ggml stored it in
  /// The fp16 d of ternary blocks that the packed form does not carry (an
  /// i2s tensor keeps one scale, so a block whose codes are all zero loses
  /// its own d), by block index in the tensor, sorted: set by
  /// pack_tensor's check, read by encode_ggml_rows.
  std::vector<std::pair<int64_t, uint16_t>> d_patches;
  /// pack_tensor's check passed: encode_ggml_rows gives back every byte
  /// ggml stored, so those bytes need not be kept.
  bool held_once = false;
  /// The arrays of `weights` are views of pack_tensor's `place`.
  bool in_place = false;

  /// The entry for N activation rows: the largest min_n <= N.
  const lowbit_kernel_entry_t &kernel_for(int64_t N) const;
};

/// Bytes of one row of `packed`'s tensor as ggml stores it.
size_t ggml_row_bytes(const PackedTensor &packed);

/// Whether encode_ggml_rows can write ggml's bytes of this tensor's type
/// back from its packed form: tq1_0 and tq2_0 (from i2s or w2g256), and
/// the block formats (q4_0 ... q8_0, the K-quants, iq4_nl), which pack
/// every bit of their blocks (lowbit::encode_block_rows).
bool encodes_ggml_bytes(const PackedTensor &packed);

/// Writes ggml's bytes of rows [m0, m1) of `packed`'s tensor to `out`
/// (ggml_row_bytes each), from the packed form alone: the codes of the
/// upconvert layout (kernel_abi.h) and the scales, in ggml's blocks
/// (ggml-common.h's block_tq1_0 and block_tq2_0, as lowbit's
/// gguf_import.cpp documents them; the block formats through
/// lowbit::encode_block_rows).
/// encodes_ggml_bytes must hold.
void encode_ggml_rows(const PackedTensor &packed, int64_t m0, int64_t m1,
                      uint8_t *out);

/// Memory the packed weights may be placed in (64-byte aligned, zero
/// filled, outliving them), or none.
struct Place {
  uint8_t *bytes = nullptr;
  size_t size = 0;
};

/// Runs body(begin, end) over disjoint ranges that cover [0, count), on the
/// caller's thread and others, and returns when every range is done (an
/// exception of a range is thrown again in the caller).
using ParallelFor = std::function<void(
    int64_t count, const std::function<void(int64_t, int64_t)> &body)>;

/// Packs M x K weights of ggml type `ggml_type` (`bytes` as ggml stores
/// them, rows of K values) for `table`'s kernels, then checks that
/// encode_ggml_rows gives every byte back (held_once, d_patches):
///  - the block formats (q4_0 ... iq4_nl) into lowbit's formats of the
///    same names, whose blocks are ggml's;
///  - tq1_0 and tq2_0 into i2s when every block with a non-zero code has
///    the same d (a BitNet b1.58 checkpoint: one scale per tensor), else
///    into w2g256 (one block = one group: codes t in 0..3, fp16 scale d,
///    zero point 1), which holds every such tensor exactly, tq2_0's code 3
///    (2d, as ggml decodes it) included.
/// The packing (into the upconvert layout, straight from `bytes`: no copy
/// of them, lowbit::gguf_pack_rows; into `place` where it fits, in_place)
/// and the check run on tiles of 16 rows split over `parallel`; w2g256 is
/// packed on the caller's thread, into memory of its own.
/// Throws lowbit::Error naming `name` when the bytes are invalid for the
/// type (a non-finite or negative scale) or the shape has no kernel.
PackedTensor pack_tensor(uint32_t ggml_type, const uint8_t *bytes,
                         size_t size, int64_t M, int64_t K,
                         const KernelTable &table, const std::string &name,
                         const Place &place, const ParallelFor &parallel);

} // namespace ggml_lowbit

#endif // GGML_LOWBIT_WEIGHTS_H
