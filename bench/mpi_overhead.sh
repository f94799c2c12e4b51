#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What running under MPI costs one rank (docs/mpi.md): the same stream run,
# on a local directory, without mpirun and as the one rank of
# `mpirun -n 1`, alternating for ROUNDS rounds (default 5) with the order
# swapped every round (on a VM whoever runs second gets freed memory
# faster). Per strategy it prints the median MB/s of each and their ratio;
# the goal is a ratio within 5% of 1. Under MPI the barriers and the
# histogram merge are outside the timed part, so the ratio should be noise.
#
# The MPI figure is rank 0's own row (experiments[1]): the same clock as
# the plain run's, from its first write to its final fsync.
#
# Usage: bench/mpi_overhead.sh [BUILD_DIR] (default build)
# Env: ROUNDS (5), SIZE (256M), STRATEGIES (window-drop,dontcache,direct),
#      DIR (a new directory under /var/tmp)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
rounds=${ROUNDS:-5}
size=${SIZE:-256M}
strategies=${STRATEGIES:-window-drop,dontcache,direct}
writelab=$build/writelab
for tool in mpirun jq awk; do
  command -v "$tool" >/dev/null || { echo "mpi_overhead: $tool is missing (scripts/setup.sh installs it)" >&2; exit 2; }
done
[ -x "$writelab" ] || { echo "mpi_overhead: build first (scripts/build.sh)" >&2; exit 2; }
dir=${DIR:-$(mktemp -d /var/tmp/writelab-mpi-overhead.XXXXXX)}
out=$(mktemp -d /tmp/writelab-mpi-overhead-out.XXXXXX)
trap 'rm -rf "$dir" "$out"' EXIT

run() {  # run MODE ROUND: one stream run, its JSON in $out/MODE-ROUND.json
  local args=(stream --dir "$dir" --size "$size" --repeat 1 --strategy "$strategies" --no-probe
              --json "$out/$1-$2.json")
  if [ "$1" = mpi ]; then
    mpirun --allow-run-as-root -n 1 "$writelab" "${args[@]}" >/dev/null
  else
    "$writelab" "${args[@]}" >/dev/null
  fi
}

for ((r = 1; r <= rounds; r++)); do
  if ((r % 2)); then run plain "$r"; run mpi "$r"; else run mpi "$r"; run plain "$r"; fi
done

# A run's MB/s per strategy: the plain run's only result, or rank 0's own
# under MPI (the aggregate of one rank is the same figure, counted IOR's way).
mbs() {  # mbs MODE STRATEGY -> one median per round, a line each
  local index=0
  [ "$1" = mpi ] && index=1
  for f in "$out/$1"-*.json; do
    jq -r --arg s "$2" --argjson i "$index" \
      '.experiments[$i].rows[] | select(.name == $s) | (.figures[] | select(.key == "mb_s") | .value.median) // empty' "$f"
  done
}
median() { sort -g | awk '{v[NR] = $1} END {if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2)}'; }

echo "stream --size $size, $rounds rounds, order swapped each round; MB/s, median of the rounds"
printf '%-12s %12s %12s %8s\n' strategy "no MPI" "mpirun -n 1" ratio
status=0
IFS=, read -ra list <<<"$strategies"
for s in "${list[@]}"; do
  a=$(mbs plain "$s" | median)
  b=$(mbs mpi "$s" | median)
  if [ -z "$a" ] || [ -z "$b" ]; then
    printf '%-12s %12s %12s %8s\n' "$s" "${a:-n/a}" "${b:-n/a}" "n/a"
    continue
  fi
  ratio=$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.3f", b / a}')
  verdict=$(awk -v r="$ratio" 'BEGIN {print (r >= 0.95 && r <= 1.05) ? "within 5%" : "OUTSIDE 5%"}')
  [ "$verdict" = "within 5%" ] || status=1
  printf '%-12s %12.0f %12.0f %8s  %s\n' "$s" "$a" "$b" "$ratio" "$verdict"
done
exit "$status"
