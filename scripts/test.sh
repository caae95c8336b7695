#!/usr/bin/env bash
# Quick start, command 2: set up, build, and run the whole test suite: the Check suites
# with the Khronos validation layer on (any validation message fails a test), the fuzz
# targets for a bounded time, then the suites built with AddressSanitizer +
# UndefinedBehaviorSanitizer, and the threaded ones with ThreadSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh

echo "== tests (validation layer on)"
scripts/build.sh build
meson test -C build --print-errorlogs

# (10 s a target: the brief keeps the whole suite under 15 minutes on 2 cores; longer
# runs are `FUZZ_SECONDS=600 scripts/fuzz.sh`)
echo "== fuzzing (libFuzzer, ASan + UBSan; scripts/fuzz.sh)"
FUZZ_SECONDS=${FUZZ_SECONDS:-10} scripts/fuzz.sh

# The sanitizer stages cap the largest test sizes at 2^16 elements (VKDS_TEST_TOP_LOG2),
# run a tenth of the loops that repeat rounds (harness_rounds), and leave out the cases
# tagged "long" (CK_EXCLUDE_TAGS; harness_long_tcase: every type, size and pattern
# against the host reference, path variants forced), whose host code the suites' other
# cases reach too: the stage above runs all of them in full. The brief keeps the whole
# of this script under 15 minutes on 2 cores (it had grown to 30).
# ASan's quarantine (256 MB by default) keeps lavapipe's freed 64 MiB memory blocks
# (one per context and memory type) out of reuse, so every new context maps fresh pages:
# test_kernel ran 86 s with it, 31 s at 32 MB. Freed memory is still kept from reuse up
# to 32 MB, which is what use-after-free detection needs for vkds's own small objects.
echo "== tests under ASan + UBSan (unforked, so LeakSanitizer sees every test)"
# (-O1, as ASan's documentation suggests: the tests ran no slower than at -O2, and the
# build is shorter)
scripts/build.sh build-asan -Db_sanitize=address,undefined -Db_lundef=false -Dbench=false -Dtools=false -Doptimization=1
VKDS_TEST_TOP_LOG2=16 CK_EXCLUDE_TAGS=long CK_FORK=no ASAN_OPTIONS=quarantine_size_mb=32 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp" \
  meson test -C build-asan --print-errorlogs

echo "== threaded suites under ThreadSanitizer"
# (only the executables of the threads suite are built: the rest took half a minute)
SUITE=threads scripts/build.sh build-tsan -Db_sanitize=thread -Db_lundef=false -Dbench=false -Dtools=false -Doptimization=1
VKDS_TEST_TOP_LOG2=16 CK_EXCLUDE_TAGS=long CK_FORK=no TSAN_OPTIONS="halt_on_error=1:suppressions=$PWD/tests/tsan.supp" \
  meson test -C build-tsan --suite threads --no-rebuild --print-errorlogs

echo "== all tests passed"
