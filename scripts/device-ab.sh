#!/bin/bash
# A/B of two library builds on the `device` machine, in one call: the same vkds-bench
# binary (build-device/) runs MODE against build-device/lib ("new") and
# build-device-base/lib ("base", e.g. a worktree of the last commit built here:
#   git worktree add /tmp/base HEAD && (cd /tmp/base && meson setup $PWD/build-device-base
#   --buildtype=release -Dtests=false) && ninja -C build-device-base)
# alternating, ROUNDS times, so that both see the same machine state.
#   carry [".gl", "build-device", "build-device-base"]
#   command: bash scripts/device-ab.sh ROUNDS vkds-bench-arguments...
rounds=$1
shift
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json VKDS_DEVICES=${VKDS_DEVICES:-gpu}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
for i in $(seq "$rounds"); do
  for lib in new base; do
    d=build-device/lib
    [ $lib = base ] && d=build-device-base/lib
    LD_LIBRARY_PATH=$d timeout 200 build-device/bench/vkds-bench "$@" >"${OUT:-.}/$lib-$i.txt" 2>&1
    echo "== $lib $i: exit $?"
  done
done
