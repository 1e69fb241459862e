//===- Models.cpp - model shape lists from schedules/models ---------------===//

#include "Models.h"
#include "Inputs.h"

#include "lowbit/error.h"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace fs = std::filesystem;

namespace lowbit::cli {

std::string schedulesDir() {
  std::vector<fs::path> candidates;
  if (const char *env = std::getenv("LOWBIT_SCHEDULES_DIR"))
    candidates.push_back(env);
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) // build/bin/lowbit -> <source>/schedules
    candidates.push_back(exe.parent_path().parent_path().parent_path() /
                         "schedules");
  candidates.push_back("schedules");
  for (const fs::path &dir : candidates)
    if (fs::is_directory(dir / "models", ec))
      return dir.string();
  throw Error("cannot find the schedules/ directory (set LOWBIT_SCHEDULES_DIR)");
}

static std::string knownModels(const fs::path &dir) {
  std::set<std::string> names;
  std::error_code ec;
  for (const auto &entry : fs::directory_iterator(dir, ec))
    if (entry.path().extension() == ".json")
      names.insert(entry.path().stem().string());
  std::string list;
  for (const std::string &n : names)
    list += (list.empty() ? "" : ", ") + n;
  return list;
}

std::vector<LinearShape> modelShapes(const std::string &name,
                                     bool withOutput) {
  fs::path path = name;
  if (path.extension() != ".json") {
    fs::path dir = fs::path(schedulesDir()) / "models";
    path = dir / (name + ".json");
    if (!fs::exists(path))
      throw Error("unknown model '" + name + "' (known: " + knownModels(dir) +
                  ")");
  }
  std::ifstream in(path);
  if (!in)
    throw Error(path.string() + ": cannot open");
  nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("linear") ||
      !doc["linear"].is_array())
    throw Error(path.string() + ": not a model shape list (expected an "
                                "object with a \"linear\" array)");
  std::vector<LinearShape> shapes;
  std::set<std::pair<int64_t, int64_t>> seen;
  auto add = [&](const char *list) {
    if (!doc.contains(list))
      return;
    if (!doc[list].is_array())
      throw Error(path.string() + ": \"" + list + "\" must be an array");
    for (const nlohmann::json &entry : doc[list]) {
      if (!entry.is_object() || !entry.contains("M") || !entry.contains("K") ||
          !entry["M"].is_number_unsigned() ||
          !entry["K"].is_number_unsigned() || entry["M"].get<int64_t>() < 1 ||
          entry["K"].get<int64_t>() < 1)
        throw Error(path.string() + ": every \"" + list +
                    "\" entry needs positive integer M and K");
      LinearShape s{entry.value("name", ""), entry["M"].get<int64_t>(),
                    entry["K"].get<int64_t>()};
      if (seen.insert({s.M, s.K}).second)
        shapes.push_back(s);
    }
  };
  add("linear");
  if (withOutput)
    add("output");
  if (shapes.empty())
    throw Error(path.string() + ": no linear shapes");
  return shapes;
}

std::vector<LinearShape> optionShapes(const ParsedOptions &options) {
  if (!options.has("model")) {
    if (options.has("with-output"))
      throw Error("--with-output needs --model");
    return parseShapeList(*options.get("shapes"));
  }
  return modelShapes(*options.get("model"), options.has("with-output"));
}

std::vector<OptionSpec> withShapeOptions(std::vector<OptionSpec> rest) {
  std::vector<OptionSpec> options = {
      {"model", "NAME", "every linear shape of schedules/models/NAME.json"},
      {"with-output", nullptr,
       "--model: also the output head and embedding shapes (vocab x hidden)"},
      {"shapes", "MxK[,MxK...]", "explicit shapes instead of --model"}};
  options.insert(options.end(), rest.begin(), rest.end());
  return options;
}

std::vector<LinearShape> parseShapeList(const std::string &text) {
  std::vector<LinearShape> shapes;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    auto [M, K] = parseShape(item);
    shapes.push_back({"", M, K});
  }
  return shapes;
}

} // namespace lowbit::cli
