// SPDX-License-Identifier: MIT
// The strategy on one descriptor: which descriptors the shim follows, the
// streams on them, and the window (src/lib/writeback_window.h) each claimed
// stream goes through. Every system call here is the real one (the shim's
// own wrappers are not re-entered), and errno is the program's again when
// the shim returns.
#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "shim/shim.h"

namespace writelab::shim {

FdState g_fds[kMaxFds];

namespace {

// The window drops what it waited for, but for the window strategy (under
// dontcache only the bytes written cached go through it).
bool DropInWindow() { return g_config.strategy != Strategy::kWindow; }

void FdLinkPath(int fd, char* out, size_t cap) {
  char link[40];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t len = readlink(link, out, cap - 1);
  out[len > 0 ? len : 0] = 0;
}

// Whether fd is still the file the state was made for (a descriptor can be
// closed and reused behind the shim's back: glibc's own close in pclose or
// freopen, close_range). Checked once a batch, not per write.
bool StillTheFile(const FdState& s, int fd) {
  struct stat st;
  return fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_dev == s.dev && st.st_ino == s.ino;
}

void BeginStream(FdState& s, uint64_t at) {
  s.start = s.next = s.pending = s.dropped = at;
  s.claimed = s.dontcache = false;
  s.window = WritebackWindow(g_config.window, DropInWindow());
  s.window.MarkDropped(at);
}

// Gives [s.pending, s.next) to the window (all of it with force). A call
// that fails stops the strategy on this file, and its done record says so.
void Pass(FdState& s, int fd, bool force) {
  const uint64_t len = s.next - s.pending;
  if (!s.claimed || len == 0 || (!force && len < kBatch)) return;
  FdWindowCalls calls(fd);
  const char* what = "";
  int rc = 0;
  if (!s.failed) switch (g_config.strategy) {
      case Strategy::kWindow:
      case Strategy::kWindowDrop:
        rc = s.window.AfterWrite(calls, s.pending, len, &what);
        break;
      case Strategy::kDontcache:  // bytes written cached (copy_file_range, stdio)
        rc = s.window.AfterWrite(calls, s.pending, len, &what);
        s.cached = true;
        break;
      case Strategy::kDropBehind:
        if (s.next > s.dropped + g_config.window) {
          rc = calls.DropCache(s.dropped, s.next - g_config.window - s.dropped);
          s.dropped = s.next - g_config.window;
        }
        break;
      case Strategy::kOff:
      case Strategy::kPlain:
        break;
    }
  s.failed |= rc < 0;
  if (!s.failed) s.handled += len;
  s.pending = s.next;
}

// The end of a claimed stream: what is left waited for and dropped (or,
// drop-behind, advised), nothing made durable beyond writeback. Under
// dontcache too: RWF_DONTCACHE starts each write's writeback but does not
// wait for it, and what is still under writeback at close is still cached
// (tens of MiB when the writer outruns the device).
void EndStream(FdState& s, int fd) {
  if (!s.claimed) return;
  Pass(s, fd, true);
  if (s.failed) return;
  FdWindowCalls calls(fd);
  const char* what = "";
  if (g_config.strategy == Strategy::kDropBehind)
    s.failed = calls.DropCache(s.start, s.next - s.start) < 0;
  else
    s.failed = s.window.Finish(calls, s.next, &what) < 0;
}

// The stream reached MIN_FILE: from now on it is the shim's. Under dontcache
// what it wrote so far goes out and is dropped once, and the rest is written
// uncached.
void Claim(FdState& s, int fd) {
  s.claimed = s.ever_claimed = true;
  ReportFile("claim", s, fd);
  if (g_config.strategy != Strategy::kDontcache) return;
  FdWindowCalls calls(fd);
  const uint64_t from = s.pending;
  if (calls.SyncRange(
          from, s.next - from,
          SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER) < 0 ||
      calls.DropCache(from, s.next - from) < 0) {
    s.failed = true;
    return;
  }
  s.handled += s.next - from;
  s.pending = s.next;
  s.window.MarkDropped(s.next);
  s.dontcache = true;
}

}  // namespace

FdState* Follow(int fd) {
  if (!g_active || t_inside || fd < 0 || fd >= kMaxFds) return nullptr;
  FdState& s = g_fds[fd];
  if (s.kind.load(std::memory_order_acquire) == kIgnored) return nullptr;
  pthread_mutex_lock(&s.mu);
  if (s.kind.load(std::memory_order_relaxed) == kUnknown) {
    const int saved = errno;
    struct stat st;
    const int flags = fcntl(fd, F_GETFL);
    bool follow = flags >= 0 && !(flags & O_DIRECT) && (flags & O_ACCMODE) != O_RDONLY &&
                  fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    if (follow && g_config.glob[0]) {
      char path[2048];
      FdLinkPath(fd, path, sizeof path);
      follow = fnmatch(g_config.glob, path, 0) == 0;
    }
    if (follow) {
      const off_t pos = RealLseek(fd, 0, SEEK_CUR);
      s.dev = st.st_dev, s.ino = st.st_ino;
      s.refused = s.cached = s.failed = s.ever_claimed = false;
      s.written = s.handled = s.unchecked = 0;
      s.stdio.store(0, std::memory_order_relaxed);
      BeginStream(s, pos >= 0 ? static_cast<uint64_t>(pos) : 0);
    }
    s.kind.store(follow ? kTracked : kIgnored, std::memory_order_release);
    errno = saved;
    if (!follow) {
      pthread_mutex_unlock(&s.mu);
      return nullptr;
    }
  }
  ++t_inside;  // until Unlock: a signal handler's write to fd must not wait for this lock
  return &s;
}

void Unlock(FdState* s) {
  if (!s) return;
  --t_inside;
  pthread_mutex_unlock(&s->mu);
}

void Wrote(FdState& s, int fd, uint64_t start, uint64_t n, bool uncached) {
  const int saved = errno;
  Inside inside;
  if (start != s.next) {  // not where the last write ended: a new stream
    EndStream(s, fd);
    BeginStream(s, start);
  }
  s.next = start + n;
  s.written += n;
  s.unchecked += n;
  if (uncached) {
    s.handled += n;
    s.pending = s.next;
  } else if (g_config.strategy != Strategy::kPlain) {
    if (s.unchecked >= kBatch) {
      s.unchecked = 0;
      if (!StillTheFile(s, fd)) {  // not ours any more: forget it
        s.kind.store(kUnknown, std::memory_order_release);
        errno = saved;
        return;
      }
    }
    if (!s.claimed && s.next - s.start >= g_config.min_file) Claim(s, fd);
    Pass(s, fd, false);
  }
  errno = saved;
}

void CatchUpStdio(FdState& s, int fd) {
  s.stdio.store(0, std::memory_order_relaxed);
  const off_t pos = RealLseek(fd, 0, SEEK_CUR);
  if (pos > 0 && static_cast<uint64_t>(pos) > s.next)
    Wrote(s, fd, s.next, static_cast<uint64_t>(pos) - s.next, false);
}

void Finish(int fd) {
  if (fd < 0 || fd >= kMaxFds) return;
  FdState& s = g_fds[fd];
  if (s.kind.load(std::memory_order_acquire) != kTracked) {
    s.kind.store(kUnknown, std::memory_order_release);
    return;
  }
  const int saved = errno;
  Inside inside;
  pthread_mutex_lock(&s.mu);
  if (s.kind.load(std::memory_order_relaxed) == kTracked && StillTheFile(s, fd)) {
    if (s.stdio.load(std::memory_order_relaxed)) CatchUpStdio(s, fd);
    EndStream(s, fd);
    if (s.written) ReportFile("done", s, fd);
  }
  s.kind.store(kUnknown, std::memory_order_release);
  pthread_mutex_unlock(&s.mu);
  errno = saved;
}

void Forget(int fd) {
  if (fd >= 0 && fd < kMaxFds) g_fds[fd].kind.store(kUnknown, std::memory_order_release);
}

void ReportUnseen(int fd) {
  if (!g_active || t_inside || fd < 0 || fd >= kMaxFds ||
      g_fds[fd].kind.load(std::memory_order_acquire) != kUnknown)
    return;
  const int saved = errno;
  Inside inside;
  struct stat st;
  const int flags = fcntl(fd, F_GETFL);
  if (flags >= 0 && (flags & O_ACCMODE) != O_RDONLY && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
      static_cast<uint64_t>(st.st_size) >= g_config.min_file) {
    FdState unseen;
    unseen.dev = st.st_dev, unseen.ino = st.st_ino;
    ReportFile("unseen", unseen, fd);
  }
  errno = saved;
}

void ResetAfterFork() {
  for (FdState& s : g_fds) {
    pthread_mutex_init(&s.mu, nullptr);
    s.kind.store(kUnknown, std::memory_order_relaxed);
  }
}

}  // namespace writelab::shim
