#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What --explain costs: stride (4 KiB O_DIRECT writes through io_uring at
# queue depth 32, on a raw loop device: every request passes the block
# tracepoints, every io_uring_enter the system-call ones) and stream
# (buffered 8 MiB writes, plain and dontcache: every write is a timed call)
# run with and without --explain, alternating, the order rotating each round.
# Prints the median throughput of each and the ratio with / without.
# Goal (issue 14): at least 0.95x.
#
# Usage: bench/explain_overhead.sh [BUILD_DIR] (default build). Root.
# Env: ROUNDS (5), KINDS ("stride stream"), STRIDE_SECONDS (2), STREAM_SIZE (1G),
#      DIR (/var/tmp: stream's files)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
rounds=${ROUNDS:-5}
secs=${STRIDE_SECONDS:-2}
size=${STREAM_SIZE:-1G}
dir=${DIR:-/var/tmp}
read -r -a kinds <<<"${KINDS:-stride stream}"
writelab=$build/writelab
command -v jq >/dev/null || { echo "explain_overhead: jq is missing (scripts/setup.sh installs it)" >&2; exit 2; }
[ -x "$writelab" ] || { echo "explain_overhead: build first (scripts/build.sh)" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "explain_overhead: needs root (BPF, a loop device)" >&2; exit 2; }
work=$(mktemp -d "$dir/writelab-explain-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

# run KIND VARIANT ROUND: one run; appends "KIND VARIANT ROW MB/s" lines.
run() {
  local kind=$1 variant=$2 round=$3 flag=()
  [ "$variant" = explain ] && flag=(--explain)
  local json=$work/$kind-$variant-$round.json
  if [ "$kind" = stride ]; then
    "$writelab" stride --testbed raw --testbed-size 1G --scratch "$work" --steps 8 \
      --duration "$secs" --engine io_uring --qd 32 "${flag[@]}" --json "$json" >/dev/null
  else
    "$writelab" stream --dir "$work" --size "$size" --repeat 1 --strategy plain,dontcache \
      --no-probe "${flag[@]}" --json "$json" >/dev/null
  fi
  jq -r --arg k "$kind" --arg v "$variant" '.experiments[0].rows[] | select(.status == "ok") |
    "\($k) \($v) \(.name) \(.figures[] | select(.key == "mb_s") | .value.median)"' "$json" \
    >>"$work/results"
}

for ((r = 0; r < rounds; r++)); do
  for kind in "${kinds[@]}"; do
    if ((r % 2 == 0)); then order=(plain explain); else order=(explain plain); fi
    for v in "${order[@]}"; do run "$kind" "$v" "$r"; done
  done
done

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
echo "explain overhead: median MB/s of $rounds rounds, with and without --explain"
printf "%-8s %-10s %12s %22s %12s %22s %8s\n" experiment row without "(min-max)" with "(min-max)" ratio
status=0
while read -r kind row; do
  without=$(awk -v k="$kind" -v r="$row" '$1 == k && $2 == "plain" && $3 == r {print $4}' "$work/results" | median)
  with=$(awk -v k="$kind" -v r="$row" '$1 == k && $2 == "explain" && $3 == r {print $4}' "$work/results" | median)
  spread() { awk -v k="$kind" -v v="$1" -v r="$row" '$1 == k && $2 == v && $3 == r {print $4}' \
    "$work/results" | sort -g | awk 'NR == 1 {lo = $1} {hi = $1} END {printf "(%.0f-%.0f)", lo, hi}'; }
  ratio=$(awk -v a="$with" -v b="$without" 'BEGIN {printf "%.3f", a / b}')
  printf "%-8s %-10s %12.1f %22s %12.1f %22s %8s\n" "$kind" "$row" "$without" "$(spread plain)" \
    "$with" "$(spread explain)" "$ratio"
  awk -v x="$ratio" 'BEGIN {exit !(x < 0.95)}' && status=1
done < <(awk '{print $1, $3}' "$work/results" | sort -u)
[ $status -eq 0 ] && echo "PASS: every ratio at least 0.95" || echo "FAIL: a ratio under 0.95"
exit $status
