#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What `writelab run` costs a program that is not a stream (issue 40), side
# by side in one run, ROUNDS rounds, the order rotating each round:
#   - a shell that runs /bin/true N times (for i in $(seq N); do /bin/true;
#     done): plain; with an empty library preloaded (the floor: what loading
#     any preload costs every process); with the shim preloaded and no
#     writelab (the shim's own start); and under `writelab run` (shim and
#     supervisor). Goal: run within 1.1x plain.
#   - two threads writing 4 KiB at random offsets of one descriptor for MS
#     milliseconds (writers random-pair): writes per second plain and under
#     run. Goal: run at least 1/1.1 of plain.
# Prints each round's ratios and their median; `.ci/run` does not run it
# (timings on shared machines).
#
# Usage: bench/run_overhead.sh [BUILD_DIR] (default build).
# Env: ROUNDS (5), N (3000), MS (3000), DIR (/var/tmp).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
rounds=${ROUNDS:-5}
n=${N:-3000}
ms=${MS:-3000}
dir=${DIR:-/var/tmp}
writelab=$build/writelab
writers=$build/tests/test_writers
shim=$build/libwritelab-run.so
[ -x "$writelab" ] && [ -x "$writers" ] && [ -f "$shim" ] ||
  { echo "run_overhead: build first (scripts/build.sh -DWRITELAB_BUILD_TESTS=ON)" >&2; exit 2; }
work=$(mktemp -d "$dir/writelab-run-overhead.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo 'void writelab_bench_nothing(void) {}' >"$work/empty.c"
cc -shared -fPIC -O2 "$work/empty.c" -o "$work/libempty.so"
loop="for i in \$(seq $n); do /bin/true; done"

# seconds CMD...: wall time of CMD, in seconds.
seconds() {
  local t0 t1
  t0=$(date +%s%N)
  "$@" >/dev/null 2>&1
  t1=$(date +%s%N)
  echo "scale=4; ($t1 - $t0) / 1000000000" | bc
}
spawns() {  # CONFIG
  case $1 in
    plain) seconds bash -c "$loop" ;;
    empty) seconds env LD_PRELOAD="$work/libempty.so" bash -c "$loop" ;;
    shim) seconds env LD_PRELOAD="$shim" WRITELAB_RUN=window-drop,8388608,8388608 bash -c "$loop" ;;
    run) seconds "$writelab" run --no-history --strategy window-drop -- bash -c "$loop" ;;
  esac
}
writes() {  # CONFIG: writes per second of two threads at random offsets
  local out
  if [ "$1" = plain ]; then
    out=$("$writers" random-pair "$work/rand" 64 "$ms")
  else
    out=$("$writelab" run --no-history --strategy window-drop -- "$writers" random-pair \
      "$work/rand" 64 "$ms" 2>/dev/null)
  fi
  echo "scale=1; ${out#writes } * 1000 / $ms" | bc
}
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

declare -A t w
configs=(plain empty shim run)
for ((r = 0; r < rounds; ++r)); do
  for ((k = 0; k < ${#configs[@]}; ++k)); do
    c=${configs[$(((k + r) % ${#configs[@]}))]}
    t[$c]+="$(spawns "$c") "
  done
  for c in plain run; do w[$c]+="$(writes "$c") "; done
done

echo "spawns: $n x /bin/true from a shell, seconds per round (median of $rounds rounds)"
declare -A ratio
for c in "${configs[@]}"; do
  read -ra plain <<<"${t[plain]}"
  read -ra this <<<"${t[$c]}"
  ratio[$c]=""
  for ((r = 0; r < rounds; ++r)); do
    ratio[$c]+="$(echo "scale=3; ${this[$r]} / ${plain[$r]}" | bc) "
  done
  printf '  %-6s %6s s   each round / plain: %s (median %s)\n' "$c" "$(median <<<"${t[$c]}")" \
    "${ratio[$c]}" "$(median <<<"${ratio[$c]}")"
done
echo "  goal: run / plain <= 1.10; the floor (empty / plain) is what any preload costs here"
echo "random 4 KiB pwrite, two threads, one descriptor: writes/s (median of $rounds rounds)"
read -ra wp <<<"${w[plain]}"
read -ra wr <<<"${w[run]}"
rr=""
for ((r = 0; r < rounds; ++r)); do rr+="$(echo "scale=3; ${wp[$r]} / ${wr[$r]}" | bc) "; done
printf '  plain %s/s   run %s/s   plain / run each round: %s (median %s; goal <= 1.10)\n' \
  "$(median <<<"${w[plain]}")" "$(median <<<"${w[run]}")" "$rr" "$(median <<<"$rr")"
