// SPDX-License-Identifier: MIT
// The windowed writeback of overwrite.c (LKML, 2009), in one place for the
// library's StreamWriter and the stream experiment: after each write, start
// its writeback (sync_file_range WRITE); once more than one window of
// written bytes lies behind the newest window, wait for that older range to
// reach the device (WAIT_BEFORE | WRITE | WAIT_AFTER) and, with drop, remove
// it from the page cache (posix_fadvise DONTNEED), so the writer leaves at
// most about two windows dirty or cached. Each drop reaches back to the 2
// MiB boundary below where the last one ended, and the last one forward to
// the boundary after the end (a folio is dropped only whole; see the .cc).
//
// Errors: every call's failure is returned, fadvise's included (on a regular
// file it fails only for a bad descriptor or range, which is a bug worth
// seeing, not advice to ignore).
#pragma once

#include <cstdint>

namespace writelab {

// The two calls the window makes on the file being written; 0 or -errno.
// The library makes them on its descriptor (FdWindowCalls); the stream
// experiment through its runner, which times and counts them.
class WindowCalls {
 public:
  virtual int SyncRange(uint64_t offset, uint64_t len, unsigned flags) = 0;
  virtual int DropCache(uint64_t offset, uint64_t len) = 0;
  virtual int Datasync() = 0;  // fdatasync(2): the paced window's flush (paced_window.h)

 protected:
  ~WindowCalls() = default;
};

// sync_file_range(2), posix_fadvise(2) DONTNEED and fdatasync(2) on fd.
class FdWindowCalls final : public WindowCalls {
 public:
  explicit FdWindowCalls(int fd) : fd_(fd) {}
  int SyncRange(uint64_t offset, uint64_t len, unsigned flags) override;
  int DropCache(uint64_t offset, uint64_t len) override;
  int Datasync() override;

 private:
  int fd_;
};

// Where a drop of the pages from done on must start so that no large folio
// is cut in two (the 2 MiB boundary at or below done; see the .cc).
uint64_t FolioDropStart(uint64_t done);

class WritebackWindow {
 public:
  WritebackWindow(uint64_t window_bytes, bool drop) : window_(window_bytes), drop_(drop) {}

  // After [start, start+len) was written, start being where the previous
  // write ended. Returns 0, or -errno with *what naming the call
  // ("sync_file_range", "posix_fadvise").
  int AfterWrite(WindowCalls& calls, uint64_t start, uint64_t len, const char** what);

  // Everything below offset is clean and dropped (after an fsync).
  void MarkDropped(uint64_t offset) { done_ = offset; }

  // The end of a stream at end without an fsync: waits for the writeback of
  // what lies between the last waited range and end (starting it first), and
  // with drop removes it from the page cache. Makes nothing durable that
  // writeback would not have written anyway: no device cache flush, no
  // metadata. 0 or -errno with *what naming the call.
  int Finish(WindowCalls& calls, uint64_t end, const char** what);

 private:
  uint64_t window_;
  bool drop_;
  uint64_t done_ = 0;  // bytes below this are written back (and dropped)
};

}  // namespace writelab
