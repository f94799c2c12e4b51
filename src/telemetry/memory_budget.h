// SPDX-License-Identifier: MIT
// How much memory a command may allocate, checked before anything runs.
//
// Every command computes what its options make it allocate (buffers x queue
// depth x threads, the corpus, result documents read) and refuses, with one
// usage line (exit 2), anything above kMemoryShare of what is available:
// the least of MemAvailable (/proc/meminfo), the address space and data
// segment left under RLIMIT_AS and RLIMIT_DATA, and the room left in the
// process's cgroup (v2 memory.max, v1 memory.limit_in_bytes). The share
// leaves the rest to the page cache the experiments measure, and to the
// kernel's own use while they run. docs/security.md, "Resource limits".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/memory_room.h"

namespace writelab {

// The room there is now: the least of MemAvailable (/proc/meminfo), the
// address space and data segment left under RLIMIT_AS and RLIMIT_DATA, and
// the room left in the process's cgroup (v2 memory.max, v1
// memory.limit_in_bytes).
MemoryRoom AvailableMemory();

// The same against AvailableMemory() now.
std::optional<std::string> CheckMemory(std::string_view what, uint64_t bytes);

}  // namespace writelab
