#!/bin/bash
# SPDX-License-Identifier: MIT
# Issue 46's test on real runs, as a benchmark (it takes minutes, so the
# test suite checks the same on made-up runs: src/history/changes_test.cc).
# fsync beside a stream background on an ext4 test bed, 12 runs with the
# test bed's dirty limit at 256M, then 12 at 64M: `history changes` should
# find the change in the worst fdatasync at the 13th run and name the test
# bed; and 24 runs all at 256M (A/A) should show no change. Every figure's
# changes are printed (20 calls a run: no p99).
# Root. Usage: bench/history_real_changes.sh [WRITELAB] [RUNS_EACH]
set -euo pipefail
wl=${1:-build/writelab}
each=${2:-12}
work=$(mktemp -d /var/tmp/wl-changes.XXXXXX)
trap 'rm -rf "$work"' EXIT
run() {  # history, test bed
  "$wl" fsync --testbed "$2" --testbed-size 2G --sync fdatasync --background stream \
    --bg-size 1G --bg-warmup 2s --count 20 --interval 50ms --history "$1" >/dev/null
}
for i in $(seq "$each"); do run "$work/step.sqlite" ext4:dirty=256M; done
for i in $(seq "$each"); do run "$work/step.sqlite" ext4:dirty=64M; done
for i in $(seq $((each * 2))); do run "$work/aa.sqlite" ext4:dirty=256M; done
for h in step aa; do
  echo "== $h: $((each * 2)) runs"
  "$wl" history changes --history "$work/$h.sqlite" --experiment fsync
done
