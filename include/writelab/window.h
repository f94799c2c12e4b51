// SPDX-License-Identifier: MIT
// The write-behind window writelab's streaming strategies default to, in one
// place: StreamWriter's window (stream_writer.h), `writelab run`'s --window
// and --min-file, its preloaded shim, and fsync's streaming background. 8 MiB
// is overwrite.c's block (LKML, 2009): enough to keep a disk's queue busy
// while bounding what a writer leaves dirty to about two of them.
#pragma once

#include <cstdint>

namespace writelab {

inline constexpr uint64_t kDefaultWindowBytes = uint64_t{8} << 20;

}  // namespace writelab
