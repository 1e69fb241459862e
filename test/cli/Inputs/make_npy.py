"""Writes the .npy files the CLI tests feed to lowbit, good and broken."""
import os
import sys

import numpy as np

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(7)


def path(name):
    return os.path.join(out, name)


w = rng.standard_normal((16, 64)).astype(np.float32)
np.save(path("w16x64.npy"), w)
np.save(path("x2x64.npy"), rng.standard_normal((2, 64)).astype(np.float32))
np.save(path("x2x32.npy"), rng.standard_normal((2, 32)).astype(np.float32))
np.save(path("w16x100.npy"), rng.standard_normal((16, 100)).astype(np.float32))
np.save(path("f64.npy"), w.astype(np.float64))
np.save(path("i32.npy"), np.zeros((16, 64), dtype=np.int32))
np.save(path("big_endian.npy"), w.astype(">f4"))
np.save(path("fortran.npy"), np.asfortranarray(w))
np.save(path("rank3.npy"), np.zeros((2, 8, 64), dtype=np.float32))
np.save(path("empty.npy"), np.zeros((0, 64), dtype=np.float32))
with open(path("w16x64.npy"), "rb") as f:
    data = f.read()
with open(path("truncated.npy"), "wb") as f:
    f.write(data[:-10])
with open(path("trailing.npy"), "wb") as f:
    f.write(data + b"\0\0\0\0")
with open(path("header_only.npy"), "wb") as f:
    f.write(data[:40])
with open(path("not_npy.npy"), "w") as f:
    f.write("this is not a numpy file\n")
x_nan = rng.standard_normal((2, 64)).astype(np.float32)
x_nan[1, 5] = np.nan
np.save(path("x_nan.npy"), x_nan)
w_inf = w.copy()
w_inf[3, 7] = -np.inf
np.save(path("w_inf.npy"), w_inf)
