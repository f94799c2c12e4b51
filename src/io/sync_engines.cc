// SPDX-License-Identifier: MIT
// Synchronous engines: one system call per request, completed in Queue().
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>

#include "io/file_engine.h"

namespace writelab {
namespace {

// pwrite(2) without glibc's cancellation point: in a process with more
// than one thread (writelab's sampler) glibc's pwrite enables and disables
// asynchronous cancellation around the call, two atomic operations and 31
// instructions a write that a single-threaded program (the bare loop, most
// programs measured against) does not pay (bench/per_write.sh). writelab
// never cancels a thread. The same system call, with the same arguments.
ssize_t PwriteCall(int fd, const void* buf, size_t len, off_t offset) {
#if __SIZEOF_LONG__ == 8  // the offset fits one register: syscall() passes it as is
  return syscall(SYS_pwrite64, fd, buf, len, offset);
#else
  return ::pwrite(fd, buf, len, offset);
#endif
}

class PwriteEngine final : public FileEngine {
 public:
  PwriteEngine(int fd, size_t alignment) : FileEngine(fd), alignment_(alignment) {}
  Submit Queue(IoRequest& req) override {
    ssize_t n = PwriteCall(fd_, req.buf, req.len, static_cast<off_t>(req.offset));
    ++syscalls_;
    req.res = n >= 0 ? n : -errno;
    return Submit::kCompleted;
  }
  EngineCaps caps() const override { return {.alignment = alignment_}; }
  std::string_view name() const override { return alignment_ > 1 ? "pwrite-direct" : "pwrite"; }

 private:
  size_t alignment_;
};

class Pwritev2Engine final : public FileEngine {
 public:
  Pwritev2Engine(int fd, int flags) : FileEngine(fd), flags_(flags) {}
  Submit Queue(IoRequest& req) override {
    iovec one{const_cast<void*>(req.buf), req.len};
    const iovec* iov = req.iovcnt > 0 ? req.iov : &one;
    ssize_t n = ::pwritev2(fd_, iov, req.iovcnt > 0 ? req.iovcnt : 1,
                           static_cast<off_t>(req.offset), flags_);
    ++syscalls_;
    req.res = n >= 0 ? n : -errno;
    return Submit::kCompleted;
  }
  EngineCaps caps() const override { return {.vectored = true}; }
  std::string_view name() const override { return "pwritev2"; }

 private:
  int flags_;
};

}  // namespace

std::unique_ptr<WriteEngine> MakePwriteEngine(int fd, size_t alignment) {
  return std::make_unique<PwriteEngine>(fd, alignment);
}

std::unique_ptr<WriteEngine> MakePwritev2Engine(int fd, int rwf_flags) {
  return std::make_unique<Pwritev2Engine>(fd, rwf_flags);
}

}  // namespace writelab
