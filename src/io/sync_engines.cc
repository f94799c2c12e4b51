// SPDX-License-Identifier: MIT
// Synchronous engines: one system call per request, completed in Queue().
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>

#include "io/file_engine.h"

namespace writelab {
namespace {

class PwriteEngine final : public FileEngine {
 public:
  PwriteEngine(int fd, size_t alignment) : FileEngine(fd), alignment_(alignment) {}
  Submit Queue(IoRequest& req) override {
    ssize_t n = ::pwrite(fd_, req.buf, req.len, static_cast<off_t>(req.offset));
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
