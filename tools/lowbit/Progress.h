//===- Progress.h - a progress line for long CLI steps ----------*- C++ -*-===//
//
// `lowbit verify`, `bench` and `compile` spend minutes compiling and
// checking kernels. While they do, a line on stderr says how far they are:
// rewritten in place, and only when stderr is a terminal, so that logs,
// pipes and lit see the command's results alone.
//
//===----------------------------------------------------------------------===//
#ifndef LOWBIT_TOOLS_LOWBIT_PROGRESS_H
#define LOWBIT_TOOLS_LOWBIT_PROGRESS_H

#include <chrono>
#include <cstddef>
#include <string>

namespace lowbit::cli {

class Progress {
public:
  /// `task` names the command's work ("verify", "compile").
  explicit Progress(std::string task);
  ~Progress() { clear(); }
  Progress(const Progress &) = delete;
  Progress &operator=(const Progress &) = delete;

  /// `done` of `total` steps are done and `step` runs now; the line shows
  /// a bar, the counts and the time left at the rate so far.
  void update(size_t done, size_t total, const std::string &step);

  /// Erases the line (before the command prints a result on a terminal
  /// that stdout shares); the next update draws it again.
  void clear();

  /// "42s" or "3m05s".
  static std::string duration(double seconds);

private:
  std::string task_;
  bool tty_;
  bool drawn_ = false; // a line is on the terminal
  std::chrono::steady_clock::time_point start_;
};

} // namespace lowbit::cli

#endif // LOWBIT_TOOLS_LOWBIT_PROGRESS_H
