//===- Options.h - command-line options of the lowbit CLI -------*- C++ -*-===//
//
// A deliberately small `--name value` parser: every subcommand declares its
// options in a table, which drives both parsing and `--help`. An option may
// also be given as `-x value` (its `shortName`, or a one-letter name, as
// llama-bench's `-p 128 -n 64`), and a command that declares `positionals`
// takes bare words (`lowbit gguf info FILE`) in order. Any mistake (unknown
// option, missing value, repeated option, missing required option, a bare
// word where none is taken) throws lowbit::Error with one line that names it.
//
//===----------------------------------------------------------------------===//
#ifndef LOWBIT_TOOLS_LOWBIT_OPTIONS_H
#define LOWBIT_TOOLS_LOWBIT_OPTIONS_H

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace lowbit::cli {

struct OptionSpec {
  const char *name;    // without the leading "--"
  const char *metavar; // nullptr for a boolean flag
  const char *help;
  bool required = false;
  /// One letter accepted as `-x` (without the dash); nullptr for none. A
  /// one-letter `name` is accepted as `-name` without it.
  const char *shortName = nullptr;
};

struct CommandSpec {
  const char *name;
  const char *summary;
  const char *usageNotes; // printed after the option list; may be nullptr
  std::vector<OptionSpec> options;
  /// The bare words the command takes, as its usage line shows them (e.g.
  /// "info FILE | synth"); nullptr: none, and a bare word is an error.
  const char *positionals = nullptr;
};

class ParsedOptions {
public:
  ParsedOptions(const CommandSpec &spec, const std::vector<std::string> &args);

  bool helpRequested() const { return help; }
  /// The bare words in the order given (empty unless the command declares
  /// `positionals`).
  const std::vector<std::string> &positional() const { return words; }
  bool has(const std::string &name) const { return values.count(name) != 0; }
  std::optional<std::string> get(const std::string &name) const;
  std::string getOr(const std::string &name, const std::string &fallback) const;
  /// A positive integer option, or `fallback` when absent.
  int64_t getPositive(const std::string &name, int64_t fallback) const;
  /// A comma-separated list of positive integers ("1,3,16"), or `fallback`
  /// parsed the same way when absent.
  std::vector<int64_t> getPositiveList(const std::string &name,
                                       const std::string &fallback) const;
  /// --threads, the same for every command: at most 256; absent, the
  /// number of CPUs this process may use (availableCpus; kThreadsHelp says
  /// so in --help).
  int threads() const;

private:
  std::map<std::string, std::string> values;
  std::vector<std::string> words;
  bool help = false;
};

std::string renderHelp(const CommandSpec &spec);

/// The CPUs this process may run on (its affinity mask; at least 1).
int availableCpus();

/// The --help text of every command's --threads (ParsedOptions::threads).
inline constexpr const char *kThreadsHelp =
    "threads (default: the CPUs this process may use)";

/// Splits "a,b,c" at commas.
std::vector<std::string> splitList(const std::string &text);

/// Parses a positive decimal integer; `what` names it in the error.
int64_t parsePositive(const std::string &text, const std::string &what);

} // namespace lowbit::cli

#endif // LOWBIT_TOOLS_LOWBIT_OPTIONS_H
