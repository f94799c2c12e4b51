// SPDX-License-Identifier: MIT
// ParseTestbeds (--testbed) on any text: never crashes, and every spec it
// accepts names a known file system and has no empty option.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "testbed/testbed.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto beds = writelab::ParseTestbeds(text);
  if (!beds) return 0;
  if (beds->empty()) __builtin_trap();
  for (const auto& b : *beds) {
    if (b.fs != "ext4" && b.fs != "xfs" && b.fs != "btrfs" && b.fs != "tmpfs" && b.fs != "raw")
      __builtin_trap();
    for (const auto& o : b.mount_options)
      if (o.empty()) __builtin_trap();
  }
  return 0;
}
