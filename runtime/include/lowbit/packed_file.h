//===- packed_file.h - packed weight files ----------------------*- C++ -*-===//
//
// `lowbit pack` output. A .lbw file is a fixed little-endian header followed
// by the PackedWeights arrays (layout in runtime/README.md). The gguf layout
// (q4_0 only) is the bare ggml block_q4_0 array, row after row, exactly the
// bytes ggml's quantize_row_q4_0_ref writes.
//
//===----------------------------------------------------------------------===//
#ifndef LOWBIT_PACKED_FILE_H
#define LOWBIT_PACKED_FILE_H

#include "lowbit/format.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace lowbit {

void save_packed(const std::string &path, const PackedWeights &W);
/// Validates header, sizes and contents; throws Error on any mismatch.
PackedWeights load_packed(const std::string &path);
/// load_packed on an in-memory file image; `what` names it in error messages.
PackedWeights parse_packed(const uint8_t *bytes, size_t size,
                           const std::string &what);

} // namespace lowbit

#endif // LOWBIT_PACKED_FILE_H
