#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs what is missing, builds, and runs the tests, in one of two tiers:
#
#   scripts/test.sh quick   the daily loop (about 1 minute warm here): the
#                           build (through the compiler cache), the format
#                           and floor checks, the unit tests, the fuzz
#                           targets' seed corpora replayed, and the smoke
#                           tests (one small run of every command)
#   scripts/test.sh [full]  what CI runs (.ci/run): the checks, every test of
#                           the normal build (unit and integration; test beds
#                           and loop devices when root), the package test
#                           (tests/package/run.sh), the unit tests again under
#                           AddressSanitizer + UndefinedBehaviorSanitizer,
#                           then each parser's fuzz target for 30 s
#                           (scripts/fuzz.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
tier=${1:-full}
case $tier in
  quick | full) ;;
  *)
    echo "test: unknown tier '$tier' (quick or full)" >&2
    exit 2
    ;;
esac
# Every optional part is asked for by name: a build directory configured
# before (scripts/try.sh, or before MPI was installed) keeps what its first
# configure found, and a part left out would only make its tests skip.
./scripts/build.sh -DWRITELAB_BUILD_TESTS=ON -DWRITELAB_BUILD_BENCH=ON -DWRITELAB_MPI=ON \
  -DWRITELAB_EXPLAIN=ON
echo "== format (clang-format) and floors (scripts/check_layers.sh), after ${SECONDS}s of set-up and build"
git ls-files '*.cc' '*.h' '*.c' | grep -v '^third_party/' | xargs clang-format --dry-run -Werror
./scripts/check_layers.sh
# A test whose part (a build with MPI, mpirun, chromium) is missing fails
# here instead of skipping (tests/harness.h, WRITELAB_SKIP_WITHOUT_PART).
export WRITELAB_REQUIRE_PARTS=1
if [ "$tier" = quick ]; then
  echo "== unit tests, seed corpora and smoke (build/) (at ${SECONDS}s)"
  ctest --test-dir build --output-on-failure -j 2 -L 'unit|smoke'
  echo "== quick tier passed in ${SECONDS}s"
  exit 0
fi
echo "== tests (build/) (at ${SECONDS}s)"
ctest --test-dir build --output-on-failure -j 2
echo "== package: install, find_package, add_subdirectory, pkg-config, man page, completion, .deb (at ${SECONDS}s)"
BUILD_DIR=build tests/package/run.sh
echo "== unit tests under ASan + UBSan (build-asan/) (at ${SECONDS}s)"
./scripts/setup.sh test
# A unity build (several sources per translation unit) halves this build's
# time; the normal build above keeps one unit per source, so that each
# file's own includes are checked there.
. scripts/compiler_cache.sh
cmake -S . -B build-asan -DWRITELAB_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug -DCMAKE_UNITY_BUILD=ON \
  "${compiler_cache[@]}" >/dev/null
cmake --build build-asan -j "$(nproc)" --target unit_tests
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j 2 -L unit
echo "== fuzz targets, 30 s each, $(nproc) at a time (build-fuzz/) (at ${SECONDS}s)"
WRITELAB_FUZZ_JOBS=$(nproc) ./scripts/fuzz.sh 30
echo "== all passed in ${SECONDS}s"
