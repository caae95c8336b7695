#!/usr/bin/env python3
"""Builds a program against the build tree through pkg-config's uninstalled file.

Run by meson (tests/meson.build, test 'pkgconfig') as:
  pkgconfig_test.py BUILD_ROOT SOURCE_ROOT OUT_DIR CC [CC ARGS...]
PKG_CONFIG_PATH=BUILD_ROOT/meson-uninstalled: `pkg-config --cflags --libs vkds` must be
enough to compile and link examples/list_resources.c, which then runs."""
import os
import subprocess
import sys

build, source, out, compiler = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(build, "meson-uninstalled"))
flags = subprocess.run(["pkg-config", "--cflags", "--libs", "vkds"], env=env, capture_output=True, text=True)
if flags.returncode != 0:
    sys.exit(f"pkg-config --cflags --libs vkds failed: {flags.stderr.strip()}")
print("pkg-config:", flags.stdout.strip())
os.makedirs(out, exist_ok=True)
exe = os.path.join(out, "list_resources_pc")
cmd = compiler + ["-std=c11", os.path.join(source, "examples", "list_resources.c"), "-o", exe]
cmd += flags.stdout.split() + ["-Wl,-rpath," + os.path.join(build, "lib")]
built = subprocess.run(cmd, capture_output=True, text=True)
if built.returncode != 0:
    sys.exit(f"{' '.join(cmd)}\nfailed:\n{built.stderr}")
ran = subprocess.run([exe], capture_output=True, text=True, timeout=120)
print(ran.stdout)
if ran.returncode != 0 or "resource(s)" not in ran.stdout:
    sys.exit(f"list_resources built through pkg-config exited {ran.returncode}: {ran.stderr}")
