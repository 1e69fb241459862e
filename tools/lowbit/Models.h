//===- Models.h - model shape lists from schedules/models -------*- C++ -*-===//
#ifndef LOWBIT_TOOLS_LOWBIT_MODELS_H
#define LOWBIT_TOOLS_LOWBIT_MODELS_H

#include "Options.h"

#include <cstdint>
#include <string>
#include <vector>

namespace lowbit::cli {

struct LinearShape {
  std::string name; // e.g. "ffn_down"; "" for shapes given on the command line
  int64_t M = 0, K = 0;
};

/// The distinct linear-layer shapes of a model, in file order, and with
/// `withOutput` its "output" list too (the output head and the embedding,
/// vocab x hidden). `name` is a model name (looked up in
/// $LOWBIT_SCHEDULES_DIR/models, then the source tree's schedules/models
/// next to the binary, then ./schedules/models) or a path to a .json file.
/// Throws Error listing the known models otherwise.
std::vector<LinearShape> modelShapes(const std::string &name,
                                     bool withOutput = false);

/// The shapes a command's options name: --model NAME (with --with-output,
/// its output shapes too) or --shapes MxK[,MxK...], exactly one of which the
/// caller made sure is present. Throws Error for --with-output without
/// --model.
std::vector<LinearShape> optionShapes(const ParsedOptions &options);

/// The options optionShapes reads (--model, --with-output, --shapes), then
/// `rest`: the option list of a command that takes its shapes so.
std::vector<OptionSpec> withShapeOptions(std::vector<OptionSpec> rest);

/// "MxK[,MxK...]".
std::vector<LinearShape> parseShapeList(const std::string &text);

/// The schedules/ directory this binary uses (see modelShapes).
std::string schedulesDir();

} // namespace lowbit::cli

#endif // LOWBIT_TOOLS_LOWBIT_MODELS_H
