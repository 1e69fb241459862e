"""Writes the seed corpus of the fuzzers into corpus/ (run from anywhere).

Valid .npy files of every version and several shapes, and broken ones
(bad magic, wrong dtype, Fortran order, 3-D, truncated, trailing bytes,
bad header syntax), plus a few packed .lbw files. Uses only the standard
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

for name, data in files.items():
    with open(os.path.join(here, name), "wb") as f:
        f.write(data)
print("wrote %d files to %s" % (len(files), here))
