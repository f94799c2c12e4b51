// SPDX-License-Identifier: MIT
// io_uring through liburing: the async engine. Queue() only prepares an SQE
// (no system call); Commit() submits everything prepared in one
// io_uring_enter; Reap() submits what is still prepared and takes
// completions, entering the kernel once to submit and wait when none are
// ready. Each io_uring_enter is counted as a system call.
#include <liburing.h>

#include <cerrno>

#include "io/file_engine.h"

namespace writelab {
namespace {

class UringEngine final : public FileEngine {
 public:
  UringEngine(int fd, unsigned qd, int flags) : FileEngine(fd), qd_(qd), flags_(flags) {}
  ~UringEngine() override {
    if (ready_) io_uring_queue_exit(&ring_);
  }

  Status Init() {
    int rc = io_uring_queue_init(qd_, &ring_, 0);
    if (rc < 0) return std::unexpected(ErrnoError(-rc, "io_uring_queue_init"));
    ready_ = true;
    return {};
  }

  Submit Queue(IoRequest& req) override {
    if (queued_ + in_flight_ >= qd_) return Submit::kBusy;
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    if (!sqe) return Submit::kBusy;
    if (req.iovcnt > 0)
      io_uring_prep_writev(sqe, fd_, req.iov, static_cast<unsigned>(req.iovcnt), req.offset);
    else
      io_uring_prep_write(sqe, fd_, req.buf, static_cast<unsigned>(req.len), req.offset);
    sqe->rw_flags = flags_;
    io_uring_sqe_set_data(sqe, &req);
    ++queued_;
    return Submit::kQueued;
  }

  Status Commit() override {
    while (queued_ > 0) {
      int rc = io_uring_submit(&ring_);
      ++syscalls_;
      if (rc == -EINTR || rc == -EAGAIN) continue;
      if (rc < 0) return std::unexpected(ErrnoError(-rc, "io_uring_submit"));
      queued_ -= static_cast<unsigned>(rc);
      in_flight_ += static_cast<unsigned>(rc);
    }
    return {};
  }

  int Reap(int min, std::span<IoRequest*> done) override {
    // What is queued goes first (nothing unsubmitted can complete); with
    // nothing ready to reap, the submission also waits: one io_uring_enter,
    // as io_uring_submit_and_wait in the minimal loop (bench/bare_uring.cc).
    while (queued_ > 0) {
      const bool wait = min > 0 && io_uring_cq_ready(&ring_) == 0;
      int rc = wait ? io_uring_submit_and_wait(&ring_, static_cast<unsigned>(min))
                    : io_uring_submit(&ring_);
      ++syscalls_;
      if (rc == -EINTR || rc == -EAGAIN) continue;
      if (rc < 0) return rc;
      queued_ -= static_cast<unsigned>(rc);
      in_flight_ += static_cast<unsigned>(rc);
    }
    int got = 0;
    while (got < static_cast<int>(done.size())) {
      io_uring_cqe* cqe = nullptr;
      int rc = io_uring_peek_cqe(&ring_, &cqe);
      if (rc == -EAGAIN) {
        if (got >= min || in_flight_ == 0) break;
        rc = io_uring_wait_cqe(&ring_, &cqe);
        ++syscalls_;
        if (rc == -EINTR) continue;
      }
      if (rc < 0) return rc;
      auto* req = static_cast<IoRequest*>(io_uring_cqe_get_data(cqe));
      req->res = cqe->res;
      io_uring_cqe_seen(&ring_, cqe);
      --in_flight_;
      done[static_cast<size_t>(got++)] = req;
    }
    return got;
  }

  EngineCaps caps() const override {
    EngineCaps c;
    c.async = true;
    c.vectored = true;
    return c;
  }
  std::string_view name() const override { return "io_uring"; }

 private:
  unsigned qd_;
  int flags_;
  io_uring ring_{};
  bool ready_ = false;
  unsigned queued_ = 0;     // prepared, not yet submitted
  unsigned in_flight_ = 0;  // submitted, not yet reaped
};

}  // namespace

Result<std::unique_ptr<WriteEngine>> MakeUringEngine(int fd, unsigned qd, int rwf_flags) {
  if (qd == 0) return std::unexpected(PlainError("io_uring queue depth must be at least 1"));
  auto engine = std::make_unique<UringEngine>(fd, qd, rwf_flags);
  if (auto s = engine->Init(); !s) return std::unexpected(s.error());
  return engine;
}

}  // namespace writelab
