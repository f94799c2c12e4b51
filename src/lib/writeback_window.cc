// SPDX-License-Identifier: MIT
#include "lib/writeback_window.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace writelab {
namespace {

// The page cache drops a folio only when a DONTNEED range covers all of it,
// and a folio can be as large as 2 MiB (a PMD) whatever the window: a drop
// range that began where the last one ended would leave the folio that the
// last one cut in two (a window of 4 KiB behind 1 MiB writes left 57 of 64
// MiB cached). Each drop starts at the 2 MiB boundary at or below where the
// last one ended, so that every folio falls whole into one range; dropping
// what was dropped before costs nothing.
constexpr uint64_t kFolioAlign = 2u << 20;

uint64_t DropFrom(uint64_t done) { return FolioDropStart(done); }

}  // namespace

uint64_t FolioDropStart(uint64_t done) { return done - done % kFolioAlign; }

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

int FdWindowCalls::Datasync() { return fdatasync(fd_) == 0 ? 0 : -errno; }

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
    if (int rc = calls.DropCache(DropFrom(done_), upto - DropFrom(done_)); rc < 0) return rc;
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
    // Up to the next boundary: the folio that holds the last byte, whole.
    *what = "posix_fadvise";
    const uint64_t to = end + (kFolioAlign - end % kFolioAlign) % kFolioAlign;
    if (int rc = calls.DropCache(DropFrom(done_), to - DropFrom(done_)); rc < 0) return rc;
  }
  done_ = end;
  return 0;
}

}  // namespace writelab
