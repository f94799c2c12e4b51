// Writes a result file so that a reader sees the old file or the whole new
// one, never half: a temporary file beside it, fsync, rename, fsync of the
// directory.
#pragma once

#include <string>

#include "writelab/error.h"

namespace writelab {

Status WriteFileAtomically(const std::string& path, const std::string& contents);

}  // namespace writelab
