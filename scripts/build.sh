#!/usr/bin/env bash
# Configures (once) and builds one build folder: build.sh DIR [meson options...]
# TARGETS="a b" builds only those ninja targets (and what they need), not everything.
set -euo pipefail
dir=$1
shift
if [ ! -f "$dir/build.ninja" ]; then
  meson setup "$dir" "$@" >/dev/null
fi
# shellcheck disable=SC2086
ninja -C "$dir" ${TARGETS:-} >/dev/null
