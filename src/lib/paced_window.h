// SPDX-License-Identifier: MIT
// The paced strategy (docs/stream.md#paced): a streaming writer that keeps
// other programs' fsync calm. On a device with a volatile write cache every
// fdatasync ends in a cache flush, which makes the device write all it holds
// unflushed, whoever wrote it: a victim's flush beside a streamer waits for
// the streamer's bytes. So the paced writer flushes its own data itself,
// after each window (fdatasync, then posix_fadvise DONTNEED of what it made
// clean), and the device never holds more than about one window of its
// data; and it sizes the next window from how long that flush took, which
// is what a victim's flush would wait: halved when it took more than half
// the target, grown by 1 MiB when it took less than a quarter, between
// 1 MiB and 64 MiB (additive increase, multiplicative decrease, as blk-wbt
// does for the queue depth).
//
// Its flushes make its data durable earlier than a writer that syncs at the
// end; they never make anything less durable. What they cost is measured
// (docs/stream.md): on the disk where it was built, about 10% of the
// throughput of a 64 MiB window.
#pragma once

#include <cstdint>

#include "lib/writeback_window.h"  // WindowCalls

namespace writelab {

class PacedWindow {
 public:
  static constexpr uint64_t kMinWindow = uint64_t{1} << 20;
  static constexpr uint64_t kMaxWindow = uint64_t{64} << 20;
  static constexpr uint64_t kStep = uint64_t{1} << 20;
  // The most a flush may cover and still count as unmet (unmet_flushes):
  // the smallest window and a write past it.
  static constexpr uint64_t kUnmetSpan = 2 * kMinWindow;

  // target_ns: the flush latency the writer keeps its own flushes under,
  // twice what it aims at; window_bytes: the first window.
  PacedWindow(uint64_t target_ns, uint64_t window_bytes);

  // After the file was written up to end (bytes from its start): when a
  // window lies unflushed behind end, flush it, drop it, and size the next.
  // 0, or -errno with *what naming the call ("fdatasync", "posix_fadvise").
  int AfterWrite(WindowCalls& calls, uint64_t end, const char** what);
  // Flushes and drops what lies unflushed below end, however little (the
  // end of a pass or a stream); nothing when nothing does.
  int Flush(WindowCalls& calls, uint64_t end, const char** what);
  // The most a write at end may add without leaving more than the window
  // unflushed (at least 1 byte).
  uint64_t Room(uint64_t end) const {
    return flushed_ + window_ > end ? flushed_ + window_ - end : window_;
  }

  // Everything below offset is flushed and dropped (a new pass, an fsync).
  void MarkFlushed(uint64_t offset) { flushed_ = offset; }

  uint64_t window() const { return window_; }
  uint64_t flushes() const { return flushes_; }
  uint64_t smallest_window() const { return smallest_; }
  uint64_t largest_window() const { return largest_; }
  uint64_t slowest_flush_ns() const { return slowest_ns_; }
  // Flushes of at most kUnmetSpan that took more than half the target with
  // the window at its smallest already: the target is below what the device
  // gives beside this writer, and a lower one would only add flushes. (A
  // writer whose writes are larger than that makes larger flushes: those
  // are not counted, the device was not asked for a small one.)
  uint64_t unmet_flushes() const { return unmet_; }

 private:
  uint64_t target_ns_;
  uint64_t window_;
  uint64_t flushed_ = 0;
  uint64_t flushes_ = 0;
  uint64_t smallest_, largest_;
  uint64_t slowest_ns_ = 0;
  uint64_t unmet_ = 0;

  int FlushTo(WindowCalls& calls, uint64_t end, const char** what);
};

}  // namespace writelab
