// SPDX-License-Identifier: MIT
// StreamWriter: write a large file sequentially at close to the device's
// speed without flooding the page cache or stalling the rest of the system.
//
// Plain buffered writes leave gigabytes dirty; the kernel then throttles every
// writer on the machine and a small fsync elsewhere waits behind them (see
// docs/stream.md for the measurements). StreamWriter picks the best method the
// running kernel and file system accept, in the order of
// StreamWriterOptions::preference (default: dontcache, window-drop, direct):
//
//   kDontcache   pwritev2(RWF_DONTCACHE), Linux 6.14+: buffered writes whose
//                pages are dropped once written back.
//   kWindowDrop  Linus Torvalds' overwrite.c scheme with Jeff Garzik's
//                fadvise: after each write, start writeback of it
//                (sync_file_range WRITE); once a full window lies behind,
//                wait for the older window (WAIT_BEFORE|WRITE|WAIT_AFTER) and
//                drop it from the cache (POSIX_FADV_DONTNEED). At most about
//                two windows are dirty at any time.
//   kDirect      O_DIRECT through an internal aligned buffer of one window;
//                the unaligned tail is written buffered at Finish().
//   kPaced       buffered writes, fdatasync and DONTNEED after each window,
//                the window sized from how long those flushes take so that
//                other programs' fsync waits at most about pace_target_ns
//                (docs/stream.md#paced). Not in the default preference: its
//                flushes cost some throughput; ask for it where other
//                programs' fsync latency matters more.
//
// A method is tried on the first Append(); if the kernel refuses it
// (EOPNOTSUPP or EINVAL before any byte is written) the next one is tried, and
// choice() says what was picked and why. Nothing falls back silently.
//
// Threading: one StreamWriter is used by one thread at a time.
// Durability: nothing is durable before Finish() returns successfully.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "writelab/error.h"
#include "writelab/unique_fd.h"
#include "writelab/window.h"

namespace writelab {

enum class StreamMethod { kDontcache, kWindowDrop, kDirect, kPaced };

// "dontcache", "window-drop", "direct", "paced".
const char* StreamMethodName(StreamMethod method);

struct StreamWriterOptions {
  // Write-behind window for kWindowDrop and buffer size for kDirect.
  uint64_t window_bytes = kDefaultWindowBytes;
  // Methods to try, best first; must not be empty.
  std::vector<StreamMethod> preference = {StreamMethod::kDontcache, StreamMethod::kWindowDrop,
                                          StreamMethod::kDirect};
  // O_DIRECT alignment of memory, offsets and lengths. 4096 suits every
  // device whose logical block size is at most 4 KiB.
  size_t direct_alignment = 4096;
  // kPaced: the latency other programs' fsync should stay under; the
  // writer keeps its own flushes under half of it.
  uint64_t pace_target_ns = 20'000'000;
};

struct StreamAttempt {
  StreamMethod method;
  int error = 0;  // 0 if accepted, else the errno that refused it
};

class StreamWriter {
 public:
  // Creates path, or truncates it if it exists (O_WRONLY|O_CREAT|O_TRUNC).
  static Result<StreamWriter> Open(const std::string& path, StreamWriterOptions options = {});
  // Takes over fd, a regular file open for writing, positioned at its start.
  static Result<StreamWriter> Adopt(UniqueFd fd, std::string path,
                                    StreamWriterOptions options = {});

  StreamWriter(StreamWriter&&) noexcept;
  StreamWriter& operator=(StreamWriter&&) noexcept;
  ~StreamWriter();  // closes the file; does not make it durable

  // Appends data at the end of what was written so far. EINTR and short
  // writes are handled inside; an error is final for this writer.
  Status Append(std::span<const std::byte> data);
  // Writes what is buffered, waits for writeback, fsyncs, and drops the
  // file's pages from the cache. After success every appended byte is durable.
  Status Finish();

  // The method in use; meaningful after the first Append().
  StreamMethod method() const;
  // Every method tried, in order, with the errno that refused it.
  const std::vector<StreamAttempt>& attempts() const;
  // One line for people: "dontcache (first choice, accepted)" or
  // "window-drop (dontcache refused: EOPNOTSUPP)".
  std::string choice() const;
  uint64_t bytes_appended() const;

 private:
  struct State;
  explicit StreamWriter(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace writelab
