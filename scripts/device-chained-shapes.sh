#!/bin/bash
# Measures the chained single pass (shaders/algorithm/scan_chained.glsl) in each of its
# shapes (lib/algorithm/scan.c SHAPES) against CUB's InclusiveSum and the portable path,
# with the driver's register and spill counts, in one `device` call:
#   carry [".gl", "build-device", "build-cub"],
#   command: bash scripts/device-chained-shapes.sh [SHAPE ...]
# ONLY=copy_if measures the compaction in the same shapes instead of the inclusive scan.
# Needs what scripts/device-algorithms.sh needs. Writes $OUT/cub.json and
# $OUT/shape-<SHAPE>.txt (vkds-bench's output, then the VKDS_PIPELINE_STATS lines of a
# separate run at 2^16); prints one
# table last: u32 GPU us and x CUB at 2^24 and 2^28 for the forced single pass in each
# shape, the portable path beside it, and the scan kernels' statistics as the driver
# names them.
for f in .gl/*.deb; do dpkg -x "$f" / >/dev/null 2>&1; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json VKDS_DEVICES=gpu
OUT=${OUT:-.}
mkdir -p "$OUT"
B=build-device/bench/vkds-bench
shapes=("$@")
[ ${#shapes[@]} -eq 0 ] && shapes=(512x8 512x5 512x4 1024x5 256x4 off)
only=${ONLY:-inclusive_scan}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
build-cub/cub_bench --min-log2 24 --max-log2 28 >"$OUT/cub.json" 2>"$OUT/cub.err" || echo "cub_bench failed"
grep '^{' "$OUT/cub.json" >"$OUT/cub.lines"
for sh in "${shapes[@]}"; do
  VKDS_SCAN_CHAINED=$sh timeout 90 $B --algorithms --cub "$OUT/cub.lines" --min-log2 24 --max-log2 28 \
    --only "$only" >"$OUT/shape-$sh.txt" 2>&1
  # the statistics in a run of their own (timings taken with them on are not comparable)
  VKDS_PIPELINE_STATS=1 VKDS_SCAN_CHAINED=$sh timeout 60 $B --algorithms --min-log2 16 --max-log2 16 \
    --only "$only" 2>&1 | grep "^vkds: pipeline" >>"$OUT/shape-$sh.txt"
done
for sh in "${shapes[@]}"; do
  echo "== VKDS_SCAN_CHAINED=$sh"
  grep -E "^2\^2[48]  u32  device   vkds_${only}_(single|portable) " "$OUT/shape-$sh.txt" |
    awk '{print "  " $1, $4, $5 " us", $(NF-1), $NF}'
  # "vkds: pipeline NAME on DEVICE, EXECUTABLE: stat=value, ...": the scan kernels' registers and spills
  grep "^vkds: pipeline .*\(scan\|$only\)" "$OUT/shape-$sh.txt" |
    awk -F', ' '{o = "  " $1; for (i = 2; i <= NF; ++i) if (tolower($i) ~ /regist|spill|local/) o = o ", " $i; print o}' |
    sed 's/ on [^,]*//' | sort | uniq -c | head -6
done
