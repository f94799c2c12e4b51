// SPDX-License-Identifier: MIT
// Writes a result file (--json, --csv, report -o) so that a reader sees the
// old file or the whole new one, never half, and so that root, writing into
// a directory other users share, never writes a file it was not pointed at:
//
//   - missing or a regular file: a temporary with a random name is created
//     beside it (O_CREAT|O_EXCL|O_NOFOLLOW, through the directory's fd),
//     written, fsynced and renamed over it; then the directory is fsynced.
//     A replaced file keeps its permission bits.
//   - a symbolic link: followed explicitly (up to 40 links), and the link's
//     final target is written as above, atomically in the target's own
//     directory; the link itself stays.
//   - a device, FIFO or other non-regular file (/dev/null, /dev/stdout, a
//     pipe): written directly, never replaced.
//   - a directory: refused.
#pragma once

#include <string>

#include "writelab/error.h"

namespace writelab {

Status WriteFileAtomically(const std::string& path, const std::string& contents);

}  // namespace writelab
