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

namespace lowbit {

/// Whether `format` has a lut-bitserial layout: i2s, w1gG, w2gG, w3gG, w4gG.
bool has_bitserial_layout(const Format &format);

/// Repacks validated canonical weights into the layout of bitserial_abi.h
/// (Mp = ceil(M/16)*16, Kp = ceil(K/32)*32, bits = planes, scales and zeros
/// as pack_upconvert, w_scale = s_w). Throws Error naming any other format.
UpconvertWeights pack_bitserial(const PackedWeights &canonical);

} // namespace lowbit

#endif // LOWBIT_BITSERIAL_H
