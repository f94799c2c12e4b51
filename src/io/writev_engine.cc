// SPDX-License-Identifier: MIT
// writev: gathers many buffers into one system call (Morton's third way).
// pwritev rather than writev so that the offset is explicit, as for every
// other engine; pwritev2 when RWF_* flags are asked for (RWF_DSYNC).
#include <sys/uio.h>

#include <cerrno>

#include "io/file_engine.h"

namespace writelab {
namespace {

class WritevEngine final : public FileEngine {
 public:
  WritevEngine(int fd, int flags) : FileEngine(fd), flags_(flags) {}
  Submit Queue(IoRequest& req) override {
    iovec one{const_cast<void*>(req.buf), req.len};
    const iovec* iov = req.iovcnt > 0 ? req.iov : &one;
    int count = req.iovcnt > 0 ? req.iovcnt : 1;
    auto off = static_cast<off_t>(req.offset);
    ssize_t n = flags_ ? ::pwritev2(fd_, iov, count, off, flags_) : ::pwritev(fd_, iov, count, off);
    ++syscalls_;
    req.res = n >= 0 ? n : -errno;
    return Submit::kCompleted;
  }
  EngineCaps caps() const override {
    EngineCaps c;
    c.vectored = true;
    return c;
  }
  std::string_view name() const override { return "writev"; }

 private:
  int flags_;
};

}  // namespace

std::unique_ptr<WriteEngine> MakeWritevEngine(int fd, int rwf_flags) {
  return std::make_unique<WritevEngine>(fd, rwf_flags);
}

}  // namespace writelab
