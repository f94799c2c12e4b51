#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the build dependencies (scripts/setup.sh, profile $SETUP_PROFILE,
# default test) and builds writelab into BUILD_DIR (default build/). Extra
# arguments go to cmake's configure step.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh "${SETUP_PROFILE:-test}"
build_dir=${BUILD_DIR:-build}
. scripts/compiler_cache.sh
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${compiler_cache[@]}" "$@" >/dev/null
cmake --build "$build_dir" -j "$(nproc)"
