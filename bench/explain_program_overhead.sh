#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What `writelab explain -- CMD` costs the program it watches: three programs
# (tests/tools/writers.cc) run plain and under explain, alternating, the
# order rotating each round:
#   osync   COUNT 4 KiB appends through O_DSYNC (a WAL's shape)
#   stream  MIB buffered 1 MiB writes (a backup's)
#   small   SMALL buffered 64-byte writes (the per-call cost)
# Prints each one's median time plain and under explain, the ratio of their
# speeds (goal, issue 29: at least 0.95x for osync and stream), and the cost
# per call in ns from small.
#
# Usage: bench/explain_program_overhead.sh [BUILD_DIR] (default build). Root.
# Env: ROUNDS (5), COUNT (20000), MIB (2048), SMALL (1000000), DIR (/var/tmp),
# MODES ("osync stream small")
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
rounds=${ROUNDS:-5}
count=${COUNT:-20000}
mib=${MIB:-2048}
small=${SMALL:-1000000}
dir=${DIR:-/var/tmp}
read -r -a modes <<<"${MODES:-osync stream small}"
writelab=$build/writelab
writers=$build/tests/test_writers
[ -x "$writelab" ] && [ -x "$writers" ] ||
  { echo "explain_program_overhead: build first (scripts/build.sh -DWRITELAB_BUILD_TESTS=ON)" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "explain_program_overhead: needs root (BPF)" >&2; exit 2; }
work=$(mktemp -d "$dir/writelab-explain-program-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

# time_ns VARIANT MODE ARG: runs the writer once; prints its own time in ns
# (from its start to its exit: writelab's start and stop are not the
# program's, and the program starts only once the tracer has it in scope).
time_ns() {
  local variant=$1 mode=$2 arg=$3 out
  local cmd=("$writers" "$mode" "$work/f" "$arg")
  sync
  if [ "$variant" = explain ]; then
    out=$(WRITERS_ELAPSED=1 "$writelab" explain --quiet -- "${cmd[@]}" 2>&1 >/dev/null)
  else
    out=$(WRITERS_ELAPSED=1 "${cmd[@]}" 2>&1)
  fi
  rm -f "$work/f"
  sed -n 's/^elapsed_ns //p' <<<"$out"
}

median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

declare -A times
for mode in "${modes[@]}"; do
  case $mode in osync) arg=$count ;; stream) arg=$mib ;; small) arg=$small ;; esac
  for ((r = 0; r < rounds; r++)); do
    order=(plain explain)
    ((r % 2)) && order=(explain plain)
    for v in "${order[@]}"; do times[$mode-$v]+="$(time_ns "$v" "$mode" "$arg") "; done
  done
done

printf '%-8s %12s %12s %8s  %s\n' program "plain s" "explain s" "speed" "(each run, s: plain | explain)"
for mode in "${modes[@]}"; do
  p=$(tr ' ' '\n' <<<"${times[$mode-plain]}" | grep . | median)
  e=$(tr ' ' '\n' <<<"${times[$mode-explain]}" | grep . | median)
  runs=$(awk -v a="${times[$mode-plain]}" -v b="${times[$mode-explain]}" 'BEGIN {
    n = split(a, x, " "); for (i = 1; i <= n; i++) s = s sprintf(" %.2f", x[i] / 1e9); s = s " |"
    n = split(b, y, " "); for (i = 1; i <= n; i++) s = s sprintf(" %.2f", y[i] / 1e9); print s }')
  awk -v m="$mode" -v p="$p" -v e="$e" -v r="$runs" 'BEGIN {printf "%-8s %12.3f %12.3f %7.3fx  (%s)\n", m, p / 1e9, e / 1e9, p / e, r}'
  [ "$mode" = small ] && awk -v p="$p" -v e="$e" -v n="$small" \
    'BEGIN {printf "per call: %.0f ns more under explain (%d calls)\n", (e - p) / n, n}'
done
echo "median of $rounds rounds, alternating; goal: osync and stream at least 0.95x"
