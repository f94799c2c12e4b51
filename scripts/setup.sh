#!/usr/bin/env bash
# Installs what writelab needs to build, test and run its test beds on Debian 12.
# Idempotent: packages already present are not fetched again.
set -euo pipefail

packages=(
  build-essential cmake pkg-config clang-format
  libcli11-dev libfmt-dev nlohmann-json3-dev liburing-dev libblkid-dev libmount-dev
  libgtest-dev libbenchmark-dev
  e2fsprogs xfsprogs btrfs-progs util-linux fio jq
  chromium  # the HTML report's browser test (tests/report_test.cc)
  clang libclang-rt-14-dev  # libFuzzer and its sanitizer runtimes for the fuzz targets (scripts/fuzz.sh)
)

missing=()
# Node.js and npm install the report's charting library (web/package-lock.json);
# a Node.js from elsewhere (e.g. NodeSource, which bundles npm) is used as is.
command -v node >/dev/null 2>&1 || packages+=(nodejs)
command -v npm >/dev/null 2>&1 || packages+=(npm)

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

# The report's charting library, exactly as pinned in web/package-lock.json;
# CMake embeds it into the binary. Skipped when the installed tree is current.
web=$(cd "$(dirname "$0")/../web" && pwd)
stamp=$web/node_modules/.writelab-installed-lock
if ! cmp -s "$web/package-lock.json" "$stamp" 2>/dev/null; then
  echo "setup: npm ci in $web"
  (cd "$web" && npm ci --no-audit --no-fund --loglevel=error)
  cp "$web/package-lock.json" "$stamp"
fi
