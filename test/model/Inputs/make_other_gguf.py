#!/usr/bin/env python3
"""A small valid GGUF file of an architecture the engine does not run.

    make_other_gguf.py OUT.gguf

Architecture "qwen2" (llama.cpp's key names), a tokenizer's string and
float arrays in the metadata, alignment 64, and five 2-D tensors: f32
gaussian, f16 holding ternary values {-a, 0, a}, q8_0, tq2_0 whose blocks
carry different scales, and bf16, so that `lowbit gguf info` shows the
generic view (each tensor's default import, or the reason it has none).
Written from the GGUF specification with struct, not with lowbit's writer.
"""

import struct
import sys

import numpy as np


def string(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def kv(key, vtype, payload):
    return string(key) + struct.pack("<I", vtype) + payload


def main():
    rng = np.random.default_rng(1)
    K, M = 64, 8
    tensors = []

    w = rng.standard_normal((M, K)).astype("<f4")
    tensors.append(("gauss.weight", 0, w.tobytes()))

    t = (rng.integers(0, 3, (M, K)) - 1) * 0.25
    tensors.append(("ternary.weight", 1, t.astype("<f2").tobytes()))

    blocks = b""
    for _ in range(M * K // 32):
        blocks += np.float16(0.5).tobytes() + rng.integers(
            -127, 128, 32).astype(np.int8).tobytes()
    tensors.append(("q8.weight", 8, blocks))

    # tq2_0 rows of 256: d = 1, then d = 2 (two scales in one tensor)
    tq = b""
    for d in (1.0, 2.0):
        tq += bytes(rng.integers(0, 256, 64, dtype=np.uint8) & 0x55) + \
            np.float16(d).tobytes()
    tensors.append(("tq2.weight", 35, tq))

    bf = (rng.standard_normal((M, K)).astype("<f4").view("<u4") >> 16)
    tensors.append(("bf16.weight", 30, bf.astype("<u2").tobytes()))

    align = 64
    meta = [
        kv("general.architecture", 8, string("qwen2")),
        kv("general.alignment", 4, struct.pack("<I", align)),
        kv("qwen2.embedding_length", 4, struct.pack("<I", K)),
        kv("tokenizer.ggml.tokens", 9,
           struct.pack("<IQ", 8, 3) + b"".join(string(s)
                                              for s in ("a", "b", "c"))),
        kv("tokenizer.ggml.scores", 9,
           struct.pack("<IQ", 6, 3) + struct.pack("<3f", 0, -1, -2)),
    ]
    shapes = {"tq2.weight": (256, 2)}
    infos, data, offset = b"", b"", 0
    for name, ttype, raw in tensors:
        ne = shapes.get(name, (K, M))
        infos += string(name) + struct.pack("<I", 2) + \
            struct.pack("<2Q", *ne) + struct.pack("<IQ", ttype, offset)
        pad = (-len(raw)) % align
        data += raw + bytes(pad)
        offset += len(raw) + pad
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(meta)) + \
        b"".join(meta) + infos
    head += bytes((-len(head)) % align)
    with open(sys.argv[1], "wb") as f:
        f.write(head + data)


if __name__ == "__main__":
    main()
