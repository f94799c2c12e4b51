// SPDX-License-Identifier: MIT
// stdio: fwrite / fwrite_unlocked into glibc's FILE buffer (Morton's second
// and third ways). It fits the engine contract as a buffered engine: Queue()
// is one fwrite and completes at once (the bytes are in the FILE buffer, not
// yet in the kernel), Commit() is fflush. The FILE is made with fopencookie so
// that stdio's own write(2) calls pass through this engine, which counts them
// and can add RWF_DSYNC; glibc's buffering and fwrite path are the same as for
// fdopen (the cookie FILE shares _IO_file_xsputn), and the buffer is sized as
// glibc sizes it for a file: st_blksize.
#include <sys/stat.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "io/file_engine.h"
#include "port/write_all.h"

namespace writelab {
namespace {

class StdioEngine final : public FileEngine {
 public:
  StdioEngine(int fd, StdioCall call, int flags) : FileEngine(fd), call_(call), flags_(flags) {}
  ~StdioEngine() override {
    if (file_) std::fclose(file_);  // flushes; errors were reported by Commit()
    std::free(buffer_);
  }

  Status Open(size_t buffer_bytes) {
    cookie_io_functions_t io{};
    io.write = &StdioEngine::CookieWrite;
    file_ = fopencookie(this, "w", io);
    if (!file_) return std::unexpected(ErrnoError(errno, "fopencookie"));
    if (buffer_bytes == 0) {
      struct stat st;
      buffer_bytes = fstat(fd_, &st) == 0 && st.st_blksize > 0 ? st.st_blksize : BUFSIZ;
    }
    buffer_ = static_cast<char*>(std::malloc(buffer_bytes));
    if (!buffer_ || setvbuf(file_, buffer_, _IOFBF, buffer_bytes) != 0)
      return std::unexpected(ErrnoError(ENOMEM, "setvbuf"));
    buffer_bytes_ = buffer_bytes;
    return {};
  }

  Submit Queue(IoRequest& req) override {
    size_t n = call_ == StdioCall::kFwriteUnlocked ? fwrite_unlocked(req.buf, 1, req.len, file_)
                                                   : std::fwrite(req.buf, 1, req.len, file_);
    req.res = n == req.len ? static_cast<int64_t>(n) : -(error_ ? error_ : EIO);
    return Submit::kCompleted;
  }
  Status Commit() override {
    if (std::fflush(file_) != 0)
      return std::unexpected(ErrnoError(error_ ? error_ : EIO, "fflush"));
    return {};
  }
  // A sync makes what was fwritten durable: stdio's buffer goes first.
  int Sync(const SyncOp& op) override {
    if (std::fflush(file_) != 0) return -(error_ ? error_ : EIO);
    return FileEngine::Sync(op);
  }
  EngineCaps caps() const override {
    EngineCaps c;
    c.sequential = true;
    return c;
  }
  std::string_view name() const override {
    return call_ == StdioCall::kFwriteUnlocked ? "fwrite_unlocked" : "fwrite";
  }
  size_t buffer_bytes() const { return buffer_bytes_; }

 private:
  // stdio's write(2): all of [buf, buf+size) at the stream position, EINTR
  // retried. Returns size, or -1 with errno (stdio then sets the error flag).
  static ssize_t CookieWrite(void* cookie, const char* buf, size_t size) {
    auto* self = static_cast<StdioEngine*>(cookie);
    int rc = PwriteAll(self->fd_, buf, size, self->offset_, self->flags_, &self->syscalls_);
    if (rc < 0) {
      self->error_ = -rc;
      errno = self->error_;
      return -1;
    }
    self->offset_ += size;
    return static_cast<ssize_t>(size);
  }

  StdioCall call_;
  int flags_;
  FILE* file_ = nullptr;
  char* buffer_ = nullptr;
  size_t buffer_bytes_ = 0;
  uint64_t offset_ = 0;
  int error_ = 0;
};

}  // namespace

Result<std::unique_ptr<WriteEngine>> MakeStdioEngine(int fd, StdioCall call, int rwf_flags,
                                                     size_t buffer_bytes) {
  auto engine = std::make_unique<StdioEngine>(fd, call, rwf_flags);
  if (auto s = engine->Open(buffer_bytes); !s) return std::unexpected(s.error());
  return engine;
}

}  // namespace writelab
