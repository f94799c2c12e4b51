// SPDX-License-Identifier: MIT
// libwritelab-run.so: `writelab run --strategy S -- CMD` preloads it into CMD
// and its descendants (LD_PRELOAD), so that a program nobody can change
// streams the way the stream experiment's winners do, in the writer's own
// thread (the writer is paced, as overwrite.c was):
//
//   window       after the writes, sync_file_range WRITE; once more than a
//                window lies behind the newest, wait for it (the library's
//                WritebackWindow, src/lib, the only implementation)
//   window-drop  the same, then POSIX_FADV_DONTNEED what was waited for
//   dontcache    writes become pwritev2(RWF_DONTCACHE) (Linux 6.14)
//   drop-behind  POSIX_FADV_DONTNEED a window behind the newest, without
//                waiting (what nocache does at close, as the file grows)
//
// Only regular files that grow past MIN_FILE are handled; below it a file is
// left alone. At close (or fclose) the window's tail is waited for and
// dropped: nothing is made durable that writeback would not have written
// (no fsync, no device cache flush). What it handled is told to writelab
// over a pipe (src/shim/protocol.h); writelab's supervisor handles what the
// shim cannot see (static binaries, io_uring, raw system calls).
//
// Wrapped: write, pwrite(64), writev, pwritev(64)(v2), copy_file_range,
// fwrite(_unlocked), lseek(64), close, fclose, dup2, dup3. Other stdio calls
// (fprintf, fputs...) reach the file through glibc's own write, which no
// preload sees: the file is handled at the next fwrite, at fclose, or by
// the supervisor meanwhile.
//
// Cost: a call on a descriptor that is not a growing regular file is the
// real call plus a table lookup; fwrite on a small file adds a few
// nanoseconds (bench/run_overhead.sh).
#include <dlfcn.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "lib/writeback_window.h"
#include "port/linux_compat.h"
#include "shim/protocol.h"

namespace {

namespace proto = writelab::run_protocol;
using writelab::FdWindowCalls;
using writelab::WritebackWindow;

// kPlain: writelab run --compare's plain runs: the writes as they are,
// only counted and reported, so that plain's files are accounted the same way.
enum class Strategy : uint8_t { kOff, kPlain, kWindow, kWindowDrop, kDontcache, kDropBehind };

struct Config {
  Strategy strategy = Strategy::kOff;
  uint64_t window = 8u << 20;
  uint64_t min_file = 8u << 20;
  char glob[1024] = {};
  int report = -1;  // the pipe, or -1
  dev_t report_dev = 0;
  ino_t report_ino = 0;
};
Config g_config;
bool g_active = false;  // a strategy is configured (set once, by the constructor)

// What is passed to the window at a time: a call per MiB, not per write.
constexpr uint64_t kBatch = 1u << 20;
constexpr int kMaxFds = 4096;  // a descriptor above it is left alone

enum Kind : uint8_t { kUnknown = 0, kIgnored = 1, kTracked = 2 };

struct FdState {
  std::atomic<uint8_t> kind{kUnknown};
  pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
  dev_t dev = 0;
  ino_t ino = 0;
  bool append = false;
  bool claimed = false;
  bool dontcache = false;  // writes go out with RWF_DONTCACHE
  bool refused = false;    // the file system refused RWF_DONTCACHE
  bool failed = false;     // a window call failed: the rest as the program wrote it
  bool cached = false;     // under dontcache, bytes it could not write uncached
                           // (copy_file_range, stdio): those went through the window
  uint64_t pos = 0;        // the file position, for write() and writev()
  uint64_t next = 0;       // where the last write ended
  uint64_t end = 0;        // the highest offset written
  uint64_t pending = 0;    // bytes from here to next not yet given to the window
  uint64_t dropped = 0;    // drop-behind: advised up to here
  uint64_t written = 0;
  uint64_t handled = 0;
  // Bytes given to fwrite since the position was last read: counted
  // without the lock (a race loses a count, never a byte of the file).
  std::atomic<uint64_t> stdio{0};
  WritebackWindow window{8u << 20, true};
};
FdState g_fds[kMaxFds];

// The window drops what it waited for, but for the window strategy (under
// dontcache only copy_file_range's cached bytes go through it).
bool DropInWindow() { return g_config.strategy != Strategy::kWindow; }

template <class F>
F Real(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

// The real functions, looked up at load (and on first use, for a call made
// before the constructor ran: another library's constructor).
#define WL_REAL(type, name)                                                       \
  type g_real_##name = nullptr;                                                   \
  inline type real_##name() {                                                     \
    type f = g_real_##name;                                                       \
    if (__builtin_expect(f == nullptr, 0)) f = g_real_##name = Real<type>(#name); \
    return f;                                                                     \
  }
using WriteFn = ssize_t (*)(int, const void*, size_t);
using PwriteFn = ssize_t (*)(int, const void*, size_t, off_t);
using WritevFn = ssize_t (*)(int, const iovec*, int);
using PwritevFn = ssize_t (*)(int, const iovec*, int, off_t);
using Pwritev2Fn = ssize_t (*)(int, const iovec*, int, off_t, int);
using CopyFn = ssize_t (*)(int, off_t*, int, off_t*, size_t, unsigned);
using LseekFn = off_t (*)(int, off_t, int);
using CloseFn = int (*)(int);
using Dup2Fn = int (*)(int, int);
using Dup3Fn = int (*)(int, int, int);
using FcloseFn = int (*)(FILE*);
using FwriteFn = size_t (*)(const void*, size_t, size_t, FILE*);
WL_REAL(WriteFn, write)
WL_REAL(PwriteFn, pwrite)
WL_REAL(PwriteFn, pwrite64)
WL_REAL(WritevFn, writev)
WL_REAL(PwritevFn, pwritev)
WL_REAL(PwritevFn, pwritev64)
WL_REAL(Pwritev2Fn, pwritev2)
WL_REAL(Pwritev2Fn, pwritev64v2)
WL_REAL(CopyFn, copy_file_range)
WL_REAL(LseekFn, lseek)
WL_REAL(CloseFn, close)
WL_REAL(Dup2Fn, dup2)
WL_REAL(Dup3Fn, dup3)
WL_REAL(FcloseFn, fclose)
WL_REAL(FwriteFn, fwrite)
WL_REAL(FwriteFn, fwrite_unlocked)
#undef WL_REAL

// ---- records to writelab --------------------------------------------------

// Appends text, then a number, to buf at *n (bounded).
void Put(char* buf, size_t* n, const char* text) {
  while (*text && *n + 1 < proto::kMaxRecord) buf[(*n)++] = *text++;
}
void PutNumber(char* buf, size_t* n, uint64_t v) {
  char digits[24];
  int k = 0;
  do digits[k++] = static_cast<char>('0' + v % 10);
  while ((v /= 10) && k < 23);
  while (k && *n + 1 < proto::kMaxRecord) buf[(*n)++] = digits[--k];
}
void PutPath(char* buf, size_t* n, const char* path) {
  static const char kHex[] = "0123456789ABCDEF";
  for (; *path && *n + 4 < proto::kMaxRecord; ++path) {
    const auto c = static_cast<unsigned char>(*path);
    if (proto::PathByteKept(c)) {
      buf[(*n)++] = static_cast<char>(c);
    } else {
      buf[(*n)++] = '%';
      buf[(*n)++] = kHex[c >> 4];
      buf[(*n)++] = kHex[c & 15];
    }
  }
}

// Sends one record, unless the report descriptor is no longer writelab's
// pipe (the program closed it or put something else there): never a byte
// into a file of the program's. A full pipe drops the record (the pipe is
// non-blocking: the program never waits for writelab).
void Send(char* buf, size_t n) {
  if (g_config.report < 0) return;
  struct stat st;
  if (fstat(g_config.report, &st) != 0 || st.st_dev != g_config.report_dev ||
      st.st_ino != g_config.report_ino) {
    g_config.report = -1;
    return;
  }
  buf[n++] = '\n';
  const int saved = errno;
  (void)!real_write()(g_config.report, buf, n);
  errno = saved;
}

// "/proc/self/fd/N" -> the path, or "" (into out, of size cap).
void FdPath(int fd, char* out, size_t cap) {
  char link[32] = "/proc/self/fd/";
  size_t n = strlen(link);
  PutNumber(link, &n, static_cast<uint64_t>(fd));
  link[n] = 0;
  const ssize_t len = readlink(link, out, cap - 1);
  out[len > 0 ? len : 0] = 0;
}

void Report(const char* type, const FdState& s, int fd) {
  char buf[proto::kMaxRecord + 1];
  size_t n = 0;
  Put(buf, &n, proto::kMagic);
  Put(buf, &n, " ");
  Put(buf, &n, type);
  Put(buf, &n, " pid=");
  PutNumber(buf, &n, static_cast<uint64_t>(getpid()));
  Put(buf, &n, " dev=");
  PutNumber(buf, &n, s.dev);
  Put(buf, &n, " ino=");
  PutNumber(buf, &n, s.ino);
  if (type[0] == 'd') {  // done
    Put(buf, &n, " written=");
    PutNumber(buf, &n, s.written);
    Put(buf, &n, " handled=");
    PutNumber(buf, &n, s.handled);
    Put(buf, &n, " mech=");
    const Strategy st = g_config.strategy;
    Put(buf, &n,
        st == Strategy::kPlain        ? "plain"
        : !s.claimed                  ? "small"
        : s.failed                    ? "failed"
        : s.refused                   ? "refused-dontcache"
        : s.cached                    ? "dontcache+window-drop"
        : st == Strategy::kWindow     ? "window"
        : st == Strategy::kWindowDrop ? "window-drop"
        : st == Strategy::kDontcache  ? "dontcache"
                                      : "drop-behind");
  }
  char path[2048];
  FdPath(fd, path, sizeof path);
  Put(buf, &n, " path=");
  PutPath(buf, &n, path);
  Send(buf, n);
}

// ---- the strategy on one descriptor --------------------------------------

// Whether fd is a regular file (matching the glob) that the shim follows;
// its state, locked, or null.
FdState* Follow(int fd) {
  if (g_config.strategy == Strategy::kOff || fd < 0 || fd >= kMaxFds) return nullptr;
  FdState& s = g_fds[fd];
  uint8_t kind = s.kind.load(std::memory_order_acquire);
  if (kind == kIgnored) return nullptr;
  pthread_mutex_lock(&s.mu);
  if (s.kind.load(std::memory_order_relaxed) == kUnknown) {
    struct stat st;
    bool follow = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    if (follow && g_config.glob[0]) {
      char path[2048];
      FdPath(fd, path, sizeof path);
      follow = fnmatch(g_config.glob, path, 0) == 0;
    }
    if (follow) {
      const int flags = fcntl(fd, F_GETFL);
      const off_t pos = real_lseek()(fd, 0, SEEK_CUR);
      s.dev = st.st_dev, s.ino = st.st_ino;
      s.append = flags >= 0 && (flags & O_APPEND);
      s.pos = pos >= 0 ? static_cast<uint64_t>(pos) : 0;
      s.next = s.pending = s.dropped = s.pos;
      s.end = static_cast<uint64_t>(st.st_size);
      s.claimed = s.dontcache = s.refused = s.cached = s.failed = false;
      s.written = s.handled = 0;
      s.stdio.store(0, std::memory_order_relaxed);
      s.window = WritebackWindow(g_config.window, DropInWindow());
      s.window.MarkDropped(s.pos);
    }
    s.kind.store(follow ? kTracked : kIgnored, std::memory_order_release);
    if (!follow) {
      pthread_mutex_unlock(&s.mu);
      return nullptr;
    }
  }
  return &s;
}

void Unlock(FdState* s) {
  if (s) pthread_mutex_unlock(&s->mu);
}

// Gives [s.pending, s.next) to the window (all of it with force). A call
// that fails stops the strategy on this file, and its done record says so.
void Pass(FdState& s, int fd, bool force) {
  const uint64_t len = s.next - s.pending;
  if (len == 0 || (!force && len < kBatch)) return;
  FdWindowCalls calls(fd);
  const char* what = "";
  const int saved = errno;
  int rc = 0;
  switch (g_config.strategy) {
    case Strategy::kWindow:
    case Strategy::kWindowDrop:
      rc = s.failed ? 0 : s.window.AfterWrite(calls, s.pending, len, &what);
      break;
    case Strategy::kDropBehind:
      if (!s.failed && s.next > s.dropped + g_config.window) {
        rc = calls.DropCache(s.dropped, s.next - g_config.window - s.dropped);
        s.dropped = s.next - g_config.window;
      }
      break;
    case Strategy::kDontcache:  // bytes written cached (copy_file_range, stdio): window-drop
      rc = s.failed ? 0 : s.window.AfterWrite(calls, s.pending, len, &what);
      s.cached = true;
      break;
    case Strategy::kOff:
    case Strategy::kPlain:
      break;
  }
  s.failed |= rc < 0;
  if (!s.failed) s.handled += len;
  s.pending = s.next;
  errno = saved;
}

// The file reached MIN_FILE: from now on it is the shim's. Under dontcache
// what was written so far goes out and is dropped once, and the rest is
// written uncached.
void Claim(FdState& s, int fd) {
  s.claimed = true;
  Report("claim", s, fd);
  if (g_config.strategy == Strategy::kDontcache) {
    FdWindowCalls calls(fd);
    const int saved = errno;
    const uint64_t from = s.pending;
    (void)calls.SyncRange(
        from, s.next - from,
        SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
    (void)calls.DropCache(from, s.next - from);
    errno = saved;
    s.handled += s.next - from;
    s.pending = s.next;
    s.window.MarkDropped(s.next);
    s.dontcache = true;
  }
}

// After n bytes were written at start: uncached, with RWF_DONTCACHE (the
// kernel drops them once written back), or cached, for the window.
void Wrote(FdState& s, int fd, uint64_t start, uint64_t n, bool uncached) {
  if (start != s.next) {  // not where the last write ended: a new stream
    Pass(s, fd, true);
    s.pending = s.dropped = start;
    s.window = WritebackWindow(g_config.window, DropInWindow());
    s.window.MarkDropped(start);
  }
  s.next = start + n;
  if (s.next > s.end) s.end = s.next;
  s.written += n;
  if (uncached) {
    s.handled += n;
    s.pending = s.next;
    return;
  }
  if (g_config.strategy == Strategy::kPlain) return;  // counted only
  if (!s.claimed && s.end >= g_config.min_file) Claim(s, fd);
  if (s.claimed) Pass(s, fd, false);
}

// The end of the stream on fd: the tail waited for and dropped; reported.
void Finish(int fd) {
  if (fd < 0 || fd >= kMaxFds) return;
  FdState& s = g_fds[fd];
  if (s.kind.load(std::memory_order_acquire) != kTracked) {
    s.kind.store(kUnknown, std::memory_order_release);
    return;
  }
  pthread_mutex_lock(&s.mu);
  if (s.stdio.exchange(0, std::memory_order_relaxed)) {  // what stdio wrote since the last look
    const off_t pos = real_lseek()(fd, 0, SEEK_CUR);
    if (pos > 0 && static_cast<uint64_t>(pos) > s.next)
      Wrote(s, fd, s.next, static_cast<uint64_t>(pos) - s.next, false);
  }
  if (s.claimed) {
    Pass(s, fd, true);
    FdWindowCalls calls(fd);
    const char* what = "";
    const int saved = errno;
    if (!s.failed && g_config.strategy == Strategy::kDropBehind)
      s.failed = calls.DropCache(0, 0) < 0;  // starts writeback of the tail, drops what is clean
    else if (!s.failed && (!s.dontcache || s.cached))
      s.failed = s.window.Finish(calls, s.next, &what) < 0;
    errno = saved;
  }
  if (s.written) Report("done", s, fd);
  s.kind.store(kUnknown, std::memory_order_release);
  pthread_mutex_unlock(&s.mu);
}

// A write at offset (-1: the file position) of iov, under the strategy.
ssize_t Vectored(FdState* s, int fd, const iovec* iov, int count, off_t offset, int flags) {
  const bool uncached = s->dontcache;
  ssize_t r = real_pwritev2()(fd, iov, count, offset, uncached ? flags | RWF_DONTCACHE : flags);
  if (uncached && r < 0 && (errno == EOPNOTSUPP || errno == EINVAL)) {
    s->dontcache = false;  // said in the done record: refused-dontcache
    s->refused = true;
    return Vectored(s, fd, iov, count, offset, flags);
  }
  if (r > 0) {
    uint64_t start;
    if (offset >= 0) {
      start = static_cast<uint64_t>(offset);
    } else if (s->append) {
      const off_t end = real_lseek()(fd, 0, SEEK_CUR);
      start = end >= r ? static_cast<uint64_t>(end - r) : 0;
      s->pos = static_cast<uint64_t>(end);
    } else {
      start = s->pos;
      s->pos += static_cast<uint64_t>(r);
    }
    Wrote(*s, fd, start, static_cast<uint64_t>(r), uncached);
  }
  return r;
}

// fwrite's bytes, counted before the call (what counts is when to look):
// once a batch has gone by, the kernel's position says how far stdio has
// written, and that is passed on. The common case is inline, with no lock
// and no call: a program of small fwrites pays a few loads and a store.
__attribute__((noinline)) void StdioBatch(int fd, size_t bytes, uint8_t kind) {
  FdState* s = Follow(fd);
  if (!s) return;
  if (kind == kUnknown) s->stdio.store(bytes, std::memory_order_relaxed);
  if (s->stdio.load(std::memory_order_relaxed) >= kBatch) {
    s->stdio.store(0, std::memory_order_relaxed);
    const off_t pos = real_lseek()(fd, 0, SEEK_CUR);
    if (pos > 0 && static_cast<uint64_t>(pos) > s->next)
      Wrote(*s, fd, s->next, static_cast<uint64_t>(pos) - s->next, false);
  }
  Unlock(s);
}

inline void StdioWrote(FILE* f, size_t bytes) {
  const int fd = f->_fileno;  // glibc's FILE; -1 for a stream without a descriptor
  if (!g_active || fd < 0 || fd >= kMaxFds) return;
  FdState& fast = g_fds[fd];
  const uint8_t kind = fast.kind.load(std::memory_order_relaxed);
  if (kind == kIgnored) return;
  if (kind == kTracked) {
    const uint64_t now = fast.stdio.load(std::memory_order_relaxed) + bytes;
    fast.stdio.store(now, std::memory_order_relaxed);
    if (now < kBatch) return;
  }
  StdioBatch(fd, bytes, kind);
}

Strategy ParseStrategy(const char* text, size_t n) {
  struct {
    const char* name;
    Strategy s;
  } const kNames[] = {{"plain", Strategy::kPlain},
                      {"window", Strategy::kWindow},
                      {"window-drop", Strategy::kWindowDrop},
                      {"dontcache", Strategy::kDontcache},
                      {"drop-behind", Strategy::kDropBehind}};
  for (const auto& k : kNames)
    if (strlen(k.name) == n && strncmp(k.name, text, n) == 0) return k.s;
  return Strategy::kOff;
}

__attribute__((constructor)) void Init() {
  const char* config = getenv(proto::kConfigEnv);
  if (!config) return;
  const char* comma = strchr(config, ',');
  if (!comma) return;
  char* rest = nullptr;
  const uint64_t window = strtoull(comma + 1, &rest, 10);
  const uint64_t min_file = rest && *rest == ',' ? strtoull(rest + 1, nullptr, 10) : 0;
  if (window == 0) return;
  if (const char* glob = getenv(proto::kPathEnv))
    strncpy(g_config.glob, glob, sizeof g_config.glob - 1);
  if (const char* fd = getenv(proto::kFdEnv)) {
    struct stat st;
    const int n = atoi(fd);
    if (n > 2 && fstat(n, &st) == 0 && S_ISFIFO(st.st_mode)) {
      g_config.report = n;
      g_config.report_dev = st.st_dev, g_config.report_ino = st.st_ino;
    }
  }
  g_config.window = window;
  g_config.min_file = min_file;
  g_config.strategy = ParseStrategy(config, static_cast<size_t>(comma - config));
  g_active = g_config.strategy != Strategy::kOff;
  char buf[proto::kMaxRecord + 1];
  size_t n = 0;
  Put(buf, &n, proto::kMagic);
  Put(buf, &n, " hello pid=");
  PutNumber(buf, &n, static_cast<uint64_t>(getpid()));
  char exe[2048];
  const ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  exe[len > 0 ? len : 0] = 0;
  Put(buf, &n, " exe=");
  PutPath(buf, &n, exe);
  Send(buf, n);
}

// Every descriptor still followed when the program exits (not _exit).
__attribute__((destructor)) void Fini() {
  for (int fd = 0; fd < kMaxFds; ++fd)
    if (g_fds[fd].kind.load(std::memory_order_relaxed) == kTracked) Finish(fd);
}

}  // namespace

// ---- the wrapped calls ----------------------------------------------------

extern "C" {

ssize_t write(int fd, const void* buf, size_t n) {
  FdState* s = Follow(fd);
  if (!s) return real_write()(fd, buf, n);
  iovec iov{const_cast<void*>(buf), n};
  const ssize_t r = Vectored(s, fd, &iov, 1, -1, 0);
  Unlock(s);
  return r;
}

ssize_t pwrite(int fd, const void* buf, size_t n, off_t offset) {
  FdState* s = Follow(fd);
  if (!s) return real_pwrite()(fd, buf, n, offset);
  iovec iov{const_cast<void*>(buf), n};
  const ssize_t r = offset < 0 ? (errno = EINVAL, -1) : Vectored(s, fd, &iov, 1, offset, 0);
  Unlock(s);
  return r;
}

ssize_t pwrite64(int fd, const void* buf, size_t n, off_t offset) {
  FdState* s = Follow(fd);
  if (!s) return real_pwrite64()(fd, buf, n, offset);
  iovec iov{const_cast<void*>(buf), n};
  const ssize_t r = offset < 0 ? (errno = EINVAL, -1) : Vectored(s, fd, &iov, 1, offset, 0);
  Unlock(s);
  return r;
}

ssize_t writev(int fd, const iovec* iov, int count) {
  FdState* s = Follow(fd);
  if (!s) return real_writev()(fd, iov, count);
  const ssize_t r = Vectored(s, fd, iov, count, -1, 0);
  Unlock(s);
  return r;
}

ssize_t pwritev(int fd, const iovec* iov, int count, off_t offset) {
  FdState* s = Follow(fd);
  if (!s) return real_pwritev()(fd, iov, count, offset);
  const ssize_t r = offset < 0 ? (errno = EINVAL, -1) : Vectored(s, fd, iov, count, offset, 0);
  Unlock(s);
  return r;
}

ssize_t pwritev64(int fd, const iovec* iov, int count, off_t offset) {
  FdState* s = Follow(fd);
  if (!s) return real_pwritev64()(fd, iov, count, offset);
  const ssize_t r = offset < 0 ? (errno = EINVAL, -1) : Vectored(s, fd, iov, count, offset, 0);
  Unlock(s);
  return r;
}

ssize_t pwritev2(int fd, const iovec* iov, int count, off_t offset, int flags) {
  FdState* s = Follow(fd);
  if (!s) return real_pwritev2()(fd, iov, count, offset, flags);
  const ssize_t r = Vectored(s, fd, iov, count, offset, flags);
  Unlock(s);
  return r;
}

ssize_t pwritev64v2(int fd, const iovec* iov, int count, off_t offset, int flags) {
  FdState* s = Follow(fd);
  if (!s) return real_pwritev64v2()(fd, iov, count, offset, flags);
  const ssize_t r = Vectored(s, fd, iov, count, offset, flags);
  Unlock(s);
  return r;
}

// cp's way (coreutils 9): the kernel copies, so RWF_DONTCACHE has no say;
// the copied range goes through the window-drop window whatever the
// strategy, and the done record says so.
ssize_t copy_file_range(int in, off_t* in_off, int out, off_t* out_off, size_t n, unsigned flags) {
  FdState* s = Follow(out);
  if (!s) return real_copy_file_range()(in, in_off, out, out_off, n, flags);
  const uint64_t start = out_off ? static_cast<uint64_t>(*out_off) : s->pos;
  const ssize_t r = real_copy_file_range()(in, in_off, out, out_off, n, flags);
  if (r > 0) {
    if (!out_off) s->pos += static_cast<uint64_t>(r);
    Wrote(*s, out, start, static_cast<uint64_t>(r), false);
  }
  Unlock(s);
  return r;
}

off_t lseek(int fd, off_t offset, int whence) {
  const off_t r = real_lseek()(fd, offset, whence);
  if (r >= 0 && fd >= 0 && fd < kMaxFds &&
      g_fds[fd].kind.load(std::memory_order_acquire) == kTracked) {
    pthread_mutex_lock(&g_fds[fd].mu);
    g_fds[fd].pos = static_cast<uint64_t>(r);
    pthread_mutex_unlock(&g_fds[fd].mu);
  }
  return r;
}

off_t lseek64(int fd, off_t offset, int whence) { return lseek(fd, offset, whence); }

// A regular file of MIN_FILE or more, open for writing, that no wrapped
// call wrote (io_uring, mmap, a raw system call): said as "unseen", so that
// writelab's supervisor knows of it even if it never saw it open.
void ReportUnseen(int fd) {
  if (g_config.strategy == Strategy::kOff || fd < 0 || fd >= kMaxFds ||
      g_fds[fd].kind.load(std::memory_order_acquire) != kUnknown)
    return;
  struct stat st;
  const int saved = errno;
  const int flags = fcntl(fd, F_GETFL);
  if (flags >= 0 && (flags & O_ACCMODE) != O_RDONLY && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
      static_cast<uint64_t>(st.st_size) >= g_config.min_file) {
    FdState unseen;
    unseen.dev = st.st_dev, unseen.ino = st.st_ino;
    Report("unseen", unseen, fd);
  }
  errno = saved;
}

int close(int fd) {
  ReportUnseen(fd);
  Finish(fd);
  if (fd == g_config.report) g_config.report = -1;
  return real_close()(fd);
}

int dup2(int from, int to) {
  if (from != to) Finish(to);
  if (to == g_config.report) g_config.report = -1;
  return real_dup2()(from, to);
}

int dup3(int from, int to, int flags) {
  if (from != to) Finish(to);
  if (to == g_config.report) g_config.report = -1;
  return real_dup3()(from, to, flags);
}

int fclose(FILE* f) {
  const int fd = fileno(f);
  if (fd >= 0 && fd < kMaxFds && g_fds[fd].kind.load(std::memory_order_acquire) == kTracked) {
    fflush(f);
    Finish(fd);
  }
  return real_fclose()(f);
}

size_t fwrite(const void* p, size_t size, size_t n, FILE* f) {
  StdioWrote(f, size * n);
  return real_fwrite()(p, size, n, f);  // a tail call
}

size_t fwrite_unlocked(const void* p, size_t size, size_t n, FILE* f) {
  StdioWrote(f, size * n);
  return real_fwrite_unlocked()(p, size, n, f);
}

}  // extern "C"
