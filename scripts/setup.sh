#!/usr/bin/env bash
# Installs what writelab needs to build, test and run its test beds on Debian 12.
# Idempotent: packages already present are not fetched again.
set -euo pipefail

packages=(
  build-essential cmake pkg-config clang-format
  libcli11-dev libfmt-dev nlohmann-json3-dev liburing-dev libblkid-dev libmount-dev
  libgtest-dev libbenchmark-dev
  e2fsprogs xfsprogs btrfs-progs util-linux fio jq
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: installing packages needs root (run as root or with sudo)" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
