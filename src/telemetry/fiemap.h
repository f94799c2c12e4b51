// SPDX-License-Identifier: MIT
// A file's extents from FIEMAP, counted here: filefrag's summary merges
// physically adjacent extents and can say 2 where there are 4000.
#pragma once

#include <cstdint>
#include <expected>
#include <string>
#include <vector>

#include "writelab/error.h"

namespace writelab {

struct Extent {
  uint64_t logical = 0;   // bytes from the start of the file
  uint64_t physical = 0;  // bytes on the device
  uint64_t length = 0;
  bool unwritten = false;  // FIEMAP_EXTENT_UNWRITTEN: allocated, reads as zeros
};

Result<std::vector<Extent>> ReadExtents(int fd, const std::string& path);

struct ExtentCounts {
  uint64_t total = 0;
  uint64_t unwritten = 0;
  uint64_t written = 0;
};
ExtentCounts CountExtents(const std::vector<Extent>& extents);

}  // namespace writelab
