#!/bin/bash
# Sweeps the textbook single-pass scan's shapes (bench/scan1.comp, the `plain_scan1` row)
# on the `device` machine against CUB's InclusiveSum, in one call:
#   carry [".gl", "build-device", "build-cub"],
#   command: bash scripts/device-scan-sweep.sh [SHAPE ...]
# Each SHAPE is a VKDS_BENCH_SCAN1 value (bench/plain_scan.c: rows|direct, uvec4 a
# thread, g64..g512 threads a group, id for tiles by group id, nolb for no look-back:
# the kernel's own time, its output wrong). The default list asks what separates the
# textbook scheme (0.73x CUB on an H200, 2026-11-25) from CUB: the group size, the tile
# order, and the look-back's own share. Needs what scripts/device-algorithms.sh needs.
# SWEEP_MIN / SWEEP_MAX (log2 sizes, default 24 and 28) bound the sizes, SWEEP_TIMEOUT (s,
# default 120) each shape's run (a shape that hangs the GPU costs no more); the table shows
# 2^24, 2^26 and 2^28 where measured. Writes $OUT/cub.json and $OUT/scan1-<n>.txt (OUT
# is made if missing); prints one table last.
for f in .gl/*.deb; do dpkg -x "$f" / >/dev/null 2>&1; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json VKDS_DEVICES=gpu
OUT=${OUT:-.}
mkdir -p "$OUT"
lo=${SWEEP_MIN:-24} hi=${SWEEP_MAX:-28}
B=build-device/bench/vkds-bench
shapes=("$@")
[ ${#shapes[@]} -eq 0 ] && shapes=(rows,4 rows,4,nolb rows,4,id rows,4,g128 rows,8,g128 rows,4,g128,id rows,4,g512
  direct,4,g128 rows,4,w2 rows,4,w4 rows,4,d64 rows,4,d256 rows,4,w4,d128 rows,8 rows,8,w4 rows,2,w4)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
build-cub/cub_bench --min-log2 "$lo" --max-log2 "$hi" >"$OUT/cub.json" 2>"$OUT/cub.err" || echo "cub_bench failed"
for i in "${!shapes[@]}"; do
  VKDS_BENCH_SCAN1=${shapes[$i]} timeout "${SWEEP_TIMEOUT:-120}" $B --algorithms --min-log2 "$lo" --max-log2 "$hi" --only plain_scan1 \
    >"$OUT/scan1-$i.txt" 2>&1
done
# the table: GPU µs of u32 at 2^24, 2^26, 2^28, and CUB's InclusiveSum at the same sizes
printf '%-22s %10s %10s %10s  %s\n' shape 2^24 2^26 2^28 "check at 2^$hi"
printf '%-22s' cub_inclusive_scan
for k in 24 26 28; do
  grep '"cub_inclusive_scan"' "$OUT/cub.json" | grep '"u32"' | grep "\"n\":$((1 << k))," |
    sed 's/.*"us":\([0-9.]*\).*/\1/' | xargs printf ' %10s'
done
echo
for i in "${!shapes[@]}"; do
  printf '%-22s' "${shapes[$i]}"
  for k in 24 26 28; do
    grep "^2^$k  u32  device   plain_scan1 " "$OUT/scan1-$i.txt" | awk '{printf " %10s", $5}'
  done
  grep "^2^$hi  u32  device   plain_scan1 " "$OUT/scan1-$i.txt" | awk '{printf "  %s", $NF}'
  echo
done
