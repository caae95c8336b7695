#!/usr/bin/env bash
# Builds the libFuzzer targets in fuzz/ with clang (AddressSanitizer + UndefinedBehavior-
# Sanitizer) and runs each for FUZZ_SECONDS (default 30) from its committed seed corpus
# (fuzz/corpus/<target>, copied first: the committed seeds stay as they are). A crash,
# leak or sanitizer report fails the run and leaves the input in build-fuzz/<target>/;
# commit such an input to the corpus and a regression test for it.
#   scripts/fuzz.sh [TARGET...]   (default: every fuzz/fuzz_*.c)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-30}
command -v clang >/dev/null || { echo "fuzz.sh: clang is missing (scripts/setup.sh installs it)" >&2; exit 1; }
# vkds's internal headers include volk's generated one: the main build makes it
scripts/build.sh build
flags=(-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -std=c11 -D_DEFAULT_SOURCE
       -DVKDS_BUILDING -Ilib -Iinclude -Ibuild/subprojects/volk)
# what each target links besides itself: the code it exercises, no more
declare -A sources=(
  [spirv_reflect]="lib/kernel/spirv_reflect.c lib/core/result.c lib/core/host_alloc.c"
  [filter]="lib/core/filter.c lib/core/result.c lib/core/host_alloc.c"
)
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in fuzz/fuzz_*.c; do t=${f#fuzz/fuzz_}; targets+=("${t%.c}"); done
fi
for t in "${targets[@]}"; do
  dir=build-fuzz/$t
  rm -rf "$dir"
  mkdir -p "$dir/corpus"
  # shellcheck disable=SC2086
  clang "${flags[@]}" "fuzz/fuzz_$t.c" ${sources[$t]} -o "$dir/fuzz_$t"
  cp fuzz/corpus/"$t"/* "$dir/corpus/"
  echo "fuzz.sh: $t for ${seconds} s"
  (cd "$dir" && ./"fuzz_$t" -max_total_time="$seconds" -max_len=65536 -print_final_stats=1 corpus 2>&1 |
    grep -E "^(stat::number_of_executed_units|stat::new_units_added|Done|==|SUMMARY)|ERROR" || true)
  found=$(find "$dir" -maxdepth 1 \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \))
  if [ -n "$found" ]; then
    echo "fuzz.sh: $t found failing inputs: $found" >&2
    exit 1
  fi
done
echo "fuzz.sh: no findings"
