#!/bin/bash
# Runs test suites on the `device` machine's GPU with the Khronos validation layer on
# (CI runs them on lavapipe only). Two steps:
#   here:  bash scripts/device-tests.sh --prepare SUITE...
#          builds build-devt (release, tests on), copies the suites' executables, libvkds
#          and libsubunit (Check's runtime, which that machine lacks) into build-dt/, and
#          downloads the validation layer's .deb into .deb/ (with the Vulkan loader's in
#          .gl/, scripts/device-bench.sh);
#   there: carry [".gl", ".deb", "build-dt"], command: bash scripts/device-tests.sh SUITE...
# Each suite runs in one process (CK_FORK=no) on the machine's GPUs (VKDS_DEVICES=gpu);
# tests that want two VkDevices make them on one GPU, as on lavapipe. Prints each suite's
# Check summary and its failures last.
set -u
if [ "${1:-}" = "--prepare" ]; then
  shift
  set -e
  [ -d build-devt ] || meson setup build-devt --buildtype=release -Dbench=false
  ninja -C build-devt
  rm -rf build-dt
  mkdir -p build-dt/lib build-dt/tests build-dt/xlib .deb
  find build-devt/lib -maxdepth 1 -name 'libvkds.so*' ! -type d -exec cp -a {} build-dt/lib/ \;
  for s in "$@"; do cp "build-devt/tests/test_$s" build-dt/tests/; done
  strip build-dt/tests/* build-dt/lib/libvkds.so.*.*
  cp -a /lib/x86_64-linux-gnu/libsubunit.so.0* build-dt/xlib/
  if ! ls .deb/vulkan-validationlayers_*.deb >/dev/null 2>&1; then
    o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
    mkdir -p /tmp/amd64/partial
    apt-get $o update >/dev/null
    (cd .deb && apt-get $o download vulkan-validationlayers)
  fi
  du -sh build-dt .deb .gl
  exit 0
fi
for f in .gl/*.deb .deb/*.deb; do dpkg -x "$f" / >/dev/null 2>&1; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json VKDS_DEVICES=gpu
export LD_LIBRARY_PATH=$PWD/build-dt/xlib CK_FORK=no VKDS_VALIDATION=1
# Once (session 40, a call that ran vkds-bench first) the tests' processes could not load
# NVIDIA's driver beside the validation layer: "libnvidia-tls.so: cannot allocate memory
# in static TLS block", no Vulkan device. More static TLS for libraries loaded late is
# glibc's remedy for that message; with it the sort suite ran there after vkds-bench in
# one call (session 41: 41 of 41 checks, bench/data/device-tests-sort-h200-s41.txt).
export GLIBC_TUNABLES=glibc.rtld.optional_static_tls=16384
# BUDGET (seconds, default 480): a suite that would start past it is skipped and said
# so, and each suite gets at most what is left (and 240 s), so that the call ends inside
# the device tool's limit with its output (session 42's call of twelve suites ran past
# 590 s and printed nothing). Every suite's output goes to one file, $OUT/suites.txt (the
# tool returns 8 files at most).
OUT=${OUT:-.}
budget=${BUDGET:-480}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
start=$(date +%s)
: >"$OUT/suites.txt"
for s in "$@"; do
  left=$((budget - ($(date +%s) - start)))
  if [ "$left" -le 10 ]; then
    echo "test_$s skipped: the budget of $budget s is spent" | tee -a "$OUT/suites.txt"
    continue
  fi
  t0=$(date +%s)
  timeout $((left < 240 ? left : 240)) "build-dt/tests/test_$s" >"$OUT/test_$s.log" 2>&1
  rc=$?
  echo "test_$s exit $rc, $(($(date +%s) - t0)) s"
  { echo "=== test_$s (exit $rc)"; cat "$OUT/test_$s.log"; } >>"$OUT/suites.txt"
  rm -f "$OUT/test_$s.log"
done
for s in "$@"; do
  echo "== test_$s"
  awk -v s="=== test_$s " 'index($0, s) == 1 {on = 1; next} /^=== test_/ {on = 0} on' "$OUT/suites.txt" |
    grep -E '^[0-9]+%|:[FE]:|validation' | head -20
done
