#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The performance goals of `writelab records` (issue 4), measured, not assumed:
#   1. library >= fwrite_unlocked and >= 4 x write, lines/s, default corpus
#      (8 MiB generated, C source line lengths), --total (default 256M);
#   2. group commit with 8 threads (issue 12, restated): the library's best
#      configuration (group-prealloc/8: group commit over zeros written
#      ahead) reaches >= 0.85 of its ceiling (8 / its own mean fdatasync
#      time) and >= 2 x the commits/s of fdatasync/8 (each thread pwrites its
#      record to the shared, growing file and fdatasyncs). Also printed, not
#      goals: group/8 (no zeros ahead), group-prealloc/8 over
#      fdatasync-prealloc/8 (batching alone), and the floor: the fraction of
#      the ceiling that bench/group_commit_floor reaches on this machine with
#      a sync that only sleeps as long, i.e. with the library's own wake-up
#      cost and no I/O.
# Medians over ROUNDS rounds (the order rotates each round). Prints each
# figure and PASS/FAIL per goal; exits 1 if a goal is missed.
#
# Usage: bench/records.sh [BUILD_DIR] (default build)
# Env: DIR (a new directory under /var/tmp: a real file system, since group
# commit on tmpfs measures nothing), ROUNDS (3), TOTAL (256M), COMMIT_TIME (2s),
# TESTBED (e.g. ext4: also run the commit rows on that test bed, as root;
# a loop device over a file, where a journal commit costs far more than an
# overwrite's flush)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
writelab=$build/writelab
[ -x "$writelab" ] && [ -x "$build/bench/group_commit_floor" ] || { echo "records.sh: build first (cmake --build build --target benchmarks writelab_cli)" >&2; exit 2; }
dir=${DIR:-$(mktemp -d /var/tmp/writelab-records-bench.XXXXXX)}
csv=$(mktemp /dev/shm/writelab-records-bench.XXXXXX)
trap 'rm -rf "$csv" "$dir"' EXIT

median() {  # ROW FIGURE (columns of docs/results.md's CSV: row 5, figure 8, median 11)
  local v
  v=$(awk -F, -v r="$1" -v f="$2" '$5==r && $8==f {print $11}' "$csv")
  [ -n "$v" ] || { echo "records.sh: no $2 for row $1 in the CSV" >&2; exit 2; }
  echo "$v"
}
check() {  # NAME VALUE GOAL
  awk -v n="$1" -v v="$2" -v g="$3" 'BEGIN {
    printf "%-45s %10.2f  (goal >= %s)  %s\n", n, v, g, (v >= g ? "PASS" : "FAIL"); exit !(v >= g) }'
}

"$writelab" records --dir "$dir" --rounds "${ROUNDS:-3}" --total "${TOTAL:-256M}" \
  --method write,fwrite,fwrite_unlocked,writev,gather,io_uring,library --csv "$csv"
write=$(median write lines_s)
unlocked=$(median fwrite_unlocked lines_s)
library=$(median library lines_s)
status=0
echo
echo "== goals"
check "library / fwrite_unlocked (lines/s)" "$(awk -v a="$library" -v b="$unlocked" 'BEGIN{print a/b}')" 1 || status=1
check "library / write (lines/s)" "$(awk -v a="$library" -v b="$write" 'BEGIN{print a/b}')" 4 || status=1

commit_goals() {  # LABEL
  alone=$(median fdatasync/8 commits_s)
  alone_pre=$(median fdatasync-prealloc/8 commits_s)
  group=$(median group/8 commits_s)
  group_pre=$(median group-prealloc/8 commits_s)
  ratio() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", a/b}'; }
  echo
  echo "== $1: commits/s, 8 threads: fdatasync $alone, fdatasync-prealloc $alone_pre, group $group, group-prealloc $group_pre"
  echo "   group/8 over fdatasync/8 (no zeros ahead): $(ratio "$group" "$alone")x"
  echo "   group-prealloc/8 over fdatasync-prealloc/8 (batching alone): $(ratio "$group_pre" "$alone_pre")x"
  check "$1: group-prealloc/8 / fdatasync/8" "$(ratio "$group_pre" "$alone")" 2 || status=1
  fraction=$(median group-prealloc/8 ceiling_fraction)
  check "$1: group-prealloc/8 of its ceiling" "$fraction" 0.85 || status=1
  sync_us=$(awk -v ms="$(median group-prealloc/8 sync_ms)" 'BEGIN{printf "%.1f", ms * 1000}')
  floor=$("$build/bench/group_commit_floor" 8 "$sync_us" 2 | cut -f5)
  echo "   floor: with a sync that only sleeps ${sync_us} us, 8 threads reach $floor of the ceiling here;"
  echo "   group-prealloc/8 reached $(ratio "$fraction" "$floor") of that floor"
}

"$writelab" records --dir "$dir" --commit --threads 1,8 --rounds "${ROUNDS:-3}" \
  --commit-time "${COMMIT_TIME:-2s}" --csv "$csv"
commit_goals "$dir"
if [ -n "${TESTBED:-}" ]; then
  "$writelab" records --commit --threads 1,8 --rounds "${ROUNDS:-3}" \
    --commit-time "${COMMIT_TIME:-2s}" --testbed "$TESTBED" --testbed-size 1G --csv "$csv"
  commit_goals "test bed $TESTBED"
fi
exit $status
