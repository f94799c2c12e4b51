// The io_uring and library methods of `writelab records` (the other loops
// are in records_methods.cc).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "core/clock.h"
#include "experiments/records_methods.h"
#include "io/engine.h"
#include "io/runner.h"
#include "writelab/record_writer.h"

namespace writelab {
namespace {

MethodRun& Interrupted(MethodRun& r) {
  r.outcome.interrupted = true;
  return r;
}

}  // namespace

// Lines gathered into qd buffers of --buffer bytes; a full buffer is issued
// and the next free one filled while it is in flight. every:N drains the
// ring and calls fdatasync.
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
  std::vector<std::vector<char>> bufs(e.qd, std::vector<char>(e.buffer));
  int slot = -1;
  size_t used = 0;
  uint64_t off = 0, issued = 0;
  auto fail = [&](int rc, const char* what) -> MethodRun& {
    // The first ring of writes with the flag can say it is not supported.
    r.outcome.Fail(-rc, what, issued <= e.qd && rwf ? Feature::kRwfDsync : Feature::kNone);
    return r;
  };
  auto issue = [&]() -> int {
    if (slot < 0 || used == 0) return 0;
    int rc = runner.Issue(static_cast<unsigned>(slot), bufs[static_cast<size_t>(slot)].data(), used,
                          off);
    off += used;
    used = 0;
    slot = -1;
    ++issued;
    return rc;
  };
  uint64_t every = e.sync.id == RecordSync::kEvery ? e.sync.every : 0, left = every;
  const Line* l = e.corpus.head();
  const uint64_t t0 = NowNs();
  for (uint64_t i = 0; i < e.plan.lines; ++i, l = e.corpus.Next(l)) {
    if ((i & 0xFFFF) == 0 && e.ctx.Interrupted()) return Interrupted(r);
    if (used + l->len > e.buffer)
      if (int rc = issue()) return fail(rc, "io_uring write");
    if (slot < 0) {
      slot = runner.FreeSlot();
      if (slot < 0) return fail(slot, "io_uring write");
    }
    if (l->len > e.buffer) {  // a line longer than the buffer: its own request
      std::vector<char>& b = bufs[static_cast<size_t>(slot)];
      b.assign(l->data, l->data + l->len);  // rare; allocation accepted
      used = l->len;
      if (int rc = issue()) return fail(rc, "io_uring write");
    } else {
      std::memcpy(bufs[static_cast<size_t>(slot)].data() + used, l->data, l->len);
      used += l->len;
    }
    if (every && --left == 0) {
      left = every;
      if (int rc = issue(); rc || (rc = runner.Drain())) return fail(rc, "io_uring write");
      ++r.sync_calls;
      if (int rc = runner.Sync({SyncKind::kFdatasync})) return fail(rc, "fdatasync");
    }
  }
  if (int rc = issue(); rc || (rc = runner.Drain())) return fail(rc, "io_uring write");
  if (every && left != every) {
    ++r.sync_calls;
    if (int rc = runner.Sync({SyncKind::kFdatasync})) return fail(rc, "fdatasync");
  }
  if (e.sync.id == RecordSync::kEnd) {
    ++r.sync_calls;
    if (int rc = runner.Sync({SyncKind::kFsync})) return fail(rc, "fsync");
  }
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
  r.ns = NowNs() - t0;
  RecordWriterStats st = writer->stats();
  r.write_calls = st.write_calls;
  r.sync_calls += st.sync_calls;
  r.note = "RecordWriter, " + std::to_string(e.buffer) + "-byte buffer, policy " +
           DurabilityPolicyName(o.policy);
  return r;
}

}  // namespace writelab
