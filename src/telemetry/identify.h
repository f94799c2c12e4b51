// SPDX-License-Identifier: MIT
// Who is being measured: the host (kernel, CPUs, memory, writeback sysctls)
// and the target (file system, mount, block device stack, queue settings).
#pragma once

#include <string>

#include "core/result.h"

namespace writelab {

Host IdentifyHost();

// path: a directory or file on the file system under test. Fields that cannot
// be found stay empty; stack records how the device was found.
Target IdentifyTarget(const std::string& path);

}  // namespace writelab
