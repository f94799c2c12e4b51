#include "lib/writeback_window.h"

#include <fcntl.h>

#include <cerrno>

namespace writelab {

int WritebackWindow::AfterWrite(int fd, uint64_t start, uint64_t len, const char** what) {
  *what = "sync_file_range";
  if (sync_file_range(fd, static_cast<off_t>(start), static_cast<off_t>(len),
                      SYNC_FILE_RANGE_WRITE) != 0)
    return -errno;
  const uint64_t end = start + len;
  if (end < done_ + 2 * window_) return 0;
  const uint64_t upto = end - window_;  // keep the newest window in flight
  const auto from = static_cast<off_t>(done_);
  const auto n = static_cast<off_t>(upto - done_);
  if (sync_file_range(
          fd, from, n,
          SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER) != 0)
    return -errno;
  if (drop_) {
    *what = "posix_fadvise";
    if (int rc = posix_fadvise(fd, from, n, POSIX_FADV_DONTNEED); rc != 0)
      return -rc;  // posix_fadvise returns the error number
  }
  done_ = upto;
  return 0;
}

}  // namespace writelab
