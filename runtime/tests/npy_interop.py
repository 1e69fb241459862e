"""numpy <-> lowbit .npy interop: usage npy_interop.py PATH/TO/lowbit_npy_copy.

For arrays of several shapes, numpy writes each .npy version (1.0, 2.0, 3.0);
lowbit_npy_copy reads it and writes it back with write_npy. The copy must
load in numpy with the same values, and be byte-identical to numpy.save's
own file. A file numpy writes with another dtype must be rejected.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
from numpy.lib import format as npformat

copy = sys.argv[1]
rng = np.random.default_rng(0)
with tempfile.TemporaryDirectory() as tmp:
    for shape in [(7,), (3, 5), (1, 1), (0, 4), (130, 33)]:
        a = rng.standard_normal(shape).astype(np.float32)
        expected = os.path.join(tmp, "expected.npy")
        np.save(expected, a)
        for version in [(1, 0), (2, 0), (3, 0)]:
            src = os.path.join(tmp, "in.npy")
            out = os.path.join(tmp, "out.npy")
            with open(src, "wb") as f:
                npformat.write_array(f, a, version=version)
            subprocess.run([copy, src, out], check=True)
            b = np.load(out)
            assert b.dtype == np.float32 and b.shape == a.shape, (shape, version)
            assert np.array_equal(a, b), (shape, version)
            with open(out, "rb") as f1, open(expected, "rb") as f2:
                assert f1.read() == f2.read(), ("not numpy.save's bytes", shape)
    bad = os.path.join(tmp, "f8.npy")
    np.save(bad, np.zeros((2, 2)))
    r = subprocess.run([copy, bad, os.path.join(tmp, "x.npy")],
                       capture_output=True, text=True)
    assert r.returncode == 1 and r.stderr.startswith(bad + ": dtype '<f8'"), r
print("npy interop: ok")
