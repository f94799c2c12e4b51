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
//   paced        fdatasync each window once written, through a read-only
//                descriptor of the shim's own, and drop it; the window sized
//                from those flushes (PacedWindow, src/lib)
//   direct       the writes go through an O_DIRECT descriptor of the shim's
//                own where aligned as O_DIRECT needs (statx DIOALIGN); a
//                file whose first write after the claim is not is refused
//                (written as the program wrote it), and a later unaligned
//                write is the program's own, through the window-drop window
//
// Only streams of at least MIN_FILE bytes to regular files are handled (a
// stream: writes each beginning where the last ended); the rest is left
// alone. At the end of a stream (a jump, close, fclose, exit) its tail is
// waited for and dropped: nothing is made durable that writeback would not
// have written (no fsync, no device cache flush), but under paced, whose
// flushes make the data durable earlier (never later). What it handled is told to
// writelab (report.cc); writelab's supervisor handles what the shim cannot
// see (static binaries, io_uring, raw system calls).
//
// Wrapped: write, pwrite(64), writev, pwritev(64)(v2), copy_file_range,
// fwrite(_unlocked), lseek(64), close, close_range, closefrom, fclose, dup2,
// dup3; and prctl and syscall, to step aside before a seccomp filter is
// installed. Other stdio calls (fprintf, fputs...) reach the file through
// glibc's own write, which no preload sees: their bytes are taken up at the
// next fwrite, and a file written only that way is said "unseen" at fclose
// for the supervisor.
//
// Nothing the program sees changes (docs/run.md, "What CMD sees"): a
// wrapper makes the program's own call (the same system call, but for
// dontcache's pwritev2) and returns what it returned, with its errno; the
// shim's own calls keep errno as they found it; it never waits on, nor
// takes an error from, the program's descriptor (stream.cc: its waits go
// through a descriptor of its own); it does not serialise writers of one
// descriptor that are not a stream (a positional write is made without the
// lock); it stays out of a process that runs under seccomp (checked at
// start, and before a filter is installed), and a signal handler's calls
// never wait for a lock of the shim's.
//
// Cost: a call on a descriptor the shim does not follow is the real call
// plus a table lookup (close adds fcntl and fstat, once, for a descriptor it
// has not seen written); fwrite on a small file adds a few nanoseconds
// (bench/run_compare.sh). A process that writes no regular file touches no
// state page at start or in a fork's child.
#include <dlfcn.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
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
std::atomic<bool> g_active{false};
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
using PrctlFn = int (*)(int, ...);
using SyscallFn = long (*)(long, ...);
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
WL_REAL(PrctlFn, prctl)
WL_REAL(SyscallFn, syscall)
#undef WL_REAL

// Where a write of r bytes that the program made began: offset, or the
// position the kernel left less r.
uint64_t StartOf(int fd, off_t offset, ssize_t r) {
  if (offset >= 0) return static_cast<uint64_t>(offset);
  const off_t end = real_lseek()(fd, 0, SEEK_CUR);
  return end >= r ? static_cast<uint64_t>(end - r) : 0;
}

// Through under direct: every write the shim follows holds the lock for its
// call, a positional one too (the shim's O_DIRECT descriptor must not be
// closed, by another thread's close of the program's, while a write uses
// it: writers of one descriptor are serialised under direct). A write that
// is not to be made direct (WriteDirect) is the program's own call.
template <class Plain>
ssize_t ThroughDirect(FdState* s, int fd, const iovec* iov, int count, off_t offset, int flags,
                      Plain plain) {
  if (offset >= 0 && !Lock(s)) return plain();
  ssize_t r = 0;
  uint64_t start = 0;
  const bool direct = WriteDirect(*s, fd, iov, count, offset, flags, &r, &start);
  if (!direct) r = plain();
  const int saved = errno;
  if (r > 0)
    Wrote(*s, fd, direct ? start : StartOf(fd, offset, r), static_cast<uint64_t>(r), direct);
  Unlock(s);
  errno = saved;
  return r;
}

// A write the shim follows: plain() makes the program's own call (the same
// system call it asked for); under dontcache the bytes go out with
// pwritev2(RWF_DONTCACHE) instead, and a file system that refuses it
// (EOPNOTSUPP) gets the program's own call, said in the file's done record.
// A write at the file position comes with s locked (Follow) and keeps the
// lock across the call, as the kernel keeps the position's (where it began
// is asked of the kernel after the call: the position belongs to the open
// file, which read(), a dup or a fork's child may have moved). A positional
// write comes with s unlocked (FollowUnlocked) and takes the lock only to
// count itself, so that threads writing one descriptor at offsets of their
// own are not serialised by the shim (but under direct: ThroughDirect).
// Returns what the call returned, errno too, with s unlocked.
template <class Plain>
ssize_t Through(FdState* s, int fd, const iovec* iov, int count, off_t offset, int flags,
                Plain plain) {
  if (g_config.strategy == RunStrategy::kDirect)
    return ThroughDirect(s, fd, iov, count, offset, flags, plain);
  const bool positional = offset >= 0;
  const bool uncached = s->dontcache.load(std::memory_order_relaxed);
  bool refused = false;
  ssize_t r;
  if (uncached) {
    r = real_pwritev2()(fd, iov, count, offset, flags | RWF_DONTCACHE);
    if (r < 0 && errno == EOPNOTSUPP) {
      r = plain();
      refused = r >= 0;
    }
  } else {
    r = plain();
  }
  const int saved = errno;
  if (positional && !Relock(s, r > 0 ? static_cast<uint64_t>(r) : 0)) {
    errno = saved;
    return r;
  }
  if (refused) s->dontcache.store(false, std::memory_order_relaxed), s->refused = true;
  if (r > 0) Wrote(*s, fd, StartOf(fd, offset, r), static_cast<uint64_t>(r), uncached && !refused);
  Unlock(s);
  errno = saved;
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
  if (!Active() || fd < 0 || fd >= kMaxFds) return;
  FdState* fast = Peek(fd);
  const uint8_t kind = fast ? fast->kind.load(std::memory_order_relaxed) : uint8_t{kUnknown};
  if (kind == kIgnored) return;
  if (kind == kTracked) {
    const uint64_t now = fast->stdio.load(std::memory_order_relaxed) + bytes;
    fast->stdio.store(now, std::memory_order_relaxed);
    if (now < kBatch) return;
  }
  StdioBatch(fd, bytes, kind);
}

// glibc's FILE: bytes fwrite has buffered and not yet written (the stream
// is in put mode). fclose must not flush anything else: fflush on a stream
// that is reading moves the descriptor's offset back to what was consumed
// (an offset a parent shell may share), which fclose never does.
bool Buffered(const FILE* f) {
  constexpr int kNoWrites = 0x0008, kPutting = 0x0800;  // _IO_NO_WRITES, _IO_CURRENTLY_PUTTING
  return !(f->_flags & kNoWrites) && (f->_flags & kPutting) && f->_IO_write_ptr > f->_IO_write_base;
}

// The strategy named by text[0, n), from run's table; null for none.
const RunStrategyInfo* ParseStrategy(const char* text, size_t n) {
  for (const RunStrategyInfo& k : kRunStrategies)
    if (strlen(k.name) == n && strncmp(k.name, text, n) == 0) return &k;
  return nullptr;
}

// WRITELAB_RUN_FD as the constructor found it (taken at the start).
char g_report_spec[64] = {};

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

// Whether the process runs under a seccomp filter or in strict mode (the
// "Seccomp:" line of /proc/self/status, 0 for none). The dynamic loader
// has just opened, read and mapped this library, so reading a file is
// something any filter this process started under allows; nothing else is
// called before the answer.
bool UnderSeccomp() {
  const int fd = openat(AT_FDCWD, "/proc/self/status", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return true;  // cannot tell: stay out
  char buf[4096];
  ssize_t n = read(fd, buf, sizeof buf - 1);
  RealClose(fd);
  if (n <= 0) return true;
  buf[n] = 0;
  const char* at = strstr(buf, "\nSeccomp:");
  if (!at) return false;  // a kernel without seccomp
  at += 9;
  while (*at == ' ' || *at == '\t') ++at;
  return *at != '0';
}

// What the start does, once (pthread_once): under seccomp the shim steps
// aside for good, before any call of its own; else it is the shim's.
void StartOnce() {
  Inside inside;
  if (UnderSeccomp()) {
    g_active.store(false, std::memory_order_relaxed);
    return;
  }
  if (g_report_spec[0]) TakeReportSocket(g_report_spec);
  ReportHello();
}

pthread_once_t g_start = PTHREAD_ONCE_INIT;
std::atomic<bool> g_started{false};

// Reads the configuration and registers the fork handler only: no system
// call (see Start).
__attribute__((constructor)) void Init() {
  const char* config = getenv(proto::kConfigEnv);
  if (!config) return;
  const char* comma = strchr(config, ',');
  if (!comma) return;
  char* rest = nullptr;
  const uint64_t window = strtoull(comma + 1, &rest, 10);
  const uint64_t min_file = rest && *rest == ',' ? strtoull(rest + 1, &rest, 10) : 0;
  const uint64_t target = rest && *rest == ',' ? strtoull(rest + 1, nullptr, 10) : 0;
  if (window == 0) return;
  const RunStrategyInfo* strategy = ParseStrategy(config, static_cast<size_t>(comma - config));
  if (!strategy) return;
  if (const char* glob = getenv(proto::kPathEnv))
    strncpy(g_config.glob, glob, sizeof g_config.glob - 1);
  if (const char* fd = getenv(proto::kFdEnv)) strncpy(g_report_spec, fd, sizeof g_report_spec - 1);
  g_config.window = window;
  g_config.min_file = min_file;
  if (target) g_config.pace_target_ns = target;
  g_config.strategy = strategy->id;
  // Here, before any thread can hold a descriptor's lock: a fork while the
  // first write's thread held one and had not yet started the shim left the
  // child waiting for it for ever (the start registered this too late).
  pthread_atfork(nullptr, nullptr, ResetAfterFork);
  g_active.store(true, std::memory_order_relaxed);
}

// Every descriptor still followed when the program exits (not _exit), but
// when exit() comes from a signal handler that interrupted the shim.
__attribute__((destructor)) void Fini() {
  if (Active() && !t_inside) FinishAll();
}

}  // namespace

ssize_t RealWrite(int fd, const void* buf, size_t n) { return real_write()(fd, buf, n); }
ssize_t RealPwritev2(int fd, const iovec* iov, int count, off_t offset, int flags) {
  return real_pwritev2()(fd, iov, count, offset, flags);
}
off_t RealLseek(int fd, off_t offset, int whence) { return real_lseek()(fd, offset, whence); }
int RealClose(int fd) { return real_close()(fd); }

bool Start() {
  if (!g_started.load(std::memory_order_acquire)) {
    Inside inside;  // a signal handler's call meanwhile goes straight to the real one
    pthread_once(&g_start, [] {
      StartOnce();
      g_started.store(true, std::memory_order_release);
    });
  }
  return Active();
}

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
  return Through(s, fd, &iov, 1, -1, 0, [&] { return real_write()(fd, buf, n); });
}

WL_EXPORT ssize_t pwrite(int fd, const void* buf, size_t n, off_t offset) {
  FdState* s = offset >= 0 ? FollowUnlocked(fd) : nullptr;
  if (!s) return real_pwrite()(fd, buf, n, offset);
  iovec iov{const_cast<void*>(buf), n};
  return Through(s, fd, &iov, 1, offset, 0, [&] { return real_pwrite()(fd, buf, n, offset); });
}

WL_EXPORT ssize_t pwrite64(int fd, const void* buf, size_t n, off_t offset) {
  FdState* s = offset >= 0 ? FollowUnlocked(fd) : nullptr;
  if (!s) return real_pwrite64()(fd, buf, n, offset);
  iovec iov{const_cast<void*>(buf), n};
  return Through(s, fd, &iov, 1, offset, 0, [&] { return real_pwrite64()(fd, buf, n, offset); });
}

WL_EXPORT ssize_t writev(int fd, const iovec* iov, int count) {
  FdState* s = Follow(fd);
  if (!s) return real_writev()(fd, iov, count);
  return Through(s, fd, iov, count, -1, 0, [&] { return real_writev()(fd, iov, count); });
}

WL_EXPORT ssize_t pwritev(int fd, const iovec* iov, int count, off_t offset) {
  FdState* s = offset >= 0 ? FollowUnlocked(fd) : nullptr;
  if (!s) return real_pwritev()(fd, iov, count, offset);
  return Through(s, fd, iov, count, offset, 0,
                 [&] { return real_pwritev()(fd, iov, count, offset); });
}

WL_EXPORT ssize_t pwritev64(int fd, const iovec* iov, int count, off_t offset) {
  FdState* s = offset >= 0 ? FollowUnlocked(fd) : nullptr;
  if (!s) return real_pwritev64()(fd, iov, count, offset);
  return Through(s, fd, iov, count, offset, 0,
                 [&] { return real_pwritev64()(fd, iov, count, offset); });
}

WL_EXPORT ssize_t pwritev2(int fd, const iovec* iov, int count, off_t offset, int flags) {
  FdState* s = offset >= 0 ? FollowUnlocked(fd) : offset == -1 ? Follow(fd) : nullptr;
  if (!s) return real_pwritev2()(fd, iov, count, offset, flags);
  return Through(s, fd, iov, count, offset, flags,
                 [&] { return real_pwritev2()(fd, iov, count, offset, flags); });
}

WL_EXPORT ssize_t pwritev64v2(int fd, const iovec* iov, int count, off_t offset, int flags) {
  FdState* s = offset >= 0 ? FollowUnlocked(fd) : offset == -1 ? Follow(fd) : nullptr;
  if (!s) return real_pwritev64v2()(fd, iov, count, offset, flags);
  return Through(s, fd, iov, count, offset, flags,
                 [&] { return real_pwritev64v2()(fd, iov, count, offset, flags); });
}

}  // extern "C"

namespace writelab::shim {
namespace {

// Whether a copy within one file reads and writes overlapping ranges (the
// kernel refuses it with EINVAL, and the caller then copies another way):
// such a call is passed through whole, never in pieces that would each be
// allowed and smear the data.
bool Overlaps(int in, const off_t* in_off, int out, const off_t* out_off, size_t n) {
  struct stat a, b;
  if (fstat(in, &a) != 0 || fstat(out, &b) != 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino)
    return false;
  const off_t from = in_off ? *in_off : real_lseek()(in, 0, SEEK_CUR);
  const off_t to = out_off ? *out_off : real_lseek()(out, 0, SEEK_CUR);
  if (from < 0 || to < 0) return true;  // cannot tell: whole
  const uint64_t x = static_cast<uint64_t>(from), y = static_cast<uint64_t>(to);
  return x < y + n && y < x + n;
}

}  // namespace
}  // namespace writelab::shim

extern "C" {

// cp's way (coreutils 9): the kernel copies, so RWF_DONTCACHE has no say;
// the copied range goes through the window-drop window whatever the
// strategy, and the done record says so. cp asks for the whole file in one
// call (up to 2 GiB, the kernel's most a call), which left all of it dirty
// until the call returned: the copy goes in pieces of kBatch, each given to
// the window as a write() of it would be, and returns their sum, as a copy
// that the kernel cut short would (an error after the first piece returns
// what was copied; the caller's next call meets the error). At most what
// the kernel copies in one call, so that the sum fits where it did. A copy
// within one file whose ranges overlap is the kernel's to refuse: whole.
WL_EXPORT ssize_t copy_file_range(int in, off_t* in_off, int out, off_t* out_off, size_t n,
                                  unsigned flags) {
  FdState* s = n ? Follow(out) : nullptr;
  if (!s) return real_copy_file_range()(in, in_off, out, out_off, n, flags);
  const int saved = errno;
  if (Overlaps(in, in_off, out, out_off, n)) {
    Unlock(s);
    errno = saved;
    return real_copy_file_range()(in, in_off, out, out_off, n, flags);
  }
  constexpr size_t kMaxRwCount = 0x7ffff000;  // MAX_RW_COUNT with 4 KiB pages
  n = n < kMaxRwCount ? n : kMaxRwCount;
  size_t total = 0;
  while (total < n) {
    const size_t len = n - total < kBatch ? n - total : kBatch;
    const off_t at = out_off ? *out_off : -1;
    const ssize_t r = real_copy_file_range()(in, in_off, out, out_off, len, flags);
    if (r < 0 && total == 0) {  // the call's own result, errno too
      const int err = errno;
      Unlock(s);
      errno = err;
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

// The position is asked of the kernel after each write (Through): lseek
// needs no bookkeeping of its own, but stdio's bytes before it are taken up.
WL_EXPORT off_t lseek(int fd, off_t offset, int whence) {
  if (Active() && !t_inside)
    if (FdState* p = Peek(fd); p && p->stdio.load(std::memory_order_relaxed))
      if (FdState* s = Follow(fd)) {
        CatchUpStdio(*s, fd);
        Unlock(s);
      }
  return real_lseek()(fd, offset, whence);
}

WL_EXPORT off_t lseek64(int fd, off_t offset, int whence) { return lseek(fd, offset, whence); }

WL_EXPORT int close(int fd) {
  Disown(fd);
  ReportUnseen(fd);
  Finish(fd);
  if (fd == g_config.report) g_config.report = -1;
  return real_close()(fd);
}

WL_EXPORT int close_range(unsigned first, unsigned last, int flags) {
  for (unsigned fd = first; fd <= last && fd < static_cast<unsigned>(kMaxFds); ++fd) {
    Disown(static_cast<int>(fd));
    Finish(static_cast<int>(fd));
    if (static_cast<int>(fd) == g_config.report) g_config.report = -1;
  }
  return real_close_range()(first, last, flags);
}

WL_EXPORT void closefrom(int lowfd) {
  for (int fd = lowfd < 0 ? 0 : lowfd; fd < kMaxFds; ++fd) {
    Disown(fd);
    Finish(fd);
  }
  if (g_config.report >= lowfd) g_config.report = -1;
  real_closefrom()(lowfd);
}

WL_EXPORT int dup2(int from, int to) {
  if (from != to) Disown(to), Finish(to);
  if (to == g_config.report) g_config.report = -1;
  return real_dup2()(from, to);
}

WL_EXPORT int dup3(int from, int to, int flags) {
  if (from != to) Disown(to), Finish(to);
  if (to == g_config.report) g_config.report = -1;
  return real_dup3()(from, to, flags);
}

// What stdio still holds reaches the file before the stream's tail is
// waited for. glibc drops a buffer whose write failed, so the real fclose
// would then have nothing left to fail: the flush's failure is fclose's
// result, as it would have been without the shim (fclose's own failure,
// its close's, comes first, as in glibc).
WL_EXPORT int fclose(FILE* f) {
  const int fd = f->_fileno;
  int flush_errno = 0;
  if (Active() && !t_inside && fd >= 0 && fd < kMaxFds) {
    FdState* p = Peek(fd);
    const uint8_t kind = p ? p->kind.load(std::memory_order_acquire) : uint8_t{kUnknown};
    if (kind != kIgnored) {
      if (Buffered(f) && fflush(f) != 0) flush_errno = errno ? errno : EIO;
      if (kind == kUnknown) ReportUnseen(fd);  // written only by fprintf and the like
      Finish(fd);
    }
  }
  const int r = real_fclose()(f);
  Forget(fd);  // glibc's own close: the number is free again
  if (r == 0 && flush_errno) {
    errno = flush_errno;
    return EOF;
  }
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

// A seccomp filter or strict mode is about to be installed: the shim's own
// calls (fstat, sync_file_range, sendmsg...) could be refused or kill the
// process from then on, so every stream is ended now and the shim steps
// aside; the supervisor handles the process's files from outside.
WL_EXPORT int prctl(int option, ...) {
  va_list ap;
  va_start(ap, option);
  unsigned long a[4];
  for (unsigned long& x : a) x = va_arg(ap, unsigned long);
  va_end(ap);
  if (option == PR_SET_SECCOMP && (a[0] == SECCOMP_MODE_STRICT || a[0] == SECCOMP_MODE_FILTER))
    StepAside("seccomp");
  return real_prctl()(option, a[0], a[1], a[2], a[3]);
}

WL_EXPORT long syscall(long number, ...) {
  va_list ap;
  va_start(ap, number);
  long a[6];
  for (long& x : a) x = va_arg(ap, long);
  va_end(ap);
  if (number == SYS_seccomp && (a[0] == SECCOMP_SET_MODE_STRICT || a[0] == SECCOMP_SET_MODE_FILTER))
    StepAside("seccomp");
  return real_syscall()(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}

}  // extern "C"
