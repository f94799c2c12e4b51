// SPDX-License-Identifier: MIT
#include "core/memory_room.h"

#include "core/units.h"

namespace writelab {

uint64_t SaturatingMul(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

uint64_t SaturatingAdd(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

std::optional<std::string> CheckMemory(std::string_view what, uint64_t bytes,
                                       const MemoryRoom& room) {
  if (static_cast<double>(bytes) <= kMemoryShare * static_cast<double>(room.bytes))
    return std::nullopt;
  return std::string(what) + " would take " +
         (bytes == UINT64_MAX ? std::string("more than 16 EiB")
                              : FormatBytes(static_cast<double>(bytes))) +
         " of memory, more than half of the " + FormatBytes(static_cast<double>(room.bytes)) +
         " available (" + room.limit + ")";
}

}  // namespace writelab
