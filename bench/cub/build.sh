#!/usr/bin/env bash
# Builds the CUB baseline of vkds-bench --algorithms: bench/cub/build.sh [OUTDIR]
# (default build-cub/, ignored by git) -> OUTDIR/cub_bench. Hopper only (-arch=sm_90: no
# PTX for other chips); cudart linked statically, so the binary needs only the driver on
# the GPU machine. NVCC overrides the compiler (default /usr/local/cuda/bin/nvcc);
# CUB_BENCH_VERBOSE=1 adds ptxas's register and spill report.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$root/build-cub}
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
extra=()
if [ "${CUB_BENCH_VERBOSE:-0}" = 1 ]; then extra+=(-Xptxas -v); fi
mkdir -p "$out"
"$nvcc" -O3 -std=c++17 -arch=sm_90 -cudart=static -lineinfo -Xcompiler -Wall,-Wextra "${extra[@]}" \
  -o "$out/cub_bench" "$root/bench/cub/cub_bench.cu"
echo "$out/cub_bench"
