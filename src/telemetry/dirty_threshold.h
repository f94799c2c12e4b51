// SPDX-License-Identifier: MIT
// Where the kernel starts writing back a device's dirty pages: the dirty
// background threshold (vm.dirty_background_bytes, or
// vm.dirty_background_ratio of the dirtyable memory), or, where the
// device's bdi has a strict byte limit (max_bytes with strict_limit: a
// test bed's dirty=SIZE, fsync's bdi=SIZE), the background share of that
// limit; a limit without strict_limit is not one here (the kernel leaves
// it aside until the global dirty pages are near the global limit). A stream that
// dirties less than this stays in the page cache (docs/fsync.md).
#pragma once

#include <cstdint>
#include <string>

namespace writelab {

struct DirtyThreshold {
  uint64_t bytes = 0;
  std::string how;  // "10% of 21.3 GiB dirtyable memory (vm.dirty_background_ratio)"
};

// For the disk named device ("vda", "loop3"; "" for none: the global one).
// The dirtyable memory is taken as MemAvailable, which counts the same free
// and file pages less the kernel's reserves.
DirtyThreshold BackgroundThreshold(const std::string& device);

}  // namespace writelab
