#!/usr/bin/env bash
# Builds the libFuzzer targets in fuzz/ with clang (AddressSanitizer + UndefinedBehavior-
# Sanitizer) and runs each for FUZZ_SECONDS (default 30; as many at once as there are
# cores) from its committed seed corpus (fuzz/corpus/<target>, copied first: the
# committed seeds stay as they are). A crash, leak or sanitizer report fails the run and
# leaves the input in build-fuzz/<target>/ (libFuzzer's output in fuzz.log there);
# commit such an input to the corpus and a regression test for it.
#   scripts/fuzz.sh [TARGET...]   (default: every fuzz/fuzz_*.c)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-30}
command -v clang >/dev/null || { echo "fuzz.sh: clang is missing (scripts/setup.sh installs it)" >&2; exit 1; }
# vkds's internal headers include volk's generated one, and the GLSL path the embedded
# vkds.glsl and algorithm templates: the main build makes them (and libvkds.a, below)
scripts/build.sh build
# -fexceptions: glslang's C++ exceptions unwind through vkds's C frames to
# lib/kernel/cxx_guard.cpp, as in the library's own build
flags=(-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fexceptions -D_DEFAULT_SOURCE
       -DVKDS_BUILDING -Ilib -Iinclude -Ibuild/subprojects/volk -Ibuild/shaders)
# what each target compiles besides itself: the code it exercises, instrumented
core="lib/core/result.c lib/core/host_alloc.c"
glsl="lib/kernel/glsl.c lib/kernel/cxx_guard.cpp lib/kernel/spirv.c lib/kernel/spirv_reflect.c lib/kernel/args.c"
declare -A sources=(
  [spirv_reflect]="lib/kernel/spirv_reflect.c $core"
  [filter]="lib/core/filter.c $core"
  [glsl]="$glsl $core"
  [args]="$glsl $core"
  [operator]="lib/algorithm/codegen.c lib/algorithm/kernels.c lib/kernel/kernel.c lib/seq/seq.c $glsl $core"
)
# and links: glslang and SPIRV-Tools are C++ (clang++ links); the operator target takes
# the rest of the library (scan, sort and histogram templates, buffers, caches: code it
# reaches without exercising) uninstrumented from the main build's libvkds.a
glslang_libs="-lglslang -lSPIRV -lMachineIndependent -lOSDependent -lGenericCodeGen -lOGLCompiler
              -lglslang-default-resource-limits -lSPIRV-Tools-opt -lSPIRV-Tools -lpthread -lm"
declare -A libs=(
  [glsl]="$glslang_libs"
  [args]="$glslang_libs"
  [operator]="build/lib/libvkds.a build/subprojects/volk/libvolk.a $glslang_libs -ldl"
)
# libFuzzer's options per target: the longest input, and the memory a run may take
# (glslang keeps its built-in symbol tables: the compiling targets start near 500 MB)
declare -A options=(
  [glsl]="-max_len=16384 -rss_limit_mb=4096"
  [args]="-max_len=4096"
  [operator]="-max_len=8192 -rss_limit_mb=4096"
)
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in fuzz/fuzz_*.c; do t=${f#fuzz/fuzz_}; targets+=("${t%.c}"); done
fi
# every source once, in parallel, into build-fuzz/obj
mkdir -p build-fuzz/obj
needed=$(for t in "${targets[@]}"; do echo "fuzz/fuzz_$t.c ${sources[$t]}"; done | tr ' ' '\n' | sort -u | grep .)
obj() { local o=${1//\//_}; echo "build-fuzz/obj/${o%.*}.o"; }
for s in $needed; do
  case $s in
    *.cpp) echo "clang++ ${flags[*]} -std=c++17 -c $s -o $(obj "$s")" ;;
    *) echo "clang ${flags[*]} -std=c11 -c $s -o $(obj "$s")" ;;
  esac
done | xargs -P "$(nproc)" -I{} sh -c '{}'
for t in "${targets[@]}"; do
  dir=build-fuzz/$t
  rm -rf "$dir"
  mkdir -p "$dir/corpus"
  objects=$(obj "fuzz/fuzz_$t.c")
  for s in ${sources[$t]}; do objects+=" $(obj "$s")"; done
  # shellcheck disable=SC2086
  clang++ -fsanitize=fuzzer,address,undefined $objects ${libs[$t]:-} -o "$dir/fuzz_$t"
  cp fuzz/corpus/"$t"/* "$dir/corpus/"
done
# the targets side by side, one per core (each libFuzzer run is one thread)
echo "fuzz.sh: ${targets[*]} for ${seconds} s each, $(nproc) at a time"
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do wait -n || true; done
  # shellcheck disable=SC2086
  (cd "build-fuzz/$t" && ./"fuzz_$t" -max_total_time="$seconds" ${options[$t]:--max_len=65536} -print_final_stats=1 corpus \
     > fuzz.log 2>&1 || true) &
done
wait
failed=0
for t in "${targets[@]}"; do
  dir=build-fuzz/$t
  echo "fuzz.sh: $t"
  grep -E "^(stat::number_of_executed_units|stat::new_units_added|stat::peak_rss_mb|Done|==|SUMMARY)|ERROR" "$dir/fuzz.log" || true
  found=$(find "$dir" -maxdepth 1 \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \))
  if [ -n "$found" ]; then
    echo "fuzz.sh: $t found failing inputs: $found (its output: $dir/fuzz.log)" >&2
    failed=1
  fi
done
[ $failed -eq 0 ] || exit 1
echo "fuzz.sh: no findings"
