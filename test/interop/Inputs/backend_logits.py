"""Compares two float32 logits files [positions, vocab] row by row (the
greedy driver's --logits, lowbit generate's --logits) for backend-*.test.

Prints the largest relative L2 difference ||a - b|| / ||b|| over rows and
exits 1 with a FAIL line when the shapes differ or a row exceeds --bound.

usage: backend_logits.py A.npy B.npy --bound X
"""
import argparse
import sys

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--bound", type=float, required=True)
    args = ap.parse_args()
    a = np.load(args.a).astype(np.float64)
    b = np.load(args.b).astype(np.float64)
    if a.shape != b.shape or a.ndim != 2:
        print(f"FAIL: shapes {a.shape} and {b.shape}")
        sys.exit(1)
    rel = np.linalg.norm(a - b, axis=1) / np.maximum(
        np.linalg.norm(b, axis=1), 1e-30)
    print(f"{a.shape[0]} rows: max relative L2 difference {rel.max():.3g} "
          f"(row {int(rel.argmax())}); bound {args.bound:g}")
    if not np.all(rel <= args.bound):
        print(f"FAIL: row {int(rel.argmax())} differs by {rel.max():.3g}")
        sys.exit(1)


if __name__ == "__main__":
    main()
