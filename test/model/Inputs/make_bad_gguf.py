#!/usr/bin/env python3
"""Broken copies of a good GGUF file, for bad-gguf.test.

    make_bad_gguf.py GOOD.gguf OUTDIR

writes into OUTDIR: header-cut.gguf (the file cut inside its tensor
infos), magic.gguf (not "GGUF"), version.gguf (version 9), type.gguf (a
tensor of ggml type 99), past-end.gguf (a tensor's offset past the end of
the file), data-cut.gguf (the last tensor's data cut short), shape.gguf
(embedding_length in the metadata disagreeing with every tensor), ffn.gguf
(feed_forward_length disagreeing with the FFN weights) and empty.gguf. The field offsets come from gguf_forward.py's parser.
"""

import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gguf_forward  # noqa: E402


def main():
    src, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    g = gguf_forward.Gguf(src)
    good = g.data
    arch = g.kv["general.architecture"]

    def write(name, data):
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)

    def patched(at, fmt, value):
        data = bytearray(good)
        struct.pack_into(fmt, data, at, value)
        return bytes(data)

    last = g.tensors[-1]
    write("header-cut.gguf", good[:last["info_at"] + 5])
    write("magic.gguf", b"GGUX" + good[4:])
    write("version.gguf", patched(4, "<I", 9))
    write("type.gguf", patched(g.tensors[0]["type_at"], "<I", 99))
    write("past-end.gguf", patched(last["offset_at"], "<Q",
                                   len(good) - g.data_start + 4096))
    write("data-cut.gguf", good[:len(good) - 7])
    vtype, at = g.kv_at[arch + ".embedding_length"]
    assert vtype == 4, "embedding_length is not a uint32"
    write("shape.gguf", patched(at, "<I", g.kv[arch + ".embedding_length"] // 2))
    vtype, at = g.kv_at[arch + ".feed_forward_length"]
    assert vtype == 4, "feed_forward_length is not a uint32"
    write("ffn.gguf", patched(at, "<I", g.kv[arch + ".feed_forward_length"] * 2))
    write("empty.gguf", b"")


if __name__ == "__main__":
    main()
