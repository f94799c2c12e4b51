#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What running under MPI costs one rank (docs/mpi.md): the same stream run,
# on a local directory, three ways per round, in an order that rotates every
# round (on a VM whoever runs first pays for memory the others find ready;
# with ROUNDS a multiple of 3 each way runs first, second and third equally):
#   plain   writelab without mpirun
#   mpi     the one rank of `mpirun -n 1 --bind-to none` (mpirun binds a rank
#           to a core by default, which changes buffered throughput by itself:
#           BIND=core measures that instead)
#   again   writelab without mpirun once more: the control. plain against
#           again is the same run twice, so its ratio is this machine's noise.
# Per strategy it prints the median MB/s of each over the rounds, the ratio
# mpi/plain and the control's again/plain. The goal is mpi/plain within 5%
# of 1; where the control itself strays further than that, the machine is too
# noisy for a 5% verdict and the line says so instead of passing or failing.
#
# The MPI figure is rank 0's own row (experiments[1]): the same clock as
# the plain run's, from its first write to its final fsync.
#
# Usage: bench/mpi_overhead.sh [BUILD_DIR] (default build)
# Env: ROUNDS (6), SIZE (1G), STRATEGIES (window-drop,dontcache,direct),
#      REPEAT (1: stream's --repeat in each run, whose median is the run's
#      figure), BIND (none), DIR (a new directory under /var/tmp)
# Exit: 0 every strategy within 5% or too noisy to tell, 1 one outside,
#       2 a tool or the build is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
rounds=${ROUNDS:-6}
size=${SIZE:-1G}
repeat=${REPEAT:-1}
strategies=${STRATEGIES:-window-drop,dontcache,direct}
bind=${BIND:-none}
writelab=$build/writelab
for tool in mpirun jq awk; do
  command -v "$tool" >/dev/null || { echo "mpi_overhead: $tool is missing (scripts/setup.sh installs it)" >&2; exit 2; }
done
[ -x "$writelab" ] || { echo "mpi_overhead: build first (scripts/build.sh)" >&2; exit 2; }
dir=${DIR:-$(mktemp -d /var/tmp/writelab-mpi-overhead.XXXXXX)}
out=$(mktemp -d /tmp/writelab-mpi-overhead-out.XXXXXX)
trap 'rm -rf "$dir" "$out"' EXIT

run() {  # run MODE ROUND: one stream run, its JSON in $out/MODE-ROUND.json
  local args=(stream --dir "$dir" --size "$size" --repeat "$repeat" --strategy "$strategies" --no-probe
              --json "$out/$1-$2.json")
  if [ "$1" = mpi ]; then
    mpirun --allow-run-as-root --bind-to "$bind" -n 1 "$writelab" "${args[@]}" >/dev/null
  else
    "$writelab" "${args[@]}" >/dev/null
  fi
}

modes=(plain mpi again)
for ((r = 0; r < rounds; r++)); do
  for ((k = 0; k < 3; k++)); do run "${modes[(r + k) % 3]}" "$r"; done
done

# A run's MB/s per strategy: the plain run's only result, or rank 0's own
# under MPI (the aggregate of one rank is the same figure, counted IOR's way).
mbs() {  # mbs MODE STRATEGY -> one figure per round, a line each
  local index=0
  [ "$1" = mpi ] && index=1
  for f in "$out/$1"-*.json; do
    jq -r --arg s "$2" --argjson i "$index" \
      '.experiments[$i].rows[] | select(.name == $s) | (.figures[] | select(.key == "mb_s") | .value.median) // empty' "$f"
  done
}
median() { sort -g | awk '{v[NR] = $1} END {if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2)}'; }
off() { awk -v r="$1" 'BEGIN {d = r - 1; if (d < 0) d = -d; print d}'; }  # |ratio - 1|

echo "stream --size $size, $rounds rounds, order rotating; MB/s, median of the rounds; mpirun --bind-to $bind"
printf '%-12s %9s %9s %9s %9s %14s\n' strategy "no MPI" "mpirun" "again" "mpi/plain" "again/plain"
status=0
IFS=, read -ra list <<<"$strategies"
for s in "${list[@]}"; do
  a=$(mbs plain "$s" | median)
  b=$(mbs mpi "$s" | median)
  c=$(mbs again "$s" | median)
  if [ -z "$a" ] || [ -z "$b" ] || [ -z "$c" ]; then
    printf '%-12s %9s %9s %9s %9s %14s\n' "$s" "${a:-n/a}" "${b:-n/a}" "${c:-n/a}" n/a n/a
    continue
  fi
  ratio=$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.3f", b / a}')
  control=$(awk -v a="$a" -v c="$c" 'BEGIN {printf "%.3f", c / a}')
  verdict=$(awk -v m="$(off "$ratio")" -v n="$(off "$control")" 'BEGIN {
    if (m <= 0.05) print "within 5%";
    else if (n > 0.05) printf "too noisy to tell: the control alone strays %.0f%%\n", n * 100;
    else print "OUTSIDE 5%" }')
  [ "${verdict:0:7}" = OUTSIDE ] && status=1
  printf '%-12s %9.0f %9.0f %9.0f %9s %14s  %s\n' "$s" "$a" "$b" "$c" "$ratio" "$control" "$verdict"
done
exit "$status"
