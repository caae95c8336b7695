#!/bin/bash
# (temporary, session 40) the radix sort in work groups of 256 or 384 threads
for f in .gl/*.deb; do dpkg -x "$f" / >/dev/null 2>&1; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json VKDS_DEVICES=gpu
OUT=${OUT:-.}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 150 build-cub/cub_bench --min-log2 ${MIN:-26} --max-log2 ${MAX:-28} >"$OUT/cub.json" 2>"$OUT/cub.err" || echo "cub failed"
grep '^{' "$OUT/cub.json" >"$OUT/cub.lines"
for r in ${ROUNDS:-1 2}; do
  for v in ${VARIANTS:-base g384 g384s}; do
    case $v in base) E="VKDS_SORT_GROUP=256" ;; g384) E="VKDS_SORT_GROUP=384" ;; g384s) E="VKDS_SORT_GROUP=384 VKDS_SORT_TILE=4096" ;; g384i12) E="VKDS_SORT_GROUP=384 VKDS_SORT_ITEMS=12" ;; g384i8) E="VKDS_SORT_GROUP=384 VKDS_SORT_ITEMS=8" ;; i12) E="VKDS_SORT_ITEMS=12" ;; h2) E="VKDS_SORT_HALVES=2" ;; p) E="VKDS_SCAN_PATH=portable VKDS_SORT_LEAN_COUNT=0" ;; pc) E="VKDS_SCAN_PATH=portable" ;; pch) E="VKDS_SCAN_PATH=portable VKDS_SORT_HALVES=2" ;; pchi24) E="VKDS_SCAN_PATH=portable VKDS_SORT_HALVES=2 VKDS_SORT_ITEMS=24" ;; h2g384) E="VKDS_SORT_HALVES=2 VKDS_SORT_GROUP=384" ;; h2i24) E="VKDS_SORT_HALVES=2 VKDS_SORT_ITEMS=24" ;; h2g384i16) E="VKDS_SORT_HALVES=2 VKDS_SORT_GROUP=384 VKDS_SORT_ITEMS=16" ;;
      base16) E="VKDS_SORT_TILE=4096" ;; esac
    s=$(date +%s)
    env $E VKDS_PIPELINE_STATS=1 timeout 150 build-device/bench/vkds-bench --algorithms --only "${ONLY:-vkds_sort\$,vkds_sort_by_key\$,vkds_sort16\$}" \
      --min-log2 ${MIN:-26} --max-log2 ${MAX:-28} --cub "$OUT/cub.lines" >"$OUT/$v-$r.txt" 2>&1
    echo "== $v $r exit $? $(( $(date +%s) - s )) s"
  done
done
for f in "$OUT"/*-1.txt; do echo "$(basename $f):"; grep "vkds: pipeline" "$f" | sed -E 's/^vkds: pipeline ([^ ]+) on [^,]*, ([^:]*):.*[Rr]egister[^=]*=([0-9]+).*/  \1 \2 regs=\3/' | cut -c1-150 | sort | uniq -c | head -8; grep "vkds: pipeline vkds_cmd_sort" "$f" | grep -o -E "Register Count=[0-9]+|Local Memory Size=[0-9]+|Shared Memory Size=[0-9]+" | paste - - - | sort | uniq -c; done
for f in "$OUT"/*-[0-9].txt; do
  grep -E '^2\^(2[0-9]) +u32 +device +vkds_sort' "$f" | awk -v n="$(basename "$f" .txt)" '{printf "%-8s %s %-18s %10s  %s %s\n", n, $1, $4, $5, $9, $10}'
done
