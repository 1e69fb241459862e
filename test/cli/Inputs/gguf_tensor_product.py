#!/usr/bin/env python3
"""Checks `lowbit run --weights M.gguf --tensor NAME --act X.npy --out Y.npy`
against an independent product: the tensor dequantized by
test/model/Inputs/gguf_forward.py (its own GGUF parser and ggml / bitnet.cpp
dequantizers, no code shared with the C++) times X in float64.

    gguf_tensor_product.py M.gguf NAME X.npy Y.npy [--bound B]

The kernel quantizes X to int8 (per token or per block of 32,
runtime/README.md "Activations"), so Y differs from the exact product by that
rounding: a normalized error ||Y - X W^T|| / ||X W^T|| of about 1e-2 at most
(the bound every lossy format's test uses, runtime/README.md); a wrong tensor,
layout or scale gives errors near 1 or more. Prints "ok <error>" or
"FAIL: ..." (exit 1).
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "model", "Inputs"))
import gguf_forward  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("tensor")
    ap.add_argument("act")
    ap.add_argument("out")
    ap.add_argument("--bound", type=float, default=1e-2)
    args = ap.parse_args()
    g = gguf_forward.Gguf(args.model)
    W = gguf_forward.tensor_values(g.by_name[args.tensor])
    X = np.load(args.act).astype(np.float64)
    Y = np.load(args.out).astype(np.float64)
    want = X @ W.T  # [N, M], or [M] for a 1-D X (and then a 1-D Y)
    if Y.shape != want.shape:
        print("FAIL: Y has shape %s, the product %s" % (Y.shape, want.shape))
        return 1
    err = np.linalg.norm(Y - want) / max(np.linalg.norm(want), 1e-30)
    if not err <= args.bound:
        print("FAIL: normalized error %.3g > %g" % (err, args.bound))
        return 1
    print("ok %.3g" % err)
    return 0


if __name__ == "__main__":
    sys.exit(main())
