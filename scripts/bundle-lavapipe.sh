#!/bin/bash
# Packs this machine's lavapipe (Mesa's Vulkan CPU driver) with the libraries it needs
# into .lvp/lvp.tar.xz, so that the device machine, which has no Mesa, can list lavapipe
# next to its GPU (scripts/device-bench.sh unpacks it to /tmp/lvp). glibc and the C++
# runtime are left out: the device machine has its own. About 41 MB; .lvp/ is ignored
# by git (add "/.lvp/" to .git/info/exclude) and travels with the `device` tool's carry.
set -euo pipefail
cd "$(dirname "$0")/.."
lvp=/usr/lib/x86_64-linux-gnu/libvulkan_lvp.so
[ -e "$lvp" ] || { echo "bundle-lavapipe: $lvp is missing (apt-get install mesa-vulkan-drivers)" >&2; exit 1; }
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
for lib in $(ldd "$lvp" | awk '{print $3}' | grep -v -E 'libc\.so|libm\.so|libpthread|libstdc\+\+|libgcc_s'); do
  cp -L "$lib" "$stage/"
done
cp -L "$lvp" "$stage/"
strip --strip-unneeded "$stage"/*.so* 2>/dev/null || true
cat > "$stage/lvp_icd.json" <<'JSON'
{
    "ICD": {
        "api_version": "1.3.230",
        "library_path": "/tmp/lvp/libvulkan_lvp.so"
    },
    "file_format_version": "1.0.0"
}
JSON
mkdir -p .lvp
tar -C "$stage" -cJf .lvp/lvp.tar.xz .
grep -qx '/.lvp/' .git/info/exclude 2>/dev/null || echo '/.lvp/' >> .git/info/exclude
ls -l .lvp/lvp.tar.xz
