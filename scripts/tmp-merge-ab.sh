#!/bin/bash
# (temporary, session 39) merge and merge sort: shared memory padded / not, 16-byte output stores
for f in .gl/*.deb; do dpkg -x "$f" / >/dev/null 2>&1; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json VKDS_DEVICES=gpu
OUT=${OUT:-.}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 120 build-cub/cub_bench --min-log2 ${MIN:-24} --max-log2 ${MAX:-28} >"$OUT/cub.json" 2>"$OUT/cub.err" || echo "cub failed"
grep '^{' "$OUT/cub.json" >"$OUT/cub.lines"
for r in ${ROUNDS:-1 2}; do
  for v in ${VARIANTS:-base pad vout}; do
    case $v in base) E="VKDS_MERGE_PAD=0 VKDS_MERGE_VOUT=0" ;; pad) E="VKDS_MERGE_VOUT=0" ;; vout) E="VKDS_MERGE_VOUT=1" ;;
      nopad) E="VKDS_MERGE_PAD=0" ;; vin) E="VKDS_MERGE_VIN=1" ;; vinnopad) E="VKDS_MERGE_VIN=1 VKDS_MERGE_PAD=0" ;; esac
    s=$(date +%s)
    env $E VKDS_PIPELINE_STATS=${STATS:-0} timeout 150 build-device/bench/vkds-bench --algorithms --only 'vkds_merge$,vkds_merge_sort' \
      --min-log2 ${MIN:-24} --max-log2 ${MAX:-28} --cub "$OUT/cub.lines" >"$OUT/$v-$r.txt" 2>&1
    echo "== $v $r exit $? $(( $(date +%s) - s )) s"
  done
done
grep -h -E '"algo":"cub_merge' "$OUT/cub.json" | grep '"u32"' | sed -E 's/.*"algo":"([a-z_]+)".*"n":([0-9]+).*"us":([0-9.]+).*/\1 \2 \3/' 
for f in "$OUT"/*-[0-9].txt; do
  grep -E '^2\^(24|26|28) +u32 +device +vkds_merge' "$f" | awk -v n="$(basename "$f" .txt)" '{printf "%-8s %s %-16s %10s  %s %s %s\n", n, $1, $4, $5, $9, $10, $11}'
done
