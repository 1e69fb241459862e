//===- byte_order.h - little-endian loads and stores ------------*- C++ -*-===//
//
// Every on-disk integer and float of lowbit is little-endian. These helpers
// assemble values byte by byte, so they are independent of the host's byte
// order and need no alignment.
//
//===----------------------------------------------------------------------===//
#ifndef LOWBIT_SRC_BYTE_ORDER_H
#define LOWBIT_SRC_BYTE_ORDER_H

#include <cstdint>
#include <cstring>

namespace lowbit::detail {

template <typename T> T load_le(const uint8_t *p) {
  static_assert(sizeof(T) <= 8, "integers of up to 64 bits");
  uint64_t v = 0;
  for (size_t i = 0; i < sizeof(T); ++i)
    v |= uint64_t(p[i]) << (8 * i);
  return T(v);
}

template <typename T> void store_le(uint8_t *p, T value) {
  static_assert(sizeof(T) <= 8, "integers of up to 64 bits");
  uint64_t v = uint64_t(value);
  for (size_t i = 0; i < sizeof(T); ++i)
    p[i] = uint8_t(v >> (8 * i));
}

inline float load_f32_le(const uint8_t *p) {
  uint32_t bits = load_le<uint32_t>(p);
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

inline void store_f32_le(uint8_t *p, float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  store_le(p, bits);
}

} // namespace lowbit::detail

#endif // LOWBIT_SRC_BYTE_ORDER_H
