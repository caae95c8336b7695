for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json VKDS_DEVICES=gpu
B=build-device/bench/vkds-bench
run() { name=$1; lib=$2; shift 2
  env LD_LIBRARY_PATH=$lib "$@" timeout 170 $B --submit --count 5000 > $OUT/submit-$name.txt 2>&1
}
run base build-device-base/lib
run new build-device/lib
run lazy0 build-device/lib VKDS_LAZY_REPORT_NS=0
run base2 build-device-base/lib
run new2 build-device/lib
for lib in base new; do d=build-device-base/lib; [ $lib = new ] && d=build-device/lib
  env LD_LIBRARY_PATH=$d timeout 100 $B --select > $OUT/select-$lib.txt 2>&1; done
for f in $OUT/submit-*.txt; do echo "== $f"; grep -E '^ *(vkds|plain).*(queue|queues|16 q)' $f | head -40 | awk '{print}' | grep -v 'round trip' | head -22; done | cut -c1-120
for f in $OUT/select-*.txt; do echo "== $f"; tail -15 $f; done
