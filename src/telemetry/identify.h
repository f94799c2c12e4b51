// SPDX-License-Identifier: MIT
// Who is being measured: the host (kernel, CPUs, memory, writeback sysctls)
// and the target (file system, mount, block device stack, queue settings).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/result.h"

namespace writelab {

Host IdentifyHost();

// path: a directory or file on the file system under test. Fields that cannot
// be found stay empty; stack records how the device was found.
Target IdentifyTarget(const std::string& path);

// For an option whose bytes go to O_DIRECT writes on the device under path:
// nothing when bytes is a whole number of the device's logical blocks (and
// of at_least); otherwise the usage error, "--block: 1536 bytes is not a
// multiple of 4096, the logical block size of vdb (O_DIRECT needs one)".
std::optional<std::string> CheckDirectSize(const char* option, uint64_t bytes, const Target& t,
                                           uint64_t at_least = 512);

}  // namespace writelab
