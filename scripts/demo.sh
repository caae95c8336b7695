#!/usr/bin/env bash
# Quick start, command 1: set up, build, and run the main job: vkds-bench --quick lists
# every resource (compute queue) on this machine and dispatches real work on each.
# Extra arguments go to vkds-bench.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh build
exec build/bench/vkds-bench --quick "$@"
