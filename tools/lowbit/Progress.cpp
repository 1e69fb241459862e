//===- Progress.cpp - a progress line for long CLI steps ------------------===//

#include "Progress.h"

#include <cstdio>
#include <utility>

#include <unistd.h>

namespace lowbit::cli {

Progress::Progress(std::string task)
    : task_(std::move(task)), tty_(isatty(fileno(stderr)) == 1),
      start_(std::chrono::steady_clock::now()) {}

void Progress::clear() {
  if (drawn_)
    std::fprintf(stderr, "\r\033[K");
  drawn_ = false;
}

void Progress::update(size_t done, size_t total, const std::string &step) {
  if (!tty_)
    return;
  const double elapsed = std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - start_)
                             .count();
  const int width = 20;
  const int filled =
      total ? int(double(width) * double(done) / double(total)) : width;
  std::string left;
  if (done > 0 && total > done)
    left = ", " + duration(elapsed / double(done) * double(total - done)) +
           " left";
  std::fprintf(stderr, "\r%s [%s%s] %zu/%zu%s: %s\033[K", task_.c_str(),
               std::string(size_t(filled), '#').c_str(),
               std::string(size_t(width - filled), '.').c_str(), done, total,
               left.c_str(), step.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

std::string Progress::duration(double seconds) {
  char text[32];
  if (seconds >= 60)
    std::snprintf(text, sizeof(text), "%dm%02ds", int(seconds) / 60,
                  int(seconds) % 60);
  else
    std::snprintf(text, sizeof(text), "%.0fs", seconds);
  return text;
}

} // namespace lowbit::cli
