// SPDX-License-Identifier: MIT
#include "io/runner.h"

#include <cerrno>

#include "core/clock.h"
#include "port/write_all.h"

namespace writelab {

template <class Call>
int OpRunner::Timed(Histogram* into, uint64_t& count, Call call) {
  const bool timed = timed_ || into;
  for (;;) {
    uint64_t t0 = timed ? NowNs() : 0;
    int rc = call();
    uint64_t elapsed = timed ? NowNs() - t0 : 0;
    ++count;
    if (rc == -EINTR) {
      ++counters_.eintr_retries;
      continue;
    }
    if (rc == 0) {
      last_ns_ = elapsed;
      if (into) into->Record(elapsed);
    }
    return rc;
  }
}

int OpRunner::Sync(const SyncOp& op, Histogram* into) {
  return Timed(into, counters_.syncs, [&] { return engine_.Sync(op); });
}

int OpRunner::Preallocate(const PreallocOp& op, Histogram* into) {
  return Timed(into, counters_.preallocs, [&] { return engine_.Preallocate(op); });
}

int OpRunner::Advise(const AdviseOp& op, Histogram* into) {
  return Timed(into, counters_.advises, [&] { return engine_.Advise(op); });
}

// One timed, counted call. Returns the bytes it wrote (> 0), 0 for a call
// interrupted before writing (to be retried), or -errno (-EIO for a call
// that wrote nothing, which would otherwise loop forever). Inlined into its
// two callers: a call of its own cost 12 instructions a write
// (bench/per_write.sh).
__attribute__((always_inline)) inline int64_t WriteRunner::CallOnce(IoRequest& req,
                                                                    uint64_t& busy) {
  if (latency_) req.issue_ns = NowNs();
  engine_.Queue(req);  // synchronous engines complete here
  uint64_t elapsed = latency_ ? NowNs() - req.issue_ns : 0;
  ++counters_.calls;
  if (latency_ && req.res > 0) {  // failed calls are no samples
    latency_->Record(elapsed);
    busy += elapsed;
  }
  if (req.res == -EINTR) {
    ++counters_.eintr_retries;
    return 0;
  }
  if (req.res < 0) return req.res;
  if (req.res == 0) return -EIO;
  auto n = static_cast<uint64_t>(req.res);
  if (n < req.len) ++counters_.short_writes;
  counters_.bytes += n;
  if (progress_) progress_->store(counters_.bytes, std::memory_order_relaxed);
  return req.res;
}

int WriteRunner::WriteFully(const void* buf, uint64_t len, uint64_t offset) {
  if (alignment_ > 1 &&
      (reinterpret_cast<uintptr_t>(buf) % alignment_ || len % alignment_ || offset % alignment_))
    return -EINVAL;
  const auto* p = static_cast<const char*>(buf);
  uint64_t done = 0, busy = 0;
  while (done < len) {
    IoRequest req{.buf = p + done, .len = len - done, .offset = offset + done};
    int64_t n = CallOnce(req, busy);
    if (n < 0) return static_cast<int>(n);
    done += static_cast<uint64_t>(n);
  }
  last_ns_ = busy;
  return 0;
}

int WriteRunner::WriteVecFully(iovec* iov, int count, uint64_t offset) {
  uint64_t len = 0, busy = 0;
  for (int i = 0; i < count; ++i) len += iov[i].iov_len;
  AdvanceIov(iov, count, 0);  // skip empty buffers
  while (len > 0) {
    IoRequest req{.len = len, .iov = iov, .iovcnt = count, .offset = offset};
    int64_t n = CallOnce(req, busy);
    if (n < 0) return static_cast<int>(n);
    len -= static_cast<uint64_t>(n);
    offset += static_cast<uint64_t>(n);
    AdvanceIov(iov, count, static_cast<uint64_t>(n));  // consume what was written
  }
  last_ns_ = busy;
  return 0;
}

AsyncRunner::AsyncRunner(WriteEngine& engine, unsigned depth, unsigned batch)
    : AsyncRunner(engine, depth, batch, nullptr, nullptr) {}

AsyncRunner::AsyncRunner(WriteEngine& engine, unsigned depth, unsigned batch, Histogram* latency,
                         std::atomic<uint64_t>* progress)
    : OpRunner(engine, latency != nullptr),
      latency_(latency),
      progress_(progress),
      reqs_(depth),
      done_(depth),
      batch_(batch == 0 || batch > depth ? depth : batch) {
  for (unsigned i = depth; i > 0; --i) free_.push_back(i - 1);
  for (unsigned i = 0; i < depth; ++i) reqs_[i].user = &reqs_[i];
  if (latency_) unstamped_.resize(depth);
}

// The requests prepared since the last submission leave for the kernel
// now: their latency starts, one clock reading for all of them. A requeued
// request keeps the time of its first submission.
void AsyncRunner::StampSubmitted() {
  if (unstamped_n_ == 0) return;
  const uint64_t now = NowNs();
  for (unsigned i = 0; i < unstamped_n_; ++i) unstamped_[i]->issue_ns = now;
  unstamped_n_ = 0;
}

int AsyncRunner::SubmitPrepared() {
  if (prepared_ == 0) return 0;
  prepared_ = 0;
  ++submits_;
  StampSubmitted();
  if (auto st = engine_.Commit(); !st) return -st.error().code;
  return 0;
}

int AsyncRunner::Queue(IoRequest& req) {
  for (;;) {
    Submit s = engine_.Queue(req);
    if (s == Submit::kQueued) {
      ++in_flight_;
      if (latency_ && req.issue_ns == 0) unstamped_[unstamped_n_++] = &req;
      if (++prepared_ < batch_) return 0;
      // With no slot free the caller's next step is a wait (FreeSlot, Drain),
      // and ReapSome submits in the same io_uring_enter as the wait: the
      // minimal loop's submit-and-wait, instead of a submit and then a wait.
      return free_.empty() ? 0 : SubmitPrepared();
    }
    if (s == Submit::kCompleted) return -ENOTSUP;  // AsyncRunner is for async engines
    if (int rc = ReapSome(); rc < 0) return rc;    // kBusy: make room
  }
}

int AsyncRunner::Issue(unsigned slot, const void* buf, uint64_t len, uint64_t offset) {
  IoRequest& req = reqs_[slot];
  req.buf = buf;
  req.len = len;
  req.offset = offset;
  req.res = 0;
  req.issue_ns = 0;  // stamped when submitted
  return Queue(req);
}

// Reaps at least one completion; requeues short or interrupted writes. What
// is prepared is submitted by the engine's Reap, in the same system call as
// the wait when nothing is ready (the minimal loop's submit-and-wait). One
// clock reading ends the latency of every request this reap completed: they
// were all seen at once, and the time taken to account for the first is not
// the last one's latency.
int AsyncRunner::ReapSome() {
  if (prepared_ > 0) {  // the engine's Reap submits them
    prepared_ = 0;
    ++submits_;
    StampSubmitted();
  }
  int n = engine_.Reap(1, done_);
  if (n < 0) return n;
  const uint64_t seen_ns = latency_ ? NowNs() : 0;  // when this reap saw them all
  for (int i = 0; i < n; ++i) {
    IoRequest& req = *done_[static_cast<size_t>(i)];
    --in_flight_;
    ++counters_.calls;
    if (req.res == -EINTR || req.res == -EAGAIN) {
      ++counters_.eintr_retries;
      if (int rc = Queue(req); rc < 0) return rc;
      continue;
    }
    if (req.res < 0) return static_cast<int>(req.res);
    if (req.res == 0) return -EIO;
    auto w = static_cast<uint64_t>(req.res);
    counters_.bytes += w;
    if (progress_) progress_->store(counters_.bytes, std::memory_order_relaxed);
    if (w < req.len) {
      ++counters_.short_writes;
      req.buf = static_cast<const char*>(req.buf) + w;
      req.len -= w;
      req.offset += w;
      if (int rc = Queue(req); rc < 0) return rc;
      continue;
    }
    if (latency_) latency_->Record(seen_ns - req.issue_ns);
    free_.push_back(static_cast<unsigned>(&req - reqs_.data()));
  }
  return 0;
}

int AsyncRunner::FreeSlot() {
  while (free_.empty())
    if (int rc = ReapSome(); rc < 0) return rc;
  unsigned slot = free_.back();
  free_.pop_back();
  return static_cast<int>(slot);
}

int AsyncRunner::Drain() {
  while (in_flight_ > 0)  // ReapSome submits what is prepared with its wait
    if (int rc = ReapSome(); rc < 0) return rc;
  return 0;
}

}  // namespace writelab
