#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs, builds, and runs `writelab survey` on the current directory's
# file system (a minute or two; no root needed). Results go to
# writelab-survey.json and writelab-survey.html (charts) here. Extra
# arguments go to writelab survey.
set -euo pipefail
here=$(pwd)
cd "$(dirname "$0")/.."
# Only what the tool needs: no tests, benchmarks or their tools.
SETUP_PROFILE=run BUILD_DIR=build ./scripts/build.sh -DWRITELAB_BUILD_TESTS=OFF -DWRITELAB_BUILD_BENCH=OFF
cd "$here"
exec "$OLDPWD/build/writelab" survey --dir "$here" "$@"
