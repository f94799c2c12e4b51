#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A streamer beside a bystander's fsync (issue 44): a copy of SIZE from
# tmpfs to DIR, by dd and by cp, run as users run it and under writelab's
# strategies, with `writelab run --measure`'s bystander (a 4 KiB pwrite +
# fdatasync every 100 ms from the start of the copy until its pages are
# written back), ROUNDS rounds, the order rotating each round. Prints, per
# row, the medians of: MB/s until durable (bytes over the copy's time plus
# the time until none of its pages was dirty or under writeback), the page
# cache the copy left, and the bystander's p99 and worst fdatasync; and
# the bystander's p99 alone (beside `sleep`).
#
# Rows: plain; oflag-direct (dd oflag=direct, the user's own O_DIRECT: cp
# has none, so its row is dd's); direct (writelab run --strategy direct:
# the copy's writes through the shim's O_DIRECT descriptor, cp's too);
# memcg:256M (the copy in a 256 MiB memory cgroup); drop-behind (nocache's
# way); window-drop; dontcache; paced at each of TARGETS.
#
# Usage: bench/calm.sh [BUILD_DIR] (default build). Root (cgroups, sync).
# Env: ROUNDS (5), SIZE in MiB (6144), DIR (/var/tmp), TARGETS ("10 20 50
# 100"), TOOLS ("dd cp"), ROWS (some of the rows, e.g. "direct paced:5ms":
# all by default). `.ci/run` does not run it: on this machine it
# takes about an hour at the defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
rounds=${ROUNDS:-5}
mib=${SIZE:-6144}
dir=${DIR:-/var/tmp}
targets=${TARGETS:-10 20 50 100}
tools=${TOOLS:-dd cp}
writelab=$build/writelab
[ -x "$writelab" ] || { echo "calm: build first (scripts/build.sh)" >&2; exit 2; }
command -v jq >/dev/null || { echo "calm: needs jq" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "calm: run as root (memcg:256M makes a cgroup)" >&2; exit 2; }
work=$(mktemp -d "$dir/writelab-calm.XXXXXX")
src=$(mktemp -d /dev/shm/writelab-calm.XXXXXX)
trap 'rm -rf "$work" "$src"' EXIT
head -c "${mib}M" /dev/urandom >"$src/src"

# fig JSON ROW KEY: a figure's median in the document's "run" result.
fig() {
  jq -r --arg r "$2" --arg k "$3" \
    '[.experiments[] | select(.name == "run") | .rows[] | select(.name == $r) | .figures[] |
      select(.key == $k) | .value.median][0] // empty' "$1"
}

declare -A durable cached p99 worst failed
record() {  # CONFIG JSON ROW
  local status oom
  status=$(fig "$2" "$3" exit_status)
  oom=$(fig "$2" "$3" oom_kills)
  # A copy that failed or was OOM-killed is counted, and its figures kept.
  if [ "${status:-1}" != 0 ] || [ "${oom:-0}" != 0 ]; then failed[$1]=$((${failed[$1]:-0} + 1)); fi
  durable[$1]+="$(fig "$2" "$3" durable_mb_s) "
  cached[$1]+="$(fig "$2" "$3" cached_end) "
  local v
  v=$(fig "$2" "$3" probe_p99_ms)
  [ -n "$v" ] || v=$(fig "$2" "$3" probe_max_ms)  # too few calls for a p99: the worst
  p99[$1]+="$v "
  worst[$1]+="$(fig "$2" "$3" probe_max_ms) "
}

one() {  # CONFIG: idle, or TOOL/ROW
  local json=$work/doc.json cfg=$1 tool=${1%%/*} row=${1#*/} strategy cmd
  sync
  if [ "$cfg" = idle ]; then
    "$writelab" run --strategy plain --measure --probe-dir "$work" --json "$json" -- sleep 5 \
      2>/dev/null
    record idle "$json" plain
    return
  fi
  cmd=(dd if="$src/src" of="$work/F" bs=1M status=none)
  [ "$tool" = cp ] && cmd=(cp "$src/src" "$work/F")
  strategy=$row
  case $row in
    oflag-direct) strategy=plain cmd=(dd if="$src/src" of="$work/F" bs=1M oflag=direct status=none) ;;
  esac
  # memcg and --measure: plain's and memcg's rows wait for their writeback too.
  "$writelab" run --strategy "$strategy" --measure --probe-dir "$work" --json "$json" \
    -- "${cmd[@]}" >/dev/null 2>&1 || true
  record "$cfg" "$json" "$strategy"
  rm -f "$work/F"
}

rows=(plain oflag-direct direct memcg:256M drop-behind window-drop dontcache)
for t in $targets; do rows+=("paced:${t}ms"); done
[ -z "${ROWS:-}" ] || read -r -a rows <<<"$ROWS"
configs=(idle)
for tool in $tools; do
  for r in "${rows[@]}"; do configs+=("$tool/$r"); done
done
n=${#configs[@]}
for ((k = 0; k < rounds; k++)); do
  for ((i = 0; i < n; i++)); do
    cfg=${configs[$(((i + k * n / rounds) % n))]}
    echo "calm: round $((k + 1)) of $rounds: $cfg" >&2
    one "$cfg"
  done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{v[NR] = $1} END {if (!NR) print "nan"; else print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
range() { tr ' ' '\n' | grep -v '^$' | sort -g | awk 'NR == 1 {lo = $1} {hi = $1} END {if (NR) printf "%.0f-%.0f", lo, hi; else printf "-"}'; }
m() { median <<<"$1"; }

echo "a copy of $mib MiB from tmpfs to $dir beside a bystander, median of $rounds rounds ($(uname -r)):"
printf '%-22s %12s %12s %12s %14s %14s %7s\n' row "MB/s durable" "(min-max)" "cached MiB" "bystander p99" "bystander max" "failed"
for tool in $tools; do
  for r in "${rows[@]}"; do
    cfg=$tool/$r
    printf '%-22s %12.0f %12s %12.1f %14.1f %14.1f %7s\n' "$cfg" "$(m "${durable[$cfg]}")" \
      "($(range <<<"${durable[$cfg]}"))" \
      "$(awk -v b="$(m "${cached[$cfg]}")" 'BEGIN {print b / 1048576}')" \
      "$(m "${p99[$cfg]}")" "$(m "${worst[$cfg]}")" "${failed[$cfg]:-0}/$rounds"
  done
done
echo "bystander alone (beside sleep 5): p99 $(m "${p99[idle]}") ms, max $(m "${worst[idle]}") ms"
echo "ms: milliseconds of one 4 KiB pwrite + fdatasync (p99: its worst in a run of fewer than 100 calls);"
echo "cached: the copy's pages left in the page cache"
echo "when it exited; MB/s durable: its bytes over its time until none of its pages was dirty;"
echo "failed: rounds whose copy exited non-zero or had a process OOM-killed (memcg), figures kept."
