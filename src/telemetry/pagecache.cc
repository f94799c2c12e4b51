// SPDX-License-Identifier: MIT
#include "telemetry/pagecache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "port/classify_errno.h"
#include "port/linux_compat.h"
#include "writelab/unique_fd.h"

namespace writelab {
namespace {

// mmap needs a readable descriptor; experiments' files are open write-only.
Result<CacheResidency> ByMincore(const std::string& path, uint64_t page) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::unexpected(ErrnoError(errno, "open " + path));
  UniqueFd guard(fd);
  CacheResidency r;
  r.method = "mincore";
  r.page_size = page;
  struct stat st;
  if (fstat(fd, &st) != 0) return std::unexpected(ErrnoError(errno, "fstat " + path));
  if (st.st_size == 0) return r;
  auto size = static_cast<size_t>(st.st_size);
  void* map = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) return std::unexpected(ErrnoError(errno, "mmap " + path));
  std::vector<unsigned char> vec((size + page - 1) / page);
  int rc = mincore(map, size, vec.data());
  int err = errno;
  munmap(map, size);
  if (rc != 0) return std::unexpected(ErrnoError(err, "mincore " + path));
  for (unsigned char v : vec) r.cached_pages += v & 1;
  return r;
}

}  // namespace

Result<CacheResidency> MeasureResidency(int fd, const std::string& path) {
  auto page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  CachestatRange range{0, 0};
  Cachestat cs{};
  if (syscall(SYS_cachestat, fd, &range, &cs, 0) == 0) {
    CacheResidency r;
    r.method = "cachestat";
    r.cached_pages = cs.nr_cache;
    r.dirty_pages = cs.nr_dirty;
    r.writeback_pages = cs.nr_writeback;
    r.page_size = page;
    return r;
  }
  if (!IsUnsupported(errno, Feature::kCachestat))
    return std::unexpected(ErrnoError(errno, "cachestat " + path));
  return ByMincore(path, page);
}

}  // namespace writelab
