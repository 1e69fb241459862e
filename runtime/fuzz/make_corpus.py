"""Writes the seed corpus of the fuzzers into corpus/ (run from anywhere).

Valid .npy files of every version and several shapes, and broken ones
(bad magic, wrong dtype, Fortran order, 3-D, truncated, trailing bytes,
bad header syntax), a few packed .lbw files, and GGUF files (every tensor
type and value type, and broken headers, values and tensors). Uses only the standard
library so that it runs without numpy.
"""
import os
import struct

here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
os.makedirs(here, exist_ok=True)


def npy(header, payload, version=1, pad=True):
    text = header
    if pad:
        prefix = 10 if version == 1 else 12
        text += " " * (63 - (prefix + len(text)) % 64) + "\n"
    raw = text.encode("latin1")
    length = struct.pack("<H" if version == 1 else "<I", len(raw))
    return b"\x93NUMPY" + bytes([version, 0]) + length + raw + payload


def floats(n):
    return struct.pack("<%df" % n, *[0.25 * i - 1.0 for i in range(n)])


def dict_(shape, descr="<f4", order="False"):
    return "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (
        descr, order, shape)


files = {
    "valid_1d_v1.npy": npy(dict_("(5,)"), floats(5)),
    "valid_2d_v1.npy": npy(dict_("(2, 3)"), floats(6)),
    "valid_2d_v2.npy": npy(dict_("(3, 2)"), floats(6), version=2),
    "valid_2d_v3.npy": npy(dict_("(1, 4)"), floats(4), version=3),
    "valid_empty.npy": npy(dict_("(0, 3)"), b""),
    "valid_reordered.npy": npy(
        "{\"shape\": (2,), \"descr\": \"<f4\", \"fortran_order\": False}",
        floats(2)),
    "bad_magic.npy": b"\x93NUMPX" + npy(dict_("(2,)"), floats(2))[6:],
    "bad_version.npy": npy(dict_("(2,)"), floats(2))[:6] + b"\x04\x00" +
    npy(dict_("(2,)"), floats(2))[8:],
    "bad_dtype_f8.npy": npy(dict_("(2,)", descr="<f8"), floats(4)),
    "bad_fortran.npy": npy(dict_("(2, 2)", order="True"), floats(4)),
    "bad_3d.npy": npy(dict_("(1, 2, 2)"), floats(4)),
    "bad_truncated.npy": npy(dict_("(2, 3)"), floats(6))[:-3],
    "bad_trailing.npy": npy(dict_("(2, 3)"), floats(6)) + b"\x00",
    "bad_syntax.npy": npy("{'descr': '<f4', 'fortran_order': False, "
                          "'shape': (2,, 3), }", floats(6)),
    "bad_no_newline.npy": npy(dict_("(2,)"), floats(2), pad=False),
    "bad_huge_shape.npy": npy(dict_("(4611686018427387904, 4)"), b""),
}


def lbw(name, M, K, scale, codes, scales=(), zeros=()):
    header = b"LOWBITW\0" + struct.pack("<II", 1, 80)
    header += name.encode().ljust(16, b"\0")
    header += struct.pack("<QQfIQQQ", M, K, scale, 0, len(codes), len(scales),
                          len(zeros))
    return (header + bytes(codes) + struct.pack("<%dH" % len(scales), *scales)
            + struct.pack("<%dH" % len(zeros), *zeros))


files["valid_i2s.lbw"] = lbw("i2s", 2, 6, 0.5, [0x56, 0x09, 0x62, 0x05])
files["valid_tl2.lbw"] = lbw("tl2", 1, 10, 0.5, [0x3D, 0x01, 0x47])
files["valid_w2g32.lbw"] = lbw("w2g32", 1, 32, 0.0, [0x1B] * 8, [0x3C00],
                               [0x3C00])
files["valid_q4_0.lbw"] = lbw("q4_0", 1, 32, 0.0,
                              [0x00, 0x38] + [0x78] * 16)
files["bad_i2s_code3.lbw"] = lbw("i2s", 1, 4, 0.5, [0xFF])



# GGUF (lowbit/gguf.h): version 3 files as ggml's writer lays them out.
def gstr(text):
    raw = text.encode()
    return struct.pack("<Q", len(raw)) + raw


def kv(key, vtype, payload):
    return gstr(key) + struct.pack("<I", vtype) + payload


def gguf(kvs, tensors, datas, version=3, alignment=32, pad=True):
    head = b"GGUF" + struct.pack("<IQQ", version, len(tensors), len(kvs))
    head += b"".join(kvs)
    for name, ne, gtype, offset in tensors:
        head += gstr(name) + struct.pack("<I", len(ne))
        head += struct.pack("<%dQ" % len(ne), *ne)
        head += struct.pack("<IQ", gtype, offset)
    if tensors and pad:
        head += b"\0" * (-len(head) % alignment)
    return head + b"".join(datas)


def aligned(data, alignment=32):
    return data + b"\0" * (-len(data) % alignment)


meta = [
    kv("general.architecture", 8, gstr("llama")),
    kv("u8", 0, b"\x07"), kv("i8", 1, b"\xf9"), kv("u16", 2, b"\x01\x02"),
    kv("i16", 3, b"\xff\xff"), kv("u32", 4, struct.pack("<I", 4096)),
    kv("i32", 5, struct.pack("<i", -1)), kv("f32", 6, struct.pack("<f", 1e-5)),
    kv("bool", 7, b"\x01"), kv("u64", 10, struct.pack("<Q", 2 ** 63)),
    kv("i64", 11, struct.pack("<q", -5)), kv("f64", 12, struct.pack("<d", 0.5)),
    kv("tokens", 9, struct.pack("<IQ", 8, 2) + gstr("<s>") + gstr("a")),
    kv("scores", 9, struct.pack("<IQ", 6, 2) + struct.pack("<2f", 0.0, -1.0)),
]
f32_8 = struct.pack("<8f", *[0.5 * i - 2 for i in range(8)])
q4_block = struct.pack("<H", 0x3C00) + bytes(range(0, 256, 16))
q8_block = struct.pack("<H", 0x3800) + bytes(range(32))
tq2_block = bytes([0x55, 0x66, 0x99, 0x5A] * 16) + struct.pack("<H", 0x3800)
tq1_block = bytes([0x80, 0xFF, 0x00, 0x40] * 12) + bytes([127] * 4) + \
    struct.pack("<H", 0x3800)
i2s_data = bytes([0x56, 0x65, 0x95, 0x9A] * 8) + struct.pack("<f", 0.5) + \
    b"\0" * 28
tensors = [("f32", [8], 0, 0), ("q4_0", [32, 1], 2, 32),
           ("q8_0", [32, 1], 8, 64), ("tq2_0", [256, 1], 35, 128),
           ("tq1_0", [256, 1], 34, 224), ("i2_s", [128, 1], 36, 288),
           ("f16", [4, 2], 1, 352), ("bf16", [2, 2, 2], 30, 384)]
datas = [aligned(f32_8), aligned(q4_block), aligned(q8_block),
         aligned(tq2_block), aligned(tq1_block), aligned(i2s_data),
         aligned(struct.pack("<8H", *([0x3C00, 0xBC00, 0, 0x3800] * 2))),
         aligned(struct.pack("<8H", *([0x3F80, 0xBF80, 0, 0x3F00] * 2)))]
valid = gguf(meta, tensors, datas)
files["gguf_valid_all_types.gguf"] = valid
files["gguf_valid_v2_meta_only.gguf"] = gguf(meta, [], [], version=2)
files["gguf_valid_align64.gguf"] = gguf(
    [kv("general.alignment", 4, struct.pack("<I", 64))],
    [("a", [16], 0, 64), ("b", [16], 0, 0)],
    [aligned(f32_8 * 2, 64), aligned(f32_8 * 2, 64)], alignment=64)
files["gguf_bad_magic.gguf"] = b"GGUG" + valid[4:]
files["gguf_bad_version.gguf"] = valid[:4] + struct.pack("<I", 1) + valid[8:]
files["gguf_truncated.gguf"] = valid[:-40]
files["gguf_bad_value_type.gguf"] = gguf([kv("k", 13, b"\0")], [], [])
files["gguf_nested_array.gguf"] = gguf(
    [kv("k", 9, struct.pack("<IQ", 9, 1) + struct.pack("<IQ", 0, 0))], [], [])
files["gguf_huge_count.gguf"] = b"GGUF" + struct.pack("<IQQ", 3, 2 ** 40, 0)
files["gguf_huge_array.gguf"] = gguf(
    [kv("k", 9, struct.pack("<IQ", 4, 2 ** 62))], [], [])
files["gguf_bad_tensor_type.gguf"] = gguf([], [("t", [256], 23, 0)],
                                          [aligned(f32_8 * 32)])
# One tensor of each other ggml block type (ggml.h id, bytes per block,
# weights per block): pseudo-random bytes with finite fp16 d / m / dmin.


def block_bytes(n, fp16_at, seed):
    b = bytearray((seed * 37 + 11 * i) % 251 for i in range(n))
    for at in fp16_at:
        b[at:at + 2] = struct.pack("<H", 0x3400 + seed)
    return bytes(b)


blocks = [("q4_1", 3, 20, 32, [0, 2]), ("q5_0", 6, 22, 32, [0]),
          ("q5_1", 7, 24, 32, [0, 2]), ("q2_k", 10, 84, 256, [80, 82]),
          ("q3_k", 11, 110, 256, [108]), ("q4_k", 12, 144, 256, [0, 2]),
          ("q5_k", 13, 176, 256, [0, 2]), ("q6_k", 14, 210, 256, [208]),
          ("iq4_nl", 20, 18, 32, [0])]
offset, infos, datas = 0, [], []
for i, (name, gtype, size, block, fp16_at) in enumerate(blocks):
    data = aligned(block_bytes(size, fp16_at, i))
    infos.append((name, [block, 1], gtype, offset))
    datas.append(data)
    offset += len(data)
files["gguf_valid_block_types.gguf"] = gguf([], infos, datas)
files["valid_q6_k.lbw"] = lbw("q6_k", 1, 256, 0.0, block_bytes(210, [208], 3))
files["bad_q4_k_inf_d.lbw"] = lbw(
    "q4_k", 1, 256, 0.0, b"\x00\x7c" + block_bytes(144, [0, 2], 4)[2:])
files["gguf_overlap.gguf"] = gguf([], [("a", [16], 0, 0), ("b", [8], 0, 32)],
                                  [aligned(f32_8 * 2)])
files["gguf_misaligned.gguf"] = gguf([], [("a", [8], 0, 8)],
                                     [aligned(f32_8 * 2)])
files["gguf_past_end.gguf"] = gguf([], [("a", [64], 0, 0)], [aligned(f32_8)])
files["gguf_tq2_code3.gguf"] = gguf(
    [], [("t", [256, 1], 35, 0)],
    [aligned(bytes([0xFF] * 64) + struct.pack("<H", 0x3800))])

for name, data in files.items():
    with open(os.path.join(here, name), "wb") as f:
        f.write(data)
print("wrote %d files to %s" % (len(files), here))
