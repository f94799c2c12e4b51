#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# writelab against fio on the same job, and a bare pwrite loop as the
# ceiling: untimed, and with the same timing as writelab's (a clock read
# before and after each write, a histogram bucket counted: bare_pwrite
# timed), against which writelab's own cost per write has its goal.
#
# Job: sequential 4 KiB pwrite() to a new file on tmpfs, one thread, latency
# recorded for every write (writelab: histogram; fio: clat with percentiles),
# the same total bytes, into a new file without preallocation (fio: --fallocate=none,
# as writelab and the bare loop do). tmpfs keeps the device out of it, so what
# differs is each tool's own cost per write. Runs alternate for ROUNDS rounds
# (default 7), the order rotating each round (writelab fio bare, fio bare
# writelab, ...) since on a VM whoever runs after a big free gets its pages
# faster; the script prints the median of the per-round ratios: one run on a
# shared machine proves nothing.
#
# Usage: bench/compare-fio.sh [BUILD_DIR] (default build)
# Env: ROUNDS (7), SIZE (1G), DIR (a new directory under /dev/shm)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
rounds=${ROUNDS:-7}
size=${SIZE:-1G}
writelab=$build/writelab
bare=$build/bench/bare_pwrite
for tool in fio jq awk; do
  command -v "$tool" >/dev/null || { echo "compare-fio: $tool is missing (scripts/setup.sh installs it)" >&2; exit 2; }
done
[ -x "$writelab" ] && [ -x "$bare" ] || { echo "compare-fio: build first (cmake --build build --target benchmarks writelab_cli)" >&2; exit 2; }

dir=${DIR:-$(mktemp -d /dev/shm/writelab-compare.XXXXXX)}
trap 'rm -rf "$dir"' EXIT
bytes=$(numfmt --from=iec "$size")
count=$((bytes / 4096))
TIMEFORMAT=%U  # bash's time prints the child's user CPU seconds

run_writelab() {  # prints "IOPS USER_S"
  local u
  u=$({ time "$writelab" stream --dir "$dir" --strategy plain --block 4k --size "$size" \
        --repeat 1 --no-probe --csv "$dir/wl.csv" >/dev/null; } 2>&1)
  local mbs
  # CSV columns (docs/results.md): row 5, figure 8, median 11
  mbs=$(awk -F, '$5=="plain" && $8=="write_mb_s" {print $11}' "$dir/wl.csv")
  [ -n "$mbs" ] || { echo "compare-fio.sh: no write_mb_s for plain in the CSV" >&2; exit 2; }
  awk -v m="$mbs" -v u="$u" 'BEGIN {printf "%.0f %s\n", m * 1e6 / 4096, u}'
}

run_fio() {
  local u
  u=$({ time fio --name=compare --filename="$dir/fio.dat" --rw=write --bs=4k --size="$size" \
        --ioengine=psync --numjobs=1 --fallocate=none --lat_percentiles=1 --output-format=json \
        --output="$dir/fio.json" >/dev/null; } 2>&1)
  rm -f "$dir/fio.dat"
  echo "$(jq '.jobs[0].write.iops | floor' "$dir/fio.json") $u"
}

run_bare() {  # [timed]
  local u out
  u=$({ time "$bare" "$dir/bare.dat" 4096 "$count" "$@" >"$dir/bare.out"; } 2>&1)
  echo "$(cat "$dir/bare.out") $u"
}

median() { sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

echo "job: $size in 4 KiB pwrites ($count writes) to tmpfs ($dir), $rounds rounds"
printf "%-6s %10s %10s %10s %10s %7s %8s %10s %9s %9s\n" round writelab fio bare "bare-timed" \
  wl/fio wl/bare wl/b-timed "wl us/wr" "fio us/wr"
: >"$dir/ratios"
for r in $(seq 1 "$rounds"); do
  for k in 0 1 2 3; do
    case $(((r + k) % 4)) in
      0) read -r wl wl_u < <(run_writelab) ;;
      1) read -r fi fi_u < <(run_fio) ;;
      2) read -r ba ba_u < <(run_bare) ;;
      3) read -r bt bt_u < <(run_bare timed) ;;
    esac
  done
  awk -v r="$r" -v wl="$wl" -v fi="$fi" -v ba="$ba" -v bt="$bt" -v wu="$wl_u" -v fu="$fi_u" \
    -v n="$count" 'BEGIN {printf "%-6s %10d %10d %10d %10d %7.2f %8.2f %10.2f %9.3f %9.3f\n",
      r, wl, fi, ba, bt, wl/fi, wl/ba, wl/bt, wu*1e6/n, fu*1e6/n}' | tee -a "$dir/ratios"
done
echo "IOPS columns: writes per second in the write phase; us/wr: user-space CPU per write"
echo "(whole process, start-up included)."
echo "median writelab/fio IOPS:  $(awk '{print $6}' "$dir/ratios" | median)  (goal >= 1.2)"
echo "median writelab/bare IOPS: $(awk '{print $7}' "$dir/ratios" | median)  (the untimed loop: no goal)"
echo "median writelab/bare-timed IOPS: $(awk '{print $8}' "$dir/ratios" | median)  (goal >= 0.95)"
echo "median user CPU per write: writelab $(awk '{print $9}' "$dir/ratios" | median) us," \
  "fio $(awk '{print $10}' "$dir/ratios" | median) us"
