#!/usr/bin/env bash
# Configures (once) and builds one build folder: build.sh DIR [meson options...]
# TARGETS="a b" builds only those ninja targets (and what they need), not everything;
# SUITE=name builds only the executables of that meson test suite (and what they need).
set -euo pipefail
dir=$1
shift
if [ ! -f "$dir/build.ninja" ]; then
  meson setup "$dir" "$@" >/dev/null
fi
if [ -n "${SUITE:-}" ]; then
  # the suite's executables, as ninja names them (paths within the build folder)
  TARGETS=$(meson introspect --tests "$dir" | python3 -c '
import json, os, sys
root, suite = os.path.realpath(sys.argv[1]), sys.argv[2]
print(" ".join(sorted({os.path.relpath(t["cmd"][0], root) for t in json.load(sys.stdin)
                       if any(s.split(":")[-1] == suite for s in t["suite"])})))' "$dir" "$SUITE")
  [ -n "$TARGETS" ] || { echo "build.sh: no test in suite $SUITE" >&2; exit 1; }
fi
# shellcheck disable=SC2086
ninja -C "$dir" ${TARGETS:-} >/dev/null
