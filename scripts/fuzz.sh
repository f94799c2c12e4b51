#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the fuzz targets (tests/fuzz) with clang++ under ASan + UBSan in
# build-fuzz/, then runs each for SECONDS (default 30), WRITELAB_FUZZ_JOBS
# (default 1) at a time, from its seed corpus (tests/fuzz/corpus/NAME).
# Fails when one crashes, leaks, reports or times out; the input that did it is left as
# build-fuzz/crash-NAME-* to replay with build-fuzz/tests/fuzz/fuzz_NAME FILE.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
. scripts/compiler_cache.sh
cmake -S . -B build-fuzz -DWRITELAB_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo "${compiler_cache[@]}" >/dev/null  # not a unity build: a target links only the units it uses
cmake --build build-fuzz -j "${WRITELAB_FUZZ_JOBS:-1}"
[ "$seconds" -gt 0 ] || exit 0  # 0: build only (libFuzzer reads 0 as no limit)
# One target's run; its log says why when it fails.
run_target() {
  local name=$1 work=build-fuzz/corpus-$1 log=build-fuzz/fuzz-$1.log
  mkdir -p "$work"  # new inputs go here; the seeds stay as committed
  if ! build-fuzz/tests/fuzz/fuzz_"$name" -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=4096 -artifact_prefix=build-fuzz/crash-"$name"- -print_final_stats=1 \
    "$work" tests/fuzz/corpus/"$name" </dev/null >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    echo "fuzz: $name failed (log: $log)" >&2
    return 1
  fi
  echo "== fuzz $name ran ${seconds}s"
  grep -E "^stat::(number_of_executed_units|average_exec_per_sec)" "$log" || true
}

# WRITELAB_FUZZ_JOBS targets at a time (each libFuzzer is one process).
jobs=${WRITELAB_FUZZ_JOBS:-1}
failed=0
running=0
while read -r name; do
  [ -n "$name" ] || continue
  if [ "$running" -ge "$jobs" ]; then
    wait -n || failed=1
    running=$((running - 1))
  fi
  run_target "$name" &
  running=$((running + 1))
done < build-fuzz/fuzz_targets.txt
while [ "$running" -gt 0 ]; do
  wait -n || failed=1
  running=$((running - 1))
done
[ "$failed" -eq 0 ] || exit 1
echo "fuzz: every target ran ${seconds}s without a crash"
