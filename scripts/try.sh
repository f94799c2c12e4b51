#!/usr/bin/env bash
# Installs, builds, and runs a first measurement: `writelab survey` once it
# exists; until then `writelab stream` in a new temporary directory under the
# current one (removed afterwards). Extra arguments go to writelab.
set -euo pipefail
here=$(pwd)
cd "$(dirname "$0")/.."
./scripts/build.sh
if ./build/writelab --help | grep -q '^  survey'; then
  exec ./build/writelab survey --dir "$here" "$@"
fi
scratch=$(mktemp -d "$here/writelab-try.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
echo "writelab survey is not built yet; running writelab stream in $scratch"
./build/writelab stream --dir "$scratch" --json "$here/writelab-stream.json" "$@"
echo "results: $here/writelab-stream.json"
