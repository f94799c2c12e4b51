// SPDX-License-Identifier: MIT
#include "lib/writeback_window.h"

#include <fcntl.h>

#include <cerrno>

namespace writelab {

int FdWindowCalls::SyncRange(uint64_t offset, uint64_t len, unsigned flags) {
  return sync_file_range(fd_, static_cast<off_t>(offset), static_cast<off_t>(len), flags) == 0
             ? 0
             : -errno;
}

int FdWindowCalls::DropCache(uint64_t offset, uint64_t len) {
  // posix_fadvise returns the error number instead of setting errno.
  return -posix_fadvise(fd_, static_cast<off_t>(offset), static_cast<off_t>(len),
                        POSIX_FADV_DONTNEED);
}

int WritebackWindow::AfterWrite(WindowCalls& calls, uint64_t start, uint64_t len,
                                const char** what) {
  *what = "sync_file_range";
  if (int rc = calls.SyncRange(start, len, SYNC_FILE_RANGE_WRITE); rc < 0) return rc;
  const uint64_t end = start + len;
  if (end < done_ + 2 * window_) return 0;
  const uint64_t upto = end - window_;  // keep the newest window in flight
  if (int rc = calls.SyncRange(
          done_, upto - done_,
          SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
      rc < 0)
    return rc;
  if (drop_) {
    *what = "posix_fadvise";
    if (int rc = calls.DropCache(done_, upto - done_); rc < 0) return rc;
  }
  done_ = upto;
  return 0;
}

int WritebackWindow::Finish(WindowCalls& calls, uint64_t end, const char** what) {
  *what = "sync_file_range";
  if (end <= done_) return 0;
  if (int rc = calls.SyncRange(
          done_, end - done_,
          SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
      rc < 0)
    return rc;
  if (drop_) {
    *what = "posix_fadvise";
    if (int rc = calls.DropCache(done_, end - done_); rc < 0) return rc;
  }
  done_ = end;
  return 0;
}

}  // namespace writelab
