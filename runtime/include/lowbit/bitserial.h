//===- bitserial.h - weights for bit-serial LUT kernels ---------*- C++ -*-===//
//
// The runtime half of bitserial_abi.h: repacking canonical weights into the
// bit-plane layout of the lut-bitserial kernels. The result reuses
// UpconvertWeights (the same fields, run_kernel and benchmark path); only
// `codes` holds the bitserial_abi.h layout and `bits` its number of planes.
//
//===----------------------------------------------------------------------===//

#ifndef LOWBIT_BITSERIAL_H
#define LOWBIT_BITSERIAL_H

#include "lowbit/bitserial_abi.h"
#include "lowbit/upconvert.h"

#include <vector>

namespace lowbit {

/// Whether `format` has a lut-bitserial layout: i2s, w1gG, w2gG, w3gG, w4gG.
bool has_bitserial_layout(const Format &format);

/// The byte order of bitserial_abi.h's plane vectors: Rows (byte 4r + s:
/// row r, slot s) or Lanes (one slot per 16-byte lane for pshufb; with two
/// planes, the planes of a row side by side). A kernel's layout descriptor
/// names it (kernel_abi.h, lane_order; pack_for_kernel).
enum class BitplaneOrder { Rows, Lanes };

/// Repacks validated canonical weights into the layout of bitserial_abi.h
/// in `order` (Mp = ceil(M/16)*16, Kp = ceil(K/32)*32, bits = planes,
/// scales and zeros as pack_upconvert, w_scale = s_w). Throws Error naming
/// any other format.
UpconvertWeights pack_bitserial(const PackedWeights &canonical,
                                BitplaneOrder order = BitplaneOrder::Rows);

/// The bound of bitserial_abi.h ("INT8 TABLES") on |Y[n][m] - Y_exact[n][m]|
/// of a kernel with int8 tables of `act_group` activations per table
/// scale (a multiple of 32), Y_exact the result with lossless tables (the
/// reference strategy): computed from the formula, with the activations
/// X [N][K] quantized as prepare_activations does. Returns [N][M].
std::vector<double> bitserial_int8_table_bound(const PackedWeights &W,
                                               const float *X, int64_t N,
                                               int64_t act_group);

} // namespace lowbit

#endif // LOWBIT_BITSERIAL_H
