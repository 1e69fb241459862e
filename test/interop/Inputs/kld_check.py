"""KL divergence and top-1 agreement of two llama-perplexity runs.

Reads two files written by `llama-perplexity --kl-divergence-base F`
(tools/perplexity/perplexity.cpp: "_logits_", int32 n_ctx, n_vocab,
n_chunk, the n_chunk * n_ctx int32 token ids, then for every scored
position, the second half of each chunk less its last token, a row of
2 * ((n_vocab + 1) / 2) + 4 uint16: a float32 scale and minimum, then
each token's log-probability as min + scale * code, clipped 16 below the
largest) and computes what `llama-perplexity --kl-divergence` prints from
them, with its formulas (kl_divergence / log_softmax there):

  KLD    = sum over tokens with ln p_base > -16 of
           p_base * (ln p_base - ln p_test), averaged over positions
  same top p = share of positions whose most likely token (the first of
           equal ones) is the same in both runs

The test side is read from its saved log-probabilities too (llama-
perplexity's KL mode reads the test run's logits unrounded): the 16-bit
rounding of a log-probability is at most 16 / 65535 / 2 = 1.2e-4, which
moves the mean KLD by about 1e-5 at most, 1% of the smallest bound used.

Both files must score the same tokens (the same text, n_ctx and chunks).
Prints one line:

  N positions: mean KLD X (bound B), max M; same top p P % (bound Q %)

and exits 1 after a `FAIL: ...` line when the mean KLD is above --max-kld
or the same top p below --min-same-top (percent).

usage: kld_check.py BASE TEST --max-kld X --min-same-top P
"""
import argparse
import sys

import numpy as np


def read(path):
    data = open(path, "rb").read()
    if data[:8] != b"_logits_":
        sys.exit(f"FAIL: {path} is not a llama-perplexity logits file")
    n_ctx, n_vocab, n_chunk = np.frombuffer(data, "<i4", 3, 8)
    tokens = np.frombuffer(data, "<i4", n_chunk * n_ctx, 20)
    nv = 2 * ((n_vocab + 1) // 2) + 4
    rows = n_chunk * (n_ctx - 1 - n_ctx // 2)
    start = 20 + 4 * n_chunk * n_ctx
    if len(data) != start + 2 * rows * nv:
        sys.exit(f"FAIL: {path}: {len(data)} bytes, expected "
                 f"{start + 2 * rows * nv} for {n_chunk} chunks of "
                 f"{n_ctx} and {n_vocab} tokens")
    codes = np.frombuffer(data, "<u2", rows * nv, start).reshape(rows, nv)
    head = codes[:, :4].copy().view("<f4")  # scale, minimum
    lp = head[:, 1:2].astype(np.float64) + \
        head[:, 0:1].astype(np.float64) * codes[:, 4:4 + n_vocab]
    return (int(n_ctx), int(n_vocab), int(n_chunk), tokens), lp


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("base")
    ap.add_argument("test")
    ap.add_argument("--max-kld", type=float, required=True)
    ap.add_argument("--min-same-top", type=float, required=True)
    a = ap.parse_args()
    (bctx, bvocab, bchunk, btok), base = read(a.base)
    (tctx, tvocab, tchunk, ttok), test = read(a.test)
    if (bctx, bvocab, bchunk) != (tctx, tvocab, tchunk) or \
            not np.array_equal(btok, ttok):
        sys.exit("FAIL: the two runs scored different tokens")
    p = np.exp(base)
    kld = np.where(base > -16.0, p * (base - test), 0.0).sum(axis=1)
    same = np.argmax(base, axis=1) == np.argmax(test, axis=1)
    mean, top = kld.mean(), 100.0 * same.mean()
    print(f"{len(kld)} positions: mean KLD {mean:.6f} (bound {a.max_kld:g}), "
          f"max {kld.max():.6f}; same top p {top:.3f} % "
          f"(bound {a.min_same_top:g} %)")
    failed = False
    if not mean <= a.max_kld:
        print(f"FAIL: mean KLD {mean:.6f} > {a.max_kld:g}")
        failed = True
    if not top >= a.min_same_top:
        print(f"FAIL: same top p {top:.3f} % < {a.min_same_top:g} %")
        failed = True
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
