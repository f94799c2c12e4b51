// SPDX-License-Identifier: MIT
// The strategy on one descriptor: which descriptors the shim follows, the
// streams on them, and the window (src/lib/writeback_window.h) each claimed
// stream goes through. Every system call here is the real one (the shim's
// own wrappers are not re-entered), and errno is the program's again when
// the shim returns.
#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>

#include "shim/shim.h"

namespace writelab::shim {
namespace {

// The descriptors' states, a chunk of kChunkFds at a time, each made (by
// mmap, zeroed) the first time one of its descriptors is written.
std::atomic<FdState*> g_chunks[kMaxFds / kChunkFds];
std::atomic<int> g_chunks_made{0};  // FinishAll looks at none while it is 0

FdState* Slot(int fd) {
  if (FdState* s = Peek(fd)) return s;
  if (fd < 0 || fd >= kMaxFds) return nullptr;
  void* mem = mmap(nullptr, sizeof(FdState) * kChunkFds, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return nullptr;
  FdState* chunk = new (mem) FdState[kChunkFds];
  FdState* expected = nullptr;
  if (!g_chunks[fd / kChunkFds].compare_exchange_strong(expected, chunk)) {
    munmap(mem, sizeof(FdState) * kChunkFds);  // another thread made it first
    chunk = expected;
  } else {
    g_chunks_made.fetch_add(1, std::memory_order_release);
  }
  return &chunk[fd % kChunkFds];
}

// The window drops what it waited for, but for the window strategy (under
// dontcache only the bytes written cached go through it).
bool DropInWindow() { return g_config.strategy != RunStrategy::kWindow; }

void FdLinkPath(int fd, char* out, size_t cap) {
  char link[40];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t len = readlink(link, out, cap - 1);
  out[len > 0 ? len : 0] = 0;
}

}  // namespace

bool SameFile(const FdState& s, int fd) {
  struct stat st;
  return fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_dev == s.dev && st.st_ino == s.ino;
}

namespace {

// The window's calls on the program's file. Writeback is started through
// the program's own descriptor (SYNC_FILE_RANGE_WRITE alone reports
// nothing to it), but every wait goes through a read-only descriptor of the
// shim's own, opened for the occasion and closed after: sync_file_range's
// WAIT flags report a writeback error to the open file they are called on
// and consume it there (file_check_and_advance_wb_err), so a wait on the
// program's descriptor would take the error its own fsync is owed. Where no
// such descriptor can be had (a file the program may write but not read,
// no descriptor left), nothing is waited for: writeback is started and
// what is clean is dropped (the stream's done record says no-wait).
class ShimCalls final : public WindowCalls {
 public:
  ShimCalls(FdState& s, int fd) : s_(s), fd_(fd) {}
  ~ShimCalls() {
    if (own_ >= 0) RealClose(own_);
  }
  ShimCalls(const ShimCalls&) = delete;
  ShimCalls& operator=(const ShimCalls&) = delete;

  int SyncRange(uint64_t offset, uint64_t len, unsigned flags) override {
    int fd = fd_;
    if (flags & (SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WAIT_AFTER)) {
      fd = Own();
      if (fd < 0) {
        s_.nowait = true;
        fd = fd_, flags = SYNC_FILE_RANGE_WRITE;
      }
    }
    return sync_file_range(fd, static_cast<off_t>(offset), static_cast<off_t>(len), flags) == 0
               ? 0
               : -errno;
  }
  // A flush, like a wait, goes through the shim's own descriptor (fdatasync
  // reports and consumes a writeback error on the file it is called on);
  // without one, nothing is flushed and the done record says no-wait.
  int Datasync() override {
    const int fd = Own();
    if (fd < 0) {
      s_.nowait = true;
      return 0;
    }
    return fdatasync(fd) == 0 ? 0 : -errno;
  }
  // POSIX_FADV_DONTNEED starts writeback and drops clean pages; it reports
  // no writeback error to anyone.
  int DropCache(uint64_t offset, uint64_t len) override {
    return -posix_fadvise(fd_, static_cast<off_t>(offset), static_cast<off_t>(len),
                          POSIX_FADV_DONTNEED);
  }

 private:
  // O_NONBLOCK: a lease another process holds fails the open instead of
  // making the writer wait for it to be broken.
  int Own() {
    if (own_ >= 0 || tried_) return own_;
    tried_ = true;
    char link[40];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd_);
    own_ = openat(AT_FDCWD, link, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (own_ >= 0 && !SameFile(s_, own_)) {  // the descriptor was replaced under the shim
      RealClose(own_);
      own_ = -1;
    }
    return own_;
  }

  FdState& s_;
  int fd_;
  int own_ = -1;
  bool tried_ = false;
};

void BeginStream(FdState& s, uint64_t at) {
  s.start = s.next = s.pending = s.dropped = at;
  s.claimed = false;
  s.dontcache.store(false, std::memory_order_relaxed);
  s.window = WritebackWindow(g_config.window, DropInWindow());
  s.window.MarkDropped(at);
  s.paced = PacedWindow(g_config.pace_target_ns, g_config.window);
  s.paced.MarkFlushed(at);
}

// Gives [s.pending, s.next) to the window (all of it with force). A call
// that fails stops the strategy on this file, and its done record says so.
void Pass(FdState& s, int fd, bool force) {
  const uint64_t len = s.next - s.pending;
  if (!s.claimed || len == 0 || (!force && len < kBatch)) return;
  if (s.refusal != DirectRefusal::kNone) {  // direct refused: as the program wrote it
    s.pending = s.next;
    return;
  }
  ShimCalls calls(s, fd);
  const char* what = "";
  int rc = 0;
  if (!s.failed) switch (g_config.strategy) {
      case RunStrategy::kWindow:
      case RunStrategy::kWindowDrop:
        rc = s.window.AfterWrite(calls, s.pending, len, &what);
        break;
      case RunStrategy::kDontcache:  // bytes written cached (copy_file_range, stdio)
      case RunStrategy::kDirect:     // and, under direct, writes not aligned for O_DIRECT
        rc = s.window.AfterWrite(calls, s.pending, len, &what);
        s.cached = true;
        break;
      case RunStrategy::kDropBehind:
        if (s.next > s.dropped + g_config.window) {
          rc = calls.DropCache(s.dropped, s.next - g_config.window - s.dropped);
          s.dropped = s.next - g_config.window;
        }
        break;
      case RunStrategy::kPaced:
        rc = s.paced.AfterWrite(calls, s.next, &what);
        break;
      case RunStrategy::kPlain:
        break;
    }
  s.failed |= rc < 0;
  if (!s.failed) s.handled += len;
  s.pending = s.next;
}

// The end of a claimed stream: what is left waited for and dropped (or,
// drop-behind, advised), nothing made durable beyond writeback; but paced,
// whose last window is flushed like every other (through the shim's own
// descriptor: the program's fsync still gets any error) and dropped. Under
// dontcache too: RWF_DONTCACHE starts each write's writeback but does not
// wait for it, and what is still under writeback at close is still cached
// (tens of MiB when the writer outruns the device).
void EndStream(FdState& s, int fd) {
  CloseDirect(s);
  if (!s.claimed) return;
  Pass(s, fd, true);
  if (!s.failed && s.refusal == DirectRefusal::kNone) {
    ShimCalls calls(s, fd);
    const char* what = "";
    if (g_config.strategy == RunStrategy::kDropBehind)
      s.failed = calls.DropCache(s.start, s.next - s.start) < 0;
    else if (g_config.strategy == RunStrategy::kPaced)  // its last window, flushed and dropped
      s.failed = s.paced.Flush(calls, s.next, &what) < 0;
    else
      s.failed = s.window.Finish(calls, s.next, &what) < 0;
  }
  s.paced_flushes += s.paced.flushes();
  s.paced_unmet += s.paced.unmet_flushes();
  if (s.paced.slowest_flush_ns() > s.paced_slowest_ns)
    s.paced_slowest_ns = s.paced.slowest_flush_ns();
  s.paced = PacedWindow(g_config.pace_target_ns, g_config.window);  // counted once
  s.paced.MarkFlushed(s.next);
}

// The stream reached MIN_FILE: from now on it is the shim's. Under dontcache
// and direct what it wrote so far goes out and is dropped once, and the rest
// is written uncached, or direct where aligned (a file once refused direct
// is not tried again: the same program writes it the same way).
void Claim(FdState& s, int fd) {
  s.claimed = s.ever_claimed = true;
  ReportFile("claim", s, fd);
  const bool direct = g_config.strategy == RunStrategy::kDirect;
  if (!direct && g_config.strategy != RunStrategy::kDontcache) return;
  if (direct && (s.refusal != DirectRefusal::kNone || !OpenDirect(s, fd))) return;
  ShimCalls calls(s, fd);
  const uint64_t from = s.pending;
  if (calls.SyncRange(
          from, s.next - from,
          SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER) < 0 ||
      calls.DropCache(from, s.next - from) < 0) {
    s.failed = true;
    CloseDirect(s);
    return;
  }
  s.handled += s.next - from;
  s.pending = s.next;
  s.window.MarkDropped(s.next);
  if (direct)
    s.direct = true;
  else
    s.dontcache.store(true, std::memory_order_relaxed);
}

// Whether the shim follows fd (a first look at it: its type, then, for a
// regular file, the shim started, its flags and path). fstat comes first:
// the dynamic loader makes it too, so a seccomp filter the process started
// under allows it; nothing else is called before Start has checked.
bool Classify(FdState& s, int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || !Start()) return false;
  const int flags = fcntl(fd, F_GETFL);
  bool follow = flags >= 0 && !(flags & O_DIRECT) && (flags & O_ACCMODE) != O_RDONLY;
  if (follow && g_config.glob[0]) {
    char path[2048];
    FdLinkPath(fd, path, sizeof path);
    follow = fnmatch(g_config.glob, path, 0) == 0;
  }
  if (!follow) return false;
  const off_t pos = RealLseek(fd, 0, SEEK_CUR);
  s.dev = st.st_dev, s.ino = st.st_ino;
  s.refused = s.cached = s.failed = s.ever_claimed = s.nowait = false;
  s.written = s.handled = s.unchecked = s.direct_bytes = 0;
  s.paced_flushes = s.paced_unmet = s.paced_slowest_ns = 0;
  s.refusal = DirectRefusal::kNone;
  s.direct = false, s.direct_fd = -1;  // a descriptor of a state let go unfinished: lost
  s.stdio.store(0, std::memory_order_relaxed);
  BeginStream(s, pos >= 0 ? static_cast<uint64_t>(pos) : 0);
  return true;
}

}  // namespace

FdState* Peek(int fd) {
  if (fd < 0 || fd >= kMaxFds) return nullptr;
  FdState* chunk = g_chunks[fd / kChunkFds].load(std::memory_order_acquire);
  return chunk ? &chunk[fd % kChunkFds] : nullptr;
}

FdState* Follow(int fd) {
  if (!Active() || t_inside || fd < 0 || fd >= kMaxFds) return nullptr;
  FdState* p = Peek(fd);
  if (p && p->kind.load(std::memory_order_acquire) == kIgnored) return nullptr;
  const int saved = errno;
  if (!p) p = Slot(fd);
  if (!p) {
    errno = saved;
    return nullptr;
  }
  FdState& s = *p;
  // Inside from before the lock until after Unlock's unlock: a signal
  // handler that interrupts this thread while it holds the lock makes the
  // real call instead of waiting for it (counted only after the lock, or no
  // longer before the unlock, the handler's write waited for ever).
  ++t_inside;
  pthread_mutex_lock(&s.mu);
  if (s.kind.load(std::memory_order_relaxed) == kUnknown) {
    const bool follow = Classify(s, fd);
    s.kind.store(follow ? kTracked : kIgnored, std::memory_order_release);
    errno = saved;
    if (!follow) {
      pthread_mutex_unlock(&s.mu);
      --t_inside;
      return nullptr;
    }
  }
  errno = saved;
  return &s;
}

FdState* FollowUnlocked(int fd) {
  if (!Active() || t_inside || fd < 0 || fd >= kMaxFds) return nullptr;
  if (FdState* p = Peek(fd); p && p->kind.load(std::memory_order_acquire) == kTracked) return p;
  FdState* s = Follow(fd);
  if (!s) return nullptr;
  Unlock(s);
  return s;
}

void Unlock(FdState* s) {
  if (!s) return;
  pthread_mutex_unlock(&s->mu);
  --t_inside;  // after the unlock: Follow says why
}

bool Relock(FdState* s, uint64_t bytes) {
  ++t_inside;  // before the lock: Follow says why
  if (pthread_mutex_trylock(&s->mu) != 0) {
    --t_inside;
    s->aside.fetch_add(bytes, std::memory_order_relaxed);
    return false;
  }
  if (s->kind.load(std::memory_order_relaxed) != kTracked) {
    pthread_mutex_unlock(&s->mu);
    --t_inside;
    return false;
  }
  return true;
}

bool Lock(FdState* s) {
  ++t_inside;  // before the lock: Follow says why
  pthread_mutex_lock(&s->mu);
  if (s->kind.load(std::memory_order_relaxed) != kTracked) {
    pthread_mutex_unlock(&s->mu);
    --t_inside;
    return false;
  }
  return true;
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
  } else if (g_config.strategy != RunStrategy::kPlain) {
    if (s.unchecked >= kBatch) {
      s.unchecked = 0;
      if (!SameFile(s, fd)) {  // not ours any more: forget it
        CloseDirect(s);
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
  FdState* p = Peek(fd);
  if (!p) return;
  FdState& s = *p;
  if (s.kind.load(std::memory_order_acquire) != kTracked || t_inside) {
    // t_inside: a signal handler interrupted this thread inside the shim,
    // maybe holding this very lock; the state is let go, not waited for.
    s.kind.store(kUnknown, std::memory_order_release);
    return;
  }
  const int saved = errno;
  Inside inside;
  pthread_mutex_lock(&s.mu);
  if (s.kind.load(std::memory_order_relaxed) == kTracked && SameFile(s, fd)) {
    if (s.stdio.load(std::memory_order_relaxed)) CatchUpStdio(s, fd);
    EndStream(s, fd);
    if (s.written || s.aside.load(std::memory_order_relaxed)) ReportFile("done", s, fd);
  }
  CloseDirect(s);
  s.kind.store(kUnknown, std::memory_order_release);
  pthread_mutex_unlock(&s.mu);
  errno = saved;
}

void Forget(int fd) {
  if (FdState* s = Peek(fd)) s->kind.store(kUnknown, std::memory_order_release);
}

void ReportUnseen(int fd) {
  if (!Active() || t_inside || fd < 0 || fd >= kMaxFds) return;
  if (FdState* s = Peek(fd); s && s->kind.load(std::memory_order_acquire) != kUnknown) return;
  const int saved = errno;
  Inside inside;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
      static_cast<uint64_t>(st.st_size) < g_config.min_file) {
    errno = saved;
    return;
  }
  const int flags = Start() ? fcntl(fd, F_GETFL) : -1;
  if (flags >= 0 && (flags & O_ACCMODE) != O_RDONLY) {
    FdState unseen;
    unseen.dev = st.st_dev, unseen.ino = st.st_ino;
    ReportFile("unseen", unseen, fd);
  }
  errno = saved;
}

// Only what is in use is written to: every page written here is a page the
// kernel copies for the child (a shell forks for every command it runs).
void ResetAfterFork() {
  if (g_chunks_made.load(std::memory_order_relaxed) == 0) return;
  for (auto& c : g_chunks) {
    FdState* chunk = c.load(std::memory_order_relaxed);
    if (!chunk) continue;
    for (int i = 0; i < kChunkFds; ++i) {
      FdState& s = chunk[i];
      if (s.kind.load(std::memory_order_relaxed) != kUnknown)
        s.kind.store(kUnknown, std::memory_order_relaxed);
      if (s.direct_fd >= 0) CloseDirect(s);  // the parent's, copied: the child's to close
      if (s.mu.__data.__lock != 0) pthread_mutex_init(&s.mu, nullptr);
    }
  }
}

// Before the filter: every stream ended, and every regular file the
// process has open for writing named to the supervisor (a handover
// record), since the shim will see none of its writes from now on.
void FinishAll() {
  if (g_chunks_made.load(std::memory_order_acquire) == 0) return;
  for (int c = 0; c < kMaxFds / kChunkFds; ++c)
    if (FdState* chunk = g_chunks[c].load(std::memory_order_acquire))
      for (int i = 0; i < kChunkFds; ++i)
        if (chunk[i].kind.load(std::memory_order_relaxed) == kTracked) Finish(c * kChunkFds + i);
}

void StepAside(const char* reason) {
  if (!Active() || t_inside || !Start()) return;  // started, to be heard
  FinishAll();
  ReportLeave(reason);
  const int saved = errno;
  if (DIR* d = opendir("/proc/self/fd")) {
    const int own = dirfd(d);
    while (dirent* e = readdir(d)) {
      const int fd = atoi(e->d_name);
      struct stat st;
      const int flags =
          e->d_name[0] >= '0' && e->d_name[0] <= '9' && fd != own && fd != g_config.report
              ? fcntl(fd, F_GETFL)
              : -1;
      if (flags < 0 || (flags & O_ACCMODE) == O_RDONLY || fstat(fd, &st) != 0 ||
          !S_ISREG(st.st_mode))
        continue;
      FdState handed;
      handed.dev = st.st_dev, handed.ino = st.st_ino;
      ReportFile("handover", handed, fd);
    }
    closedir(d);
  }
  errno = saved;
  g_active.store(false, std::memory_order_relaxed);
}

}  // namespace writelab::shim
