//===- PackCommand.cpp - `lowbit pack` ------------------------------------===//
//
// Quantizes fp32 weights into a format and writes them either as a .lbw file
// (header + canonical arrays, readable by `lowbit run --weights`) or, for
// q4_0 with --layout gguf, as the bare ggml block_q4_0 array.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "Inputs.h"

#include "lowbit/error.h"
#include "lowbit/format.h"
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
  if (layout == "gguf")
    save_gguf_blocks(out, packed);
  else
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
       "readable by 'lowbit run --weights'\n         gguf    q4_0 only: bare "
       "ggml block_q4_0 rows, byte-identical to ggml's quantizer\n",
       {{"format", "F", "weight format", true},
        {"weights", "W.npy", "weights [M, K] as float32 .npy", true},
        {"out", "FILE", "output file", true},
        {"layout", "L", "lowbit (default) or gguf"}}},
      runPack};
  return command;
}

} // namespace lowbit::cli
