#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The floors of the source tree (docs/architecture.md), lowest first: a file
# may include its own folder's headers and those of the floors below it,
# never one above. Reads every #include "FOLDER/..." under src/ (tests and
# the generated BPF skeletons aside) and prints each include that runs up,
# then fails; prints nothing and succeeds when there is none. Both test tiers
# run it (scripts/test.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

# One floor a line; folders on one line are peers and may not include each
# other (writelab is include/writelab/, the public API).
floors=(
  "writelab"
  "port"
  "core"
  "io telemetry lib"
  "explain shim testbed mpi"
  "report"
  "history"
  "command"
  "experiments program"
  "cli"
)
declare -A floor_of
for ((i = 0; i < ${#floors[@]}; ++i)); do
  for f in ${floors[$i]}; do floor_of[$f]=$i; done
done

bad=0
while IFS= read -r file; do
  from=${file#src/}
  from=${from%%/*}
  [ -n "${floor_of[$from]:-}" ] || { echo "check_layers: $file: folder '$from' has no floor" >&2; bad=1; continue; }
  while IFS= read -r to; do
    [ "$to" = "$from" ] && continue
    if [ -z "${floor_of[$to]:-}" ]; then
      continue  # a generated header (trace.skel.h, vmlinux.h) or a system one
    fi
    if ((floor_of[$to] >= floor_of[$from])); then
      echo "$file includes $to/ (floor ${floor_of[$to]}: not below $from/, floor ${floor_of[$from]})"
      bad=1
    fi
  done < <(sed -n 's/^#include "\([a-z_]*\)\/.*/\1/p' "$file" | sort -u)
done < <(find src -name '*.cc' -o -name '*.h' -o -name '*.c' | grep -v '_test\.cc$' | sort)
exit $bad
