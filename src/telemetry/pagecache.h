// SPDX-License-Identifier: MIT
// How much of a file the page cache holds: cachestat(2) (Linux 6.5+) where
// the kernel has it, else mincore(2) over a mapping of the file (resident
// pages only; dirty and writeback are then unknown).
#pragma once

#include <cstdint>
#include <expected>
#include <optional>
#include <string>

#include "writelab/error.h"

namespace writelab {

struct CacheResidency {
  std::string method;  // "cachestat" or "mincore"
  uint64_t cached_pages = 0;
  std::optional<uint64_t> dirty_pages;
  std::optional<uint64_t> writeback_pages;
  uint64_t page_size = 0;
  uint64_t cached_bytes() const { return cached_pages * page_size; }
};

Result<CacheResidency> MeasureResidency(int fd, const std::string& path);

}  // namespace writelab
