//===- Models.h - model shape lists from schedules/models -------*- C++ -*-===//
#ifndef LOWBIT_TOOLS_LOWBIT_MODELS_H
#define LOWBIT_TOOLS_LOWBIT_MODELS_H

#include <cstdint>
#include <string>
#include <vector>

namespace lowbit::cli {

struct LinearShape {
  std::string name; // e.g. "ffn_down"; "" for shapes given on the command line
  int64_t M = 0, K = 0;
};

/// The distinct linear-layer shapes of a model, in file order. `name` is a
/// model name (looked up in $LOWBIT_SCHEDULES_DIR/models, then the source
/// tree's schedules/models next to the binary, then ./schedules/models) or a
/// path to a .json file. Throws Error listing the known models otherwise.
std::vector<LinearShape> modelShapes(const std::string &name);

/// "MxK[,MxK...]".
std::vector<LinearShape> parseShapeList(const std::string &text);

/// The schedules/ directory this binary uses (see modelShapes).
std::string schedulesDir();

} // namespace lowbit::cli

#endif // LOWBIT_TOOLS_LOWBIT_MODELS_H
