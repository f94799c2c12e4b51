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
//                waiting (what nocache does at close, done as the file grows)
//
// Only streams of at least MIN_FILE bytes to regular files are handled (a
// stream: writes each beginning where the last ended); the rest is left
// alone. At the end of a stream (a jump, close, fclose, exit) its tail is
// waited for and dropped: nothing is made durable that writeback would not
// have written (no fsync, no device cache flush). What it handled is told to
// writelab (report.cc); writelab's supervisor handles what the shim cannot
// see (static binaries, io_uring, raw system calls).
//
// Wrapped: write, pwrite(64), writev, pwritev(64)(v2), copy_file_range,
// fwrite(_unlocked), lseek(64), close, close_range, closefrom, fclose, dup2,
// dup3. Other stdio calls (fprintf, fputs...) reach the file through glibc's
// own write, which no preload sees: their bytes are taken up at the next
// fwrite, and a file written only that way is said "unseen" at fclose for
// the supervisor. A wrapper returns what the real call returned, with its
// errno; the shim's own calls keep errno as they found it.
//
// Cost: a call on a descriptor the shim does not follow is the real call
// plus a table lookup (close adds fcntl and fstat, once, for a descriptor it
// has not seen written); fwrite on a small file adds a few nanoseconds
// (bench/run_compare.sh).
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "port/linux_compat.h"
#include "shim/protocol.h"
#include "shim/shim.h"

namespace writelab::shim {

Config g_config;
bool g_active = false;
thread_local int t_inside __attribute__((tls_model("initial-exec"))) = 0;

namespace {

namespace proto = run_protocol;

template <class F>
F Resolve(F& cached, const char* name) {
  F f = cached;
  if (__builtin_expect(f == nullptr, 0)) f = cached = reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
  return f;
}

#define WL_REAL(type, name)     \
  type g_real_##name = nullptr; \
  inline type real_##name() { return Resolve(g_real_##name, #name); }
using WriteFn = ssize_t (*)(int, const void*, size_t);
using PwriteFn = ssize_t (*)(int, const void*, size_t, off_t);
using WritevFn = ssize_t (*)(int, const iovec*, int);
using PwritevFn = ssize_t (*)(int, const iovec*, int, off_t);
using Pwritev2Fn = ssize_t (*)(int, const iovec*, int, off_t, int);
using CopyFn = ssize_t (*)(int, off_t*, int, off_t*, size_t, unsigned);
using LseekFn = off_t (*)(int, off_t, int);
using CloseFn = int (*)(int);
using CloseRangeFn = int (*)(unsigned, unsigned, int);
using ClosefromFn = void (*)(int);
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
WL_REAL(CloseRangeFn, close_range)
WL_REAL(ClosefromFn, closefrom)
WL_REAL(Dup2Fn, dup2)
WL_REAL(Dup3Fn, dup3)
WL_REAL(FcloseFn, fclose)
WL_REAL(FwriteFn, fwrite)
WL_REAL(FwriteFn, fwrite_unlocked)
#undef WL_REAL

// A write of iov at offset (-1: the file position, as write and writev)
// under the strategy; returns what the real call returned, errno too. Where
// it began is asked of the kernel after a positional write: the position
// belongs to the open file, which read(), a dup or a fork's child may have
// moved. RWF_DONTCACHE that the file system refuses (EOPNOTSUPP) is the
// plain write, said in the file's done record.
ssize_t Vectored(FdState* s, int fd, const iovec* iov, int count, off_t offset, int flags) {
  const bool uncached = s->dontcache;
  ssize_t r = real_pwritev2()(fd, iov, count, offset, uncached ? flags | RWF_DONTCACHE : flags);
  if (uncached && r < 0 && errno == EOPNOTSUPP) {
    s->dontcache = false;
    s->refused = true;
    r = real_pwritev2()(fd, iov, count, offset, flags);
  }
  if (r <= 0) return r;
  const int saved = errno;
  uint64_t start = static_cast<uint64_t>(offset);
  if (offset < 0) {
    const off_t end = real_lseek()(fd, 0, SEEK_CUR);
    start = end >= r ? static_cast<uint64_t>(end - r) : 0;
  }
  errno = saved;
  Wrote(*s, fd, start, static_cast<uint64_t>(r), uncached);
  return r;
}

// fwrite's bytes, counted before the call (what counts is when to look):
// once a batch has gone by, the kernel's position says how far stdio has
// written. The common case is inline, with no lock and no call.
__attribute__((noinline)) void StdioBatch(int fd, size_t bytes, uint8_t kind) {
  FdState* s = Follow(fd);
  if (!s) return;
  if (kind == kUnknown) s->stdio.store(bytes, std::memory_order_relaxed);
  if (s->stdio.load(std::memory_order_relaxed) >= kBatch) CatchUpStdio(*s, fd);
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

// WRITELAB_RUN_FD=N:DEV:INO: the socket, and which one it must be.
void TakeReportSocket(const char* text) {
  char* end = nullptr;
  const long fd = strtol(text, &end, 10);
  if (!end || *end != ':') return;
  const unsigned long long dev = strtoull(end + 1, &end, 10);
  if (!end || *end != ':') return;
  const unsigned long long ino = strtoull(end + 1, nullptr, 10);
  struct stat st;
  if (fd > 2 && fd < 1 << 20 && fstat(static_cast<int>(fd), &st) == 0 && S_ISSOCK(st.st_mode) &&
      st.st_dev == dev && st.st_ino == ino) {
    g_config.report = static_cast<int>(fd);
    g_config.report_dev = st.st_dev, g_config.report_ino = st.st_ino;
  }
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
  if (const char* fd = getenv(proto::kFdEnv)) TakeReportSocket(fd);
  g_config.window = window;
  g_config.min_file = min_file;
  g_config.strategy = ParseStrategy(config, static_cast<size_t>(comma - config));
  g_active = g_config.strategy != Strategy::kOff;
  if (!g_active) return;
  pthread_atfork(nullptr, nullptr, ResetAfterFork);
  ReportHello();
}

// Every descriptor still followed when the program exits (not _exit).
__attribute__((destructor)) void Fini() {
  for (int fd = 0; fd < kMaxFds; ++fd)
    if (g_fds[fd].kind.load(std::memory_order_relaxed) == kTracked) Finish(fd);
}

}  // namespace

ssize_t RealWrite(int fd, const void* buf, size_t n) { return real_write()(fd, buf, n); }
ssize_t RealPwritev2(int fd, const iovec* iov, int count, off_t offset, int flags) {
  return real_pwritev2()(fd, iov, count, offset, flags);
}
off_t RealLseek(int fd, off_t offset, int whence) { return real_lseek()(fd, offset, whence); }

}  // namespace writelab::shim

// ---- the wrapped calls ----------------------------------------------------

using namespace writelab::shim;  // NOLINT: the C entry points below

// Only the wrapped calls leave the library (-fvisibility=hidden for the rest:
// a program that links writelab's own library keeps its own window).
#define WL_EXPORT __attribute__((visibility("default")))

extern "C" {

WL_EXPORT ssize_t write(int fd, const void* buf, size_t n) {
  FdState* s = Follow(fd);
  if (!s) return real_write()(fd, buf, n);
  iovec iov{const_cast<void*>(buf), n};
  const ssize_t r = Vectored(s, fd, &iov, 1, -1, 0);
  Unlock(s);
  return r;
}

WL_EXPORT ssize_t pwrite(int fd, const void* buf, size_t n, off_t offset) {
  FdState* s = offset >= 0 ? Follow(fd) : nullptr;
  if (!s) return real_pwrite()(fd, buf, n, offset);
  iovec iov{const_cast<void*>(buf), n};
  const ssize_t r = Vectored(s, fd, &iov, 1, offset, 0);
  Unlock(s);
  return r;
}

WL_EXPORT ssize_t pwrite64(int fd, const void* buf, size_t n, off_t offset) {
  FdState* s = offset >= 0 ? Follow(fd) : nullptr;
  if (!s) return real_pwrite64()(fd, buf, n, offset);
  iovec iov{const_cast<void*>(buf), n};
  const ssize_t r = Vectored(s, fd, &iov, 1, offset, 0);
  Unlock(s);
  return r;
}

WL_EXPORT ssize_t writev(int fd, const iovec* iov, int count) {
  FdState* s = Follow(fd);
  if (!s) return real_writev()(fd, iov, count);
  const ssize_t r = Vectored(s, fd, iov, count, -1, 0);
  Unlock(s);
  return r;
}

WL_EXPORT ssize_t pwritev(int fd, const iovec* iov, int count, off_t offset) {
  FdState* s = offset >= 0 ? Follow(fd) : nullptr;
  if (!s) return real_pwritev()(fd, iov, count, offset);
  const ssize_t r = Vectored(s, fd, iov, count, offset, 0);
  Unlock(s);
  return r;
}

WL_EXPORT ssize_t pwritev64(int fd, const iovec* iov, int count, off_t offset) {
  FdState* s = offset >= 0 ? Follow(fd) : nullptr;
  if (!s) return real_pwritev64()(fd, iov, count, offset);
  const ssize_t r = Vectored(s, fd, iov, count, offset, 0);
  Unlock(s);
  return r;
}

WL_EXPORT ssize_t pwritev2(int fd, const iovec* iov, int count, off_t offset, int flags) {
  FdState* s = offset >= -1 ? Follow(fd) : nullptr;
  if (!s) return real_pwritev2()(fd, iov, count, offset, flags);
  const ssize_t r = Vectored(s, fd, iov, count, offset, flags);
  Unlock(s);
  return r;
}

WL_EXPORT ssize_t pwritev64v2(int fd, const iovec* iov, int count, off_t offset, int flags) {
  FdState* s = offset >= -1 ? Follow(fd) : nullptr;
  if (!s) return real_pwritev64v2()(fd, iov, count, offset, flags);
  const ssize_t r = Vectored(s, fd, iov, count, offset, flags);
  Unlock(s);
  return r;
}

// cp's way (coreutils 9): the kernel copies, so RWF_DONTCACHE has no say;
// the copied range goes through the window-drop window whatever the
// strategy, and the done record says so. cp asks for the whole file in one
// call (up to 2 GiB, the kernel's most a call), which left all of it dirty
// until the call returned: the copy goes in pieces of kBatch, each given to
// the window as a write() of it would be, and returns their sum, as a copy
// that the kernel cut short would (an error after the first piece returns
// what was copied; the caller's next call meets the error). At most what
// the kernel copies in one call, so that the sum fits where it did.
WL_EXPORT ssize_t copy_file_range(int in, off_t* in_off, int out, off_t* out_off, size_t n,
                                  unsigned flags) {
  FdState* s = n ? Follow(out) : nullptr;
  if (!s) return real_copy_file_range()(in, in_off, out, out_off, n, flags);
  constexpr size_t kMaxRwCount = 0x7ffff000;  // MAX_RW_COUNT with 4 KiB pages
  n = n < kMaxRwCount ? n : kMaxRwCount;
  const int saved = errno;
  size_t total = 0;
  while (total < n) {
    const size_t len = n - total < kBatch ? n - total : kBatch;
    const off_t at = out_off ? *out_off : -1;
    const ssize_t r = real_copy_file_range()(in, in_off, out, out_off, len, flags);
    if (r < 0 && total == 0) {  // the call's own result, errno too
      Unlock(s);
      return r;
    }
    if (r <= 0) {
      errno = saved;
      break;
    }
    const int after = errno;
    uint64_t start = static_cast<uint64_t>(at);
    if (at < 0) {
      const off_t end = real_lseek()(out, 0, SEEK_CUR);
      start = end >= r ? static_cast<uint64_t>(end - r) : 0;
    }
    errno = after;
    Wrote(*s, out, start, static_cast<uint64_t>(r), false);
    total += static_cast<size_t>(r);
    if (static_cast<size_t>(r) < len) break;  // the end of the input, or the kernel's own cut
  }
  Unlock(s);
  return static_cast<ssize_t>(total);
}

// The position is asked of the kernel after each write (Vectored): lseek
// needs no bookkeeping of its own, but stdio's bytes before it are taken up.
WL_EXPORT off_t lseek(int fd, off_t offset, int whence) {
  if (g_active && !t_inside && fd >= 0 && fd < kMaxFds &&
      g_fds[fd].stdio.load(std::memory_order_relaxed))
    if (FdState* s = Follow(fd)) {
      CatchUpStdio(*s, fd);
      Unlock(s);
    }
  return real_lseek()(fd, offset, whence);
}

WL_EXPORT off_t lseek64(int fd, off_t offset, int whence) { return lseek(fd, offset, whence); }

WL_EXPORT int close(int fd) {
  ReportUnseen(fd);
  Finish(fd);
  if (fd == g_config.report) g_config.report = -1;
  return real_close()(fd);
}

WL_EXPORT int close_range(unsigned first, unsigned last, int flags) {
  for (unsigned fd = first; fd <= last && fd < static_cast<unsigned>(kMaxFds); ++fd) {
    Finish(static_cast<int>(fd));
    if (static_cast<int>(fd) == g_config.report) g_config.report = -1;
  }
  return real_close_range()(first, last, flags);
}

WL_EXPORT void closefrom(int lowfd) {
  for (int fd = lowfd < 0 ? 0 : lowfd; fd < kMaxFds; ++fd) Finish(fd);
  if (g_config.report >= lowfd) g_config.report = -1;
  real_closefrom()(lowfd);
}

WL_EXPORT int dup2(int from, int to) {
  if (from != to) Finish(to);
  if (to == g_config.report) g_config.report = -1;
  return real_dup2()(from, to);
}

WL_EXPORT int dup3(int from, int to, int flags) {
  if (from != to) Finish(to);
  if (to == g_config.report) g_config.report = -1;
  return real_dup3()(from, to, flags);
}

WL_EXPORT int fclose(FILE* f) {
  const int fd = f->_fileno;
  if (g_active && fd >= 0 && fd < kMaxFds) {
    const uint8_t kind = g_fds[fd].kind.load(std::memory_order_acquire);
    if (kind != kIgnored) {
      fflush(f);                               // what stdio still holds reaches the file first
      if (kind == kUnknown) ReportUnseen(fd);  // written only by fprintf and the like
      Finish(fd);
    }
  }
  const int r = real_fclose()(f);
  Forget(fd);  // glibc's own close: the number is free again
  return r;
}

WL_EXPORT size_t fwrite(const void* p, size_t size, size_t n, FILE* f) {
  StdioWrote(f, size * n);
  return real_fwrite()(p, size, n, f);  // a tail call
}

WL_EXPORT size_t fwrite_unlocked(const void* p, size_t size, size_t n, FILE* f) {
  StdioWrote(f, size * n);
  return real_fwrite_unlocked()(p, size, n, f);
}

}  // extern "C"
