#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Instructions per 4 KiB write (issue 47): the stream experiment's plain
# row (writelab stream --strategy plain --block 4k, as compare-fio.sh runs
# it) against bench/bare_pwrite, counted by callgrind: user-space
# instructions, which do not vary with the machine's load (the kernel's
# share of a write, the same for both, is not counted). Each is counted
# inside its write loop only (writelab: the stream trial's WriteLoop; the
# bare loop: main, whose open and buffer are a few thousand instructions
# against millions), then divided by its writes. Then the functions the
# writelab loop spends its instructions in, per write, self cost: the
# overhead line by line (docs/performance.md explains each).
#
# Usage: bench/per_write.sh [BUILD_DIR] (default build). Env: SIZE (64M).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
size=${SIZE:-64M}
writelab=$build/writelab
bare=$build/bench/bare_pwrite
for tool in valgrind callgrind_annotate awk; do
  command -v "$tool" >/dev/null || { echo "per_write: $tool is missing (apt-get install valgrind)" >&2; exit 2; }
done
[ -x "$writelab" ] && [ -x "$bare" ] || { echo "per_write: build first (cmake --build build --target benchmarks writelab_cli)" >&2; exit 2; }
dir=$(mktemp -d /dev/shm/writelab-per-write.XXXXXX)
trap 'rm -rf "$dir"' EXIT
count=$(($(numfmt --from=iec "$size") / 4096))

# The instructions callgrind collected (its "totals:" line).
total() { awk '/^totals:/ {print $2}' "$1"; }

valgrind --tool=callgrind --callgrind-out-file="$dir/bare.cg" --collect-atstart=no \
  --toggle-collect=main "$bare" "$dir/bare.dat" 4096 "$count" >/dev/null 2>"$dir/bare.log"
valgrind --tool=callgrind --callgrind-out-file="$dir/timed.cg" --collect-atstart=no \
  --toggle-collect=main "$bare" "$dir/bare.dat" 4096 "$count" timed >/dev/null 2>"$dir/timed.log"
valgrind --tool=callgrind --callgrind-out-file="$dir/wl.cg" --collect-atstart=no \
  --toggle-collect='*::Measure(writelab::StreamStrategy*' "$writelab" stream --dir "$dir" --strategy plain --block 4k \
  --size "$size" --repeat 1 --no-probe --csv "$dir/wl.csv" >/dev/null 2>"$dir/wl.log"
# CSV columns (docs/results.md): row 5, figure 8, median 11
writes=$(awk -F, '$5 == "plain" && $8 == "calls" {print $11}' "$dir/wl.csv")
[ -n "$writes" ] || { echo "per_write: no calls figure for plain in the CSV" >&2; exit 2; }
bare_ir=$(total "$dir/bare.cg")
timed_ir=$(total "$dir/timed.cg")
wl_ir=$(total "$dir/wl.cg")
echo "user-space instructions per 4 KiB pwrite on tmpfs (callgrind, $size):"
awk -v b="$bare_ir" -v t="$timed_ir" -v n="$count" -v w="$wl_ir" -v m="$writes" 'BEGIN {
  printf "bare loop: %.1f per write (%d writes)\n", b / n, n
  printf "bare loop, timed: %.1f per write (two clock reads and a bucket)\n", t / n
  printf "writelab:  %.1f per write (%d writes)\n", w / m, m
  printf "overhead:  %.1f instructions per write over the timed loop\n", w / m - t / n }'
echo "where writelab's go, per write (self, functions of at least 0.5 per write):"
callgrind_annotate --inclusive=no --auto=no --threshold=100 "$dir/wl.cg" 2>/dev/null |
  awk -v m="$writes" '$1 ~ /^[0-9,]+$/ && $2 ~ /^\(/ {
    ir = $1; gsub(",", "", ir); name = $0
    sub(/^[^)]*\) */, "", name)
    if (ir / m >= 0.5) printf "%8.1f  %s\n", ir / m, name }' | head -30
