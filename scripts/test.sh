#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs what is missing, builds, and runs the tests, in one of three tiers:
#
#   scripts/test.sh quick   the daily loop (about 1 minute warm here): the
#                           build (through the compiler cache), the format
#                           and floor checks, the unit tests, the fuzz
#                           targets' seed corpora replayed, and the smoke
#                           tests (one small run of every command)
#   scripts/test.sh [full]  the test command, which CI runs first (.ci/run):
#                           the checks, every test of the normal build (unit
#                           and integration; test beds and loop devices when
#                           root), the package test (tests/package/run.sh),
#                           and the unit tests again under AddressSanitizer
#                           + UndefinedBehaviorSanitizer (their build
#                           compiles beside the tests, at nice 19)
#   scripts/test.sh fuzz    each parser's fuzz target (clang++, ASan + UBSan)
#                           built and run for 30 s (scripts/fuzz.sh): CI runs
#                           it after the full tier (.ci/run); the full tier
#                           replays their seed corpora only, as unit tests
#
# A phase of the full tier that passed for this very tree (the commit, every
# change not committed, untracked files), on this kernel and host, with the
# same compilers, is not run again: a second run in the same clone with
# nothing changed is the build's check and the format check, about a
# minute (docs/performance.md). Its stamp is build/.passed/PHASE; a clean
# clone (CI) has none. WRITELAB_RETEST=1 runs every phase again.
set -euo pipefail
cd "$(dirname "$0")/.."
tier=${1:-full}
case $tier in
  quick | full | fuzz) ;;
  *)
    echo "test: unknown tier '$tier' (quick, full or fuzz)" >&2
    exit 2
    ;;
esac
# As root, the tests run writelab and its shim as the user nobody (refusals,
# --user): nobody must be able to reach this clone, which a clone under
# /root (mode 0700) is not.
if [ "$(id -u)" -eq 0 ] && [ "$tier" != fuzz ] &&
  ! setpriv --reuid=65534 --regid=65534 --clear-groups test -r "$PWD/scripts/test.sh" 2>/dev/null; then
  echo "test: the tests run parts of writelab as the user nobody, who cannot reach $PWD" \
    "(a directory above it is private, as /root is): clone it where everyone can read," \
    "e.g. under /opt or /var/tmp" >&2
  exit 2
fi
# Every optional part is asked for by name: a build directory configured
# before (scripts/try.sh, or before MPI was installed) keeps what its first
# configure found, and a part left out would only make its tests skip. The
# fuzz tier needs only the packages: its build is its own (build-fuzz/).
if [ "$tier" = fuzz ]; then
  ./scripts/setup.sh test
else
  ./scripts/build.sh -DWRITELAB_BUILD_TESTS=ON -DWRITELAB_BUILD_BENCH=ON -DWRITELAB_MPI=ON \
    -DWRITELAB_EXPLAIN=ON
fi
echo "== format (clang-format) and floors (scripts/check_layers.sh), after ${SECONDS}s of set-up"
git ls-files '*.cc' '*.h' '*.c' | grep -v '^third_party/' | xargs clang-format --dry-run -Werror
./scripts/check_layers.sh
# A test whose part (a build with MPI, mpirun, chromium) is missing fails
# here instead of skipping (tests/harness.h, WRITELAB_SKIP_WITHOUT_PART).
export WRITELAB_REQUIRE_PARTS=1
# A test that hangs (a child it waits for that died, a read no one will
# answer) fails after this many seconds, by name, instead of holding the
# run until CI's own limit; the longest test takes about 130 s here.
per_test=(--timeout 900)
# What a test killed before its destructors ran left on the machine (its
# loop devices, mounts and dirty limits are journaled: tests/bed_journal.h),
# and what a killed writelab run left, undone before the tests start: a
# leftover limit on a loop device would fail the next test that binds it.
undo_leftovers() {
  [ "$(id -u)" -eq 0 ] || return 0
  build/writelab cleanup || echo "(writelab cleanup could not undo all of the above)"
  remove_dead_scratch
  remove_dead_tracers
  remove_dead_captures
}
# pid_gone PID: PID is a number, and no process has it (the sweeps below
# leave whatever a live process may still use).
pid_gone() { [[ $1 =~ ^[0-9]+$ ]] && ! kill -0 "$1" 2>/dev/null; }
# A killed test's captured output (tests/harness.h's RunProgram: made by
# mkostemp as writelab-test-capture-PID-XXXXXX in /tmp), removed once no
# process has its PID; only root's own plain files.
remove_dead_captures() {
  local f pid
  for f in /tmp/writelab-test-capture-[0-9]*-??????; do
    [ -f "$f" ] && [ ! -L "$f" ] && [ -O "$f" ] || continue
    pid=${f%-??????}
    pid=${pid##*-}
    pid_gone "$pid" || continue
    rm -f -- "$f"
  done
}
# The ftrace instance of a test's observer (tests/tools/split_tracer.cc,
# split_tracer_PID) killed by SIGKILL, removed once no process has its PID.
remove_dead_tracers() {
  local d pid
  for d in /sys/kernel/tracing/instances/split_tracer_[0-9]*; do
    [ -d "$d" ] || continue
    pid=${d##*_}
    pid_gone "$pid" || continue
    echo "removing $d (a killed test observer's ftrace instance)"
    rmdir "$d" || echo "(could not remove $d)"
  done
}
# A killed test's scratch directory (tests/harness.h's ScratchDir: made by
# mkdtemp as writelab-test-NAME-PID-XXXXXX, root's own, mode 0755, so no
# one else can have put anything in it), removed once no process has its
# PID; never a link, never across a file system mounted inside it.
remove_dead_scratch() {
  local d pid
  for d in "${WRITELAB_TEST_DIR:-/var/tmp}"/writelab-test-*-[0-9]*-??????; do
    [ -d "$d" ] && [ ! -L "$d" ] && [ -O "$d" ] || continue
    pid=${d%-??????}
    pid=${pid##*-}
    pid_gone "$pid" || continue
    echo "removing $d (a killed test's scratch directory)"
    rm -rf --one-file-system -- "$d" || echo "(could not remove all of $d)"
  done
}
if [ "$tier" = quick ]; then
  undo_leftovers
  echo "== unit tests, seed corpora and smoke (build/) (at ${SECONDS}s)"
  ctest --test-dir build --output-on-failure "${per_test[@]}" -j 2 -L 'unit|smoke'
  echo "== quick tier passed in ${SECONDS}s"
  exit 0
fi
# What the phases' stamps are for: this tree, kernel, host and compilers.
fingerprint=$({
  git rev-parse HEAD
  git diff HEAD --binary
  git ls-files -z --others --exclude-standard | sort -z | xargs -0 -r sha256sum
  uname -rv
  hostname
  c++ --version 2>/dev/null | head -1 || true
  clang --version 2>/dev/null | head -1 || true
} | sha256sum | cut -d' ' -f1)
# phase NAME WORDS...: runs NAME's function unless it passed for this
# fingerprint before, and stamps it when it passes.
phase() {
  local name=$1 stamp=build/.passed/$1
  shift
  if [ "${WRITELAB_RETEST:-0}" != 1 ] && [ "$(cat "$stamp" 2>/dev/null)" = "$fingerprint" ]; then
    echo "== $*: passed before for this same tree ($stamp); WRITELAB_RETEST=1 runs it again"
    return
  fi
  echo "== $* (at ${SECONDS}s)"
  "phase_$name"
  mkdir -p build/.passed
  echo "$fingerprint" >"$stamp"
}
# The tests that time the machine's CPUs (explain's split against a tracer,
# the planted culprits, top, mpirun's interrupts) run first, with nothing
# beside them; the rest, waiting on the disk or a sleep for most of their
# time, run two per CPU, at most 4, which share one disk (at one per CPU
# they kept 0.77 of the 2 CPUs here busy: 257 s; at two, 161 s), with the
# sanitizer's build compiling beside them at nice 19 (a test's thread
# that wakes takes the CPU from it at once). Its phase waits for it, then
# builds again (a no-op when the one beside finished, and the place an
# error shows). MPI's survey across ranks (Mpi.Survey*, about 30 s) and
# its refusals (MpiRefusals.*) time nothing of their own: they run with
# the rest. Explain.TheBackgrounds* weigh the background's share of what
# the disk was sent during the calls, which three tests beside them
# writing to the same disk took to 34% once (the background's 44%); they
# run one at a time too (RUN_SERIAL: beside each other both failed once).
# ExplainProgram.AnFsyncBesideAStreamer* holds issue 29's goal (under 20%
# of its slow calls' time left as other sleep), which the rest's load beside
# it took to 21.3% once: it runs with these.
# The build's own writes reach the disk before these tests start (sync).
alone='^(ExplainTruth|ExplainBlame|Top)\.|^Explain\.TheBackgrounds|^Mpi\.([^S]|S[^u])'
alone+='|^ExplainProgram\.AnFsyncBesideAStreamer'
asan_build() {
  # A unity build (several sources per translation unit), the library's
  # sources too: the normal build above keeps one unit per source for the
  # library, so that its own includes are checked there.
  . scripts/compiler_cache.sh
  cmake -S . -B build-asan -DWRITELAB_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug -DCMAKE_UNITY_BUILD=ON \
    "${compiler_cache[@]}" >/dev/null
  cmake --build build-asan -j "$(nproc)" --target unit_tests
}
declare -A beside=()
# build_beside PHASE PRIORITY...: PHASE's build in the background, in its
# own process group (setsid), so that a run that stops (a failure,
# Ctrl-C) stops it whole; nothing when PHASE passed before.
build_beside() {
  local name=$1
  shift
  [ "${WRITELAB_RETEST:-0}" != 1 ] && [ "$(cat "build/.passed/$name" 2>/dev/null)" = "$fingerprint" ] &&
    return 0
  setsid -w "$@" bash -c "$(declare -f asan_build); ${name}_build" \
    >"build/$name-beside.log" 2>&1 &
  beside[$name]=$!
}
stop_beside() {
  local pid
  for pid in "${beside[@]}"; do kill -- "-$pid" 2>/dev/null || true; done
}
trap stop_beside EXIT
# await_beside PHASE: its build beside the tests is done.
await_beside() {
  local pid=${beside[$1]:-}
  [ -n "$pid" ] || return 0
  wait "$pid" || echo "($1's build beside the tests failed; it builds again: build/$1-beside.log)"
  unset "beside[$1]"
}
phase_tests() {
  local nproc
  nproc=$(nproc)
  local failed=0
  undo_leftovers
  sync
  # A failure among the tests alone does not keep the rest from running:
  # one run (CI's above all) names every test that fails.
  ctest --test-dir build --output-on-failure "${per_test[@]}" -j 2 -R "$alone" || failed=1
  build_beside asan nice -n 19
  ctest --test-dir build --output-on-failure "${per_test[@]}" \
    -j "$((nproc * 2 > 4 ? 4 : nproc * 2))" -E "$alone" ||
    failed=1
  return "$failed"
}
phase_package() { BUILD_DIR=build tests/package/run.sh; }
phase_asan() {
  await_beside asan
  asan_build
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure "${per_test[@]}" -j 2 -L unit
}
phase_fuzz() { WRITELAB_FUZZ_JOBS=$(nproc) ./scripts/fuzz.sh 30; }
if [ "$tier" = fuzz ]; then
  phase fuzz "fuzz targets built and run, 30 s each, $(nproc) at a time (build-fuzz/)"
  echo "== fuzz tier passed in ${SECONDS}s"
  exit 0
fi
phase tests "tests (build/)"
phase package "package: install, find_package, add_subdirectory, pkg-config, man page, completion, .deb"
phase asan "unit tests under ASan + UBSan (build-asan/)"
await_beside asan
echo "== all passed in ${SECONDS}s"
