// The write-engine contract (after fio's ioengine queue()/commit()/getevents()).
//
// Synchronous engines complete a request inside Queue(); asynchronous ones
// (io_uring) return kQueued and hand completions back through Reap(). Engines
// never read the clock or keep statistics: the runner (runner.h) does, so every
// engine is measured the same way.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "writelab/error.h"

namespace writelab {

struct IoRequest {
  const void* buf = nullptr;
  size_t len = 0;
  uint64_t offset = 0;
  int64_t res = 0;        // set on completion: bytes written or -errno
  uint64_t issue_ns = 0;  // stamped by the runner
  void* user = nullptr;
};

enum class Submit { kCompleted, kQueued, kBusy };

struct EngineCaps {
  bool async = false;     // completes through Reap()
  bool vectored = false;  // accepts more than one buffer per call
  size_t alignment = 1;   // buffer, offset and length must be multiples (O_DIRECT)
};

class WriteEngine {
 public:
  virtual ~WriteEngine() = default;
  // Issues req. A synchronous engine sets req.res and returns kCompleted.
  virtual Submit Queue(IoRequest& req) = 0;
  // Async engines submit what Queue() gathered.
  virtual Status Commit() { return {}; }
  // Async engines: waits for at least min completions, stores them in done,
  // returns how many (or -errno).
  virtual int Reap(int min, std::span<IoRequest*> done) {
    (void)min;
    (void)done;
    return 0;
  }
  virtual EngineCaps caps() const = 0;
  virtual std::string_view name() const = 0;
};

// pwrite(2) on fd. For O_DIRECT, open fd with O_DIRECT and pass the device's
// logical block size as alignment: the engine then declares it, and the
// runner refuses misaligned requests before any I/O.
std::unique_ptr<WriteEngine> MakePwriteEngine(int fd, size_t alignment = 1);
// pwritev2(2) with RWF_* flags on every call (RWF_DONTCACHE, RWF_DSYNC...).
std::unique_ptr<WriteEngine> MakePwritev2Engine(int fd, int rwf_flags);

}  // namespace writelab
