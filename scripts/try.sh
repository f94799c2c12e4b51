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
# Only what the tool needs: no tests, benchmarks or their tools.
SETUP_PROFILE=run BUILD_DIR=build ./scripts/build.sh -DWRITELAB_BUILD_TESTS=OFF -DWRITELAB_BUILD_BENCH=OFF
cd "$here"
exec "$OLDPWD/build/writelab" survey --dir "$here" "$@"
