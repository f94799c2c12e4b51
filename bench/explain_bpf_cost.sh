#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Where `writelab explain`'s cost goes, program by program: a victim's loop
# of COUNT x (4 KiB pwrite + fdatasync) in DIR (tests/tools/truth_load.cc)
# runs under explain with the kernel's BPF statistics on
# (kernel.bpf_stats_enabled, restored after), and each of explain's
# programs is printed with its runs and its time per iteration of the loop,
# most costly first, then their sum. The sum is BPF time on any CPU, not
# all of it on the loop's path; set beside bench/explain_victim_cost.sh's
# gap (docs/explain.md, "What it costs").
#
# Usage: bench/explain_bpf_cost.sh [BUILD_DIR] (default build). Root.
# Env: COUNT (10000), DIR (/var/tmp)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
count=${COUNT:-10000}
dir=${DIR:-/var/tmp}
victim=$(realpath "$build/tests/wl_truth")
[ -x "$build/writelab" ] || { echo "explain_bpf_cost: no $build/writelab (scripts/build.sh)" >&2; exit 2; }
[ -x "$victim" ] ||
  { echo "explain_bpf_cost: no $victim (build with -DWRITELAB_BUILD_TESTS=ON)" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "explain_bpf_cost: needs root (BPF)" >&2; exit 2; }
command -v bpftool >/dev/null || { echo "explain_bpf_cost: needs bpftool" >&2; exit 2; }
work=$(mktemp -d "$dir/writelab-bpf-cost.XXXXXX")
stats=$(sysctl -n kernel.bpf_stats_enabled)
trap 'sysctl -q kernel.bpf_stats_enabled="$stats"; rm -rf "$work"' EXIT
sysctl -q kernel.bpf_stats_enabled=1
mkdir "$work/v"

# The programs are detached when explain ends: their counts are read while
# it runs, and each program's last reading is kept (the most runs).
"$build/writelab" explain --quiet --no-history -- "$victim" fdatasync "$count" "$work/v" \
  >/dev/null 2>"$work/err" &
pid=$!
while kill -0 "$pid" 2>/dev/null; do
  bpftool -j prog show 2>/dev/null >>"$work/snapshots" || true
  # explain's programs: those whose descriptors its process holds.
  cat "/proc/$pid/fdinfo/"* 2>/dev/null | sed -n 's/^prog_id:[[:space:]]*//p' >>"$work/ids" || true
  echo >>"$work/snapshots"
  sleep 0.2
done
wait "$pid" || { echo "explain_bpf_cost: explain failed: $(tail -1 "$work/err")" >&2; exit 1; }
touch "$work/ids"
python3 - "$work/snapshots" "$count" "$work/ids" <<'EOF'
import json, sys
path, count = sys.argv[1], int(sys.argv[2])
ids = {int(line) for line in open(sys.argv[3]) if line.strip()}
best = {}
for line in open(path):
    line = line.strip()
    if not line:
        continue
    for p in json.loads(line):
        if p.get("id") not in ids or not p.get("run_cnt"):
            continue
        key = (p["id"], p["name"])
        if key not in best or p["run_cnt"] > best[key]["run_cnt"]:
            best[key] = p
rows = sorted(((p["run_time_ns"] / count, n, p["run_cnt"] / count, p["run_time_ns"] / p["run_cnt"])
               for (_, n), p in best.items()), reverse=True)
if not rows:
    sys.exit("explain_bpf_cost: no program whose descriptor explain held was seen running")
for ns, name, runs, each in rows:
    print(f"{name:<16} {ns / 1000:6.2f} us an iteration  {runs:6.1f} runs  {each:5.0f} ns a run")
print(f"{'all':<16} {sum(r[0] for r in rows) / 1000:6.2f} us an iteration "
      f"({count} iterations of 4 KiB pwrite + fdatasync)")
EOF
