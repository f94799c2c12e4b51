#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs each fuzz target (tests/fuzz) for RUNS executions (default 10000000),
# one at a time on one core, and prints executions, seconds and exec/s per
# target. Builds build-fuzz/ first. Fails on the first crash, like
# scripts/fuzz.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-10000000}
cmake -S . -B build-fuzz -DWRITELAB_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-fuzz -j "${WRITELAB_FUZZ_JOBS:-1}" >/dev/null
printf '%-10s %12s %9s %10s\n' target executions seconds exec/s
while read -r name; do
  [ -n "$name" ] || continue
  work=build-fuzz/corpus-$name
  mkdir -p "$work"
  log=build-fuzz/fuzz-$name.log
  start=$(date +%s.%N)
  if ! build-fuzz/tests/fuzz/fuzz_"$name" -runs="$runs" -timeout=10 -rss_limit_mb=4096 \
    -artifact_prefix=build-fuzz/crash-"$name"- -print_final_stats=1 \
    "$work" tests/fuzz/corpus/"$name" </dev/null >"$log" 2>&1; then
    echo "fuzz: $name failed, see $log" >&2
    exit 1
  fi
  end=$(date +%s.%N)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  awk -v n="$name" -v e="$execs" -v s="$start" -v t="$end" \
    'BEGIN { d = t - s; printf "%-10s %12d %9.1f %10.0f\n", n, e, d, e / d }'
done < build-fuzz/fuzz_targets.txt
