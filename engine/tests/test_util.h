//===- test_util.h - helpers shared by the engine tests ---------*- C++ -*-===//
#ifndef LOWBIT_ENGINE_TESTS_TEST_UTIL_H
#define LOWBIT_ENGINE_TESTS_TEST_UTIL_H

#include "lowbit/error.h"

#include <string>

namespace lowbit::engine::test {

/// The message of the lowbit::Error `f` throws, or "(no error)".
template <class F> std::string error_of(F &&f) {
  try {
    f();
  } catch (const Error &e) {
    return e.what();
  }
  return "(no error)";
}

} // namespace lowbit::engine::test

#endif // LOWBIT_ENGINE_TESTS_TEST_UTIL_H
