#!/usr/bin/env python3
"""Compiles one GLSL compute shader into a C header holding its SPIR-V as uint32_t words.

glslang compiles, spirv-val checks the result, spirv-opt optimizes it, spirv-val checks
the optimized module again (an optimizer bug must not reach a driver). Any failing step
fails the build with that tool's message.

usage: build_shader.py GLSLANG SPIRV_VAL SPIRV_OPT TARGET_ENV INPUT.comp OUTPUT.h [INCLUDE_DIR...]
"""
import os
import re
import subprocess
import sys
import tempfile


def run(cmd):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        sys.exit("%s failed:\n%s" % (" ".join(cmd), proc.stdout))


def main():
    glslang, spirv_val, spirv_opt, env, src, out = sys.argv[1:7]
    includes = sys.argv[7:]
    name = re.sub(r"\W", "_", os.path.basename(src).rsplit(".", 1)[0])
    with tempfile.TemporaryDirectory() as tmp:
        raw = os.path.join(tmp, name + ".raw.spv")
        opt = os.path.join(tmp, name + ".spv")
        run([glslang, "-V", "--target-env", env, "-S", "comp"]
            + ["-I" + d for d in includes] + ["-o", raw, src])
        run([spirv_val, "--target-env", env, raw])
        run([spirv_opt, "-O", "--target-env=" + env, raw, "-o", opt])
        run([spirv_val, "--target-env", env, opt])
        data = open(opt, "rb").read()
    if len(data) % 4:
        sys.exit("%s: SPIR-V size %d is not a multiple of 4" % (src, len(data)))
    words = [int.from_bytes(data[i:i + 4], "little") for i in range(0, len(data), 4)]
    lines = ["/* generated from %s by build_shader.py: do not edit */" % os.path.basename(src),
             "static const uint32_t vkds_spirv_%s[%d] = {" % (name, len(words))]
    for i in range(0, len(words), 8):
        lines.append("  " + ", ".join("0x%08xu" % w for w in words[i:i + 8]) + ",")
    lines.append("};")
    with open(out, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
