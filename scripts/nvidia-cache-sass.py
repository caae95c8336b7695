#!/usr/bin/env python3
"""Machine code of the kernels in an NVIDIA Vulkan pipeline cache, for reading their SASS.

vkds writes its VkPipelineCache to `pipeline_cache_dir` (vkds-pipelines-*.bin). On the
NVIDIA driver (580.x, seen 2026-11-26) that blob holds one zstd frame per pipeline; each
frame unpacks to the driver's own container ("NVDANVVMNVuc"), which carries the
kernel's instructions as raw 16-byte sm_90 words ending in a NOP tail. This script cuts
them out: for each frame it writes OUT/<blob>-<k>.code, the instructions from the first
to the last NOP (the size matches the pipeline's "Binary Size" statistic under
VKDS_PIPELINE_STATS=1, which tells the kernels apart). `nvdisasm -b SM90 FILE.code` then
prints the SASS: registers, loads and their order, spills (LDL/STL), barriers. This
machine has zstd but no nvdisasm; the GPU machine has nvdisasm but no zstd: cut here,
disassemble there (carry the .code files in build-device/), or carry zstd (the binary
and its liblz4, liblzma and libzstd, on PATH and LD_LIBRARY_PATH there) and do both
there in one call (session 21).

The cache of any benchmark run: `VKDS_BENCH_PIPELINE_CACHE=DIR vkds-bench --algorithms
--only NAME --min-log2 20 --max-log2 20` (DIR must exist), with VKDS_PIPELINE_STATS=1 for
the kernels' sizes and registers on stderr.

usage: scripts/nvidia-cache-sass.py OUT_DIR CACHE.bin [CACHE.bin ...]
"""
import os
import re
import subprocess
import sys

NOP = bytes.fromhex("18790000000000000000000000c00f00")  # sm_90 NOP with its control bits


def zstd_frames(blob):
    """Every zstd frame in `blob`, walked block by block to its end (RFC 8878)."""
    for m in re.finditer(re.escape(b"\x28\xb5\x2f\xfd"), blob):
        p = m.start()
        q = p + 4
        fhd = blob[q]
        q += 1
        fcs_flag, single, checksum, dict_id = fhd >> 6, (fhd >> 5) & 1, (fhd >> 2) & 1, fhd & 3
        q += 0 if single else 1  # window descriptor
        q += [0, 1, 2, 4][dict_id]
        q += [1 if single else 0, 2, 4, 8][fcs_flag]
        try:
            while True:
                header = blob[q] | blob[q + 1] << 8 | blob[q + 2] << 16
                q += 3
                last, kind, size = header & 1, (header >> 1) & 3, header >> 3
                q += 1 if kind == 1 else size  # an RLE block stores one byte
                if last:
                    break
        except IndexError:
            continue  # not a frame after all
        yield blob[p:q + (4 if checksum else 0)]


def code_of(container):
    """The instruction words: back from the NOP tail while the control bits are set."""
    end = container.rfind(NOP)
    if end < 0:
        return b""
    end += len(NOP)
    start = end
    while start >= 16 and container[start - 16:start][13:16] != b"\0\0\0":
        start -= 16
    return container[start:end]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for path in sys.argv[2:]:
        blob = open(path, "rb").read()
        stem = os.path.splitext(os.path.basename(path))[0]
        for k, frame in enumerate(zstd_frames(blob)):
            raw = subprocess.run(["zstd", "-d", "-c", "-q"], input=frame, capture_output=True, check=True).stdout
            code = code_of(raw)
            name = os.path.join(out, "%s-%d.code" % (stem, k))
            with open(name, "wb") as f:
                f.write(code)
            print("%s: %d bytes of code (%d instructions)" % (name, len(code), len(code) // 16))


if __name__ == "__main__":
    main()
