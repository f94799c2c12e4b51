#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# writelab stride against fio on the same io_uring job: 4 KiB O_DIRECT writes
# at a step of 8 sectors (contiguous: the block layer can merge) and 512
# sectors (256 KiB apart: nothing to merge), queue depth 32, submitted in
# batches of 32 (fio: --iodepth_batch_submit=32 --iodepth_batch_complete_min=1
# --iodepth_batch_complete_max=32: it reaps what has completed, up to 32, and
# submits the refills together, as writelab does; without the max, fio reaps
# one completion at a time and each refill goes out alone, with almost no
# merges),
# on the same raw loop device over a fully written file, under mq-deadline.
# The runs alternate for ROUNDS rounds (default 5), the order rotating each
# round; the script prints the median IOPS and device merges per tool and
# step, and writelab / fio. Goal (issue 12): at least 0.95x fio's IOPS at both
# steps, merges within 10%.
#
# Usage: bench/compare-fio-uring.sh [BUILD_DIR] (default build). Root: it
# makes a loop device of its own, and removes it at exit.
# Env: ROUNDS (5), SECONDS_PER_RUN (2), SIZE (1G), BATCH (32; writelab's --batch)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
rounds=${ROUNDS:-5}
secs=${SECONDS_PER_RUN:-2}
size=${SIZE:-1G}
batch=${BATCH:-32}
writelab=$build/writelab
for tool in fio jq losetup awk; do
  command -v "$tool" >/dev/null || { echo "compare-fio-uring: $tool is missing (scripts/setup.sh installs it)" >&2; exit 2; }
done
[ -x "$writelab" ] || { echo "compare-fio-uring: build first (scripts/build.sh)" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "compare-fio-uring: needs root (a loop device)" >&2; exit 2; }

work=$(mktemp -d /var/tmp/writelab-fio-uring.XXXXXX)
dev=""
cleanup() { [ -n "$dev" ] && losetup -d "$dev"; rm -rf "$work"; }
trap cleanup EXIT
# A fully written backing file, so that no write allocates.
dd if=/dev/zero of="$work/disk.img" bs=1M count="$(numfmt --from=iec "$size" | awk '{print $1/1048576}')" \
  conv=fsync status=none
dev=$(losetup -f --show --direct-io=on "$work/disk.img")
name=${dev#/dev/}
echo mq-deadline >"/sys/block/$name/queue/scheduler"

merges() { awk '{print $6}' "/sys/block/$name/stat"; }  # write merges

run_writelab() {  # STEP -> "IOPS MERGES"
  "$writelab" stride --device "$dev" --scheduler mq-deadline --engine io_uring --qd 32 --batch "$batch" --steps "$1" \
    --duration "${secs}s" --json "$work/wl.json" >/dev/null
  jq -r '.experiments[0].rows[0].figures as $f
         | ([$f[] | select(.key=="cycles") | .value.median][0]) as $ops
         | ([$f[] | select(.key=="elapsed_s") | .value.median][0]) as $s
         | ([$f[] | select(.key=="device_merges") | .value.median][0]) as $m
         | "\($ops / $s | floor) \($m) \($m / $ops)"' "$work/wl.json"
}

run_fio() {  # STEP -> "IOPS MERGES"
  local gap=$(($1 * 512 - 4096)) m0 m1
  m0=$(merges)
  fio --name=stride --filename="$dev" --rw="write:$gap" --bs=4k --direct=1 --ioengine=io_uring \
    --iodepth=32 --iodepth_batch_submit=32 --iodepth_batch_complete_min=1 \
    --iodepth_batch_complete_max=32 --time_based \
    --runtime="$secs" --output-format=json --output="$work/fio.json" >/dev/null
  m1=$(merges)
  jq -r --argjson m $((m1 - m0)) '.jobs[0].write | "\(.iops | floor) \($m) \($m / .total_ios)"' \
    "$work/fio.json"
}

median() { sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

for step in 8 512; do
  : >"$work/wl.$step" ; : >"$work/fio.$step"
  for ((r = 0; r < rounds; r++)); do
    if ((r % 2 == 0)); then
      run_writelab "$step" >>"$work/wl.$step"; run_fio "$step" >>"$work/fio.$step"
    else
      run_fio "$step" >>"$work/fio.$step"; run_writelab "$step" >>"$work/wl.$step"
    fi
  done
done

declare -A iops merged perwrite
printf "%-6s %-10s %12s %12s %14s\n" step tool IOPS "dev merges" "merges/write"
for step in 8 512; do
  for tool in wl fio; do
    iops[$tool.$step]=$(awk '{print $1}' "$work/$tool.$step" | median)
    merged[$tool.$step]=$(awk '{print $2}' "$work/$tool.$step" | median)
    perwrite[$tool.$step]=$(awk '{print $3}' "$work/$tool.$step" | median)
    printf "%-6s %-10s %12.0f %12.0f %14.3f\n" "$step" "$([ $tool = wl ] && echo writelab || echo fio)" \
      "${iops[$tool.$step]}" "${merged[$tool.$step]}" "${perwrite[$tool.$step]}"
  done
done
for step in 8 512; do
  awk -v s="$step" -v a="${iops[wl.$step]}" -v b="${iops[fio.$step]}" -v ma="${perwrite[wl.$step]}" \
    -v mb="${perwrite[fio.$step]}" \
    'BEGIN {printf "step %s: writelab/fio IOPS %.2f; merges per write %.3f vs %.3f\n", s, a / b, ma, mb}'
done
