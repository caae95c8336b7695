#!/usr/bin/env bash
# Configures (once) and builds one build folder: build.sh DIR [meson options...]
set -euo pipefail
dir=$1
shift
if [ ! -f "$dir/build.ninja" ]; then
  meson setup "$dir" "$@" >/dev/null
fi
ninja -C "$dir" >/dev/null
