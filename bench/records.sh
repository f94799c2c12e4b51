#!/usr/bin/env bash
# The performance goals of `writelab records` (issue 4), measured, not assumed:
#   1. library >= fwrite_unlocked and >= 4 x write, lines/s, default corpus
#      (8 MiB generated, C source line lengths), --total (default 256M);
#   2. group commit with 8 threads >= 4 x the commits/s of per-thread
#      fdatasync with 8 threads.
# Medians over ROUNDS rounds (the order rotates each round). Prints each
# figure and PASS/FAIL per goal; exits 1 if a goal is missed.
#
# Usage: bench/records.sh [BUILD_DIR] (default build)
# Env: DIR (a new directory under /var/tmp: a real file system, since group
# commit on tmpfs measures nothing), ROUNDS (3), TOTAL (256M), COMMIT_TIME (3s)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
writelab=$build/writelab
[ -x "$writelab" ] || { echo "records.sh: build first (scripts/build.sh)" >&2; exit 2; }
dir=${DIR:-$(mktemp -d /var/tmp/writelab-records-bench.XXXXXX)}
csv=$(mktemp /dev/shm/writelab-records-bench.XXXXXX)
trap 'rm -rf "$csv" "$dir"' EXIT

median() {  # ROW FIGURE
  awk -F, -v r="$1" -v f="$2" '$3==r && $6==f {print $9}' "$csv"
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

"$writelab" records --dir "$dir" --commit --threads 1,8 --commit-time "${COMMIT_TIME:-3s}" \
  --csv "$csv"
alone=$(median fdatasync/8 commits_s)
group=$(median group/8 commits_s)
echo
echo "== goals"
check "group commit / per-thread fdatasync, 8 threads" "$(awk -v a="$group" -v b="$alone" 'BEGIN{print a/b}')" 4 || status=1
exit $status
