# SPDX-License-Identifier: MIT
# Sourced by the build scripts from the repository's root: where ccache is
# installed (scripts/setup.sh test installs it), compile through it, so
# that a second build of the same sources, in this clone or another one on
# the same machine, reuses the objects. Paths below the root are hashed
# relative to it (CCACHE_BASEDIR), so a fresh clone elsewhere hits too;
# anything else that differs (flags, compiler, a -D with a path) misses.
# The results are the compiler's own: ccache is a cache, never a guess.
compiler_cache=()
if command -v ccache >/dev/null 2>&1; then
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
  export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-true}  # debug info may name the first clone's folder
  compiler_cache=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
