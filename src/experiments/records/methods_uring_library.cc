// SPDX-License-Identifier: MIT
// The io_uring and library methods of `writelab records` (the other loops
// are in methods_sync.cc).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "core/clock.h"
#include "experiments/records/methods.h"
#include "io/engine.h"
#include "io/runner.h"
#include "writelab/record_writer.h"

namespace writelab {
namespace {

// Lines gathered into qd buffers of --buffer bytes; a full buffer is issued
// and the next free one filled while it is in flight. Every call returns 0
// or -errno.
class RingGather {
 public:
  RingGather(AsyncRunner& runner, unsigned qd, uint64_t buffer)
      : runner_(runner), bufs_(qd, std::vector<char>(buffer)), buffer_(buffer) {}

  int Add(const Line* l) {
    if (used_ + l->len > buffer_)
      if (int rc = Issue()) return rc;
    if (slot_ < 0) {
      slot_ = runner_.FreeSlot();
      if (slot_ < 0) return slot_;
    }
    std::vector<char>& b = bufs_[static_cast<size_t>(slot_)];
    if (l->len > buffer_) {                 // a line longer than the buffer: its own request
      b.assign(l->data, l->data + l->len);  // rare; allocation accepted
      used_ = l->len;
      return Issue();
    }
    std::memcpy(b.data() + used_, l->data, l->len);
    used_ += l->len;
    return 0;
  }
  // Issues the buffer being filled and waits for everything in flight.
  int Flush() {
    int rc = Issue();
    return rc ? rc : runner_.Drain();
  }
  uint64_t issued() const { return issued_; }

 private:
  int Issue() {
    if (slot_ < 0 || used_ == 0) return 0;
    int rc = runner_.Issue(static_cast<unsigned>(slot_), bufs_[static_cast<size_t>(slot_)].data(),
                           used_, off_);
    off_ += used_;
    used_ = 0;
    slot_ = -1;
    ++issued_;
    return rc;
  }

  AsyncRunner& runner_;
  std::vector<std::vector<char>> bufs_;
  uint64_t buffer_;
  int slot_ = -1;
  size_t used_ = 0;
  uint64_t off_ = 0, issued_ = 0;
};

}  // namespace

// The io_uring method: RingGather's buffers; every:N drains the ring and
// calls fdatasync.
MethodRun RunUringMethod(const MethodEnv& e) {
  MethodRun r;
  int rwf = InfoOf(e.sync.id).rwf_flags;
  auto made = MakeUringEngine(e.fd, e.qd, rwf);
  if (!made) {
    r.outcome.Fail(made.error(), Feature::kIoUring);
    return r;
  }
  auto engine = e.ctx.Engine(std::move(*made));
  AsyncRunner runner(*engine, e.qd, e.batch);
  RingGather ring(runner, e.qd, e.buffer);
  auto fail = [&](int rc, const char* what) -> MethodRun& {
    // The first ring of writes with the flag can say it is not supported.
    r.outcome.Fail(-rc, what, ring.issued() <= e.qd && rwf ? Feature::kRwfDsync : Feature::kNone);
    return r;
  };
  auto sync = [&](SyncKind kind) {
    ++r.sync_calls;
    return runner.Sync({kind});
  };
  const uint64_t every = e.sync.id == RecordSync::kEvery ? e.sync.every : 0;
  uint64_t left = every;
  const Line* l = e.corpus.head();
  const uint64_t t0 = NowNs();
  for (uint64_t i = 0; i < e.plan.lines; ++i, l = e.corpus.Next(l)) {
    if ((i & 0xFFFF) == 0 && e.ctx.Interrupted()) return Interrupted(r);
    if (int rc = ring.Add(l)) return fail(rc, "io_uring write");
    if (every && --left == 0) {
      left = every;
      if (int rc = ring.Flush()) return fail(rc, "io_uring write");
      if (int rc = sync(SyncKind::kFdatasync)) return fail(rc, "fdatasync");
    }
  }
  if (int rc = ring.Flush()) return fail(rc, "io_uring write");
  if (every && left != every)
    if (int rc = sync(SyncKind::kFdatasync)) return fail(rc, "fdatasync");
  if (e.sync.id == RecordSync::kEnd)
    if (int rc = sync(SyncKind::kFsync)) return fail(rc, "fsync");
  r.start_ns = t0;
  r.ns = NowNs() - t0;
  r.write_calls = engine->syscalls();
  r.short_writes = runner.counters().short_writes;
  r.retries = runner.counters().eintr_retries;
  r.note = std::to_string(e.qd) + " buffers of " + std::to_string(e.buffer) +
           " bytes, write calls are io_uring_enter calls";
  return r;
}

// writelab::RecordWriter as an application would use it: Append per line.
// every:N is the library's kEveryRecords policy, rwf-dsync its rwf_flags.
MethodRun RunLibraryMethod(const MethodEnv& e) {
  MethodRun r;
  RecordWriterOptions o;
  o.buffer_bytes = e.buffer;
  o.rwf_flags = InfoOf(e.sync.id).rwf_flags;
  if (e.sync.id == RecordSync::kEvery) {
    o.policy = DurabilityPolicy::kEveryRecords;
    o.every_records = e.sync.every;
  }
  int fd = dup(e.fd);
  if (fd < 0) {
    r.outcome.Fail(errno, "dup");
    return r;
  }
  auto writer = RecordWriter::Create(MakeFileSink(UniqueFd(fd), "records file", o.rwf_flags), o);
  if (!writer) {
    r.outcome.Fail(writer.error());
    return r;
  }
  auto fail = [&](const Error& err) -> MethodRun& {
    bool first = o.rwf_flags && writer->stats().write_calls <= 1;
    r.outcome.Fail(err, first ? Feature::kRwfDsync : Feature::kNone);
    return r;
  };
  const Line* l = e.corpus.head();
  const uint64_t t0 = NowNs();
  for (uint64_t i = 0; i < e.plan.lines; ++i, l = e.corpus.Next(l)) {
    if ((i & 0xFFFF) == 0 && e.ctx.Interrupted()) return Interrupted(r);
    if (auto s = writer->Append(std::string_view(l->data, l->len)); !s) return fail(s.error());
  }
  if (auto s = writer->Close(); !s) return fail(s.error());
  if (e.sync.id == RecordSync::kEnd) {  // the application's own fsync, after Close
    ++r.sync_calls;
    auto engine = e.ctx.Engine(MakePwriteEngine(e.fd));
    if (int rc = WriteRunner(*engine).Sync({SyncKind::kFsync}); rc < 0) {
      r.outcome.Fail(-rc, "fsync");
      return r;
    }
  }
  r.start_ns = t0;
  r.ns = NowNs() - t0;
  RecordWriterStats st = writer->stats();
  r.write_calls = st.write_calls;
  r.sync_calls += st.sync_calls;
  r.note = "RecordWriter, " + std::to_string(e.buffer) + "-byte buffer, policy " +
           DurabilityPolicyName(o.policy);
  return r;
}

}  // namespace writelab
