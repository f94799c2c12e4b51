// SPDX-License-Identifier: MIT
// FromJson (report, compare) on any bytes: never crashes, never lets an
// exception out, and a document it accepts survives a round trip: written
// with ToJson and read again, it is written the same.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/document_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto doc = writelab::FromJson(text);
  if (!doc) {
    if (doc.error().empty()) __builtin_trap();
    return 0;
  }
  std::string once = writelab::ToJson(*doc);
  auto again = writelab::FromJson(once);
  if (!again || writelab::ToJson(*again) != once) __builtin_trap();
  return 0;
}
