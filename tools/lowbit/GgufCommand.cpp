//===- GgufCommand.cpp - `lowbit gguf` ------------------------------------===//
//
// `lowbit gguf info FILE [--format F]`: the model's metadata summary and
// every tensor (name, type, shape, bytes, and the lowbit format it imports
// into, or why it cannot). `lowbit gguf synth ...`: a synthetic model of
// llama.cpp's bitnet or llama architecture (engine/synth.h).
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "engine.h"
#include "synth.h"
#include "lowbit/error.h"
#include "lowbit/format.h"
#include "lowbit/gguf.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <unistd.h>
#include <vector>

namespace lowbit::cli {
namespace {

const char *const kInfoOptions[] = {"format", "check"};
const char *const kSynthOptions[] = {
    "arch",    "preset", "type",    "head-type", "tied",  "seed",
    "n-embd",  "n-ff",   "n-layer", "n-head",    "n-head-kv",
    "n-vocab", "n-ctx",  "vocab",   "out"};

/// Options of the other subcommand are an error, not silently ignored.
template <size_t N>
void onlyOptions(const ParsedOptions &options, const std::string &sub,
                 const char *const (&allowed)[N],
                 const std::vector<OptionSpec> &all) {
  for (const OptionSpec &opt : all) {
    if (!options.has(opt.name))
      continue;
    bool ok = false;
    for (const char *name : allowed)
      ok = ok || std::string(name) == opt.name;
    if (!ok)
      throw Error("lowbit gguf " + sub + ": --" + opt.name +
                  " is not an option of '" + sub + "' (see 'lowbit gguf "
                  "--help')");
  }
}

std::string shapeText(const GgufTensor &t) {
  if (t.ne.size() <= 1)
    return std::to_string(t.K());
  return std::to_string(t.rows()) + " x " + std::to_string(t.K());
}

std::string metadataText(const GgufValue &v) {
  switch (v.type) {
  case GgufValue::STRING:
    return "'" + v.s + "'";
  case GgufValue::FLOAT32:
  case GgufValue::FLOAT64: {
    char text[32];
    std::snprintf(text, sizeof text, "%g", v.f);
    return text;
  }
  case GgufValue::BOOL:
    return v.i ? "true" : "false";
  case GgufValue::UINT64:
    return std::to_string(v.u);
  case GgufValue::ARRAY:
    return "[" + std::to_string(v.array.size()) + " values]";
  default:
    return std::to_string(v.i);
  }
}

bool isFloatType(GgufType type) {
  return type == GgufType::F32 || type == GgufType::F16 ||
         type == GgufType::BF16;
}

bool isTernaryType(GgufType type) {
  return type == GgufType::TQ1_0 || type == GgufType::TQ2_0 ||
         type == GgufType::I2_S;
}

/// What the import of `t` into `format` (runtime/README.md, "GGUF import")
/// makes of it, from its ggml type and shape alone: "" where the import
/// takes this type (floats into any format, ternary types into ternary
/// formats, a block type into the lowbit format of the same name), else
/// the reason it does not.
std::string importErrorByType(const GgufTensor &t, const Format &format) {
  const std::string shape = format.shape_error(t.rows(), t.K());
  if (!shape.empty())
    return t.name + ": " + shape;
  if (isFloatType(t.type) || (isTernaryType(t.type) && format.is_ternary()) ||
      format.name() == gguf_type_name(t.type))
    return "";
  return std::string(gguf_type_name(t.type)) + " imports into " +
         format.name() +
         " only where re-quantizing changes no value (--check tries it)";
}

int runInfo(const ParsedOptions &options, const std::string &path) {
  std::unique_ptr<GgufFile> file = GgufFile::open(path);
  std::string formatName = options.getOr("format", "");
  if (!formatName.empty())
    Format::parse(formatName); // an unknown format is an error up front

  // A model of an architecture the engine runs must agree with its own
  // metadata (every tensor the shape the hyperparameters give it).
  const GgufValue *arch = file->find("general.architecture");
  bool known = arch && arch->type == GgufValue::STRING &&
               (arch->s == "llama" || arch->s == "bitnet" ||
                arch->s == "bitnet-b1.58" || arch->s == "bitnet-25");
  if (known)
    engine::read_hparams(*file);

  uint64_t total = 0;
  for (const GgufTensor &t : file->tensors())
    total += t.bytes;
  std::printf("%s: GGUF v%u, %zu tensors (%.2f MiB), %zu metadata keys, "
              "alignment %llu\n",
              path.c_str(), file->version(), file->tensors().size(),
              total / 1048576.0, file->metadata().size(),
              (unsigned long long)file->alignment());

  // The summary: general.* and the architecture's own keys, in file order
  // (long arrays, such as a tokenizer's, shown by their length).
  std::string prefix = arch && arch->type == GgufValue::STRING
                           ? arch->s + "."
                           : std::string("\x01");
  for (const auto &[key, value] : file->metadata())
    if (key.rfind("general.", 0) == 0 || key.rfind(prefix, 0) == 0 ||
        key == "tokenizer.ggml.model")
      std::printf("  %-44s %s\n", key.c_str(), metadataText(value).c_str());

  // What each tensor becomes: for a model the engine runs, what `lowbit
  // generate [--format F]` makes of it (engine::linear_specs: the layers'
  // weights in F, the head in its own format); for any other file, its
  // default import, or the import into F.
  std::map<std::string, std::string> linear;
  if (known)
    for (const engine::LinearSpec &spec :
         engine::linear_specs(*file, formatName))
      linear[spec.tensor] = spec.format;
  // By default the ggml type and shape decide (no tensor is imported, so a
  // 700 MB model is described in milliseconds); --check imports each one,
  // which also finds what only the values can refuse (a tq2_0 tensor whose
  // blocks carry several scales, a code outside the ternary range).
  const bool check = options.has("check");
  auto importInto = [check](const GgufTensor &t, const std::string &format) {
    if (format.empty())
      return std::string("float");
    std::string why = check ? gguf_import_error(t, Format::parse(format))
                            : importErrorByType(t, Format::parse(format));
    return why.empty() ? format : "- (" + why + ")";
  };

  std::printf("\n%-34s %-6s %-16s %12s  %s\n", "tensor", "type",
              "rows x K", "bytes",
              formatName.empty() ? "becomes"
                                 : ("with --format " + formatName).c_str());
  for (const GgufTensor &t : file->tensors()) {
    std::string becomes;
    if (t.ne.size() <= 1)
      becomes = "float";
    else if (known && linear.count(t.name))
      becomes = importInto(t, linear[t.name]);
    else if (known)
      becomes = t.name == "token_embd.weight" ? "float (embedding rows)"
                                              : "float";
    else
      becomes = importInto(t, formatName.empty() ? gguf_default_format(t)
                                                 : formatName);
    std::printf("%-34s %-6s %-16s %12llu  %s\n", t.name.c_str(),
                gguf_type_name(t.type), shapeText(t).c_str(),
                (unsigned long long)t.bytes, becomes.c_str());
  }
  return 0;
}

/// A non-negative 64-bit seed (0 allowed, unlike the positive options).
uint64_t parseSeed(const std::string &text) {
  bool digits = !text.empty() && text.size() <= 20 &&
                text.find_first_not_of("0123456789") == std::string::npos;
  errno = 0;
  unsigned long long value = digits ? std::strtoull(text.c_str(), nullptr, 10)
                                    : 0;
  if (!digits || errno == ERANGE)
    throw Error("--seed: expected a non-negative integer, got '" + text + "'");
  return value;
}

int runSynth(const ParsedOptions &options) {
  std::string arch = options.getOr("arch", "bitnet");
  std::string preset = options.getOr("preset", "tiny");
  engine::SynthSpec spec = engine::synth_preset(preset, arch);
  if (auto type = options.get("type"))
    spec.linear_type = parse_gguf_type(*type);
  if (auto type = options.get("head-type"))
    spec.head_type = parse_gguf_type(*type);
  if (options.has("tied"))
    spec.tied = true;
  if (auto seed = options.get("seed"))
    spec.seed = parseSeed(*seed);
  spec.n_embd = options.getPositive("n-embd", spec.n_embd);
  spec.n_ff = options.getPositive("n-ff", spec.n_ff);
  spec.n_layer = options.getPositive("n-layer", spec.n_layer);
  spec.n_head = options.getPositive("n-head", spec.n_head);
  spec.n_head_kv = options.getPositive("n-head-kv", spec.n_head_kv);
  spec.n_vocab = options.getPositive("n-vocab", spec.n_vocab);
  spec.n_ctx = options.getPositive("n-ctx", spec.n_ctx);
  if (auto vocab = options.get("vocab"))
    spec.vocab = *vocab;
  auto out = options.get("out");
  if (!out)
    throw Error("lowbit gguf synth: missing --out M.gguf");
  engine::check_synth_spec(spec);

  // Progress for a model of 100 M values or more: one line redrawn on a
  // terminal, else a line per tenth of the values.
  bool big = false, tty = isatty(STDERR_FILENO);
  int64_t lastTenth = 0;
  engine::SynthProgress progress = [&](size_t done, size_t all, int64_t values,
                                       int64_t total, const std::string &) {
    big = big || total >= 100000000;
    int64_t tenth = values * 10 / total;
    if (!big || (!tty && tenth == lastTenth && done != all))
      return;
    lastTenth = tenth;
    std::fprintf(stderr, "%slowbit: synth %zu/%zu tensors, %.2f of %.2f G "
                 "values%s", tty ? "\r" : "", done, all, values / 1e9,
                 total / 1e9, tty ? "" : "\n");
    std::fflush(stderr);
  };
  uint64_t bytes = engine::write_synthetic_model(spec, *out, progress);
  if (big && tty)
    std::fprintf(stderr, "\n");
  std::printf("%s: %s, n_embd %lld, n_ff %lld, %lld layers, %lld/%lld heads, "
              "vocab %lld (%s); linears %s, %s %s, seed %llu; %.2f MiB\n",
              out->c_str(), arch.c_str(), (long long)spec.n_embd,
              (long long)spec.n_ff, (long long)spec.n_layer,
              (long long)spec.n_head, (long long)spec.n_head_kv,
              (long long)spec.n_vocab, spec.vocab.c_str(),
              gguf_type_name(spec.linear_type),
              spec.tied ? "tied embedding/head" : "embedding and head",
              gguf_type_name(spec.head_type), (unsigned long long)spec.seed,
              bytes / 1048576.0);
  return 0;
}

const std::vector<OptionSpec> &ggufOptions();

int runGguf(const ParsedOptions &options) {
  const std::vector<std::string> &words = options.positional();
  if (words.empty())
    throw Error("lowbit gguf: missing subcommand (info FILE or synth; see "
                "'lowbit gguf --help')");
  const std::string &sub = words[0];
  if (sub == "info") {
    onlyOptions(options, sub, kInfoOptions, ggufOptions());
    if (words.size() < 2)
      throw Error("lowbit gguf info: missing FILE");
    if (words.size() > 2)
      throw Error("lowbit gguf info: unexpected argument '" + words[2] +
                  "' (one FILE)");
    return runInfo(options, words[1]);
  }
  if (sub == "synth") {
    onlyOptions(options, sub, kSynthOptions, ggufOptions());
    if (words.size() > 1)
      throw Error("lowbit gguf synth: unexpected argument '" + words[1] +
                  "' (options start with --)");
    return runSynth(options);
  }
  throw Error("lowbit gguf: unknown subcommand '" + sub +
              "' (expected info or synth)");
}

/// The help after the options; its "types:" line lists what synth takes
/// (engine::synth_linear_types / synth_head_types, the lists
/// check_synth_spec accepts).
std::string ggufNotes() {
  auto names = [](const std::vector<GgufType> &types) {
    std::string text;
    for (GgufType t : types)
      text += std::string(text.empty() ? "" : ", ") + gguf_type_name(t);
    return text;
  };
  return "info:   the metadata summary and every tensor: name, type, shape, "
         "bytes and what\n        it becomes: for a model the engine runs "
         "what 'lowbit generate [--format F]'\n        makes of it (the "
         "layers' linear weights in F, the output head in its own\n        "
         "format), else its import by default or into F; '-' and the reason "
         "where\n        it cannot. Only the header and tensor infos are "
         "read: the ggml type and\n        shape decide (a float matrix is "
         "read up to its first value that is not\n        {-a, 0, a}); "
         "--check imports every tensor, which also finds what only the\n"
         "        values refuse (a tq2_0 tensor with several block scales)\n"
         "synth:  a model of llama.cpp's bitnet or llama architecture with "
         "random weights\n        that llama.cpp loads: --preset tiny "
         "(n_embd 256, n_ff 512, 2 layers, 4/2\n        heads, vocab 288) or "
         "bitnet-2b (BitNet b1.58 2B's shapes), --n-* to change\n        a "
         "size. bitnet: ternary linears (tq2_0 by default), head tied to the\n"
         "        embedding; llama: gaussian linears (q4_0 by default), a "
         "separate output\n        head unless --tied. --vocab llama (the "
         "default): a sentencepiece\n        vocabulary (<unk>, <s>, </s>, "
         "the 256 byte tokens, U+2581, padding to\n        --n-vocab >= 260) "
         "that llama.cpp's text tools (llama-perplexity,\n        llama-cli) "
         "tokenize with; --vocab none: no tokenizer (no_vocab), token\n"
         "        ids only, any --n-vocab\n"
         "types:  linears " +
         names(engine::synth_linear_types()) + "; head " +
         names(engine::synth_head_types()) + "\n";
}

const Command &command() {
  static const std::string notes = ggufNotes();
  static const Command command{
      {"gguf", "GGUF model files: inspect one, make a synthetic one.",
       notes.c_str(), ggufOptions(), "info FILE | synth"},
      runGguf};
  return command;
}

const std::vector<OptionSpec> &ggufOptions() {
  static const std::vector<OptionSpec> options = {
      {"format", "F", "info: the lowbit format to import each tensor into"},
      {"check", nullptr,
       "info: import every tensor (slow: reads all the data) instead of "
       "judging by its type and shape"},
      {"arch", "A", "synth: bitnet (default) or llama"},
      {"preset", "P", "synth: tiny (default) or bitnet-2b"},
      {"type", "T", "synth: type of the linear weights"},
      {"head-type", "T", "synth: type of the embedding and output head"},
      {"tied", nullptr, "synth: no output.weight (llama; bitnet always is)"},
      {"seed", "N", "synth: random seed (default 1)"},
      {"n-embd", "N", "synth: hidden size"},
      {"n-ff", "N", "synth: feed-forward size"},
      {"n-layer", "N", "synth: layers"},
      {"n-head", "N", "synth: attention heads"},
      {"n-head-kv", "N", "synth: key/value heads"},
      {"n-vocab", "N", "synth: vocabulary size"},
      {"n-ctx", "N", "synth: training context length (metadata)"},
      {"vocab", "V", "synth: llama (default: a sentencepiece vocabulary) or "
                     "none (no tokenizer)"},
      {"out", "M.gguf", "synth: the file to write"}};
  return options;
}

} // namespace

const Command &ggufCommand() { return command(); }

} // namespace lowbit::cli
