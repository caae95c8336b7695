#!/bin/bash
# Runs `vkds-bench --algorithms` on the `device` machine with its CUB baseline, in one call:
#   carry [".gl", "build-device", "build-cub"],
#   command: bash scripts/device-algorithms.sh [MIN_LOG2 [MAX_LOG2]]
# Needs .gl/ (the Vulkan loader's .deb, see scripts/device-bench.sh), build-device/ (a
# release build made here: meson setup build-device --buildtype=release -Dtests=false)
# and build-cub/cub_bench (bench/cub/build.sh). Writes to $OUT: cub.json (cub_bench's
# rows), algorithms.json (vkds-bench --json, CUB rows as the reductions' baseline), and
# stream-<mode>.txt: the 2^MAX host rows again with each VKDS_STREAM_MEMORY mode (skipped
# with STREAM_MODES=""), and clocks.csv: the GPU's clocks, power and throttle reasons every
# 500 ms while it all runs (to tell a slow machine from slow code).
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json VKDS_DEVICES=gpu
OUT=${OUT:-.}
min=${1:-10}
max=${2:-28}
B=build-device/bench/vkds-bench
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,pstate --format=csv,noheader
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu,clocks_throttle_reasons.active \
  --format=csv -lms 500 >"$OUT/clocks.csv" 2>/dev/null &
smi=$!
build-cub/cub_bench --min-log2 "$min" --max-log2 "$max" >"$OUT/cub.json" 2>"$OUT/cub.err" || echo "cub_bench failed"
grep '^{' "$OUT/cub.json" >"$OUT/cub.lines"
$B --algorithms --json --cub "$OUT/cub.lines" --min-log2 "$min" --max-log2 "$max" >"$OUT/algorithms.json" 2>"$OUT/algorithms.err"
echo "vkds-bench exit $?"
modes=${STREAM_MODES-readback mapped copy}
for mode in $modes; do
  VKDS_STREAM_MEMORY=$mode $B --algorithms --min-log2 "$max" --max-log2 "$max" 2>/dev/null |
    grep -E " host |vkds_upload" >"$OUT/stream-$mode.txt"
done
# the table last: what the reply's tail shows
grep -v '^{' "$OUT/algorithms.json" | grep -E "^2\^($max|24|20|16) |round trip|^n "
sed -n '/^scans at /,$p' "$OUT/algorithms.json"  # issue 12's targets at the largest size
kill $smi 2>/dev/null
for mode in $modes; do echo "== VKDS_STREAM_MEMORY=$mode"; grep -E "vkds_upload|reduce|transform" "$OUT/stream-$mode.txt"; done
