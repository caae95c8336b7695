#!/bin/bash
# Runs benchmarks on the `device` machine, in one call:
#   carry [".gl", "build-device", ".lvp"], command: bash scripts/device-bench.sh MODE...
# MODE: select, submit (GPU only, N = 5000), balance (the GPU's first 16 queues),
# devices (the first queue of each device: the GPU next to lavapipe), or any
# vkds-bench mode name (launch, bandwidth, quick, ...).
# Needs: .gl/ (the Vulkan loader's .deb, see the device README), build-device/ (a
# release build made here: meson setup build-device --buildtype=release -Dtests=false),
# and, for lavapipe next to the GPU, .lvp/ from scripts/bundle-lavapipe.sh.
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if [ -f .lvp/lvp.tar.xz ]; then
  mkdir -p /tmp/lvp
  python3 -c "import tarfile; tarfile.open('.lvp/lvp.tar.xz').extractall('/tmp/lvp')"
  export LD_LIBRARY_PATH=/tmp/lvp VK_DRIVER_FILES=$VK_DRIVER_FILES:/tmp/lvp/lvp_icd.json
fi
B=build-device/bench/vkds-bench
{
  date -u; nproc; lscpu | grep "Model name"
  build-device/tools/vkds-info 2>&1 | grep -E "^Device|^vkds|driver "
  for mode in "$@"; do
    echo "=== $mode"
    case $mode in
      select) $B --select ;;
      submit) VKDS_DEVICES=gpu $B --submit --count 5000 ;;
      balance) VKDS_DEVICES=gpu $B --balance --count 2000 ;;
      devices) $B --balance-devices --count 400 ;;
      *) $B --"$mode" ;;
    esac
  done
} 2>&1 | tee "${OUT:-.}/log"
