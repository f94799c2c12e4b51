// SPDX-License-Identifier: MIT
// ParseSize on any text: never crashes, and what it accepts is consistent
// with ParseCount for plain digits.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/units.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto bytes = writelab::ParseSize(text);
  auto count = writelab::ParseCount(text);
  if (count && (!bytes || *bytes != *count)) __builtin_trap();  // digits are bytes, exactly
  if (!bytes && bytes.error().empty()) __builtin_trap();
  return 0;
}
