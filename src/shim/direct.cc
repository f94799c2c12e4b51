// SPDX-License-Identifier: MIT
// direct: the shim's own O_DIRECT descriptor of a claimed stream's file,
// the numbers it holds (which the program may take back), and the writes
// made through it. Every system call here is the real one, and errno is
// the program's again when the shim returns.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "shim/shim.h"

namespace writelab::shim {
namespace {

// The descriptors the shim holds for a stream (direct's), a bit each: the
// program's close, dup2 or close_range of one of those numbers takes it
// from the shim (Disown), which then never closes nor writes through it.
std::atomic<uint64_t> g_owned[kMaxFds / 64];
std::atomic<int> g_owned_count{0};

bool Owned(int fd) {
  return fd >= 0 && fd < kMaxFds &&
         (g_owned[fd / 64].load(std::memory_order_acquire) >> (fd % 64) & 1);
}

void Own(int fd) {
  if (fd < 0 || fd >= kMaxFds) return;
  g_owned[fd / 64].fetch_or(uint64_t{1} << (fd % 64), std::memory_order_release);
  g_owned_count.fetch_add(1, std::memory_order_relaxed);
}

// Where the shim's own descriptors go: high, out of the way of a program
// that expects the lowest free number (half the limit, at most 1001).
int MoveHigh(int fd) {
  rlimit lim{};
  const rlim_t floor = getrlimit(RLIMIT_NOFILE, &lim) == 0 ? lim.rlim_cur / 2 : 0;
  if (floor <= static_cast<rlim_t>(fd)) return fd;
  const int high = fcntl(fd, F_DUPFD_CLOEXEC, static_cast<int>(floor < 1001 ? floor : 1001));
  if (high < 0) return fd;
  RealClose(fd);
  return high;
}

}  // namespace

// direct: the shim's descriptor closed (unless the program took its number),
// and the file's writes the program's own again.
void CloseDirect(FdState& s) {
  if (s.direct_fd >= 0 && Owned(s.direct_fd)) {
    Disown(s.direct_fd);
    RealClose(s.direct_fd);
  }
  s.direct_fd = -1;
  s.direct = false;
}

// direct, at the claim: an O_DIRECT descriptor of the file, the shim's own
// (opened again through /proc/self/fd: the same file, whatever its name
// became), with the program's O_SYNC or O_DSYNC, and the file system's
// direct-I/O alignment (statx; 4 KiB where it does not say). A file the
// program opened O_APPEND, or that cannot be opened so, is refused.
bool OpenDirect(FdState& s, int fd) {
  const int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || (flags & O_APPEND)) {
    s.refusal = DirectRefusal::kAppend;
    return false;
  }
  char link[40];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  int own = openat(AT_FDCWD, link,
                   O_WRONLY | O_DIRECT | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | (flags & O_SYNC));
  struct statx sx {};
  const bool said = own >= 0 && statx(own, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) == 0 &&
                    (sx.stx_mask & STATX_DIOALIGN);
  // O_NONBLOCK only for the open (a lease fails it rather than wait).
  if (own < 0 || !SameFile(s, own) || (said && sx.stx_dio_offset_align == 0) ||
      fcntl(own, F_SETFL, O_DIRECT) != 0) {
    if (own >= 0) RealClose(own);
    s.refusal = DirectRefusal::kOpen;
    return false;
  }
  s.dio_offset = said ? sx.stx_dio_offset_align : 4096;
  s.dio_mem = said && sx.stx_dio_mem_align ? sx.stx_dio_mem_align : s.dio_offset;
  s.direct_fd = MoveHigh(own);
  Own(s.direct_fd);
  return true;
}

void Disown(int fd) {
  if (g_owned_count.load(std::memory_order_relaxed) == 0 || !Owned(fd)) return;
  g_owned[fd / 64].fetch_and(~(uint64_t{1} << (fd % 64)), std::memory_order_acq_rel);
  g_owned_count.fetch_sub(1, std::memory_order_relaxed);
}

bool WriteDirect(FdState& s, int fd, const iovec* iov, int count, off_t offset, int flags,
                 ssize_t* result, uint64_t* start) {
  if (!s.direct || flags != 0 || count <= 0) return false;
  const int saved = errno;
  const off_t at = offset >= 0 ? offset : RealLseek(fd, 0, SEEK_CUR);
  uint64_t bits = static_cast<uint64_t>(at), mem = 0, total = 0;
  for (int i = 0; i < count; ++i) {
    bits |= iov[i].iov_len;
    mem |= reinterpret_cast<uintptr_t>(iov[i].iov_base);
    total += iov[i].iov_len;
  }
  errno = saved;
  if (at < 0 || static_cast<uint64_t>(at) != s.next || total == 0) return false;  // not the stream
  if ((bits & (s.dio_offset - 1)) || (mem & (s.dio_mem - 1))) {
    if (!s.direct_bytes) {
      s.refusal = DirectRefusal::kUnaligned;
      CloseDirect(s);
    }
    return false;
  }
  if (!Owned(s.direct_fd) || !SameFile(s, s.direct_fd)) {  // the program took the number
    s.direct_fd = -1, s.direct = false;
    errno = saved;
    return false;
  }
  const ssize_t r = RealPwritev2(s.direct_fd, iov, count, at, 0);
  if (r < 0) {
    // EINVAL: the kernel's alignment is stricter than statx said. Any other
    // failure (the device's, the file system's) is not given to the
    // program: its own call is made instead and its result is what it sees,
    // as without writelab (a device error then reaches its fsync, from
    // writeback); the file is left as it writes it from then on.
    if (errno != EINVAL)
      s.failed = true;
    else if (!s.direct_bytes)
      s.refusal = DirectRefusal::kUnaligned;
    CloseDirect(s);
    errno = saved;
    return false;
  }
  if (offset < 0) RealLseek(fd, at + r, SEEK_SET);  // the program's position, as its write would
  s.direct_bytes += static_cast<uint64_t>(r);
  errno = saved;
  *result = r;
  *start = static_cast<uint64_t>(at);
  return true;
}

}  // namespace writelab::shim
