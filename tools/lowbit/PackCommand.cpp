//===- PackCommand.cpp - `lowbit pack` ------------------------------------===//
//
// Quantizes fp32 weights into a format and writes them either as a .lbw file
// (header + canonical arrays, readable by `lowbit run --weights`) or, for
// q4_0 with --layout gguf, as a GGUF v3 file holding one Q4_0 tensor whose
// blocks are byte-identical to ggml's quantizer.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "Inputs.h"

#include "lowbit/error.h"
#include "lowbit/format.h"
#include "lowbit/gguf.h"
#include "lowbit/packed_file.h"

#include <cstdio>

namespace lowbit::cli {

static int runPack(const ParsedOptions &options) {
  Format format = Format::parse(*options.get("format"));
  std::string layout = options.getOr("layout", "lowbit");
  if (layout != "lowbit" && layout != "gguf")
    throw Error("unknown layout '" + layout + "' (expected lowbit or gguf)");
  if (layout == "gguf" && format.kind != FormatKind::Q4_0)
    throw Error("--layout gguf is only defined for q4_0, not " +
                format.name());

  std::string in = *options.get("weights");
  Matrix W = readMatrix(in, "weights");
  if (W.vector)
    throw Error(in + ": weights must be a 2-D [M, K] array, got 1-D");
  format.check_shape(W.rows, W.cols);
  PackedWeights packed = quantize(format, W.data.data(), W.rows, W.cols);

  std::string out = *options.get("out");
  if (layout == "gguf") {
    GgufWriter gguf;
    gguf.add_string("general.name", options.getOr("name", "weight"));
    gguf.add_tensor(options.getOr("name", "weight"), GgufType::Q4_0,
                    {W.cols, W.rows}, packed.codes);
    gguf.write(out);
  } else
    save_packed(out, packed);
  std::printf("%s  M=%lld K=%lld  %.3f bits/weight  layout=%s  -> %s\n",
              format.name().c_str(), (long long)W.rows, (long long)W.cols,
              format.bits_per_weight(), layout.c_str(), out.c_str());
  return 0;
}

const Command &packCommand() {
  static const Command command{
      {"pack",
       "Quantize fp32 weights W [M, K] into a format and write them packed.",
       "layouts: lowbit  header + canonical arrays (runtime/README.md), "
       "readable by 'lowbit run --weights'\n         gguf    q4_0 only: a "
       "GGUF v3 file with one Q4_0 tensor [M, K] (ggml's ne = {K, M})\n"
       "                 named by --name, blocks byte-identical to ggml's "
       "quantizer\n",
       {{"format", "F", "weight format", true},
        {"weights", "W.npy", "weights [M, K] as float32 .npy", true},
        {"out", "FILE", "output file", true},
        {"layout", "L", "lowbit (default) or gguf"},
        {"name", "NAME", "--layout gguf: the tensor's name (default weight)"}}},
      runPack};
  return command;
}

} // namespace lowbit::cli
