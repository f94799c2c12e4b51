// SPDX-License-Identifier: MIT
// The ground floor's whole-buffer writes: EINTR is retried and a short write
// is continued in one place, for the library, the reporters and the
// experiments (docs/style.md 6). Untimed: the runner (io/runner.h) is the timed
// seam for an experiment's measured writes; these are for everything else
// (result files, zero fills, the library's own writes).
//
// Every function returns 0, or -errno of the call that failed; a call that
// writes 0 bytes is -EIO (it would otherwise loop forever).
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>

namespace writelab {

// write(2) of all of [buf, buf+len) at the file position: pipes, devices,
// sockets.
int WriteAll(int fd, const void* buf, size_t len);

// pwritev2(2) of all of [buf, buf+len) at offset with rwf_flags (pwrite when
// 0). calls, if given, is incremented once per system call made.
int PwriteAll(int fd, const void* buf, size_t len, uint64_t offset, int rwf_flags = 0,
              uint64_t* calls = nullptr);

// After n bytes of iov[0..count) were written: skips what was written, so
// iov and count describe the rest (a partly written buffer is advanced in
// place, and emptied buffers are skipped).
void AdvanceIov(iovec*& iov, int& count, uint64_t n);

// All of iov[0..count) at offset through write(iov, count, offset), which
// returns bytes written or -errno (a RecordSink's WriteV). The array is
// consumed; offset is advanced by what was written, so after a failure it
// is where the failed call wrote. calls, if given, counts the calls.
template <class Write>
int WriteVecAll(iovec* iov, int count, uint64_t& offset, Write&& write, uint64_t* calls = nullptr) {
  AdvanceIov(iov, count, 0);
  while (count > 0) {
    ssize_t n = write(iov, count, offset);
    if (calls) ++*calls;
    if (n == -EINTR) continue;
    if (n < 0) return static_cast<int>(n);
    if (n == 0) return -EIO;
    offset += static_cast<uint64_t>(n);
    AdvanceIov(iov, count, static_cast<uint64_t>(n));
  }
  return 0;
}

// Writes zeros over [from, to), a few MiB per call. stop, if given, is
// checked between calls: -EINTR once it is set.
int FillZeros(int fd, uint64_t from, uint64_t to, const std::atomic<bool>* stop = nullptr);

}  // namespace writelab
