#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What `writelab top` costs (docs/top.md, "Cost"): fio writes 4 KiB pieces
# over a cached file at RATE writes/s (psync, one job) for SECONDS, plain and
# under `writelab top`, alternating, the order rotating each round. Under
# top it reads writelab's CPU time (/proc/PID/stat) and its BPF programs'
# run time (`bpftool prog show`, run_time_ns, with kernel.bpf_stats_enabled
# set for the run and put back after) over fio's run. Prints per round and
# the median: fio's writes/s plain and under top, their ratio, and top's
# cost in percent of one CPU, user space and BPF apart (goal, issue 43: at
# most 3% of one CPU at 100k writes/s).
#
# Usage: bench/top_cost.sh [BUILD_DIR] (default build). Root.
# Env: ROUNDS (5), RATE (100000), SECONDS_EACH (10), DIR (/var/tmp)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
rounds=${ROUNDS:-5}
rate=${RATE:-100000}
secs=${SECONDS_EACH:-10}
dir=${DIR:-/var/tmp}
writelab=$build/writelab
[ -x "$writelab" ] || { echo "top_cost: build first (scripts/build.sh)" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "top_cost: needs root (BPF)" >&2; exit 2; }
command -v fio >/dev/null && command -v bpftool >/dev/null ||
  { echo "top_cost: needs fio and bpftool (apt-get install fio bpftool)" >&2; exit 2; }
work=$(mktemp -d "$dir/writelab-top-bench.XXXXXX")
stats=$(sysctl -n kernel.bpf_stats_enabled)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait; sysctl -qw kernel.bpf_stats_enabled="$stats"; rm -rf "$work"' EXIT
sysctl -qw kernel.bpf_stats_enabled=1
hz=$(getconf CLK_TCK)

# The ids of the BPF programs loaded now, one a line.
prog_ids() { bpftool prog show --json | python3 -c '
import json, sys
for p in json.load(sys.stdin): print(p["id"])'; }
# The run time (ns) of the programs whose ids are in file $1 (those top
# loaded: this bpftool cannot say which process holds a program).
bpf_ns() {
  bpftool prog show --json | python3 -c '
import json, sys
ids = set(int(x) for x in open(sys.argv[1]).read().split())
print(sum(p.get("run_time_ns", 0) for p in json.load(sys.stdin) if p["id"] in ids))' "$1"
}
cpu_ns() { awk -v hz="$hz" '{printf "%d\n", ($14 + $15) * 1e9 / hz}' "/proc/$1/stat"; }

# fio's writes per second.
fio_iops() {
  fio --name=top-cost --filename="$work/f" --size=256M --rw=write --bs=4k --ioengine=psync \
    --rate_iops="$rate" --time_based --runtime="$secs" --output-format=json 2>/dev/null |
    python3 -c 'import json, sys; print("%.0f" % json.load(sys.stdin)["jobs"][0]["write"]["iops"])'
}

one() {
  if [ "$1" = plain ]; then
    echo "$(fio_iops) 0 0"  # writes/s, top's user space and BPF
    return
  fi
  prog_ids >"$work/before"
  "$writelab" top --quiet --no-history --duration $((secs + 30))s >/dev/null 2>&1 &
  pid=$!
  sleep 3  # loaded and attached
  prog_ids | grep -vxFf "$work/before" >"$work/ids" || true
  local c0 b0 c1 b1 iops
  c0=$(cpu_ns "$pid") b0=$(bpf_ns "$work/ids")
  iops=$(fio_iops)
  c1=$(cpu_ns "$pid") b1=$(bpf_ns "$work/ids")
  kill -INT "$pid"
  wait "$pid" 2>/dev/null || true
  pid=
  awk -v i="$iops" -v c=$((c1 - c0)) -v b=$((b1 - b0)) -v s="$secs" \
    'BEGIN {printf "%s %.2f %.2f\n", i, 100 * c / (s * 1e9), 100 * b / (s * 1e9)}'
}

fio --name=prep --filename="$work/f" --size=256M --rw=write --bs=1M --output=/dev/null
median() { sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
: >"$work/plain" && : >"$work/top"
for ((r = 0; r < rounds; r++)); do
  order=(plain top)
  ((r % 2)) && order=(top plain)
  for v in "${order[@]}"; do
    read -r iops user bpf < <(one "$v")
    echo "round $r $v: $iops writes/s; top's CPU: user space $user%, BPF $bpf% of one CPU"
    echo "$iops $user $bpf" >>"$work/$v"
  done
done
p=$(cut -d' ' -f1 "$work/plain" | median)
t=$(cut -d' ' -f1 "$work/top" | median)
u=$(cut -d' ' -f2 "$work/top" | median)
b=$(cut -d' ' -f3 "$work/top" | median)
awk -v p="$p" -v t="$t" -v u="$u" -v b="$b" -v r="$rate" 'BEGIN {
  printf "median: plain %d writes/s, under top %d (%.3fx); top at %d writes/s: user space %.2f%%, BPF %.2f%% of one CPU (bpf_stats adds two clock reads to every run)\n",
    p, t, t / p, r, u, b }'
