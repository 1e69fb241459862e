//===- error.h - lowbit runtime error type ----------------------*- C++ -*-===//
//
// Every runtime function reports bad input by throwing lowbit::Error whose
// what() is one line that names the problem (the CLI prints it after
// "lowbit: error: " and exits non-zero).
//
//===----------------------------------------------------------------------===//
#ifndef LOWBIT_ERROR_H
#define LOWBIT_ERROR_H

#include <stdexcept>
#include <string>

namespace lowbit {

class Error : public std::runtime_error {
public:
  explicit Error(const std::string &message) : std::runtime_error(message) {}
};

} // namespace lowbit

#endif // LOWBIT_ERROR_H
