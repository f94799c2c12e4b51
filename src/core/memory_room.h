// SPDX-License-Identifier: MIT
// How much memory a command may allocate, as arithmetic: the room there is
// (telemetry/memory_budget.h reads it from the system) and the check of what
// a command's options make it allocate against it. docs/security.md,
// "Resource limits".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace writelab {

// The share of the room a command may take: the rest is left to the page
// cache the experiments measure, and to the kernel's own use while they run.
inline constexpr double kMemoryShare = 0.5;

struct MemoryRoom {
  uint64_t bytes = 0;  // the least of the limits that apply
  std::string limit;   // which one: "MemAvailable", "RLIMIT_AS", "cgroup memory.max"
};

// a * b, or UINT64_MAX where that overflows.
uint64_t SaturatingMul(uint64_t a, uint64_t b);
uint64_t SaturatingAdd(uint64_t a, uint64_t b);

// nullopt when bytes fit within kMemoryShare of room; else the usage line
// (what names the options):
//   "--qd 32 x --buffer 1 GiB would take 32 GiB of memory, more than half of the
//    21.3 GiB available (MemAvailable)"
std::optional<std::string> CheckMemory(std::string_view what, uint64_t bytes,
                                       const MemoryRoom& room);

}  // namespace writelab
