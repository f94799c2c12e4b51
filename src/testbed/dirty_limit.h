// SPDX-License-Identifier: MIT
// A disk's own dirty-page limit: its bdi's max_bytes with strict_limit, so
// that the kernel throttles and writes back its dirty pages at that size
// whatever the global thresholds (Linux 6.2). Used by a test bed's
// dirty=SIZE and by fsync's bdi=SIZE and its default background.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "testbed/scoped_change.h"

namespace writelab {

// Limits /sys/block/DEVICE/bdi to bytes, journaled: the kernel keeps only a
// ratio, so max_bytes read back is rounded through it; the exact
// max_ratio_fine is journaled (written unchanged) and restored, with
// strict_limit, and max_bytes itself is written without a step of its own.
// The changes are appended to changes (undone when they go).
Status LimitDeviceDirty(const std::string& device, uint64_t bytes, UndoJournal& journal,
                        std::vector<ScopedChange>& changes);

}  // namespace writelab
