// SPDX-License-Identifier: MIT
// Is a block device safe to overwrite? writelab writes a raw device only
// when nothing uses it and nothing is on it: not mounted, not held open
// exclusively (O_EXCL: mounts, device-mapper, md, swap), and no file-system
// or partition-table signature (libblkid) -- unless the user says --force.
#pragma once

#include <expected>
#include <string>

#include "writelab/error.h"

namespace writelab {

// What libblkid finds on the device: "ext4", "dos partition table", or ""
// for nothing.
Result<std::string> ProbeSignature(const std::string& device);

// An empty result means safe; otherwise why not, in one line.
std::string WhyNotSafeToOverwrite(const std::string& device);

}  // namespace writelab
