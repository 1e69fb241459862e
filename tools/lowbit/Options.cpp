//===- Options.cpp - command-line options of the lowbit CLI ---------------===//

#include "Options.h"

#include "lowbit/error.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <sstream>

#include <sched.h>

namespace lowbit::cli {

static const OptionSpec *findOption(const CommandSpec &spec,
                                    const std::string &name) {
  for (const OptionSpec &opt : spec.options)
    if (name == opt.name)
      return &opt;
  return nullptr;
}

/// The option `-letter` names: the one whose shortName it is, else the one
/// whose whole name it is.
static const OptionSpec *findShortOption(const CommandSpec &spec,
                                         const std::string &letter) {
  for (const OptionSpec &opt : spec.options)
    if (opt.shortName && letter == opt.shortName)
      return &opt;
  return findOption(spec, letter);
}

static std::string shortForm(const OptionSpec &opt) {
  if (opt.shortName)
    return opt.shortName;
  return std::string(opt.name).size() == 1 ? opt.name : "";
}

ParsedOptions::ParsedOptions(const CommandSpec &spec,
                             const std::vector<std::string> &args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &arg = args[i];
    if (arg == "-h" || arg == "--help") {
      help = true;
      return;
    }
    bool isLong = arg.rfind("--", 0) == 0;
    bool isShort = !isLong && arg.size() >= 2 && arg[0] == '-';
    if (!isLong && !isShort) {
      if (spec.positionals) {
        words.push_back(arg);
        continue;
      }
      throw Error("lowbit " + std::string(spec.name) +
                  ": unexpected argument '" + arg + "' (options start with --)");
    }
    std::string name = arg.substr(isLong ? 2 : 1), value;
    size_t eq = name.find('=');
    bool inlineValue = eq != std::string::npos;
    if (inlineValue) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    const OptionSpec *opt =
        isLong ? findOption(spec, name) : findShortOption(spec, name);
    if (!opt)
      throw Error("lowbit " + std::string(spec.name) + ": unknown option '" +
                  (isLong ? "--" : "-") + name + "' (see 'lowbit " +
                  spec.name + " --help')");
    name = opt->name;
    if (values.count(name))
      throw Error("option '--" + name + "' given more than once");
    if (!opt->metavar) {
      if (inlineValue)
        throw Error("option '--" + name + "' takes no value");
      values[name] = "1";
      continue;
    }
    if (!inlineValue) {
      if (i + 1 >= args.size())
        throw Error("option '--" + name + "' needs a value (" + opt->metavar +
                    ")");
      value = args[++i];
    }
    if (value.empty())
      throw Error("option '--" + name + "' has an empty value");
    values[name] = value;
  }
  for (const OptionSpec &opt : spec.options)
    if (opt.required && !values.count(opt.name))
      throw Error("lowbit " + std::string(spec.name) + ": missing --" +
                  opt.name + " " + opt.metavar);
}

std::optional<std::string> ParsedOptions::get(const std::string &name) const {
  auto it = values.find(name);
  if (it == values.end())
    return std::nullopt;
  return it->second;
}

std::string ParsedOptions::getOr(const std::string &name,
                                 const std::string &fallback) const {
  return get(name).value_or(fallback);
}

int64_t ParsedOptions::getPositive(const std::string &name,
                                   int64_t fallback) const {
  auto value = get(name);
  return value ? parsePositive(*value, "--" + name) : fallback;
}

std::vector<int64_t>
ParsedOptions::getPositiveList(const std::string &name,
                               const std::string &fallback) const {
  std::vector<int64_t> values;
  for (const std::string &item : splitList(getOr(name, fallback)))
    values.push_back(parsePositive(item, "--" + name));
  return values;
}

int ParsedOptions::threads() const {
  const int64_t threads = getPositive("threads", availableCpus());
  if (threads > 256)
    throw Error("--threads: at most 256, got " + std::to_string(threads));
  return int(threads);
}

int availableCpus() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0)
    return 1;
  return std::max(1, CPU_COUNT(&allowed));
}

std::vector<std::string> splitList(const std::string &text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
    items.push_back(item);
  return items;
}

int64_t parsePositive(const std::string &text, const std::string &what) {
  bool digits = !text.empty() && text.size() <= 18 &&
                text.find_first_not_of("0123456789") == std::string::npos;
  int64_t value = digits ? std::strtoll(text.c_str(), nullptr, 10) : 0;
  if (value <= 0)
    throw Error(what + ": expected a positive integer, got '" + text + "'");
  return value;
}

std::string renderHelp(const CommandSpec &spec) {
  std::ostringstream os;
  os << "usage: lowbit " << spec.name << " "
     << (spec.positionals ? std::string(spec.positionals) + " " : "")
     << "[options]\n\n"
     << spec.summary << "\n\noptions:\n";
  for (const OptionSpec &opt : spec.options) {
    std::string letter = shortForm(opt);
    std::string left = (letter.empty() ? std::string("  --")
                                       : "  -" + letter + ", --") +
                       opt.name;
    if (opt.metavar)
      left += std::string(" ") + opt.metavar;
    os << left;
    os << std::string(left.size() < 26 ? 26 - left.size() : 1, ' ')
       << opt.help << (opt.required ? " (required)" : "") << "\n";
  }
  os << "  -h, --help" << std::string(14, ' ') << "show this help\n";
  if (spec.usageNotes)
    os << "\n" << spec.usageNotes;
  return os.str();
}

} // namespace lowbit::cli
