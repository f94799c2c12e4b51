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

namespace writelab {

inline constexpr double kMemoryShare = 0.5;

struct MemoryRoom {
  uint64_t bytes = 0;  // the least of the limits below
  std::string limit;   // which one: "MemAvailable", "RLIMIT_AS", "cgroup memory.max"
};
MemoryRoom AvailableMemory();

// a * b, or UINT64_MAX where that overflows.
uint64_t SaturatingMul(uint64_t a, uint64_t b);
uint64_t SaturatingAdd(uint64_t a, uint64_t b);

// nullopt when bytes fit within kMemoryShare of room; else the usage line
// (what names the options):
//   "--qd 32 x --buffer 1 GiB would take 32 GiB of memory, more than half of the
//    21.3 GiB available (MemAvailable)"
std::optional<std::string> CheckMemory(std::string_view what, uint64_t bytes,
                                       const MemoryRoom& room);
// The same against AvailableMemory() now.
std::optional<std::string> CheckMemory(std::string_view what, uint64_t bytes);

}  // namespace writelab
