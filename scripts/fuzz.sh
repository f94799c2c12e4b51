#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the fuzz targets (tests/fuzz) with clang++ under ASan + UBSan in
# build-fuzz/, then runs each for SECONDS (default 30), one after another,
# from its seed corpus (tests/fuzz/corpus/NAME). Fails on the first crash,
# leak, sanitizer report or timeout; the input that did it is left as
# build-fuzz/crash-NAME-* to replay with build-fuzz/tests/fuzz/fuzz_NAME FILE.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
cmake -S . -B build-fuzz -DWRITELAB_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-fuzz -j "${WRITELAB_FUZZ_JOBS:-1}"
[ "$seconds" -gt 0 ] || exit 0  # 0: build only (libFuzzer reads 0 as no limit)
while read -r name; do
  [ -n "$name" ] || continue
  echo "== fuzz $name for ${seconds}s"
  work=build-fuzz/corpus-$name  # new inputs go here; the seeds stay as committed
  mkdir -p "$work"
  log=build-fuzz/fuzz-$name.log
  if ! build-fuzz/tests/fuzz/fuzz_"$name" -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=4096 -artifact_prefix=build-fuzz/crash-"$name"- -print_final_stats=1 \
    "$work" tests/fuzz/corpus/"$name" </dev/null >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    echo "fuzz: $name failed (log: $log)" >&2
    exit 1
  fi
  grep -E "^stat::(number_of_executed_units|average_exec_per_sec)" "$log" || true
done < build-fuzz/fuzz_targets.txt
echo "fuzz: every target ran ${seconds}s without a crash"
