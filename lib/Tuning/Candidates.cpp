//===- Candidates.cpp - a problem's label and visiting order --------------===//

#include "lowbit/Tuning/Search.h"

#include <algorithm>
#include <random>

using namespace mlir::lowbit;

std::string TuningProblem::label() const {
  return key.format + " " + std::to_string(key.m) + "x" +
         std::to_string(key.k) + " " + key.nClass + " " + key.target;
}

std::vector<Candidate>
mlir::lowbit::orderCandidates(Candidate heuristic, std::vector<Candidate> space,
                              const SearchOptions &options,
                              size_t problemIndex) {
  space.erase(std::remove_if(space.begin(), space.end(),
                             [&](const Candidate &c) {
                               return c.config == heuristic.config;
                             }),
              space.end());
  if (options.seed) {
    std::mt19937_64 random(*options.seed * 0x9E3779B97F4A7C15ull +
                           problemIndex);
    for (size_t i = space.size(); i > 1; --i)
      std::swap(space[i - 1], space[random() % i]);
  }
  if (space.size() > options.maxCandidates)
    space.resize(options.maxCandidates);
  heuristic.heuristic = true;
  std::vector<Candidate> queue = {std::move(heuristic)};
  queue.insert(queue.end(), space.begin(), space.end());
  return queue;
}
