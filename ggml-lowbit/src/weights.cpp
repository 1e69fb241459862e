//===- weights.cpp - ggml weight tensors packed for lowbit's kernels ------===//
#include "weights.h"

#include "lowbit/error.h"
#include "lowbit/format.h"
#include "lowbit/gguf.h"
#include "lowbit/reencode.h"
#include "lowbit/upconvert.h"
#include "lowbit/run_kernel.h"
#include "lowbit/target.h"

#include "lowbit_ggml_avx2_kernels.h"
#include "lowbit_ggml_avx512vnni_kernels.h"
#include "lowbit_ggml_avxvnni_kernels.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <map>
#include <utility>

namespace ggml_lowbit {
namespace {

/// One ggml type ggml-lowbit takes and the lowbit formats its tensors
/// become (the first that holds a tensor exactly; see pack_tensor).
struct TypeRow {
  lowbit::GgufType type;
  const char *name;
  std::vector<const char *> formats;
};

const std::vector<TypeRow> &type_table() {
  static const std::vector<TypeRow> rows = {
      // ggml's blocks are lowbit's formats of the same names: a copy.
      {lowbit::GgufType::Q4_0, "q4_0", {"q4_0"}},
      {lowbit::GgufType::Q4_1, "q4_1", {"q4_1"}},
      {lowbit::GgufType::Q5_0, "q5_0", {"q5_0"}},
      {lowbit::GgufType::Q5_1, "q5_1", {"q5_1"}},
      {lowbit::GgufType::Q8_0, "q8_0", {"q8_0"}},
      {lowbit::GgufType::Q2_K, "q2_k", {"q2_k"}},
      {lowbit::GgufType::Q3_K, "q3_k", {"q3_k"}},
      {lowbit::GgufType::Q4_K, "q4_k", {"q4_k"}},
      {lowbit::GgufType::Q5_K, "q5_k", {"q5_k"}},
      {lowbit::GgufType::Q6_K, "q6_k", {"q6_k"}},
      {lowbit::GgufType::IQ4_NL, "iq4_nl", {"iq4_nl"}},
      {lowbit::GgufType::TQ1_0, "tq1_0", {"i2s", "w2g256"}},
      {lowbit::GgufType::TQ2_0, "tq2_0", {"i2s", "w2g256"}},
  };
  return rows;
}

const TypeRow *find_type(uint32_t ggml_type) {
  for (const TypeRow &row : type_table())
    if (uint32_t(row.type) == ggml_type)
      return &row;
  return nullptr;
}

/// ggml-common.h's block_tq1_0 {qs[48], qh[4], d} and block_tq2_0 {qs[64],
/// d}: 256 values, the fp16 d in the last two bytes.
constexpr int64_t kTernaryBlock = 256;
int64_t ternary_block_bytes(lowbit::GgufType type) {
  return type == lowbit::GgufType::TQ2_0 ? 66 : 54;
}

/// A tq1_0 / tq2_0 tensor as w2g256: value x = d * (t - 1) of each block
/// becomes code t with the block's d as the group scale and zero point 1,
/// so the kernels' (code - zero) * scale is ggml's value bit for bit.
lowbit::PackedWeights ternary_blocks_as_w2(lowbit::GgufType type,
                                           const uint8_t *bytes, size_t size,
                                           int64_t M, int64_t K,
                                           const std::string &name) {
  lowbit::GgufTensor tensor;
  tensor.name = name;
  tensor.type = type;
  tensor.ne = {K, M};
  tensor.data = bytes;
  tensor.bytes = size;
  if (lowbit::gguf_tensor_bytes(type, M, K) != size)
    throw lowbit::Error(name + ": " + std::to_string(size) +
                        " bytes do not hold " + std::to_string(M) + " x " +
                        std::to_string(K) + " " +
                        lowbit::gguf_type_name(type) + " values");

  lowbit::PackedWeights W;
  W.format = lowbit::Format::parse("w2g256");
  W.M = M;
  W.K = K;
  const int64_t rowBytes = W.row_bytes();
  const int64_t blocks = K / kTernaryBlock;
  const int64_t blockBytes = ternary_block_bytes(type);
  W.codes.assign(size_t(M * rowBytes), 0);
  W.scales.assign(size_t(M * blocks), 0);
  W.zeros.assign(size_t(M * blocks), lowbit::float_to_half(1.0f));
  std::vector<float> row(static_cast<size_t>(K));
  for (int64_t m = 0; m < M; ++m) {
    lowbit::gguf_decode_row(tensor, m, row.data());
    uint8_t *codes = W.codes.data() + m * rowBytes;
    for (int64_t b = 0; b < blocks; ++b) {
      const uint8_t *block = bytes + (m * blocks + b) * blockBytes;
      const uint16_t dBits =
          uint16_t(block[blockBytes - 2] | block[blockBytes - 1] << 8);
      const float d = lowbit::half_to_float(dBits);
      if (!std::isfinite(d) || d < 0.0f)
        throw lowbit::Error(name + ": block " + std::to_string(b) +
                            " of row " + std::to_string(m) + " has scale " +
                            std::to_string(d) +
                            "; ggml-lowbit takes finite, non-negative ones");
      W.scales[size_t(m * blocks + b)] =
          d == 0.0f ? 0 : dBits; // -0 and +0 alike: every value is 0
      for (int64_t j = 0; j < kTernaryBlock; ++j) {
        const int64_t k = b * kTernaryBlock + j;
        const float x = row[size_t(k)];
        const int t = d == 0.0f ? 1 : int(x / d) + 1;
        if (t < 0 || t > 3 || float(t - 1) * d != x)
          throw lowbit::Error(name + ": value " + std::to_string(x) +
                              " at [" + std::to_string(m) + ", " +
                              std::to_string(k) + "] is not a multiple of its "
                              "block's scale");
        codes[k / 4] |= uint8_t(t << (2 * (k % 4)));
      }
    }
  }
  lowbit::validate(W);
  return W;
}

void add_any_kernels(const lowbit_kernel_entry_t *entries, size_t count,
                     const char *target, KernelTable &table) {
  for (size_t i = 0; i < count; ++i)
    if (entries[i].M == 0 && entries[i].K == 0 && entries[i].any_fn &&
        std::strcmp(entries[i].target, target) == 0)
      table.any.push_back(entries[i]);
}

} // namespace

std::vector<const lowbit_kernel_entry_t *>
KernelTable::kernels_of(const std::string &format) const {
  std::vector<const lowbit_kernel_entry_t *> out;
  for (const lowbit_kernel_entry_t &e : any)
    if (format == e.format)
      out.push_back(&e);
  std::sort(out.begin(), out.end(),
            [](const lowbit_kernel_entry_t *a, const lowbit_kernel_entry_t *b) {
              return a->min_n < b->min_n;
            });
  return out;
}

KernelTable select_kernel_table() {
  // Best first; each bundle holds one target's any-shape kernels (no
  // generic fallback: a host without AVX2 is refused).
  using Lookup = const lowbit_kernel_entry_t *(*)(const char *, size_t *);
  const struct {
    lowbit::Target target;
    Lookup kernels;
  } bundles[] = {
      {lowbit::Target::X86Avx512Vnni, lowbit_ggml_avx512vnni_bundle_kernels},
      {lowbit::Target::X86AvxVnni, lowbit_ggml_avxvnni_bundle_kernels},
      {lowbit::Target::X86Avx2, lowbit_ggml_avx2_bundle_kernels},
  };
  KernelTable table;
  for (const auto &bundle : bundles) {
    if (!lowbit::host_runs(bundle.target, lowbit::Strategy::Upconvert))
      continue;
    const std::string name = lowbit::target_name(bundle.target);
    size_t count = 0;
    const lowbit_kernel_entry_t *entries = bundle.kernels(name.c_str(), &count);
    add_any_kernels(entries, count, name.c_str(), table);
    table.target = name;
    for (const TypeRow &row : type_table()) {
      bool all = true;
      for (const char *format : row.formats)
        all = all && !table.kernels_of(format).empty();
      if (all)
        table.types.push_back(uint32_t(row.type));
    }
    break;
  }
  return table;
}

bool takes_type(uint32_t ggml_type, const KernelTable &table) {
  return std::find(table.types.begin(), table.types.end(), ggml_type) !=
         table.types.end();
}

bool takes_shape(uint32_t ggml_type, int64_t K, const KernelTable &table) {
  thread_local std::map<std::pair<uint32_t, int64_t>, bool> known;
  const auto key = std::make_pair(ggml_type, K);
  if (auto it = known.find(key); it != known.end())
    return it->second;
  const TypeRow *row = find_type(ggml_type);
  bool ok = row != nullptr;
  for (size_t i = 0; ok && i < row->formats.size(); ++i) {
    const std::vector<const lowbit_kernel_entry_t *> kernels =
        table.kernels_of(row->formats[i]);
    ok = !kernels.empty() &&
         lowbit::any_kernel_shape_error(
             lowbit::Format::parse(row->formats[i]), K,
             kernels.front()->layout.family == LOWBIT_LAYOUT_BITPLANES)
             .empty();
  }
  known.emplace(key, ok);
  return ok;
}

size_t buffer_bytes(uint32_t ggml_type, int64_t M, int64_t K,
                    size_t ggml_bytes) {
  const TypeRow *row = find_type(ggml_type);
  if (!row)
    return ggml_bytes;
  const lowbit::Format format = lowbit::Format::parse(row->formats[0]);
  if (!format.shape_error(M, K).empty())
    return ggml_bytes;
  return std::max(ggml_bytes, size_t(lowbit::upconvert_bytes(format, M, K)));
}

const char *type_name(uint32_t ggml_type) {
  const TypeRow *row = find_type(ggml_type);
  return row ? row->name : "";
}

const lowbit_kernel_entry_t &PackedTensor::kernel_for(int64_t N) const {
  const lowbit_kernel_entry_t *best = kernels.front();
  for (const lowbit_kernel_entry_t *e : kernels)
    if (e->min_n <= N)
      best = e;
  return *best;
}

namespace {

/// The kernels of `format` in `table`, which must all read one layout, and
/// the error of a K they cannot take.
const lowbit_layout_t &kernels_for(PackedTensor &packed,
                                   const lowbit::Format &format, int64_t K,
                                   const KernelTable &table,
                                   const std::string &name) {
  packed.kernels = table.kernels_of(format.name());
  const lowbit_layout_t &layout = packed.kernels.front()->layout;
  for (const lowbit_kernel_entry_t *e : packed.kernels)
    if (std::memcmp(&e->layout, &layout, sizeof(layout)) != 0)
      throw lowbit::Error(name + ": the " + format.name() +
                          " kernels read different layouts");
  if (std::string why = lowbit::any_kernel_shape_error(
          format, K, layout.family == LOWBIT_LAYOUT_BITPLANES);
      !why.empty())
    throw lowbit::Error(name + ": " + why);
  return layout;
}

/// Straight from ggml's bytes into the upconvert layout, tiles split over
/// `parallel` (lowbit::gguf_pack_rows: no canonical copy, each value
/// checked as it moves): the block formats into their own, tq1_0 and
/// tq2_0 into i2s; into `place` when they fit there. `then` (if any) runs
/// on each range of tiles once they are packed, while their bytes are in
/// cache. False when the ternary
/// tensor is not one scale's (the caller packs it into w2g256); throws the
/// import's error for bad bytes.
bool pack_direct(const lowbit::GgufTensor &tensor, PackedTensor &packed,
                 const lowbit::Format &format, const Place &place,
                 const ParallelFor &parallel,
                 const std::function<void(int64_t, int64_t)> &then) {
  const int64_t M = tensor.rows(), K = tensor.K();
  lowbit::UpconvertWeights &U = packed.weights;
  packed.in_place =
      place.bytes && lowbit::upconvert_bytes(format, M, K) <= place.size;
  U = lowbit::shape_upconvert(format, M, K,
                              packed.in_place ? place.bytes : nullptr);
  const int64_t tiles = U.num_tiles();
  std::vector<lowbit::GgufRowsCheck> checks(static_cast<size_t>(tiles));
  parallel(tiles, [&](int64_t t0, int64_t t1) {
    checks[size_t(t0)] = lowbit::gguf_pack_rows(
        tensor, U, t0 * lowbit::kUpconvertTileRows,
        std::min(M, t1 * lowbit::kUpconvertTileRows));
    if (then)
      then(t0, t1);
  });
  try {
    lowbit::gguf_finish_rows(tensor, U, checks);
  } catch (const lowbit::Error &) {
    if (format.is_ternary())
      return false; // blocks of different scales, or tq2_0's code 3
    throw;
  }
  return true;
}

/// Whether encode_ggml_rows gives back rows [m0, m1) of `bytes` (the whole
/// tensor as ggml stored it) exactly, but for the d of ternary blocks that
/// the packed form lost (an i2s tensor keeps one scale), which go to
/// `patches`. packed.d_patches must be empty.
bool rows_hold_ggml_bytes(const PackedTensor &packed, const uint8_t *bytes,
                          int64_t m0, int64_t m1,
                          std::vector<std::pair<int64_t, uint16_t>> &patches) {
  const lowbit::GgufType type = lowbit::GgufType(packed.ggml_type);
  const int64_t blockValues = lowbit::gguf_block_size(type);
  const size_t blockBytes = lowbit::gguf_tensor_bytes(type, 1, blockValues);
  const int64_t blocks = packed.weights.K / blockValues;
  const size_t rowBytes = ggml_row_bytes(packed);
  const size_t dAt = blockBytes - 2; // a ternary block's fp16 d
  const bool ternary =
      type == lowbit::GgufType::TQ1_0 || type == lowbit::GgufType::TQ2_0;
  thread_local std::vector<uint8_t> row;
  row.resize(rowBytes);
  for (int64_t m = m0; m < m1; ++m) {
    encode_ggml_rows(packed, m, m + 1, row.data());
    const uint8_t *want = bytes + m * rowBytes;
    if (std::memcmp(row.data(), want, rowBytes) == 0)
      continue;
    for (int64_t b = 0; b < blocks; ++b) {
      const uint8_t *got = row.data() + b * blockBytes;
      const uint8_t *ref = want + b * blockBytes;
      if (std::memcmp(got, ref, blockBytes) == 0)
        continue;
      // Only a ternary block's d may differ, and only where the packed
      // form has no d of its own for it.
      if (!ternary || std::memcmp(got, ref, dAt) != 0)
        return false;
      patches.emplace_back(m * blocks + b,
                           uint16_t(ref[dAt] | ref[dAt + 1] << 8));
    }
  }
  return true;
}

} // namespace

PackedTensor pack_tensor(uint32_t ggml_type, const uint8_t *bytes,
                         size_t size, int64_t M, int64_t K,
                         const KernelTable &table, const std::string &name,
                         const Place &place, const ParallelFor &parallel) {
  const TypeRow *row = find_type(ggml_type);
  if (!row || !takes_type(ggml_type, table))
    throw lowbit::Error(name + ": ggml type " + std::to_string(ggml_type) +
                        " has no lowbit kernel here");
  PackedTensor packed;
  packed.ggml_type = ggml_type;
  lowbit::GgufTensor tensor;
  tensor.name = name;
  tensor.type = row->type;
  tensor.ne = {K, M};
  tensor.data = bytes;
  tensor.bytes = size;
  lowbit::Format format = lowbit::Format::parse(row->formats[0]);
  const lowbit_layout_t &layout = kernels_for(packed, format, K, table, name);

  // The check: every byte of ggml's, re-encoded from the packed form, by
  // ranges of tiles; for the block formats right after each range is
  // packed (the ternary formats need the tensor's one scale first).
  const int64_t tiles =
      (M + lowbit::kUpconvertTileRows - 1) / lowbit::kUpconvertTileRows;
  std::vector<std::vector<std::pair<int64_t, uint16_t>>> patches(
      static_cast<size_t>(tiles));
  std::atomic<bool> holds{true};
  auto check = [&](int64_t t0, int64_t t1) {
    if (holds && !rows_hold_ggml_bytes(
                     packed, bytes, t0 * lowbit::kUpconvertTileRows,
                     std::min(M, t1 * lowbit::kUpconvertTileRows),
                     patches[size_t(t0)]))
      holds = false;
  };
  const bool direct = layout.family == LOWBIT_LAYOUT_VNNI4 &&
                      lowbit::gguf_packs_directly(row->type, format);
  bool checked = direct && !format.is_ternary();
  const bool packed_directly =
      direct && pack_direct(tensor, packed, format, place, parallel,
                            checked ? std::function<void(int64_t, int64_t)>(check)
                                    : nullptr);
  if (!packed_directly) {
    checked = false;
    packed.in_place = false;
    lowbit::PackedWeights canonical;
    try {
      canonical = lowbit::import_weights(row->type, bytes, size, M, K,
                                         format, name);
    } catch (const lowbit::Error &) {
      if (row->formats.size() == 1)
        throw;
      // Blocks of different scales (or tq2_0's code 3): exact in w2g256.
      canonical = ternary_blocks_as_w2(row->type, bytes, size, M, K, name);
      format = canonical.format;
    }
    packed.weights = lowbit::pack_for_kernel(
        canonical, kernels_for(packed, format, K, table, name));
  }
  packed.conversion = std::string(row->name) + "->" + format.name();
  if (!encodes_ggml_bytes(packed))
    holds = false;
  else if (!checked)
    parallel(tiles, check);
  packed.held_once = holds;
  if (holds)
    for (const auto &range : patches)
      packed.d_patches.insert(packed.d_patches.end(), range.begin(),
                              range.end());
  return packed;
}

// ---- ggml's bytes from the packed form.

namespace {

/// The 2-bit codes of row m (Kp of them) of i2s or w2g256 weights in the
/// upconvert layout (kernel_abi.h): per tile of 16 rows, per 64-byte vector
/// of 16 k values, byte 4 i + r holds in bits [2 j, 2 j + 2) the code of
/// row 16 t + i at k = 16 v + 4 j + r: so field j of the row's 4 bytes,
/// masked out of one 32-bit word, is codes 4 j .. 4 j + 3.
void row_codes(const lowbit::UpconvertWeights &W, int64_t m, uint8_t *c) {
  const int64_t vectors = W.Kp / 16;
  const uint8_t *p = W.codes.data() +
                     (m / lowbit::kUpconvertTileRows) * vectors * 64 +
                     (m % lowbit::kUpconvertTileRows) * 4;
  for (int64_t v = 0; v < vectors; ++v, p += 64, c += 16) {
    uint32_t word;
    std::memcpy(&word, p, 4);
    for (int j = 0; j < 4; ++j) {
      const uint32_t codes = (word >> (2 * j)) & 0x03030303u;
      std::memcpy(c + 4 * j, &codes, 4);
    }
  }
}

/// The fp16 scale (or zero) of row m and group g of the upconvert layout:
/// [Mp/16][Kp/G][16].
uint16_t group_half(const lowbit::AlignedArray<uint16_t> &a,
                    const lowbit::UpconvertWeights &W, int64_t m, int64_t g) {
  const int64_t groups = W.Kp / W.group;
  return a.data()[((m / lowbit::kUpconvertTileRows) * groups + g) *
                      lowbit::kUpconvertTileRows +
                  m % lowbit::kUpconvertTileRows];
}

} // namespace

size_t ggml_row_bytes(const PackedTensor &packed) {
  return size_t(lowbit::gguf_tensor_bytes(
      lowbit::GgufType(packed.ggml_type), 1, packed.weights.K));
}

bool encodes_ggml_bytes(const PackedTensor &packed) {
  switch (lowbit::GgufType(packed.ggml_type)) {
  case lowbit::GgufType::TQ1_0:
  case lowbit::GgufType::TQ2_0:
    return packed.weights.bits == 2;
  default: // the block formats: ggml's type is lowbit's format
    return lowbit::reencodes_blocks(packed.weights.format) &&
           lowbit::ggml_block_type(packed.weights.format.kind)->ggml_type ==
               packed.ggml_type;
  }
}

void encode_ggml_rows(const PackedTensor &packed, int64_t m0, int64_t m1,
                      uint8_t *out) {
  const lowbit::UpconvertWeights &W = packed.weights;
  const lowbit::GgufType type = lowbit::GgufType(packed.ggml_type);
  if (type != lowbit::GgufType::TQ1_0 && type != lowbit::GgufType::TQ2_0)
    return lowbit::encode_block_rows(W, m0, m1, out);
  const size_t blockBytes = size_t(ternary_block_bytes(type));
  const int64_t blocks = W.K / kTernaryBlock;
  // i2s: one scale, the d of every block with a non-zero code.
  const uint16_t oneD = W.format.is_ternary() ? lowbit::float_to_half(W.w_scale)
                                              : uint16_t(0);
  thread_local std::vector<uint8_t> codes;
  codes.resize(size_t(W.Kp));
  auto patch = std::lower_bound(
      packed.d_patches.begin(), packed.d_patches.end(),
      std::make_pair(m0 * blocks, uint16_t(0)));
  for (int64_t m = m0; m < m1; ++m) {
    row_codes(W, m, codes.data());
    for (int64_t b = 0; b < blocks; ++b, out += blockBytes) {
      uint16_t d = W.format.is_ternary()
                       ? oneD
                       : group_half(W.scales, W, m, b * kTernaryBlock / W.group);
      if (patch != packed.d_patches.end() && patch->first == m * blocks + b)
        d = (patch++)->second;
      lowbit::encode_tq_block(type, codes.data() + b * kTernaryBlock, d, out);
    }
  }
}

} // namespace ggml_lowbit
