// SPDX-License-Identifier: MIT
// ParseDurationNs on any text: never crashes; what it accepts fits in int64
// nanoseconds.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/units.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto ns = writelab::ParseDurationNs(text);
  if (ns && *ns > static_cast<uint64_t>(INT64_MAX)) __builtin_trap();
  if (!ns && ns.error().empty()) __builtin_trap();
  return 0;
}
