"""16-bit GPU I/O end to end, checked with NumPy's own rounding (not the
runtime's): `lowbit run --target T --dtype D` on random i2s weights and
activations must equal the scalar reference run on X rounded to D by NumPy,
with that Y rounded to D by NumPy, bit for bit.

usage: dtype_check.py LOWBIT WORKDIR TARGET DTYPE M K N
f16 rounds through np.float16; bf16 with the integer round-to-nearest-even
of the top 16 bits written here.
"""
import os
import subprocess
import sys

import numpy as np

lowbit, work, target, dtype = sys.argv[1:5]
M, K, N = (int(v) for v in sys.argv[5:8])
os.makedirs(work, exist_ok=True)
rng = np.random.default_rng(M * 1000 + K + N)


def rounded(a):
    a = np.asarray(a, dtype=np.float32)
    if dtype == "f16":
        return a.astype(np.float16).astype(np.float32)
    u = a.view(np.uint32).astype(np.uint64)
    top = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return (top.astype(np.uint32) << 16).view(np.float32)


def path(name):
    return os.path.join(work, name)


W = rng.standard_normal((M, K)).astype(np.float32)
# A spread of magnitudes so that rounding X and Y matters.
X = (rng.standard_normal((N, K)) * np.exp(rng.uniform(-4, 4, (N, K)))).astype(
    np.float32)
np.save(path("w.npy"), W)
np.save(path("x.npy"), X)
np.save(path("xr.npy"), rounded(X))


def run(*args):
    subprocess.run([lowbit, "run", "--format", "i2s", "--weights",
                    path("w.npy")] + list(args), check=True,
                   stdout=subprocess.DEVNULL)


run("--target", target, "--dtype", dtype, "--act", path("x.npy"), "--out",
    path("y.npy"))
run("--strategy", "reference", "--target", "generic", "--act", path("xr.npy"),
    "--out", path("yref.npy"))
y = np.load(path("y.npy"))
want = rounded(np.load(path("yref.npy")))
if not np.array_equal(y.view(np.uint32), want.view(np.uint32)):
    bad = np.argwhere(y.view(np.uint32) != want.view(np.uint32))[0]
    print("MISMATCH at", tuple(bad), y[tuple(bad)], "want", want[tuple(bad)])
    sys.exit(1)
if np.array_equal(want, np.load(path("yref.npy"))):
    print("Y was already representable: the check proves nothing")
    sys.exit(1)
print("exact", target, dtype, M, K, N)
