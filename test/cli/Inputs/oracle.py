"""An independent NumPy implementation of lowbit's formats and reference
mpGEMM, written from docs/design.md and runtime/README.md (not from the
C++ code), used to check `lowbit run` and `lowbit pack` end to end.

usage: oracle.py LOWBIT_BINARY WORKDIR FORMAT M K N
Writes random W [M, K] and X [N, K], runs `lowbit run` and compares Y:
  ternary formats: bit-exact int32 accumulation, Y within 1e-6 relative;
  group formats:   Y within 1e-5 relative of this file's reference formula,
                   and ||Y - Y64|| / ||Y64|| <= 1e-2 against the fp64 product
                   of the dequantized weights with fp32 X;
  q4_0:            additionally `lowbit pack --layout gguf` is byte-identical
                   to ggml's quantize_row_q4_0_ref as re-implemented here.
"""
import os
import re
import subprocess
import sys
import zlib

import numpy as np

f32 = np.float32


def rint(x):
    return np.rint(x)  # round half to even, like nearbyintf


def quantize_acts(X, block):
    N, K = X.shape
    xb = X.reshape(N, K // block, block)
    amax = np.abs(xb).max(axis=2)
    s = (f32(127.0) / np.maximum(amax, f32(1e-5))).astype(f32)
    q = np.clip(rint(xb * s[:, :, None]), -128, 127).astype(np.int64)
    return q.reshape(N, K), s


def ternary(W):
    s_w = f32(max(f32(np.abs(W.astype(np.float64)).mean()), f32(1e-5)))
    q = np.clip(rint((W / s_w).astype(f32)), -1, 1).astype(np.int64)
    return q, s_w


def group_binary(W, G):
    M, K = W.shape
    g = W.reshape(M, K // G, G)
    s = np.abs(g.astype(np.float64)).mean(axis=2).astype(f32).astype(np.float16)
    q = np.where(g >= 0, 1, -1).astype(np.int64).reshape(M, K)
    return q, s.astype(f32), np.zeros_like(s, dtype=f32)


def group_unsigned(W, G, b):
    M, K = W.shape
    g = W.reshape(M, K // G, G)
    lo = np.minimum(g.min(axis=2), f32(0))
    hi = np.maximum(g.max(axis=2), f32(0))
    s = ((hi - lo) / f32(2 ** b - 1)).astype(f32)
    sf = s.astype(np.float16).astype(f32)
    safe = np.where(sf == 0, f32(1), sf)
    z = np.where(sf == 0, 0, np.clip(rint(-lo / safe), 0, 2 ** b - 1))
    q = np.clip(rint(g / safe[:, :, None]) + z[:, :, None], 0, 2 ** b - 1)
    q = np.where(sf[:, :, None] == 0, 0, q).astype(np.int64).reshape(M, K)
    return q, sf, z.astype(f32)


def q4_0(W):
    """ggml quantize_row_q4_0_ref: d = max / -8 (max = the signed value of
    largest magnitude, first one on ties), q = min(15, (int8)(x/d + 8.5))."""
    M, K = W.shape
    blocks = W.reshape(M, K // 32, 32)
    idx = np.abs(blocks).argmax(axis=2)
    mx = np.take_along_axis(blocks, idx[:, :, None], axis=2)[:, :, 0]
    d = (mx / f32(-8)).astype(f32)
    inv = np.where(d != 0, f32(1) / np.where(d == 0, f32(1), d), f32(0)).astype(f32)
    v = (blocks * inv[:, :, None]).astype(f32) + f32(8.5)
    q = np.minimum(15, np.trunc(v).astype(np.int64))
    raw = bytearray()
    dh = d.astype(np.float16)
    for m in range(M):
        for b in range(K // 32):
            raw += dh[m, b].tobytes()
            lo_n, hi_n = q[m, b, :16], q[m, b, 16:]
            raw += bytes((lo_n | (hi_n << 4)).astype(np.uint8))
    return q.reshape(M, K), dh.astype(f32), np.full(dh.shape, 8, dtype=f32), bytes(raw)


def reference(fmt, W, X):
    """Returns (Y computed with the reference formula, dequantized W, gguf bytes)."""
    N, K = X.shape
    M = W.shape[0]
    gguf = None
    if fmt in ("i2s", "tl1", "tl2"):
        q, s_w = ternary(W)
        xq, sx = quantize_acts(X, K)
        acc = xq @ q.T  # exact in int64; |acc| < 2^31 here
        Y = ((acc.astype(f32) * s_w).astype(f32) / sx[:, 0:1]).astype(f32)
        return Y, (q * s_w).astype(f32), None
    if fmt == "q4_0":
        q, s, z, gguf = q4_0(W)
        G = 32
    else:
        b, G = map(int, re.fullmatch(r"w(\d)g(\d+)", fmt).groups())
        q, s, z = group_binary(W, G) if b == 1 else group_unsigned(W, G, b)
    deq = (s.repeat(G, axis=1) * (q - z.repeat(G, axis=1))).astype(f32)
    xq, sx = quantize_acts(X, 32)
    w = (q - z.repeat(G, axis=1)).astype(np.int64)
    Y = np.zeros((N, M), dtype=f32)
    for blk in range(K // 32):
        ks = slice(32 * blk, 32 * blk + 32)
        acc = (xq[:, ks] @ w[:, ks].T).astype(f32)
        sg = s[:, (32 * blk) // G][None, :]
        Y = (Y + ((acc * sg).astype(f32) / sx[:, blk:blk + 1]).astype(f32)).astype(f32)
    return Y, deq, gguf


def gguf_single_tensor(path, M, K):
    """The data of the one Q4_0 tensor [M, K] of a GGUF v3 file, read by the
    file format's rules (header, metadata, tensor info, aligned data)."""
    import struct
    with open(path, "rb") as f:
        data = f.read()
    magic, version, n_tensors, n_kv = struct.unpack_from("<4sIQQ", data, 0)
    assert magic == b"GGUF" and version == 3 and n_tensors == 1, (magic, version, n_tensors)
    pos = 24
    alignment = 32

    def string(pos):
        (n,) = struct.unpack_from("<Q", data, pos)
        return data[pos + 8:pos + 8 + n].decode(), pos + 8 + n

    for _ in range(n_kv):
        key, pos = string(pos)
        (vtype,) = struct.unpack_from("<I", data, pos)
        pos += 4
        assert vtype == 8, f"only string metadata expected here, got type {vtype}"
        _, pos = string(pos)
    _, pos = string(pos)
    (n_dims,) = struct.unpack_from("<I", data, pos)
    ne = struct.unpack_from(f"<{n_dims}Q", data, pos + 4)
    pos += 4 + 8 * n_dims
    ttype, offset = struct.unpack_from("<IQ", data, pos)
    pos += 12
    assert ne == (K, M) and ttype == 2, (ne, ttype)  # GGML_TYPE_Q4_0 = 2
    start = (pos + alignment - 1) // alignment * alignment + offset
    size = M * K // 32 * 18
    assert len(data) >= start + size, (len(data), start, size)
    return data[start:start + size]


def main():
    lowbit, work, fmt = sys.argv[1], sys.argv[2], sys.argv[3]
    M, K, N = map(int, sys.argv[4:7])
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(zlib.crc32(f"{fmt} {M} {K} {N}".encode()))
    W = rng.standard_normal((M, K)).astype(f32)
    X = rng.standard_normal((N, K)).astype(f32)
    X[0, :] *= 40  # a row with a much larger range than the others
    if K >= 64:
        W[0, :32] = 0  # an all-zero group
    w_path, x_path, y_path = (os.path.join(work, n) for n in ("W.npy", "X.npy", "Y.npy"))
    np.save(w_path, W)
    np.save(x_path, X)
    subprocess.run([lowbit, "run", "--format", fmt, "--strategy", "reference",
                    "--weights", w_path, "--act", x_path, "--out", y_path],
                   check=True, stdout=subprocess.DEVNULL)
    Y = np.load(y_path)
    assert Y.shape == (N, M) and Y.dtype == f32, (Y.shape, Y.dtype)
    Y_ref, deq, gguf = reference(fmt, W, X)
    rel = np.abs(Y - Y_ref).max() / max(np.abs(Y_ref).max(), 1e-30)
    tol = 1e-6 if fmt in ("i2s", "tl1", "tl2") else 1e-5
    assert rel <= tol, f"{fmt} {M}x{K} N={N}: max rel diff {rel:.3g} > {tol}"
    if fmt not in ("i2s", "tl1", "tl2"):
        Y64 = X.astype(np.float64) @ deq.astype(np.float64).T
        err = np.linalg.norm(Y - Y64) / np.linalg.norm(Y64)
        assert err <= 1e-2, f"{fmt}: normalized error {err:.3g} > 1e-2"
    if gguf is not None:
        g_path = os.path.join(work, "W.gguf")
        subprocess.run([lowbit, "pack", "--format", "q4_0", "--layout", "gguf",
                        "--weights", w_path, "--out", g_path],
                       check=True, stdout=subprocess.DEVNULL)
        got = gguf_single_tensor(g_path, M, K)
        assert got == gguf, f"q4_0 gguf bytes differ ({len(got)} vs {len(gguf)})"
    print(f"ok {fmt} M={M} K={K} N={N} max-rel-diff={rel:.3g}")


if __name__ == "__main__":
    main()
