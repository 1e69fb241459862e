// ggml_types.h: the ggml types our programs quantize to, by name, for
// ggml-quantize and ggml-matmul-bench.
#pragma once

#include "ggml.h"

#include <stdexcept>
#include <string>
#include <strings.h>

namespace ggml_types {

// The types ggml_quantize_chunk writes from float32 with no importance
// matrix: a quantizer in the type traits and a name (ggml keeps removed
// types' slots, named "DEPRECATED"), less Q8_1 and Q8_K, ggml's formats for
// activations, which ggml_quantize_chunk has no case for.
inline bool quantizable(ggml_type t) {
  const ggml_type_traits *traits = ggml_get_type_traits(t);
  return traits->from_float_ref && traits->blck_size > 0 &&
         traits->type_name && std::string(traits->type_name) != "DEPRECATED" &&
         t != GGML_TYPE_Q8_1 && t != GGML_TYPE_Q8_K &&
         !ggml_quantize_requires_imatrix(t);
}

// The quantizable type called `name` (case-insensitive). Any other name is
// an error that says why: a type that needs an importance matrix, one ggml
// has no quantizer for, or no ggml type at all.
inline ggml_type named(const std::string &name) {
  for (int t = 0; t < GGML_TYPE_COUNT; ++t) {
    const char *type_name = ggml_type_name(ggml_type(t));
    if (!type_name || strcasecmp(type_name, name.c_str()) != 0)
      continue;
    if (quantizable(ggml_type(t)))
      return ggml_type(t);
    if (t == GGML_TYPE_Q8_1 || t == GGML_TYPE_Q8_K)
      throw std::runtime_error("--type: '" + name +
                               "' is ggml's format for activations, not for "
                               "weights (see --types)");
    if (ggml_quantize_requires_imatrix(ggml_type(t)))
      throw std::runtime_error(
          "--type: ggml quantizes '" + name +
          "' only with an importance matrix, which these tools do not take "
          "(see --types)");
    throw std::runtime_error("--type: ggml has no quantizer from float32 for '" +
                             name + "' (see --types)");
  }
  throw std::runtime_error("--type: '" + name +
                           "' is not a type ggml quantizes to (see --types)");
}

} // namespace ggml_types
