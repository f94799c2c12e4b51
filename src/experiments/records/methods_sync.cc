// SPDX-License-Identifier: MIT
// Hot loops: no allocation, lock or formatting between the first write and
// the last sync. Buffers and iovec arrays are made before the clock starts.
#include "experiments/records/methods.h"

#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "core/clock.h"
#include "io/engine.h"
#include "io/runner.h"
#include "writelab/record_writer.h"

namespace writelab {
namespace {

constexpr uint64_t kInterruptMask = 0xFFFF;  // look at the interrupt flag every 64 Ki lines

// first_call: the first call with the method's RWF_DSYNC flag, the one that
// can say the flag is not supported.
MethodRun& Fail(MethodRun& r, int err, const std::string& what, bool first_call = false) {
  r.outcome.Fail(err, what, first_call ? Feature::kRwfDsync : Feature::kNone);
  return r;
}

// fdatasync every N lines: Due() after each line.
class EveryN {
 public:
  explicit EveryN(const RecordSyncChoice& s) : every_(s.id == RecordSync::kEvery ? s.every : 0) {
    left_ = every_;
  }
  bool Due() {
    if (every_ == 0 || --left_ != 0) return false;
    left_ = every_;
    return true;
  }
  bool TailPending() const { return every_ != 0 && left_ != every_; }
  uint64_t LinesToNext() const { return every_ ? left_ : UINT64_MAX; }
  void Advance(uint64_t n) {
    if (every_) left_ -= n;
  }
  bool DueAfterAdvance() {
    if (every_ == 0 || left_ != 0) return false;
    left_ = every_;
    return true;
  }

 private:
  uint64_t every_;
  uint64_t left_ = 0;
};

// Syncs go through the pass's runner (untimed: the pass is timed whole).
int DataSync(OpRunner& runner, MethodRun& r) {
  ++r.sync_calls;
  return runner.Sync({SyncKind::kFdatasync});
}

// The end of a pass: the every:N tail and the `end` fsync. 0 or -errno.
int FinishSyncs(const MethodEnv& e, const EveryN& every, OpRunner& runner, MethodRun& r) {
  if (every.TailPending())
    if (int rc = DataSync(runner, r)) return rc;
  if (e.sync.id == RecordSync::kEnd) {
    ++r.sync_calls;
    return runner.Sync({SyncKind::kFsync});
  }
  return 0;
}

void Count(const WriteEngine& engine, const WriteCounters& c, MethodRun& r) {
  r.write_calls = engine.syscalls();
  r.short_writes = c.short_writes;
  r.retries = c.eintr_retries;
}

// The end of a pass: its last syncs, its time since t0 and its counts.
MethodRun& EndPass(const MethodEnv& e, const EveryN& every, WriteRunner& runner,
                   const WriteEngine& engine, uint64_t t0, MethodRun& r) {
  if (int rc = FinishSyncs(e, every, runner, r)) return Fail(r, -rc, "sync");
  r.start_ns = t0;
  r.ns = NowNs() - t0;
  Count(engine, runner.counters(), r);
  return r;
}

// pwrite, or pwritev2 with the sync choice's RWF_ flags.
std::unique_ptr<WriteEngine> PlainEngine(const MethodEnv& e, int rwf) {
  return e.ctx.Engine(rwf ? MakePwritev2Engine(e.fd, rwf) : MakePwriteEngine(e.fd));
}

// RunWrite and RunGather begin alike on purpose (duplicates lists them): each
// method's loop stays whole, to be read against writev-speed.c's.
MethodRun RunWrite(const MethodEnv& e) {
  MethodRun r;
  int rwf = InfoOf(e.sync.id).rwf_flags;
  auto engine = PlainEngine(e, rwf);
  WriteRunner runner(*engine);
  EveryN every(e.sync);
  const Line* l = e.corpus.head();
  uint64_t off = 0;
  const uint64_t t0 = NowNs();
  for (uint64_t i = 0; i < e.plan.lines; ++i, l = e.corpus.Next(l)) {
    if ((i & kInterruptMask) == 0 && e.ctx.Interrupted()) return Interrupted(r);
    if (int rc = runner.WriteFully(l->data, l->len, off))
      return Fail(r, -rc, rwf ? "pwritev2" : "pwrite", i == 0 && rwf);
    off += l->len;
    if (every.Due())
      if (int rc = DataSync(runner, r)) return Fail(r, -rc, "fdatasync");
  }
  return EndPass(e, every, runner, *engine, t0, r);
}

MethodRun RunStdio(const MethodEnv& e, StdioCall call) {
  MethodRun r;
  int rwf = InfoOf(e.sync.id).rwf_flags;
  auto made = MakeStdioEngine(e.fd, call, rwf);
  if (!made) return Fail(r, made.error().code, made.error().context);
  auto engine = e.ctx.Engine(std::move(*made));
  WriteRunner runner(*engine);
  EveryN every(e.sync);
  const Line* l = e.corpus.head();
  const uint64_t t0 = NowNs();
  for (uint64_t i = 0; i < e.plan.lines; ++i, l = e.corpus.Next(l)) {
    if ((i & kInterruptMask) == 0 && e.ctx.Interrupted()) return Interrupted(r);
    if (int rc = runner.WriteFully(l->data, l->len, 0)) return Fail(r, -rc, "fwrite", rwf);
    if (every.Due()) {
      if (auto s = engine->Commit(); !s) return Fail(r, s.error().code, "fflush", rwf);
      if (int rc = DataSync(runner, r)) return Fail(r, -rc, "fdatasync");
    }
  }
  if (auto s = engine->Commit(); !s) return Fail(r, s.error().code, "fflush", rwf);
  if (!EndPass(e, every, runner, *engine, t0, r).outcome.ok()) return r;
  struct stat st;
  r.note = "buffer st_blksize = " +
           std::to_string(fstat(e.fd, &st) == 0 ? static_cast<long>(st.st_blksize) : 0L) +
           " bytes (glibc's choice for a file)";
  return r;
}

MethodRun RunWritev(const MethodEnv& e) {
  MethodRun r;
  int rwf = InfoOf(e.sync.id).rwf_flags;
  auto engine = e.ctx.Engine(MakeWritevEngine(e.fd, rwf));
  WriteRunner runner(*engine);
  EveryN every(e.sync);
  std::vector<iovec> iov(IOV_MAX);
  const Line* l = e.corpus.head();
  uint64_t off = 0;
  const uint64_t t0 = NowNs();
  for (uint64_t i = 0; i < e.plan.lines;) {
    if (e.ctx.Interrupted()) return Interrupted(r);
    uint64_t n = std::min<uint64_t>({uint64_t{IOV_MAX}, e.plan.lines - i, every.LinesToNext()});
    uint64_t len = 0;
    for (uint64_t k = 0; k < n; ++k, l = e.corpus.Next(l)) {
      iov[k] = {l->data, l->len};
      len += l->len;
    }
    if (int rc = runner.WriteVecFully(iov.data(), static_cast<int>(n), off))
      return Fail(r, -rc, rwf ? "pwritev2" : "pwritev", i == 0 && rwf);
    off += len;
    i += n;
    every.Advance(n);
    if (every.DueAfterAdvance())
      if (int rc = DataSync(runner, r)) return Fail(r, -rc, "fdatasync");
  }
  return EndPass(e, every, runner, *engine, t0, r);
}

MethodRun RunGather(const MethodEnv& e) {
  MethodRun r;
  int rwf = InfoOf(e.sync.id).rwf_flags;
  auto engine = PlainEngine(e, rwf);
  WriteRunner runner(*engine);
  EveryN every(e.sync);
  std::vector<char> buf(e.buffer);
  size_t used = 0;
  uint64_t off = 0;
  bool first = true;
  auto flush = [&]() -> int {
    if (used == 0) return 0;
    int rc = runner.WriteFully(buf.data(), used, off);
    off += used;
    used = 0;
    first = false;
    return rc;
  };
  const Line* l = e.corpus.head();
  const uint64_t t0 = NowNs();
  for (uint64_t i = 0; i < e.plan.lines; ++i, l = e.corpus.Next(l)) {
    if ((i & kInterruptMask) == 0 && e.ctx.Interrupted()) return Interrupted(r);
    if (used + l->len > buf.size()) {
      if (int rc = flush()) return Fail(r, -rc, "write", first && rwf);
    }
    if (l->len > buf.size()) {  // a line longer than the buffer goes on its own
      if (int rc = runner.WriteFully(l->data, l->len, off)) return Fail(r, -rc, "write");
      off += l->len;
    } else {
      std::memcpy(buf.data() + used, l->data, l->len);
      used += l->len;
    }
    if (every.Due()) {
      if (int rc = flush()) return Fail(r, -rc, "write", first && rwf);
      if (int rc = DataSync(runner, r)) return Fail(r, -rc, "fdatasync");
    }
  }
  if (int rc = flush()) return Fail(r, -rc, "write", first && rwf);
  return EndPass(e, every, runner, *engine, t0, r);
}

}  // namespace

MethodRun RunUringMethod(const MethodEnv& e);
MethodRun RunLibraryMethod(const MethodEnv& e);

MethodRun RunRecordMethod(RecordMethod method, const MethodEnv& env) {
  switch (method) {
    case RecordMethod::kWrite:
      return RunWrite(env);
    case RecordMethod::kFwrite:
      return RunStdio(env, StdioCall::kFwrite);
    case RecordMethod::kFwriteUnlocked:
      return RunStdio(env, StdioCall::kFwriteUnlocked);
    case RecordMethod::kWritev:
      return RunWritev(env);
    case RecordMethod::kGather:
      return RunGather(env);
    case RecordMethod::kUring:
      return RunUringMethod(env);
    case RecordMethod::kLibrary:
      return RunLibraryMethod(env);
  }
  return {};
}

}  // namespace writelab
