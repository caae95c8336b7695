#!/usr/bin/env bash
# Installs what vkds needs on Debian bookworm (or a derivative): the compiler and build
# tools, the Vulkan loader and headers, volk, glslang, SPIRV-Tools, Check,
# Mesa's lavapipe (the CPU Vulkan device), the Khronos validation layer, and clang with
# libFuzzer (scripts/fuzz.sh).
# Installs only what is missing; uses sudo when not run as root.
set -euo pipefail

packages=(
  gcc g++ pkg-config python3 meson ninja-build
  libvulkan1 libvulkan-dev libvulkan-volk-dev
  glslang-tools glslang-dev spirv-tools
  check libsubunit-dev
  mesa-vulkan-drivers vulkan-validationlayers
  clang libclang-rt-14-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup.sh: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "setup.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
