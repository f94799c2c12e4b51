#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs what writelab needs on Debian 12, by profile:
#   scripts/setup.sh run    building and running the tool, test beds included
#   scripts/setup.sh test   everything: also the tests' and benchmarks' tools
#                           (GoogleTest, chromium for the report's browser
#                           test, fio, clang for the fuzz targets, dpkg-dev
#                           for the package test); the default
# Idempotent: packages already present are not fetched again.
set -euo pipefail

profile=${1:-test}
run_packages=(
  build-essential cmake pkg-config
  libcli11-dev libfmt-dev nlohmann-json3-dev liburing-dev libblkid-dev libmount-dev
  libsqlite3-dev  # the results history (writelab history, docs/history.md)
  help2man  # the writelab(1) man page, made from the commands' help at build time
  clang bpftool libbpf-dev  # --explain's BPF programs (cmake -DWRITELAB_EXPLAIN=OFF builds without)
  e2fsprogs xfsprogs btrfs-progs util-linux  # --testbed file systems and loop devices
)
test_packages=(
  clang-format libgtest-dev libbenchmark-dev fio jq
  ccache  # the build scripts compile through it where present (scripts/compiler_cache.sh)
  chromium  # the HTML report's browser test (tests/report_test.cc)
  libclang-rt-14-dev  # libFuzzer and its sanitizer runtimes for the fuzz targets (scripts/fuzz.sh)
  dpkg-dev file bash-completion  # the package test: dpkg-shlibdeps and file for cpack, the completion test
  zsh fish  # the package test of their completion (completion/_writelab, writelab.fish)
  openmpi-bin libopenmpi-dev  # writelab under mpirun (docs/mpi.md) and its tests (tests/mpi_test.cc)
  sqlite3 rsync git xz-utils cpio zstd  # real programs under run (tests/run_programs_test.cc)
  procps  # pgrep and pkill, which stop the truth test's background dd (tests/explain_truth_test.cc)
  strace  # the observer of the paced streamer's calls (tests/stream_test.cc)
)
case $profile in
  run) packages=("${run_packages[@]}") ;;
  test) packages=("${run_packages[@]}" "${test_packages[@]}") ;;
  *)
    echo "setup: unknown profile '$profile' (run or test)" >&2
    exit 2
    ;;
esac

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup ($profile): installing ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: installing packages needs root (run as root or with sudo)" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
