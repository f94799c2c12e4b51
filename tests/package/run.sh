#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The package test: writelab as a library user and a packager get it, from
# the build in BUILD_DIR (default build/, made by scripts/build.sh).
#  1. `cmake --install` into a temporary prefix puts every file where
#     cmake/install.cmake says;
#  2. a separate C++20 project finds it with find_package(writelab 0.2) and
#     runs (the public headers need C++20, not the C++23 the tool is built in);
#  3. the same program with add_subdirectory of the source tree, configured
#     with every package but Threads disabled (the library needs no other);
#  4. the library alone, shared (WRITELAB_SHARED), found and loaded;
#     the same program with pkg-config and a plain g++ command line;
#  5. the man page has a section per command, and bash completion completes
#     commands, options and the values an option lists (--strategy), --dir
#     with directories, and so do zsh's and fish's;
#  6. `cpack -G DEB` makes a .deb whose dependencies and contents are right,
#     which installs with `dpkg --root` and whose writelab and library work.
# Prints one line per step; exits 1 at the first failure.
set -euo pipefail
cd "$(dirname "$0")/../.."
src=$(pwd)
# The library's two builds below go through the compiler cache where there
# is one (warm: 4 s instead of 22 here): a second run, or a clean clone's
# at the same path (CCACHE_BASEDIR: the build folders are outside it),
# compiles nothing that has not changed.
. scripts/compiler_cache.sh
build=$(cd "${BUILD_DIR:-build}" && pwd)
libdir=$(sed -n 's/^CMAKE_INSTALL_LIBDIR:[A-Z]*=//p' "$build/CMakeCache.txt")
work=$(mktemp -d /var/tmp/writelab-package.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "package: FAIL: $*" >&2; exit 1; }
ok() { echo "package: ok: $*"; }
# Runs a command with its output kept aside, shown only when it fails.
quiet() { "$@" >"$work/log" 2>&1 || { cat "$work/log" >&2; fail "$*"; }; }

prefix=$work/prefix
quiet cmake --install "$build" --prefix "$prefix"
for f in bin/writelab $libdir/libwritelab.a include/writelab/record_writer.h \
  include/writelab/stream_writer.h include/writelab/error.h include/writelab/unique_fd.h \
  include/writelab/result.h include/writelab/preallocate.h include/writelab/log_reader.h \
  include/writelab/latency_histogram.h \
  $libdir/cmake/writelab/writelabConfig.cmake $libdir/cmake/writelab/writelabConfigVersion.cmake \
  $libdir/cmake/writelab/writelabTargets.cmake $libdir/pkgconfig/writelab.pc \
  share/man/man1/writelab.1 share/bash-completion/completions/writelab \
  share/zsh/site-functions/_writelab share/fish/vendor_completions.d/writelab.fish \
  share/doc/writelab/LICENSE share/doc/writelab/third_party/LICENSE-chartjs.md \
  $libdir/writelab/libwritelab-run.so; do
  [ -f "$prefix/$f" ] || fail "cmake --install did not install $f"
done
# `writelab run` finds its shim where the prefix put it, wherever that is.
out=$(cd "$work" && "$prefix/bin/writelab" run --json "$work/run.json" -- sh -c 'echo ran' 2>/dev/null) ||
  fail "the installed writelab run"
[ "$out" = ran ] || fail "the installed writelab run passed '$out' through"
grep -q '"run-files"' "$work/run.json" || fail "the installed writelab run wrote no document"
[[ $("$prefix/bin/writelab" --version) == "writelab 0.2"* ]] || fail "installed writelab --version"
ok "cmake --install puts the binary, library, headers, CMake and pkg-config files, man page, completion"

run_consumer() {  # $1: the program, $2: how it was built
  mkdir -p "$work/out-$2"
  "$1" "$work/out-$2" >/dev/null || fail "the consumer built with $2 failed"
}

quiet cmake -S tests/package/consumer -B "$work/find" -DCMAKE_PREFIX_PATH="$prefix"
quiet cmake --build "$work/find"
run_consumer "$work/find/consumer" find_package
# A version the package does not satisfy is refused (0.x: same minor only).
mkdir -p "$work/newer"
sed 's/find_package(writelab 0.2 REQUIRED)/find_package(writelab 0.3 REQUIRED)/' \
  tests/package/consumer/CMakeLists.txt >"$work/newer/CMakeLists.txt"
cp tests/package/consumer/main.cc "$work/newer/"
if cmake -S "$work/newer" -B "$work/newer/build" -DCMAKE_PREFIX_PATH="$prefix" >"$work/log" 2>&1; then
  fail "find_package(writelab 0.3) accepted writelab 0.2"
fi
grep -q 'version: 0.2.0' "$work/log" || { cat "$work/log" >&2; fail "find_package(writelab 0.3) failed, but not on the version"; }
ok "find_package(writelab 0.2) and writelab::writelab; 0.3 refused"

quiet cmake -S tests/package/subproject -B "$work/sub" -DWRITELAB_SOURCE="$src" --no-warn-unused-cli \
  -DCMAKE_DISABLE_FIND_PACKAGE_CLI11=ON -DCMAKE_DISABLE_FIND_PACKAGE_fmt=ON \
  -DCMAKE_DISABLE_FIND_PACKAGE_nlohmann_json=ON -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON \
  -DCMAKE_DISABLE_FIND_PACKAGE_benchmark=ON -DCMAKE_DISABLE_FIND_PACKAGE_PkgConfig=ON \
  "${compiler_cache[@]}"
quiet cmake --build "$work/sub" -j "$(nproc)"
run_consumer "$work/sub/consumer" add_subdirectory
ok "add_subdirectory builds only the library, with no package but Threads"

# The library alone, shared too (WRITELAB_SHARED), as a distribution would
# build it: writelab::writelab_shared links and runs from its prefix.
shared=$work/shared-prefix
quiet cmake -S . -B "$work/shared-build" -DWRITELAB_SHARED=ON -DWRITELAB_BUILD_TOOL=OFF \
  -DWRITELAB_BUILD_TESTS=OFF -DWRITELAB_BUILD_BENCH=OFF -DCMAKE_INSTALL_PREFIX="$shared" \
  "${compiler_cache[@]}"
quiet cmake --build "$work/shared-build" -j "$(nproc)"
quiet cmake --install "$work/shared-build"
[ -f "$shared/$libdir/libwritelab.so.0.2" ] || fail "WRITELAB_SHARED did not install libwritelab.so.0.2"
[ ! -e "$shared/bin/writelab" ] || fail "WRITELAB_BUILD_TOOL=OFF installed the tool"
mkdir -p "$work/shared-consumer"
sed 's/writelab::writelab)/writelab::writelab_shared)/' tests/package/consumer/CMakeLists.txt \
  >"$work/shared-consumer/CMakeLists.txt"
cp tests/package/consumer/main.cc "$work/shared-consumer/"
quiet cmake -S "$work/shared-consumer" -B "$work/shared-consumer/build" -DCMAKE_PREFIX_PATH="$shared"
quiet cmake --build "$work/shared-consumer/build"
# Matched on a captured copy: ldd writes line by line, and a grep -q that
# stops reading at its match would kill it with SIGPIPE under pipefail.
loaded=$(ldd "$work/shared-consumer/build/consumer")
[[ $loaded == *"libwritelab.so.0.2 => $shared/"* ]] ||
  fail "the consumer does not load libwritelab.so from $shared: $loaded"
run_consumer "$work/shared-consumer/build/consumer" shared
ok "WRITELAB_SHARED: libwritelab.so.0.2 and writelab::writelab_shared, the library alone"

export PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig
[ "$(pkg-config --modversion writelab)" = 0.2.0 ] || fail "pkg-config --modversion writelab"
# shellcheck disable=SC2046
g++ -std=c++20 tests/package/consumer/main.cc $(pkg-config --cflags --libs writelab) -o "$work/pc"
run_consumer "$work/pc" pkg-config
ok "pkg-config and a plain g++ command line"

man=$prefix/share/man/man1/writelab.1
for command in survey stream fsync records prealloc stride explain run top report compare cleanup \
  history "history list" "history trend" "history check"; do
  grep -q "^\.SS $command\$" "$man" || fail "writelab.1 has no section for $command"
done
grep -q -- "--fail-on-regression" "$man" || fail "writelab.1 lacks history check's --fail-on-regression"
grep -q -- "--scheduler" "$man" || fail "writelab.1 lacks stride's --scheduler"
grep -q '^\.SH EXAMPLES' "$man" || fail "writelab.1 has no EXAMPLES section"
sed -n '/^\.SH EXAMPLES/,/^\.SH/p' "$man" | grep -q '^\.B writelab history check \\-\\-fail' ||
  fail "writelab.1's EXAMPLES lack history check"
ok "writelab(1) has a section per command with its options"

complete_words() {  # the completions of the words given, the last being completed
  PATH=$prefix/bin:$PATH bash -c '
    source "$0"
    COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
    _writelab writelab
    printf "%s\n" "${COMPREPLY[@]}"' "$prefix/share/bash-completion/completions/writelab" "$@"
}
[ "$(complete_words writelab st | sort | tr '\n' ' ')" = "stream stride " ] ||
  fail "completion of 'writelab st': $(complete_words writelab st | tr '\n' ' ')"
grep -qx -- --scheduler <<<"$(complete_words writelab stride --sch)" || fail "completion of 'stride --sch'"
grep -qx -- --commit-time <<<"$(complete_words writelab records --com)" || fail "completion of 'records --com'"
[ "$(complete_words writelab help st | sort | tr '\n' ' ')" = "stream stride " ] ||
  fail "completion of 'writelab help st'"
[ "$(complete_words writelab history t | tr '\n' ' ')" = "trend " ] ||
  fail "completion of 'writelab history t': $(complete_words writelab history t | tr '\n' ' ')"
grep -qx -- --figure <<<"$(complete_words writelab history trend --fig)" ||
  fail "completion of 'history trend --fig'"
grep -qx -- --no-history <<<"$(complete_words writelab records --no-h)" || fail "completion of 'records --no-h'"
[ "$(complete_words writelab stream --strategy w | sort | tr '\n' ' ')" = "window window-drop " ] ||
  fail "completion of 'stream --strategy w': $(complete_words writelab stream --strategy w | tr '\n' ' ')"
grep -qx dontcache <<<"$(complete_words writelab run --strategy '')" || fail "completion of 'run --strategy '"
grep -qx plain,window-drop <<<"$(complete_words writelab stream --strategy plain,window-)" ||
  fail "completion of a list's last item"
mkdir -p "$work/complete-dir" && touch "$work/complete-file"
[ "$(complete_words writelab stream --dir "$work/complete-")" = "$work/complete-dir" ] ||
  fail "completion of --dir offers directories only: $(complete_words writelab stream --dir "$work/complete-")"
# zsh (the installed function, autoloaded as compinit would, with compadd
# standing in for the completion system) and fish (complete -C) offer what
# bash offers: the strategies after --strategy, directories after --dir.
zsh_words() {  # the words given, the last being completed
  PATH=$prefix/bin:$PATH zsh -f -c '
    fpath=("$1" $fpath); shift; autoload -U _writelab; zmodload zsh/parameter
    compadd() { shift 2; print -l -- "$@"; }
    words=("$@"); CURRENT=$#; _writelab' _ "$prefix/share/zsh/site-functions" "$@"
}
[ "$(zsh_words writelab stream --strategy w | sort | tr '\n' ' ')" = "window window-drop " ] ||
  fail "zsh completion of 'stream --strategy w': $(zsh_words writelab stream --strategy w | tr '\n' ' ')"
[ "$(zsh_words writelab stream --dir "$work/complete-")" = "$work/complete-dir" ] ||
  fail "zsh completion of --dir: $(zsh_words writelab stream --dir "$work/complete-")"
fish_line() { PATH=$prefix/bin:$PATH fish --no-config -c "source $prefix/share/fish/vendor_completions.d/writelab.fish; complete -C '$1'"; }
grep -qx window-drop <<<"$(fish_line 'writelab run --strategy ')" ||
  fail "fish completion of 'run --strategy ': $(fish_line 'writelab run --strategy ' | tr '\n' ' ')"
[ "$(fish_line "writelab stream --dir $work/complete-")" = "$work/complete-dir" ] ||
  fail "fish completion of --dir: $(fish_line "writelab stream --dir $work/complete-")"
# The public headers compile with clang too, as C++20 and as C++2b (whose
# libstdc++ <expected> clang 14 cannot use).
for std in c++20 c++2b; do
  ! command -v clang++ >/dev/null ||
    clang++ -std=$std -fsyntax-only -I"$prefix/include" tests/package/consumer/main.cc ||
    fail "the installed headers with clang++ -std=$std"
done
ok "bash, zsh and fish completion of commands, options and option values"

rm -f "$build"/writelab_*.deb
quiet cpack -G DEB -B "$build" --config "$build/CPackConfig.cmake"
deb=$(ls "$build"/writelab_0.2.0_*.deb)
depends=$(dpkg-deb -f "$deb" Depends)
for lib in libc6 libstdc++6 liburing2 libmount1 libblkid1 libfmt9 libsqlite3-0; do
  [[ $depends == *"$lib"* ]] || fail "the .deb does not depend on $lib: $depends"
done
contents=$(dpkg-deb -c "$deb")
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
for f in ./usr/bin/writelab ./usr/lib/$multiarch/libwritelab.a ./usr/include/writelab/record_writer.h \
  ./usr/lib/$multiarch/writelab/libwritelab-run.so \
  ./usr/include/writelab/log_reader.h ./usr/share/man/man1/writelab.1 \
  ./usr/lib/$multiarch/pkgconfig/writelab.pc ./usr/lib/$multiarch/cmake/writelab/writelabConfig.cmake; do
  grep -q " $f\$" <<<"$contents" || fail "the .deb lacks $f"
done
root=$work/root
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
touch "$root/var/lib/dpkg/status"
quiet dpkg --root="$root" --force-depends --force-not-root --force-script-chrootless -i "$deb"
[[ $("$root/usr/bin/writelab" --version) == "writelab 0.2"* ]] || fail "writelab from the .deb"
size=$(stat -c %s "$root/usr/bin/writelab")
[ "$size" -lt $((20 << 20)) ] || fail "the packaged writelab is $size bytes (stripped: expected under 20 MiB)"
deb_libdir=$(dirname "$(find "$root/usr/lib" -name libwritelab.a)")
g++ -std=c++20 -I"$root/usr/include" tests/package/consumer/main.cc -L"$deb_libdir" -lwritelab -pthread \
  -o "$work/deb"
run_consumer "$work/deb" deb
ok "cpack -G DEB: $(basename "$deb"), $((size >> 20)) MiB writelab, depends on $depends"
