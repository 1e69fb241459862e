"""lowbit generate against llama.cpp (llama-driver) on one GGUF model.

1. `lowbit generate` decodes N ids greedily and writes its logits (one row
   per evaluated position: the prompt, then every generated id but the
   last).
2. llama-driver decodes N ids greedily on its own; the ids must equal
   lowbit's. Where they part, the step must be a near-tie: lowbit's top-2
   margin in that row at most twice the largest |difference| of the two
   engines' logits in that row; later steps are then not compared.
3. llama-driver evaluates lowbit's sequence (teacher forcing: the prompt
   and lowbit's ids but the last, one id generated) and writes its logits
   for the same positions; every row's relative L2 difference
   ||lowbit - llama.cpp|| / ||llama.cpp|| must be <= --bound.

--peer-model runs llama.cpp on another file (the negative control: the
bound must fail the logits of another model).

usage: greedy_pair.py --lowbit L --driver D --model M.gguf --tokens IDS
                      -n N --bound X --dir DIR [--peer-model P.gguf]
"""
import argparse
import os
import subprocess
import sys

import numpy as np


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)}: exit {r.returncode}: "
                 f"{r.stderr.strip()[-400:]}")
    return r.stdout.split()


def main():
    ap = argparse.ArgumentParser()
    for flag in ("--lowbit", "--driver", "--model", "--tokens", "--dir"):
        ap.add_argument(flag, required=True)
    ap.add_argument("-n", type=int, required=True)
    ap.add_argument("--bound", type=float, required=True)
    ap.add_argument("--peer-model")
    a = ap.parse_args()
    peer = a.peer_model or a.model
    lb_npy = os.path.join(a.dir, "lowbit.npy")
    ll_npy = os.path.join(a.dir, "llama.npy")
    # One thread each: the results do not depend on it, and OpenMP's
    # spinning barrier makes llama.cpp slow on a loaded 2-core host.
    lb_ids = run([a.lowbit, "generate", "--model", a.model, "--tokens",
                  a.tokens, "-n", str(a.n), "-t", "1", "--logits", lb_npy])
    ll_ids = run([a.driver, "--model", peer, "--tokens", a.tokens, "-n",
                  str(a.n), "-t", "1"])
    forced = a.tokens + "," + ",".join(lb_ids[:-1]) if a.n > 1 else a.tokens
    run([a.driver, "--model", peer, "--tokens", forced, "-n", "1", "-t",
         "1", "--logits", ll_npy])
    x = np.load(lb_npy).astype(np.float64)
    y = np.load(ll_npy).astype(np.float64)
    if x.shape != y.shape:
        sys.exit(f"FAIL: logits shapes {x.shape} (lowbit) and {y.shape} "
                 f"(llama.cpp)")
    failed = False
    prompt = len(a.tokens.split(","))
    equal = 0
    for i, (p, q) in enumerate(zip(lb_ids, ll_ids)):
        if p == q:
            equal += 1
            continue
        row = x[prompt - 1 + i]
        top2 = np.sort(row)[-2:]
        margin = top2[1] - top2[0]
        diff = np.abs(row - y[prompt - 1 + i]).max()
        if margin <= 2 * diff:
            print(f"ids part at step {i} ({p} against {q}): a near-tie, "
                  f"margin {margin:.3g} <= 2 x max|difference| {diff:.3g}")
        else:
            print(f"FAIL: ids part at step {i} ({p} against {q}): margin "
                  f"{margin:.3g} > 2 x max|difference| {diff:.3g}")
            failed = True
        break
    print(f"ids: {equal} of {a.n} equal: lowbit {' '.join(lb_ids)}; "
          f"llama.cpp {' '.join(ll_ids)}")
    rel = np.linalg.norm(x - y, axis=1) / np.maximum(
        np.linalg.norm(y, axis=1), 1e-30)
    print(f"logits: {x.shape[0]} rows, relative L2 difference max "
          f"{rel.max():.3g} (row {int(rel.argmax())}), median "
          f"{float(np.median(rel)):.3g}; bound {a.bound:g}")
    if rel.max() > a.bound:
        print(f"FAIL: row {int(rel.argmax())} differs by {rel.max():.3g} > "
              f"{a.bound:g}")
        failed = True
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
