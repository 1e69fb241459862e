"""Byte identity of `lowbit pack --layout gguf` with ggml's own quantizer.

For every lowbit format that has a GGUF twin, two float32 matrices (a random
ragged one, and one with an all-zero row, outliers, a constant row, rounding
ties and tiny values) are packed by lowbit into a GGUF file; ggml's GGUF
reader takes the tensor's bytes out of that file (ggml-quantize --extract,
which also checks the tensor's ggml type) and ggml's reference quantizer
quantizes the same matrix (ggml-quantize --type): the two byte strings must
be equal. A format `lowbit pack --layout gguf` does not accept yet is
skipped with a note, so the test grows as formats land; a crash, or an error
that is not one `lowbit: error:` line, fails.

usage: pack_bytes.py --lowbit L --ggml-quantize Q --dir D
"""
import argparse
import os
import subprocess
import sys

import numpy as np

# lowbit's names of the ggml block types (ggml-quantize matches its own
# names, e.g. q4_K, case-insensitively).
FORMATS = ["q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "q2_k", "q3_k", "q4_k",
           "q5_k", "q6_k", "iq4_nl", "tq1_0", "tq2_0"]


def matrices():
    rng = np.random.default_rng(29)
    ragged = rng.standard_normal((13, 768)).astype(np.float32)
    hard = rng.standard_normal((7, 512)).astype(np.float32)
    hard[1] = 0.0                                  # all-zero row
    hard[2, ::97] = [300.0, -450.0, 1e4, -2e3, 77.0, -1e4]  # outliers
    hard[3] = 0.5                                  # constant row
    hard[4] = np.tile([1.0, -1.0, 0.5, -0.5, 0.25, 0.0, 1.5, -1.5], 64)
    hard[5] *= 1e-6                                # tiny values
    hard[6] = np.round(hard[6] * 4) / 4            # a coarse grid: ties
    return {"ragged": ragged, "hard": hard}


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lowbit", required=True)
    ap.add_argument("--ggml-quantize", required=True)
    ap.add_argument("--dir", required=True)
    a = ap.parse_args()
    failed = 0
    for name, w in matrices().items():
        weights = os.path.join(a.dir, name + ".npy")
        np.save(weights, w)
        for fmt in FORMATS:
            gguf = os.path.join(a.dir, f"{name}.{fmt}.gguf")
            packed = run([a.lowbit, "pack", "--format", fmt, "--layout",
                          "gguf", "--weights", weights, "--out", gguf])
            if packed.returncode != 0:
                err = packed.stderr.strip()
                if packed.returncode == 1 and err.startswith(
                        "lowbit: error:") and "\n" not in err:
                    print(f"{fmt} {name}: skipped, lowbit does not pack it: "
                          f"{err}")
                    continue
                print(f"FAIL: {fmt} {name}: lowbit pack exited "
                      f"{packed.returncode}: {err}")
                failed += 1
                continue
            ours = gguf + ".bytes"
            theirs = os.path.join(a.dir, f"{name}.{fmt}.ggml")
            for cmd in ([a.ggml_quantize, "--extract", gguf, "--name",
                         "weight", "--type", fmt, "--out", ours],
                        [a.ggml_quantize, "--type", fmt, "--weights",
                         weights, "--out", theirs]):
                r = run(cmd)
                if r.returncode != 0:
                    sys.exit(f"FAIL: {' '.join(cmd)}: {r.stderr.strip()}")
            with open(ours, "rb") as f:
                x = f.read()
            with open(theirs, "rb") as f:
                y = f.read()
            if x == y:
                print(f"{fmt} {name}: identical ({len(x)} bytes)")
            else:
                diff = next(i for i in range(min(len(x), len(y)))
                            if x[i] != y[i]) if len(x) == len(y) else None
                print(f"FAIL: {fmt} {name}: lowbit's {len(x)} bytes != "
                      f"ggml's {len(y)} bytes"
                      + (f" (first difference at byte {diff})"
                         if diff is not None else ""))
                failed += 1
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
