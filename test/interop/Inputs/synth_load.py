"""llama.cpp loads and runs every GGUF file `lowbit gguf synth` writes.

The types come from lowbit's own help (its "types:" line: the linears' and
the head's), so a type added to synth is tested without editing this file.
For both architectures, every linear type (with an f16 head) and every
head type (with the architecture's default linears: llama q4_0, bitnet
tq2_0; and, for llama, the tied head), the tiny model is written and
llama-driver decodes 2 tokens from it: each type once per architecture and
place, not every pair (16 linear by 13 head types would be 400 files). A type llama.cpp has no ggml type for is listed in
NOT_GGML: its files must be refused with an error, never crash or run.

usage: synth_load.py --lowbit L --driver D --dir DIR
"""
import argparse
import os
import re
import subprocess
import sys

# bitnet.cpp's I2_S: a lowbit and bitnet.cpp type that ggml does not have.
NOT_GGML = {"i2_s"}


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def synth_types(lowbit):
    text = run([lowbit, "gguf", "synth", "--help"]).stdout
    m = re.search(r"types:\s+linears ([\w, ]+); head ([\w, ]+)", text)
    if not m:
        sys.exit("FAIL: no 'types:' line in lowbit gguf synth --help")
    split = lambda s: [t.strip() for t in s.split(",")]
    return split(m.group(1)), split(m.group(2))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lowbit", required=True)
    ap.add_argument("--driver", required=True)
    ap.add_argument("--dir", required=True)
    a = ap.parse_args()
    linears, heads = synth_types(a.lowbit)
    print("linears " + " ".join(linears) + "; heads " + " ".join(heads))
    failed = 0
    cases = []
    for arch, default in (("llama", "q4_0"), ("bitnet", "tq2_0")):
        cases += [(arch, t, "f16", []) for t in linears]
        cases += [(arch, default, h, []) for h in heads if h != "f16"]
    cases += [("llama", "q4_0", h, ["--tied"]) for h in heads]
    for arch, t, h, extra in cases:
        label = f"{arch} {t} head {h}" + (" tied" if extra else "")
        path = os.path.join(a.dir, f"{arch}.{t}.{h}{'.tied' if extra else ''}.gguf")
        s = run([a.lowbit, "gguf", "synth", "--arch", arch, "--preset",
                 "tiny", "--type", t, "--head-type", h, "--out", path] + extra)
        if s.returncode != 0:
            print(f"FAIL: {label}: lowbit gguf synth: {s.stderr.strip()}")
            failed += 1
            continue
        d = run([a.driver, "--model", path, "--tokens", "1,2,3", "-n", "2",
                 "-t", "1"])
        ids = d.stdout.split()
        if t in NOT_GGML or h in NOT_GGML:
            if d.returncode == 1 and "llama-driver: error:" in d.stderr:
                print(f"{label}: refused by llama.cpp (not a ggml type)")
            else:
                print(f"FAIL: {label}: llama.cpp did not refuse it "
                      f"(exit {d.returncode})")
                failed += 1
        elif d.returncode == 0 and len(ids) == 2:
            print(f"{label}: loaded, ids {' '.join(ids)}")
        else:
            print(f"FAIL: {label}: llama-driver exit {d.returncode}: "
                  f"{d.stderr.strip()[-400:]}")
            failed += 1
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
