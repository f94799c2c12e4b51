#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What charging culprits costs (docs/explain.md, "Who made it wait"): a
# victim (4 KiB pwrite + fdatasync in a loop, tests/tools/truth_load.cc)
# runs plain or under `writelab explain`, and beside it a culprit outside
# the scope, `dd bs=1M conv=fsync` of MIB MiB into the same file system,
# whose every dirtied page and queued write the charging programs see.
# Plain and explain alternate, the order rotating each round. Prints the
# median of each: the culprit's MB/s (to durability) and the victim's
# fdatasync calls per second while dd ran, and their ratios (goal, issue 43:
# at least 0.95x).
#
# Usage: bench/blame_cost.sh [BUILD_DIR] (default build). Root.
# Env: ROUNDS (5), MIB (2048), DIR (/var/tmp)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
rounds=${ROUNDS:-5}
mib=${MIB:-2048}
dir=${DIR:-/var/tmp}
writelab=$build/writelab
victim=$build/tests/wl_truth
[ -x "$writelab" ] && [ -x "$victim" ] ||
  { echo "blame_cost: build first (scripts/build.sh -DWRITELAB_BUILD_TESTS=ON)" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "blame_cost: needs root (BPF)" >&2; exit 2; }
work=$(mktemp -d "$dir/writelab-blame-bench.XXXXXX")
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait; rm -rf "$work"' EXIT

calls() { echo $(($(stat -c %s "$work/v/fdatasync.dat" 2>/dev/null || echo 0) / 4096)); }

# one VARIANT: prints "MB/s calls/s" of dd and the victim while dd ran.
one() {
  local variant=$1 c0 c1 t0 t1
  rm -rf "$work/v" "$work/big" && mkdir "$work/v" && sync
  if [ "$variant" = explain ]; then
    "$writelab" explain --quiet -- "$victim" fdatasync 100000000 "$work/v" >/dev/null 2>&1 &
  else
    "$victim" fdatasync 100000000 "$work/v" >/dev/null 2>&1 &
  fi
  pid=$!
  sleep 1  # the victim has written: its file system is watched
  c0=$(calls) t0=$(date +%s%N)
  dd if=/dev/zero of="$work/big" bs=1M count="$mib" conv=fsync status=none
  t1=$(date +%s%N) c1=$(calls)
  kill -TERM "$pid"  # an async job ignores SIGINT; writelab takes TERM as an interrupt
  wait "$pid" 2>/dev/null || true
  pid=
  awk -v b="$mib" -v c=$((c1 - c0)) -v ns=$((t1 - t0)) \
    'BEGIN {printf "%.1f %.1f\n", b * 1048576 / 1e6 / (ns / 1e9), c / (ns / 1e9)}'
}

median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

declare -A mbps calls_s
for ((r = 0; r < rounds; r++)); do
  order=(plain explain)
  ((r % 2)) && order=(explain plain)
  for v in "${order[@]}"; do
    one "$v" >"$work/r"
    read -r m c <"$work/r"
    mbps[$v]+="$m " calls_s[$v]+="$c "
  done
done
med() { tr ' ' '\n' <<<"$1" | grep . | median; }
printf '%-26s %10s %10s %7s  %s\n' "" plain explain ratio "(each round: plain | explain)"
for what in mbps calls_s; do
  declare -n x=$what
  p=$(med "${x[plain]}") e=$(med "${x[explain]}")
  label="dd MB/s (culprit)"
  [ "$what" = calls_s ] && label="fdatasync/s (victim)"
  awk -v l="$label" -v p="$p" -v e="$e" -v a="${x[plain]}" -v b="${x[explain]}" \
    'BEGIN {printf "%-26s %10.1f %10.1f %6.3fx  (%s| %s)\n", l, p, e, e / p, a, b}'
  unset -n x
done
echo "median of $rounds rounds, alternating; goal: both at least 0.95x"
