// SPDX-License-Identifier: MIT
#include "lib/paced_window.h"

#include <time.h>

#include <algorithm>

namespace writelab {
namespace {

// CLOCK_MONOTONIC in ns (the library does not link writelab's own clock).
uint64_t PacedNowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace

PacedWindow::PacedWindow(uint64_t target_ns, uint64_t window_bytes)
    : target_ns_(target_ns),
      window_(std::clamp(window_bytes, kMinWindow, kMaxWindow)),
      smallest_(window_),
      largest_(window_) {}

int PacedWindow::AfterWrite(WindowCalls& calls, uint64_t end, const char** what) {
  return end < flushed_ + window_ ? 0 : FlushTo(calls, end, what);
}

int PacedWindow::Flush(WindowCalls& calls, uint64_t end, const char** what) {
  return end <= flushed_ ? 0 : FlushTo(calls, end, what);
}

int PacedWindow::FlushTo(WindowCalls& calls, uint64_t end, const char** what) {
  const uint64_t span = end - flushed_;  // a caller's write may carry it past the window
  *what = "fdatasync";
  const uint64_t start = PacedNowNs();
  if (int rc = calls.Datasync(); rc < 0) return rc;
  const uint64_t took = PacedNowNs() - start;
  *what = "posix_fadvise";  // clean now: the pages go at once
  const uint64_t from = FolioDropStart(flushed_);
  if (int rc = calls.DropCache(from, end - from); rc < 0) return rc;
  flushed_ = end;
  ++flushes_;
  slowest_ns_ = std::max(slowest_ns_, took);
  if (took > target_ns_ / 2) {
    unmet_ += window_ == kMinWindow && span <= kUnmetSpan;
    window_ = std::max(kMinWindow, window_ / 2);
  } else if (took < target_ns_ / 4) {
    window_ = std::min(kMaxWindow, window_ + kStep);
  }
  smallest_ = std::min(smallest_, window_);
  largest_ = std::max(largest_, window_);
  return 0;
}

}  // namespace writelab
