//===- synth_test.cpp - synthetic GGUF models (synth.h) -------------------===//
//
// What `lowbit gguf synth` writes besides the weights:
//  - the "llama" vocabulary, id by id as synth.h lays it out (the ids,
//    spellings and token types llama.cpp's SPM loader and byte fallback
//    look up, written out here rather than taken from synth.cpp), and the
//    vocabulary size the engine reads from such a file;
//  - "none": no_vocab and no token list, any n_vocab;
//  - the spec's checks: every type the help lists is accepted, others and
//    a vocabulary too small for its tokens are refused with a reason.
// Whether llama.cpp itself loads and tokenizes with these files is
// test/interop's (synth-load.test, backend-kld.test).
//
//===----------------------------------------------------------------------===//
#include "engine.h"
#include "synth.h"
#include "test_util.h"

#include "lowbit/error.h"
#include "lowbit/gguf.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <string>
#include <unistd.h>
#include <vector>

namespace lowbit::engine {
namespace {

using test::error_of;

std::string temp_path(const std::string &name) {
  return ::testing::TempDir() + "lowbit_synth_" + std::to_string(getpid()) +
         "_" + name + ".gguf";
}

const GgufValue &array_of(const GgufFile &file, const std::string &key,
                          size_t size) {
  const GgufValue *v = file.find(key);
  EXPECT_NE(v, nullptr) << key;
  static const GgufValue empty;
  if (!v)
    return empty;
  EXPECT_EQ(v->type, GgufValue::ARRAY) << key;
  EXPECT_EQ(v->array.size(), size) << key;
  return *v;
}

TEST(Synth, LlamaVocabulary) {
  SynthSpec spec = synth_preset("tiny", "llama");
  EXPECT_EQ(spec.vocab, "llama");
  EXPECT_EQ(spec.n_vocab, 288);
  const std::string path = temp_path("llama_vocab");
  write_synthetic_model(spec, path);
  auto file = GgufFile::open(path);
  EXPECT_EQ(file->get_string("tokenizer.ggml.model"), "llama");
  EXPECT_EQ(file->get_int("llama.vocab_size"), 288);

  const GgufValue &tokens = array_of(*file, "tokenizer.ggml.tokens", 288);
  const GgufValue &types = array_of(*file, "tokenizer.ggml.token_type", 288);
  const GgufValue &scores = array_of(*file, "tokenizer.ggml.scores", 288);
  ASSERT_EQ(tokens.array.size(), 288u);
  ASSERT_EQ(types.array.size(), 288u);
  ASSERT_EQ(scores.array.size(), 288u);
  EXPECT_EQ(tokens.array_type, GgufValue::STRING);
  EXPECT_EQ(types.array_type, GgufValue::INT32);
  EXPECT_EQ(scores.array_type, GgufValue::FLOAT32);

  // llama.h's llama_token_type: 1 normal, 2 unknown, 3 control, 5 unused,
  // 6 byte.
  EXPECT_EQ(tokens.array[0].s, "<unk>");
  EXPECT_EQ(types.array[0].i, 2);
  EXPECT_EQ(tokens.array[1].s, "<s>");
  EXPECT_EQ(types.array[1].i, 3);
  EXPECT_EQ(tokens.array[2].s, "</s>");
  EXPECT_EQ(types.array[2].i, 3);
  EXPECT_EQ(tokens.array[3].s, "<0x00>");
  EXPECT_EQ(tokens.array[3 + 0x0A].s, "<0x0A>"); // llama.cpp's linefeed
  EXPECT_EQ(tokens.array[3 + 'a'].s, "<0x61>");
  EXPECT_EQ(tokens.array[3 + 0xE2].s, "<0xE2>");
  EXPECT_EQ(tokens.array[258].s, "<0xFF>");
  for (int id = 3; id <= 258; ++id) {
    EXPECT_EQ(types.array[id].i, 6) << id;
    EXPECT_EQ(scores.array[id].f, 0.0) << id;
  }
  EXPECT_EQ(tokens.array[259].s, "\xE2\x96\x81"); // U+2581
  EXPECT_EQ(types.array[259].i, 1);
  EXPECT_EQ(tokens.array[260].s, "[PAD260]");
  EXPECT_EQ(tokens.array[287].s, "[PAD287]");
  for (int id = 260; id < 288; ++id) {
    EXPECT_EQ(types.array[id].i, 5) << id;
    EXPECT_EQ(scores.array[id].f, -1000.0) << id;
  }
  std::set<std::string> distinct; // llama.cpp asserts every token is unique
  for (const GgufValue &t : tokens.array)
    distinct.insert(t.s);
  EXPECT_EQ(distinct.size(), 288u);

  EXPECT_EQ(file->get_int("tokenizer.ggml.bos_token_id"), 1);
  EXPECT_EQ(file->get_int("tokenizer.ggml.eos_token_id"), 2);
  EXPECT_EQ(file->get_int("tokenizer.ggml.unknown_token_id"), 0);
  const GgufValue *add_bos = file->find("tokenizer.ggml.add_bos_token");
  const GgufValue *add_eos = file->find("tokenizer.ggml.add_eos_token");
  ASSERT_NE(add_bos, nullptr);
  ASSERT_NE(add_eos, nullptr);
  EXPECT_EQ(add_bos->type, GgufValue::BOOL);
  EXPECT_EQ(add_bos->i, 1);
  EXPECT_EQ(add_eos->i, 0);

  // The engine's vocabulary: the head's rows.
  Hparams hp = read_hparams(*file);
  EXPECT_EQ(hp.n_vocab, 288);
  EXPECT_EQ(linear_specs(*file, "").back().M, 288);
  std::remove(path.c_str());
}

TEST(Synth, NoVocabulary) {
  SynthSpec spec = synth_preset("tiny", "bitnet");
  spec.vocab = "none";
  spec.n_vocab = 40;
  const std::string path = temp_path("no_vocab");
  write_synthetic_model(spec, path);
  auto file = GgufFile::open(path);
  EXPECT_EQ(file->get_string("tokenizer.ggml.model"), "no_vocab");
  EXPECT_EQ(file->find("tokenizer.ggml.tokens"), nullptr);
  EXPECT_EQ(file->find("tokenizer.ggml.bos_token_id"), nullptr);
  EXPECT_EQ(read_hparams(*file).n_vocab, 40);
  std::remove(path.c_str());
}

TEST(Synth, SpecChecks) {
  // Every type the help lists makes a valid tiny spec (K = 256 is a
  // multiple of every block).
  for (GgufType t : synth_linear_types()) {
    SynthSpec spec = synth_preset("tiny", "llama");
    spec.linear_type = t;
    EXPECT_EQ(error_of([&] { check_synth_spec(spec); }), "(no error)")
        << gguf_type_name(t);
  }
  for (GgufType t : synth_head_types()) {
    SynthSpec spec = synth_preset("tiny", "bitnet");
    spec.head_type = t;
    EXPECT_EQ(error_of([&] { check_synth_spec(spec); }), "(no error)")
        << gguf_type_name(t);
  }
  // The lists: the ternary types, ggml's block types, f16 and f32; the
  // head takes no ternary type.
  auto names = [](const std::vector<GgufType> &types) {
    std::string text;
    for (GgufType t : types)
      text += std::string(text.empty() ? "" : " ") + gguf_type_name(t);
    return text;
  };
  EXPECT_EQ(names(synth_linear_types()),
            "tq2_0 tq1_0 i2_s q4_0 q4_1 q5_0 q5_1 q8_0 q2_k q3_k q4_k q5_k "
            "q6_k iq4_nl f16 f32");
  EXPECT_EQ(names(synth_head_types()),
            "q4_0 q4_1 q5_0 q5_1 q8_0 q2_k q3_k q4_k q5_k q6_k iq4_nl f16 f32");

  SynthSpec spec = synth_preset("tiny", "llama");
  spec.linear_type = GgufType::BF16;
  std::string e = error_of([&] { check_synth_spec(spec); });
  EXPECT_NE(e.find("linear type bf16 is not made here (expected tq2_0, "
                   "tq1_0, i2_s, q4_0"),
            std::string::npos)
      << e;
  spec = synth_preset("tiny", "llama");
  spec.head_type = GgufType::TQ2_0;
  e = error_of([&] { check_synth_spec(spec); });
  EXPECT_NE(e.find("head type tq2_0 is not made here"), std::string::npos)
      << e;

  spec = synth_preset("tiny", "llama");
  spec.n_vocab = 259;
  e = error_of([&] { check_synth_spec(spec); });
  EXPECT_NE(e.find("n_vocab = 259 is below the 260 tokens of the llama "
                   "vocabulary"),
            std::string::npos)
      << e;
  spec.vocab = "none";
  EXPECT_EQ(error_of([&] { check_synth_spec(spec); }), "(no error)");
  spec.vocab = "gpt2";
  e = error_of([&] { check_synth_spec(spec); });
  EXPECT_NE(e.find("unknown vocabulary 'gpt2' (expected llama or none)"),
            std::string::npos)
      << e;
}

} // namespace
} // namespace lowbit::engine
