// SPDX-License-Identifier: MIT
#include "telemetry/fiemap.h"

#include <linux/fiemap.h>
#include <linux/fs.h>
#include <sys/ioctl.h>

#include <cerrno>
#include <cstdlib>
#include <memory>

namespace writelab {

Result<std::vector<Extent>> ReadExtents(int fd, const std::string& path) {
  constexpr uint32_t kBatch = 512;
  size_t size = sizeof(fiemap) + kBatch * sizeof(fiemap_extent);
  std::unique_ptr<fiemap, decltype(&std::free)> fm(static_cast<fiemap*>(std::calloc(1, size)),
                                                   &std::free);
  std::vector<Extent> extents;
  uint64_t start = 0;
  for (;;) {
    fm->fm_start = start;
    fm->fm_length = FIEMAP_MAX_OFFSET - start;
    fm->fm_flags = FIEMAP_FLAG_SYNC;  // flush delayed allocation first
    fm->fm_extent_count = kBatch;
    fm->fm_mapped_extents = 0;
    if (ioctl(fd, FS_IOC_FIEMAP, fm.get()) != 0)
      return std::unexpected(ErrnoError(errno, "FIEMAP " + path));
    if (fm->fm_mapped_extents == 0) return extents;
    for (uint32_t i = 0; i < fm->fm_mapped_extents; ++i) {
      const fiemap_extent& e = fm->fm_extents[i];
      extents.push_back(
          {e.fe_logical, e.fe_physical, e.fe_length, (e.fe_flags & FIEMAP_EXTENT_UNWRITTEN) != 0});
      if (e.fe_flags & FIEMAP_EXTENT_LAST) return extents;
    }
    const fiemap_extent& last = fm->fm_extents[fm->fm_mapped_extents - 1];
    start = last.fe_logical + last.fe_length;
  }
}

ExtentCounts CountExtents(const std::vector<Extent>& extents) {
  ExtentCounts c;
  for (const Extent& e : extents) {
    ++c.total;
    ++(e.unwritten ? c.unwritten : c.written);
  }
  return c;
}

}  // namespace writelab
