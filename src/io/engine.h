// SPDX-License-Identifier: MIT
// The write-engine contract (after fio's ioengine queue()/commit()/getevents()).
//
// Synchronous engines complete a request inside Queue(); asynchronous ones
// (io_uring) return kQueued and hand completions back through Reap(). Engines
// never read the clock or keep statistics: the runner (runner.h) does, so every
// engine is measured the same way.
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <expected>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "writelab/error.h"

namespace writelab {

struct IoRequest {
  const void* buf = nullptr;
  size_t len = 0;
  // Vectored engines: when iovcnt > 0, the data is iov[0..iovcnt) and buf is
  // unused; len is still the total. The array must outlive the request.
  const iovec* iov = nullptr;
  int iovcnt = 0;
  uint64_t offset = 0;
  int64_t res = 0;        // set on completion: bytes written or -errno
  uint64_t issue_ns = 0;  // stamped by the runner
  void* user = nullptr;
};

enum class Submit { kCompleted, kQueued, kBusy };

// The engine's other operations on its file (fio's sync and fallocate
// verbs). Each is one system call, synchronous whatever the engine.
enum class SyncKind { kFsync, kFdatasync, kRange };
struct SyncOp {
  SyncKind kind = SyncKind::kFdatasync;
  uint64_t offset = 0;  // kRange: the range; len 0 means to the end of file
  uint64_t len = 0;
  unsigned flags = 0;  // kRange: SYNC_FILE_RANGE_* flags
};
struct PreallocOp {
  int mode = 0;  // fallocate(2) mode: 0, FALLOC_FL_KEEP_SIZE, FALLOC_FL_ZERO_RANGE...
  uint64_t offset = 0;
  uint64_t len = 0;
};
struct AdviseOp {
  uint64_t offset = 0;
  uint64_t len = 0;  // 0: to the end of file
  int advice = 0;    // POSIX_FADV_*
};

struct EngineCaps {
  bool async = false;       // completes through Reap()
  bool vectored = false;    // accepts more than one buffer per call
  size_t alignment = 1;     // buffer, offset and length must be multiples (O_DIRECT)
  bool sequential = false;  // ignores offset: writes at the stream's position (stdio)
};

class WriteEngine {
 public:
  virtual ~WriteEngine() = default;
  // Issues req. A synchronous engine sets req.res and returns kCompleted.
  virtual Submit Queue(IoRequest& req) = 0;
  // Async engines submit what Queue() gathered.
  virtual Status Commit() { return {}; }
  // Async engines: submits what Queue() gathered and Commit() did not (a
  // request that was never submitted cannot complete), waits for at least
  // min completions, stores them in done, returns how many (or -errno).
  virtual int Reap(int min, std::span<IoRequest*> done) {
    (void)min;
    (void)done;
    return 0;
  }
  // fsync(2), fdatasync(2) or sync_file_range(2); fallocate(2);
  // posix_fadvise(2). Each returns 0 or -errno. They are not in syscalls():
  // the runner counts them (WriteCounters::syncs...).
  // The defaults say -EOPNOTSUPP: an engine without a file does only writes.
  virtual int Sync(const SyncOp& op) {
    (void)op;
    return -EOPNOTSUPP;
  }
  virtual int Preallocate(const PreallocOp& op) {
    (void)op;
    return -EOPNOTSUPP;
  }
  virtual int Advise(const AdviseOp& op) {
    (void)op;
    return -EOPNOTSUPP;
  }
  virtual EngineCaps caps() const = 0;
  virtual std::string_view name() const = 0;

  // Write-path system calls this engine has issued (writes, flushes,
  // io_uring_enter; a stdio Sync's flush included):
  // the one figure an engine keeps, because only it can see a buffered
  // engine's calls. A plain increment, no clock.
  uint64_t syscalls() const { return syscalls_; }

 protected:
  uint64_t syscalls_ = 0;
};

// pwrite(2) on fd. For O_DIRECT, open fd with O_DIRECT and pass the device's
// logical block size as alignment: the engine then declares it, and the
// runner refuses misaligned requests before any I/O.
// The engines below work on one descriptor: Sync, Preallocate and Advise are
// the system calls on it (stdio flushes its buffer before a sync).

std::unique_ptr<WriteEngine> MakePwriteEngine(int fd, size_t alignment = 1);
// pwritev2(2) with RWF_* flags on every call (RWF_DONTCACHE, RWF_DSYNC...).
std::unique_ptr<WriteEngine> MakePwritev2Engine(int fd, int rwf_flags);
// pwritev(2) (pwritev2(2) when rwf_flags != 0): takes vectored requests
// (IoRequest::iov) of up to IOV_MAX buffers, or a single buffer.
std::unique_ptr<WriteEngine> MakeWritevEngine(int fd, int rwf_flags);

// stdio on fd, through glibc's own buffering (fopencookie, so the engine sees
// and counts each write(2) stdio makes). Queue() is one fwrite (or
// fwrite_unlocked) of the request; Commit() is fflush. Sequential: offsets are
// ignored. buffer_bytes 0 keeps glibc's choice (st_blksize of fd).
enum class StdioCall { kFwrite, kFwriteUnlocked };
Result<std::unique_ptr<WriteEngine>> MakeStdioEngine(int fd, StdioCall call, int rwf_flags,
                                                     size_t buffer_bytes = 0);

// io_uring through liburing, queue depth qd: Queue() prepares a write (or
// writev for vectored requests) with rwf_flags and returns kQueued, or kBusy
// when qd requests are in flight; Commit() submits; Reap() submits what is
// left and waits, in one io_uring_enter when nothing is ready. Fails with
// the errno of io_uring_queue_init (ENOSYS, EPERM when io_uring is disabled).
Result<std::unique_ptr<WriteEngine>> MakeUringEngine(int fd, unsigned qd, int rwf_flags);

}  // namespace writelab
