#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What `writelab explain` costs a program that syncs (docs/explain.md,
# "Who made it wait"; issue 43's goal: at least 0.95x): a victim's loop of
# COUNT x (4 KiB pwrite + fdatasync) in DIR (tests/tools/truth_load.cc),
# timed by its own wall clock (the loop alone, not explain's start), plain
# and under explain, and under a second build's explain when BASELINE
# names one, the order rotating each round. Prints each round's time per
# iteration and the medians with their ratios to plain. On a disk whose
# fdatasync takes milliseconds the cost hides in its noise; a fast device
# shows it (the docs' figures: ext4 on a loop device over a tmpfs file).
#
# Usage: bench/explain_victim_cost.sh [BUILD_DIR] (default build). Root.
# Env: ROUNDS (12: each order of three twice), COUNT (20000), DIR (/var/tmp),
# BASELINE (a build dir)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
rounds=${ROUNDS:-12}
count=${COUNT:-20000}
dir=${DIR:-/var/tmp}
baseline=${BASELINE:-}
victim=$(realpath "$build/tests/wl_truth")
for b in "$build" ${baseline:+"$baseline"}; do
  [ -x "$b/writelab" ] ||
    { echo "explain_victim_cost: no $b/writelab (scripts/build.sh)" >&2; exit 2; }
done
[ -x "$victim" ] ||
  { echo "explain_victim_cost: no $victim (build with -DWRITELAB_BUILD_TESTS=ON)" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "explain_victim_cost: needs root (BPF)" >&2; exit 2; }
work=$(mktemp -d "$dir/writelab-victim-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The loop's own time per iteration, in ns, printed by the shell around it.
loop="s=\$(date +%s%N); $victim fdatasync $count $work/v; e=\$(date +%s%N); \
echo \"loop \$(( (e - s) / $count ))\""

# one VARIANT: the loop's µs per iteration, plain or under a build's explain.
one() {
  rm -rf "$work/v" && mkdir "$work/v" && sync
  case $1 in
    plain) sh -c "$loop" ;;
    explain) "$build/writelab" explain --quiet --no-history -- sh -c "$loop" 2>/dev/null ;;
    baseline) "$baseline/writelab" explain --quiet --no-history -- sh -c "$loop" 2>/dev/null ;;
  esac | awk '/^loop / {printf "%.1f\n", $2 / 1000}'
}

variants=(plain explain)
[ -n "$baseline" ] && variants+=(baseline)
declare -A times
# Each round runs the variants in the next of their orders: with three,
# all six, so that each one runs after each other one as often (a plain
# rotation kept one order: the variant after plain ran 3 to 5 us an
# iteration slower in 4 of 5 runs, whichever build it was).
if [ ${#variants[@]} -eq 3 ]; then
  orders=("0 1 2" "1 2 0" "2 0 1" "0 2 1" "2 1 0" "1 0 2")
else
  orders=("0 1" "1 0")
fi
for ((r = 0; r < rounds; r++)); do
  order=()
  for i in ${orders[r % ${#orders[@]}]}; do order+=("${variants[i]}"); done
  for v in "${order[@]}"; do
    t=$(one "$v")
    [ -n "$t" ] || { echo "explain_victim_cost: the $v loop printed no time" >&2; exit 1; }
    echo "round $r $v: $t us an iteration"
    times[$v]+="$t "
  done
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
p=$(median <<<"${times[plain]}")
for v in "${variants[@]}"; do
  m=$(median <<<"${times[$v]}")
  awk -v v="$v" -v m="$m" -v p="$p" \
    'BEGIN {printf "median %-9s %8.1f us an iteration, %.3fx the speed of plain\n", v, m, p / m}'
done
echo "$rounds rounds of $count iterations in $dir, in every order in turn; goal: explain at least 0.95x"
