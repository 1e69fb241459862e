"""lowbit opens every file llama-quantize writes from lowbit's tiny models.

Tiny F16 `llama` and `bitnet` models (`lowbit gguf synth --type f16
--head-type f16`) are quantized by the pinned llama-quantize to each type
of TYPES in two ways: llama.cpp's own mix for the type ("mix": its
embedding and output choices, the K-quants' per-tensor mixes) and the
layers' linear weights alone ("linears": --token-embedding-type and
--output-tensor-type f16). TQ1_0 and TQ2_0 only from the bitnet model:
they are ternarizations, and llama-quantize gives the llama model's
gaussian weights a scale per block of 256, where lowbit's ternary formats
(and BitNet's weights) have one per tensor.

Which files lowbit must run is derived, not listed: the ggml types of a
file's tensors (ggml's own reader, ggml-quantize --tensors) against the
types lowbit declares, which are f32, f16, the linear types of `lowbit gguf
synth --help` and every block format `lowbit pack --layout gguf` accepts
(probed on a small matrix). So the test follows the formats as they land
in lowbit without being edited, and cannot pass by skipping: a file of
declared types must pass `lowbit gguf info` and `lowbit generate -n 4` (4
ids; `--strategy reference`, the scalar reference, since this is about
reading the files: the kernels are test/e2e's and test/model's, and
compiling them for every type would take minutes here); a file with any other type may run or be refused, but only with one
`lowbit: error:` line and exit 1 from both commands, never a crash.

usage: quantize_open.py --lowbit L --quantize Q --ggml-quantize G --dir D
"""
import argparse
import os
import re
import subprocess
import sys

import numpy as np

TYPES = ["TQ1_0", "TQ2_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q2_K",
         "Q3_K_S", "Q3_K_M", "Q3_K_L", "Q4_K_S", "Q4_K_M", "Q5_K_S",
         "Q5_K_M", "Q6_K", "IQ4_NL"]
# Block formats a ggml file may hold that lowbit may name (lowbit's names).
BLOCK_FORMATS = ["q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "q2_k", "q3_k",
                 "q4_k", "q5_k", "q6_k", "iq4_nl"]


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def one_error_line(r):
    err = r.stderr.strip()
    return r.returncode == 1 and err.startswith("lowbit: error:") and \
        "\n" not in err


def declared_types(lowbit, tmp):
    text = run([lowbit, "gguf", "synth", "--help"]).stdout
    m = re.search(r"types:\s+linears ([\w, ]+);", text)
    if not m:
        sys.exit("FAIL: no 'types:' line in lowbit gguf synth --help")
    types = {"f32", "f16"} | {t.strip() for t in m.group(1).split(",")}
    w = os.path.join(tmp, "probe.npy")
    np.save(w, np.ones((2, 256), np.float32))
    for fmt in BLOCK_FORMATS:
        if run([lowbit, "pack", "--format", fmt, "--layout", "gguf",
                "--weights", w, "--out", w + ".gguf"]).returncode == 0:
            types.add(fmt)
    return types


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lowbit", required=True)
    ap.add_argument("--quantize", required=True)
    ap.add_argument("--ggml-quantize", required=True)
    ap.add_argument("--dir", required=True)
    a = ap.parse_args()
    declared = declared_types(a.lowbit, a.dir)
    print("lowbit declares " + " ".join(sorted(declared)))
    failed = 0
    for arch in ("llama", "bitnet"):
        f16 = os.path.join(a.dir, arch + ".f16.gguf")
        s = run([a.lowbit, "gguf", "synth", "--arch", arch, "--type", "f16",
                 "--head-type", "f16", "--seed", "3", "--out", f16])
        if s.returncode != 0:
            sys.exit(f"FAIL: lowbit gguf synth {arch}: {s.stderr.strip()}")
        for qtype in TYPES:
            if arch == "llama" and qtype.startswith("TQ"):
                continue
            for variant, extra in (("mix", []),
                                   ("linears", ["--token-embedding-type",
                                                "f16", "--output-tensor-type",
                                                "f16"])):
                label = f"{arch} {qtype} {variant}"
                out = os.path.join(a.dir, f"{arch}.{qtype}.{variant}.gguf")
                q = run([a.quantize] + extra + [f16, out, qtype, "1"])
                if q.returncode != 0:
                    print(f"FAIL: {label}: llama-quantize exit "
                          f"{q.returncode}: {q.stderr.strip()[-300:]}")
                    failed += 1
                    continue
                t = run([a.ggml_quantize, "--tensors", out])
                types = {line.split()[1].lower()
                         for line in t.stdout.splitlines()}
                info = run([a.lowbit, "gguf", "info", out])
                gen = run([a.lowbit, "generate", "--model", out, "--tokens",
                           "1,2,3", "-n", "4", "--strategy", "reference"])
                ids = gen.stdout.split()
                runs = info.returncode == 0 and gen.returncode == 0 and \
                    len(ids) == 4
                held = " ".join(sorted(types))
                if runs:
                    print(f"{label} [{held}]: lowbit runs it, ids "
                          + " ".join(ids))
                elif types <= declared:
                    print(f"FAIL: {label} [{held}]: types lowbit declares, "
                          f"but gguf info exit {info.returncode}, generate "
                          f"exit {gen.returncode}: "
                          f"{(info.stderr + gen.stderr).strip()[-300:]}")
                    failed += 1
                elif (info.returncode == 0 or one_error_line(info)) and \
                        one_error_line(gen):
                    print(f"{label} [{held}]: not yet "
                          f"({'opens, ' if info.returncode == 0 else ''}"
                          f"{gen.stderr.strip()})")
                else:
                    print(f"FAIL: {label} [{held}]: refused without one "
                          f"error line: gguf info exit {info.returncode}, "
                          f"generate exit {gen.returncode}: "
                          f"{(info.stderr + gen.stderr).strip()[-300:]}")
                    failed += 1
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
