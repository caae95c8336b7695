#!/usr/bin/env python3
"""Writes fuzz/corpus/args: descriptions in fuzz/fuzz_args.c's encoding that match its
kernels (so the fuzzer starts from packings that succeed), and a few that do not.

Encoding (fuzz_args.c, decode_list): byte 0 the kernel; a list is its length, then per
member a kind byte k (kind k % 8; 0x80: a name follows, as a length and its bytes;
0x40: a struct without members), a byte f (bits index f % 6 into 0, 32, 8, 16, 64, 7;
components f // 6 % 5) and a byte g (array count g % 4; stride code g >> 2 & 3:
0 natural, else the element plus 8 * (code - 1) bytes; binding g >> 4 & 3); a struct's
members follow it as a list. Then the argument struct's bytes, and 3 bytes per view."""
import os
import sys

INT, UINT, FLOAT, VIEW, BINDING, STRUCT = 1, 2, 3, 4, 5, 6
BITS = {0: 0, 32: 1, 8: 2, 16: 3, 64: 4}


def member(kind, bits=32, comps=0, count=0, stride=0, binding=0, name=None, members=None):
    k = kind | (0x80 if name else 0)
    out = bytes([k, BITS[bits] + 6 * comps, count | stride << 2 | binding << 4])
    if name:
        out += bytes([len(name)]) + name.encode()
    if kind == STRUCT:
        out += members if members is not None else bytes([0])
    return out


def lst(*members):
    return bytes([len(members)]) + b"".join(members)


# a good view wherever it is read: buffer 0 (the launch's device), offset 128, 256 bytes
VALUES = bytes([4]) * 600

pair = lst(member(INT), member(UINT, comps=2))
inner = lst(member(FLOAT, name="scale"), member(VIEW, name="data"), member(STRUCT, count=2, stride=1, members=pair))
vkds_args = lst(member(INT, name="n"), member(STRUCT, members=inner), member(VIEW, count=2), member(INT, bits=16, comps=2),
                member(UINT, bits=8), member(INT, bits=64), member(FLOAT, comps=3), member(FLOAT, bits=64),
                member(FLOAT, count=3))
plain = lst(member(BINDING, binding=0), member(UINT, bits=64), member(UINT), member(UINT, bits=64, count=2, stride=2),
            member(UINT, bits=16, comps=4), member(BINDING, binding=2, name="dst"))

seeds = {
    "push_block": bytes([0]) + vkds_args + VALUES,
    "spilled_block": bytes([1]) + vkds_args + VALUES,
    "plain_block_bindings": bytes([2]) + plain + VALUES,
    "bindings_only": bytes([3]) + lst(member(BINDING, binding=1)) + VALUES,
    "uniform_is_not_storage": bytes([3]) + lst(member(BINDING, binding=3)),
    "matrix_mismatch": bytes([4]) + lst(member(FLOAT, comps=2, count=2), member(FLOAT)),
    "no_description": bytes([0, 0xFF]),
    "struct_array_without_stride": bytes([0]) + vkds_args.replace(bytes([STRUCT, 1, 2 | 1 << 2]), bytes([STRUCT, 1, 2])) + VALUES,
    "bad_views": bytes([1]) + vkds_args + bytes([0, 1, 2, 1, 1, 2, 2, 1, 2, 3, 1, 2, 0x44, 255, 255]) * 40,
}

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus", "args")
os.makedirs(out, exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
