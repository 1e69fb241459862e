//===- PackCommand.cpp - `lowbit pack` ------------------------------------===//
//
// Quantizes fp32 weights into a format and writes them either as a .lbw file
// (header + canonical arrays, readable by `lowbit run --weights`) or, for
// a ggml block format (q4_0 ... iq4_nl) with --layout gguf, as a GGUF v3
// file holding one tensor of that type whose blocks are byte-identical to
// ggml's quantizer.
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
  const GgmlBlockType *block_type = ggml_block_type(format.kind);
  if (layout == "gguf" && !block_type)
    throw Error("--layout gguf is only defined for the ggml block formats "
                "(q4_0, q4_1, q5_0, q5_1, q8_0, q2_k ... q6_k, iq4_nl), not " +
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
    gguf.add_tensor(options.getOr("name", "weight"),
                    GgufType(block_type->ggml_type), {W.cols, W.rows},
                    packed.codes);
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
       "readable by 'lowbit run --weights'\n         gguf    ggml block "
       "formats (q4_0 ... iq4_nl): a GGUF v3 file with one tensor [M, K] of "
       "that type (ggml's ne = {K, M})\n"
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
