#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `writelab run` against its goals (issue 30), side by side in one run,
# median of ROUNDS rounds, the order rotating each round:
#   - dd if=/dev/zero of=F bs=1M count=MIB and cp of a MIB-MiB file, each
#     plain and under run --strategy window-drop and dontcache, with the
#     bystander probe (--measure): CMD's MB/s, the page cache F keeps
#     (goal: at most 2 windows), the bystander's fdatasync p99 (or max) (goal:
#     at most 2x its idle value, measured beside `sleep`);
#   - the stream experiment's own window-drop and dontcache rows of the same
#     size in the same rounds (goal: run's MB/s at least 0.9x the row's);
#   - a program of SMALL fwrites of 4 bytes to a file below --min-file, plain
#     and under run (goal: at least 0.95x plain's speed).
# Prints one table; `.ci/run` does not run it (too noisy on shared machines).
#
# Usage: bench/run_compare.sh [BUILD_DIR] (default build). Root (sync).
# Env: ROUNDS (5), MIB (2048), SMALL (10000000), DIR (/var/tmp).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
rounds=${ROUNDS:-5}
mib=${MIB:-2048}
small=${SMALL:-10000000}
dir=${DIR:-/var/tmp}
writelab=$build/writelab
writers=$build/tests/test_writers
[ -x "$writelab" ] && [ -x "$writers" ] ||
  { echo "run_compare: build first (scripts/build.sh -DWRITELAB_BUILD_TESTS=ON)" >&2; exit 2; }
command -v jq >/dev/null || { echo "run_compare: needs jq" >&2; exit 2; }
work=$(mktemp -d "$dir/writelab-run-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
head -c "${mib}M" /dev/urandom >"$work/src"
sync

# fig JSON RESULT ROW KEY: a figure's median from a document.
fig() {
  jq -r --arg e "$2" --arg r "$3" --arg k "$4" \
    '[.experiments[] | select(.name == $e) | .rows[] | select(.name == $r) | .figures[] |
      select(.key == $k) | .value.median][0] // empty' "$1"
}
# probe: the bystander's p99, or its max where the run had too few probes.
probe() {
  local v
  v=$(fig "$1" "$2" "$3" probe_p99_ms)
  [ -n "$v" ] && echo "$v" || fig "$1" "$2" "$3" probe_max_ms
}

declare -A mbs cached bystander
record() {  # KEY JSON RESULT ROW
  mbs[$1]+="$(fig "$2" "$3" "$4" mb_s) "
  cached[$1]+="$(fig "$2" "$3" "$4" cached_end) "
  bystander[$1]+="$(probe "$2" "$3" "$4") "
}

one() {  # CONFIG
  local json=$work/doc.json cfg=$1
  sync
  case $cfg in
    idle)
      "$writelab" run --strategy plain --measure --probe-dir "$work" --json "$json" -- sleep 3 \
        2>/dev/null
      record idle "$json" run plain ;;
    dd-* | cp-*)
      local cmd=(dd if=/dev/zero of="$work/F" bs=1M count="$mib" status=none)
      [[ $cfg == cp-* ]] && cmd=(cp "$work/src" "$work/F")
      "$writelab" run --strategy "${cfg#*-}" --measure --probe-dir "$work" --json "$json" \
        -- "${cmd[@]}" 2>/dev/null
      record "$cfg" "$json" run "${cfg#*-}"
      rm -f "$work/F" ;;
    stream)
      "$writelab" stream --dir "$work" --strategy window-drop,dontcache --size "${mib}M" \
        --rounds 1 --json "$json" >/dev/null 2>&1
      record stream-window-drop "$json" stream window-drop
      record stream-dontcache "$json" stream dontcache ;;
    fwrite-plain)
      sed -n 's/^elapsed_ns //p' <<<"$(WRITERS_ELAPSED=1 "$writers" fwrite "$work/s" "$small" 4 2>&1)" \
        >>"$work/fwrite-plain" ;;
    fwrite-run)
      sed -n 's/^elapsed_ns //p' <<<"$(WRITERS_ELAPSED=1 "$writelab" run --strategy window-drop \
        --min-file 64M --json "$json" -- "$writers" fwrite "$work/s" "$small" 4 2>&1)" \
        >>"$work/fwrite-run" ;;
  esac
  rm -f "$work/s"
}

configs=(idle dd-plain dd-window-drop dd-dontcache cp-plain cp-window-drop cp-dontcache stream
  fwrite-plain fwrite-run)
n=${#configs[@]}
for ((r = 0; r < rounds; r++)); do
  for ((k = 0; k < n; k++)); do one "${configs[$(((k + r * n / rounds) % n))]}"; done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{v[NR] = $1} END {if (!NR) print "nan"; else print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
range() { tr ' ' '\n' | grep -v '^$' | sort -g | awk 'NR == 1 {lo = $1} {hi = $1} END {printf "%.0f-%.0f", lo, hi}'; }
m() { median <<<"$1"; }

idle=$(m "${bystander[idle]}")
echo "writelab run, median of $rounds rounds ($(uname -r), $dir, ${mib} MiB):"
printf '%-20s %10s %16s %12s %14s %12s\n' config "MB/s" "(min-max)" "cached MiB" "bystander ms" "x idle"
for cfg in dd-plain dd-window-drop dd-dontcache cp-plain cp-window-drop cp-dontcache \
  stream-window-drop stream-dontcache; do
  printf '%-20s %10.0f %16s %12.1f %14.2f %12.2f\n' "$cfg" "$(m "${mbs[$cfg]}")" \
    "($(range <<<"${mbs[$cfg]}"))" "$(awk -v b="$(m "${cached[$cfg]}")" 'BEGIN {print b / 1048576}')" \
    "$(m "${bystander[$cfg]}")" "$(awk -v a="$(m "${bystander[$cfg]}")" -v b="$idle" 'BEGIN {print a / b}')"
done
echo "bystander idle (beside sleep): ${idle} ms"
echo "goals: cached at most 16 MiB (2 windows of 8 MiB); bystander at most 2x idle;"
for s in window-drop dontcache; do
  for c in dd cp; do
    awk -v a="$(m "${mbs[$c-$s]}")" -v b="$(m "${mbs[stream-$s]}")" -v l="$c under $s" \
      'BEGIN {printf "  %-22s %.2fx the stream experiment'"'"'s row (goal at least 0.90)\n", l, a / b}'
  done
done
plain=$(median <"$work/fwrite-plain")
run=$(median <"$work/fwrite-run")
awk -v p="$plain" -v r="$run" -v n="$small" 'BEGIN {
  printf "  %d fwrites of 4 bytes: plain %.0f ms, under run %.0f ms: %.3fx plain (goal at least 0.95), %.2f ns more per call\n",
    n, p / 1e6, r / 1e6, p / r, (r - p) / n }'
