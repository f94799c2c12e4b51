#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs, builds, and runs `writelab survey` on the current directory's
# file system (about two minutes here; no root needed; the survey prints
# what it will write where before it starts). Results go to
# writelab-survey.json and writelab-survey.html (charts) here. Extra
# arguments go to writelab survey.
set -euo pipefail
here=$(pwd)
cd "$(dirname "$0")/.."
# Three status lines while it installs and builds; apt's and cmake's output
# goes to build/try.log, shown in part only when a step fails.
mkdir -p build
log=$PWD/build/try.log
: >"$log"
step() {
  echo "writelab: $1"
  shift
  if ! "$@" >>"$log" 2>&1; then
    tail -n 20 "$log" >&2
    echo "writelab: that step failed; its whole output is in $log" >&2
    exit 1
  fi
}
step "installing the packages it needs (apt; the log is in build/try.log)" ./scripts/setup.sh run
# Only what the tool needs: no tests, benchmarks or their tools.
step "building build/writelab (a few minutes the first time)" env SETUP_PROFILE=run BUILD_DIR=build \
  ./scripts/build.sh -DWRITELAB_BUILD_TESTS=OFF -DWRITELAB_BUILD_BENCH=OFF
echo "writelab: built; the survey follows"
cd "$here"
exec "$OLDPWD/build/writelab" survey --dir "$here" "$@"
