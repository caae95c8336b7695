#!/bin/bash
# A/B of library builds on the `device` machine, in one call: the same vkds-bench binary
# (build-device/) runs its arguments against build-device/lib ("new") and each
# build-device-NAME/lib named in LIBS (default "base", e.g. a worktree of the last commit
# built here:
#   git worktree add /tmp/base HEAD && (cd /tmp/base && meson setup build-b
#   --buildtype=release -Dtests=false && ninja -C build-b lib/libvkds.so.0.1.0), then
#   copy build-b/lib/libvkds.so* (not the .p folder) to build-device-base/lib)
# alternating, ROUNDS times, so that all see the same machine state.
#   carry [".gl", "build-device", "build-device-base"] (and "build-cub" with CUB)
#   command: [LIBS="base v2"] [CUB="--min-log2 24 --max-log2 28"] [T=200] \
#            bash scripts/device-ab.sh ROUNDS vkds-bench-arguments...
# CUB: build-cub/cub_bench runs first with these arguments and every run gets its rows
# (--cub), so each row has its ratio to CUB from the same call. T: seconds a run may
# take (keep ROUNDS x runs x T under the call's limit). Writes $OUT/NAME-ROUND.txt.
# ENVS="name:VAR=V,VAR2=V2 other:VAR=W" runs the one library (build-device) once per
# entry with those environment variables instead (the library's knobs, e.g.
# "p:VKDS_SCAN_PATH=portable s:VKDS_SCAN_PATH=single"; an entry "name:" runs it as is);
# with VKDS_PIPELINE_STATS=1 each run's kernels' registers and shared memory are
# summed up at the end.
rounds=$1
shift
# The device tool returns 8 files at most: the copy of CUB's rows each run reads, and an
# empty error file, are removed on the way out (cub.json stays).
trap 'rm -f "${OUT:-.}/cub.lines"; [ -s "${OUT:-.}/cub.err" ] || rm -f "${OUT:-.}/cub.err"' EXIT
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json VKDS_DEVICES=${VKDS_DEVICES:-gpu}
out=${OUT:-.}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
cub=()
if [ -n "${CUB:-}" ]; then
  # shellcheck disable=SC2086 # CUB holds cub_bench's arguments
  timeout 150 build-cub/cub_bench $CUB >"$out/cub.json" 2>"$out/cub.err" || echo "cub_bench failed"
  grep '^{' "$out/cub.json" >"$out/cub.lines"
  cub=(--cub "$out/cub.lines")
fi
if [ -n "${ENVS:-}" ]; then
  for i in $(seq "$rounds"); do
    for entry in $ENVS; do
      name=${entry%%:*}
      IFS=, read -r -a vars <<<"${entry#*:}"
      env "${vars[@]}" timeout "${T:-200}" build-device/bench/vkds-bench "$@" "${cub[@]}" >"$out/$name-$i.txt" 2>&1
      echo "== $name $i: exit $?"
    done
  done
  for f in "$out"/*-1.txt; do
    grep -q "vkds: pipeline" "$f" || continue
    echo "$(basename "$f" -1.txt): kernels (count, registers, shared memory)"
    grep "vkds: pipeline" "$f" | grep -o -E "pipeline [a-z_0-9]+|Register Count=[0-9]+|Shared Memory Size=[0-9]+" |
      paste - - - | sort | uniq -c
  done
  exit 0
fi
for i in $(seq "$rounds"); do
  for lib in new ${LIBS:-base}; do
    d=build-device/lib
    [ "$lib" != new ] && d=build-device-$lib/lib
    LD_LIBRARY_PATH=$d timeout "${T:-200}" build-device/bench/vkds-bench "$@" "${cub[@]}" >"$out/$lib-$i.txt" 2>&1
    echo "== $lib $i: exit $?"
  done
done
