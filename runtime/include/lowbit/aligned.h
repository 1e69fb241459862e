//===- aligned.h - 64-byte aligned, zero-initialised arrays -----*- C++ -*-===//
//
// Kernels load packed weights and activations with aligned 64-byte vector
// loads, so every array they read lives in an AlignedArray: storage aligned to
// 64 bytes, zero-initialised (every page is written when it is created), and
// copied element by element (a copy is a distinct, fully written allocation,
// which is what the cold benchmarks rely on). A view (AlignedArray::view)
// holds memory its caller owns instead: one allocation can back many arrays.
//
//===----------------------------------------------------------------------===//
#ifndef LOWBIT_ALIGNED_H
#define LOWBIT_ALIGNED_H

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

namespace lowbit {

inline constexpr size_t kVectorAlignment = 64;

template <typename T> class AlignedArray {
  static_assert(std::is_trivially_copyable_v<T>,
                "AlignedArray holds plain data only");

public:
  AlignedArray() = default;
  /// `count` zero-initialised elements (every byte written).
  explicit AlignedArray(size_t count) : size_(count) {
    if (count == 0)
      return;
    if (count > SIZE_MAX / sizeof(T))
      throw std::bad_alloc();
    data_ = static_cast<T *>(
        ::operator new(count * sizeof(T), std::align_val_t(kVectorAlignment)));
    std::memset(static_cast<void *>(data_), 0, count * sizeof(T));
  }
  AlignedArray(const AlignedArray &other) : AlignedArray(other.size_) {
    if (size_)
      std::memcpy(static_cast<void *>(data_), other.data_, bytes());
  }
  AlignedArray(AlignedArray &&other) noexcept
      : data_(std::exchange(other.data_, nullptr)),
        size_(std::exchange(other.size_, 0)),
        owned_(std::exchange(other.owned_, true)) {}
  AlignedArray &operator=(AlignedArray other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    std::swap(owned_, other.owned_);
    return *this;
  }
  ~AlignedArray() {
    if (data_ && owned_)
      ::operator delete(data_, std::align_val_t(kVectorAlignment));
  }
  /// `count` elements at `data`, which the caller owns (64-byte aligned,
  /// alive as long as the array): neither written nor freed here. A copy
  /// of a view is an allocation of its own.
  static AlignedArray view(T *data, size_t count) {
    AlignedArray a;
    a.data_ = count ? data : nullptr;
    a.size_ = count;
    a.owned_ = false;
    return a;
  }

  /// nullptr when empty.
  T *data() { return data_; }
  const T *data() const { return data_; }
  size_t size() const { return size_; }
  size_t bytes() const { return size_ * sizeof(T); }
  bool empty() const { return size_ == 0; }
  T &operator[](size_t i) { return data_[i]; }
  const T &operator[](size_t i) const { return data_[i]; }
  T *begin() { return data_; }
  T *end() { return data_ + size_; }
  const T *begin() const { return data_; }
  const T *end() const { return data_ + size_; }

private:
  T *data_ = nullptr;
  size_t size_ = 0;
  bool owned_ = true; // false for a view
};

} // namespace lowbit

#endif // LOWBIT_ALIGNED_H
