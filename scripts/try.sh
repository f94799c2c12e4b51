#!/usr/bin/env bash
# Installs, builds, and runs `writelab survey` on the current directory's
# file system (a minute or two; no root needed). Results go to
# writelab-survey.json and writelab-survey.html (charts) here. Extra
# arguments go to writelab survey.
set -euo pipefail
here=$(pwd)
cd "$(dirname "$0")/.."
./scripts/build.sh
cd "$here"
exec "$OLDPWD/build/writelab" survey --dir "$here" "$@"
