#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The records experiment's io_uring method against its own minimal loop
# (issue 31): bench/bare_uring_records gathers the same input's lines into
# the same number of buffers of the same size and writes them through
# io_uring with submit-and-wait, no timing per write. Both write TOTAL bytes
# of whole lines, buffered, without a sync, into /dev/shm (tmpfs: no device,
# so the ratio is the tools' own cost), alternating for ROUNDS rounds (the
# order flipping each round); the script prints the median MB/s of each and
# writelab / loop per depth and buffer. Goal: at least 0.95.
#
# Usage: bench/records_uring_vs_bare.sh [BUILD_DIR] (default build).
# Env: ROUNDS (3), TOTAL (256M), QDS ("8 32"), BUFFERS ("64K 1M"),
# INPUT (default: this repository's C++ sources, 8 MiB of real lines)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
rounds=${ROUNDS:-3}
total=${TOTAL:-256M}
read -r -a qds <<<"${QDS:-8 32}"
read -r -a buffers <<<"${BUFFERS:-64K 1M}"
writelab=$build/writelab
bare=$build/bench/bare_uring_records
command -v jq >/dev/null || { echo "records_uring_vs_bare: jq is missing" >&2; exit 2; }
[ -x "$writelab" ] && [ -x "$bare" ] || { echo "records_uring_vs_bare: build first (cmake --build build --target benchmarks writelab_cli)" >&2; exit 2; }

work=$(mktemp -d /dev/shm/writelab-records-bare.XXXXXX)
trap 'rm -rf "$work"' EXIT
input=${INPUT:-$work/input}
if [ -z "${INPUT:-}" ]; then
  find src include tests -name '*.cc' -o -name '*.h' | sort | xargs cat | head -c 8M >"$input"
fi
bytes=$(numfmt --from=iec "$total")

run_writelab() {  # QD BUFFER -> MB/s
  "$writelab" records --dir "$work" --input "$input" --method io_uring --sync none --no-verify \
    --total "$total" --qd "$1" --buffer "$2" --rounds 1 --no-history --json "$work/wl.json" \
    >/dev/null 2>&1
  jq -r '[.experiments[0].rows[0].figures[] | select(.key=="mb_s") | .value.median][0]' "$work/wl.json"
}
run_bare() {  # QD BUFFER -> MB/s
  "$bare" "$input" "$work/bare.out" "$bytes" "$1" "$(numfmt --from=iec "$2")" | awk '{print $1}'
  rm -f "$work/bare.out"
}
median() { sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

echo "records --method io_uring vs the minimal loop, $total of whole lines to tmpfs, median of $rounds rounds:"
printf "%-5s %-7s %14s %12s %7s\n" qd buffer "writelab MB/s" "loop MB/s" ratio
worst=9
for qd in "${qds[@]}"; do
  for buf in "${buffers[@]}"; do
    : >"$work/wl" && : >"$work/bare"
    for ((r = 0; r < rounds; r++)); do
      if ((r % 2 == 0)); then
        run_writelab "$qd" "$buf" >>"$work/wl"
        run_bare "$qd" "$buf" >>"$work/bare"
      else
        run_bare "$qd" "$buf" >>"$work/bare"
        run_writelab "$qd" "$buf" >>"$work/wl"
      fi
    done
    wl=$(median <"$work/wl")
    bl=$(median <"$work/bare")
    ratio=$(awk -v a="$wl" -v b="$bl" 'BEGIN {printf "%.2f", a / b}')
    worst=$(awk -v a="$ratio" -v w="$worst" 'BEGIN {print (a < w) ? a : w}')
    printf "%-5s %-7s %14.0f %12.0f %7s\n" "$qd" "$buf" "$wl" "$bl" "$ratio"
  done
done
echo "lowest ratio: $worst (goal: at least 0.95)"
