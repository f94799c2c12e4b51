// The ground floor's whole-buffer writes: EINTR is retried and a short write
// is continued in one place, for the library, the reporters and the
// experiments (STYLE.md 6). Untimed: the runner (io/runner.h) is the timed
// seam for an experiment's measured writes; these are for everything else
// (result files, zero fills, the library's own writes).
//
// Every function returns 0, or -errno of the call that failed; a call that
// writes 0 bytes is -EIO (it would otherwise loop forever).
#pragma once

#include <sys/types.h>

#include <atomic>
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

// Writes zeros over [from, to), a few MiB per call. stop, if given, is
// checked between calls: -EINTR once it is set.
int FillZeros(int fd, uint64_t from, uint64_t to, const std::atomic<bool>* stop = nullptr);

}  // namespace writelab
