// SPDX-License-Identifier: MIT
#include "experiments/stream/trial.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <memory>

#include "core/clock.h"
#include "core/units.h"
#include "explain/figures.h"
#include "io/bystander.h"
#include "io/own_files.h"
#include "lib/paced_window.h"
#include "lib/writeback_window.h"
#include "port/linux_compat.h"
#include "writelab/stream_writer.h"

namespace writelab {
namespace {

// Opens the trial's file with the strategy's flags.
Result<UniqueFd> OpenTrialFile(StreamStrategy s, const StreamSpec& spec, std::string* path) {
  int flags = O_WRONLY | (s == StreamStrategy::kDirect ? O_DIRECT : 0);
  if (!spec.file.empty()) {
    *path = spec.file;
    return OpenFile(spec.file, flags | O_CREAT | O_TRUNC);
  }
  return CreateOwnFile(spec.dir, "stream", flags, path);
}

// Records when each GiB boundary is crossed; no allocation while writing.
class GibClock {
 public:
  GibClock(uint64_t size, uint64_t start_ns) : start_ns_(start_ns) {
    marks_.reserve(size / kGiB + 2);
  }
  void Advance(uint64_t bytes) {
    if (bytes >= next_) {
      marks_.push_back({bytes, NowNs()});
      next_ = (bytes / kGiB + 1) * kGiB;
    }
  }
  std::vector<double> MbPerSecond(uint64_t total, uint64_t end_ns) {
    if (marks_.empty() || marks_.back().bytes != total) marks_.push_back({total, end_ns});
    std::vector<double> out;
    uint64_t prev_bytes = 0, prev_ns = start_ns_;
    for (const Mark& m : marks_) {
      if (m.bytes == prev_bytes) continue;
      double s = static_cast<double>(m.ns - prev_ns) / 1e9;
      out.push_back(s > 0 ? static_cast<double>(m.bytes - prev_bytes) / s / kMB : 0);
      prev_bytes = m.bytes;
      prev_ns = m.ns;
    }
    return out;
  }

 private:
  struct Mark {
    uint64_t bytes;
    uint64_t ns;
  };
  uint64_t start_ns_;
  uint64_t next_ = kGiB;
  std::vector<Mark> marks_;
};

// The window's calls through the trial's runner, counted with its writes.
class RunnerWindowCalls final : public WindowCalls {
 public:
  explicit RunnerWindowCalls(WriteRunner& runner) : runner_(runner) {}
  int SyncRange(uint64_t offset, uint64_t len, unsigned flags) override {
    return runner_.Sync({SyncKind::kRange, offset, len, flags});
  }
  int DropCache(uint64_t offset, uint64_t len) override {
    return runner_.Advise({offset, len, POSIX_FADV_DONTNEED});
  }
  int Datasync() override { return runner_.Sync({SyncKind::kFdatasync}); }

 private:
  WriteRunner& runner_;
};

// The original loops: write a block, then the strategy's own calls.
// Whether the trial has written for its --time-limit (never without one).
bool PastLimit(const TrialEnv& env, uint64_t t0, TrialResult& r) {
  if (!env.spec.time_limit_ns || NowNs() - t0 < env.spec.time_limit_ns) return false;
  r.time_limited = true;
  return true;
}

void WriteLoop(StreamStrategy s, const TrialEnv& env, WriteRunner& runner, GibClock& gib,
               TrialResult& r, uint64_t t0) {
  const uint64_t size = env.spec.size, block = env.spec.block;
  // Torvalds' window: start writeback of each block, wait for the one
  // before; Garzik's variant then drops it (the library's implementation).
  WritebackWindow window(block, s == StreamStrategy::kWindowDrop);
  // Paced: writes of at most its window, flushed and dropped behind it.
  PacedWindow paced(env.spec.pace_target_ns, block);
  RunnerWindowCalls calls(runner);
  uint64_t done = 0;  // bytes written in all passes
  for (uint64_t off = 0, n = 0;; off += n) {
    if (off >= size) {  // a pass is over: another while the minimum time lasts
      if (!env.spec.min_time_ns || NowNs() - t0 >= env.spec.min_time_ns) break;
      off = 0;
      ++r.passes;
      window = WritebackWindow(block, s == StreamStrategy::kWindowDrop);  // as the background
      const char* what = "";  // paced: the pass's tail flushed before the next pass begins
      if (int rc = s == StreamStrategy::kPaced ? paced.Flush(calls, size, &what) : 0; rc < 0)
        return r.outcome.Fail(-rc, std::string(what) + " at " + std::to_string(size));
      paced.MarkFlushed(0);
    }
    if (env.ctx.Interrupted()) {
      r.outcome.interrupted = true;
      return;
    }
    if (PastLimit(env, t0, r)) break;
    n = std::min(block, size - off);
    if (s == StreamStrategy::kPaced) n = std::min(n, paced.Room(off));
    if (int rc = runner.WriteFully(env.data.data(), n, off); rc != 0) {
      // Only the first write can say the strategy's feature is not there.
      Feature first = s == StreamStrategy::kDontcache ? Feature::kRwfDontcache
                      : s == StreamStrategy::kDirect  ? Feature::kDirectIo
                                                      : Feature::kNone;
      std::string what = s == StreamStrategy::kDontcache ? "pwritev2 RWF_DONTCACHE" : "write";
      return r.outcome.Fail(-rc, what + " at " + std::to_string(off),
                            off == 0 ? first : Feature::kNone);
    }
    const char* what = "";
    int rc = 0;
    if (s == StreamStrategy::kWindow || s == StreamStrategy::kWindowDrop)
      rc = window.AfterWrite(calls, off, n, &what);
    if (s == StreamStrategy::kPaced) rc = paced.AfterWrite(calls, off + n, &what);
    if (rc < 0) return r.outcome.Fail(-rc, std::string(what) + " at " + std::to_string(off));
    done += n;
    gib.Advance(done);
  }
  if (s != StreamStrategy::kPaced) return;
  r.paced_flushes = paced.flushes();
  r.paced_window_min = paced.smallest_window();
  r.paced_window_max = paced.largest_window();
  r.paced_slowest_ns = paced.slowest_flush_ns();
  r.paced_unmet = paced.unmet_flushes();
}

// The library strategy: the application's view, one Append() per block.
// Append and Finish are library calls of several system calls each: the
// library row's write latency and sync time are theirs (named so in stream.cc).
void LibraryLoop(UniqueFd fd, const TrialEnv& env, std::atomic<uint64_t>& progress, GibClock& gib,
                 Sampler& sampler, TrialResult& r, uint64_t t0, uint64_t& sync_start,
                 uint64_t& sync_ns) {
  r.library = true;
  StreamWriterOptions options;
  options.window_bytes = env.spec.block;
  auto writer = StreamWriter::Adopt(std::move(fd), r.path, options);
  if (!writer) return r.outcome.Fail(writer.error());
  const uint64_t size = env.spec.size, block = env.spec.block;
  for (uint64_t off = 0; off < size; off += block) {
    if (env.ctx.Interrupted()) {
      r.outcome.interrupted = true;
      break;
    }
    if (PastLimit(env, t0, r)) break;
    uint64_t n = std::min(block, size - off);
    uint64_t at = NowNs();
    Status st = writer->Append({env.data.data(), n});
    r.write_latency.Record(NowNs() - at);
    if (!st) return r.outcome.Fail(st.error());
    r.counters.bytes += n;
    ++r.counters.calls;
    progress.store(off + n, std::memory_order_relaxed);
    gib.Advance(off + n);
  }
  sync_start = NowNs();
  sampler.SampleNow();
  Status st = writer->Finish();
  sync_ns = NowNs() - sync_start;
  if (!st) return r.outcome.Fail(st.error());
  r.library_choice = writer->choice();
}

Sampler::Observer ProgressPrinter(const TrialEnv& env) {
  if (!env.ctx.progress) return nullptr;
  return [out = env.ctx.progress, label = env.label, size = env.spec.size,
          last = SamplePoint{}](const SamplePoint& p) mutable {
    double dt = p.t_s - last.t_s;
    double rate = dt > 0 ? static_cast<double>(p.bytes - last.bytes) / dt / kMB : 0;
    std::fprintf(out, "\r\033[K  stream %s: %s of %s, %.0f MB/s, %s dirty", label.c_str(),
                 FormatBytes(static_cast<double>(p.bytes)).c_str(),
                 FormatBytes(static_cast<double>(size)).c_str(), rate,
                 FormatBytes(static_cast<double>(p.dirty)).c_str());
    std::fflush(out);
    last = p;
  };
}

// Measures what the file left in the page cache, then drops it and (unless
// kept) removes the file, so the next trial inherits nothing.
void Settle(int fd, TrialResult& r, bool keep) {
  auto forget = [&] { keep ? KeepOwnFile(r.path) : RemoveOwnFile(r.path); };
  if (r.outcome.interrupted && !keep) {  // no measurement, a file of ours: a SIGKILL may follow
    forget();
    return;
  }
  auto res = MeasureResidency(fd, r.path);
  if (res) {
    r.residency = *res;
  } else {
    r.residency_error = res.error().Message();
  }
  fsync(fd);
  posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  forget();
}

std::unique_ptr<WriteEngine> MakeEngine(StreamStrategy s, int fd, const TrialEnv& env) {
  if (s == StreamStrategy::kDontcache) return env.ctx.Engine(MakePwritev2Engine(fd, RWF_DONTCACHE));
  return env.ctx.Engine(
      MakePwriteEngine(fd, s == StreamStrategy::kDirect ? env.direct_alignment : 1));
}

// --explain over the write pass: how long the writer was throttled, and who
// started the writeback.
void ExplainWrites(ExplainSpan& span, const TrialEnv& env, TrialResult& r, uint64_t write_ns) {
  auto d = span.End();
  if (!d) return;
  ExplainValues(*env.ctx.explainer, *d, {0, static_cast<double>(write_ns) / 1e9}, kStreamExplains,
                r.explained);
  if (env.probe) {
    ExplainProbeCallValues(*env.ctx.explainer, *d, r.explained);
    env.ctx.explainer->TimeOnly({});
  }
  env.ctx.explainer->ThrottleOnly({});
}

// Writes, syncs and times; fills r with what the trial measured.
void Measure(StreamStrategy s, int fd, const TrialEnv& env, TrialResult& r) {
  std::atomic<uint64_t> progress{0};
  auto engine = MakeEngine(s, fd, env);
  WriteRunner runner(*engine, r.write_latency, &progress);
  Sampler sampler(env.device, env.spec.interval_ns, &progress, ProgressPrinter(env));
  if (env.probe) env.probe->Start();
  sampler.Start();
  // --explain over the writes only: the writer's throttling, its writeback,
  // and the split of the bystander probe's calls (the only ones timed).
  if (env.probe && env.ctx.explainer) env.ctx.explainer->TimeOnly({env.probe->tid()});
  if (env.ctx.explainer) env.ctx.explainer->ThrottleOnly({gettid()});  // the writer is this thread
  ExplainSpan explain(env.ctx.explainer, env.probe ? kStreamProbeExplains : kStreamExplains);
  const uint64_t t0 = NowNs();  // write_s spans the whole pass of writes
  uint64_t sync_start = 0, sync_ns = 0;
  GibClock gib(env.spec.size, t0);
  if (s == StreamStrategy::kLibrary) {
    LibraryLoop(UniqueFd(dup(fd)), env, progress, gib, sampler, r, t0, sync_start, sync_ns);
    ExplainWrites(explain, env, r, sync_start - t0);
  } else {
    WriteLoop(s, env, runner, gib, r, t0);
    sync_start = NowNs();
    ExplainWrites(explain, env, r, sync_start - t0);
    sampler.SampleNow();  // Dirty peaks here, before the final fsync
    if (r.outcome.ok() && !r.outcome.interrupted) {
      if (int rc = runner.Sync({SyncKind::kFsync}); rc < 0) r.outcome.Fail(-rc, "fsync " + r.path);
      sync_ns = runner.last_ns();
      // Paced leaves nothing cached: its last window, clean now, goes too.
      if (s == StreamStrategy::kPaced && r.outcome.ok())
        if (int rc = runner.Advise({0, 0, POSIX_FADV_DONTNEED}); rc < 0)
          r.outcome.Fail(-rc, "posix_fadvise " + r.path);
    }
    r.counters = runner.counters();
  }
  r.samples = sampler.Stop();
  StopTrialProbe(env, sampler.start_ns(), r);
  if (env.ctx.progress) std::fprintf(env.ctx.progress, "\r\033[K");
  if (sync_start == 0) sync_start = NowNs();  // the library loop stopped early
  r.bytes = r.counters.bytes;
  r.start_ns = t0;
  r.end_ns = sync_start + sync_ns;
  r.origin_ns = sampler.start_ns();
  r.write_s = static_cast<double>(sync_start - t0) / 1e9;
  r.sync_s = static_cast<double>(sync_ns) / 1e9;
  r.gib_mb_s = gib.MbPerSecond(r.bytes, sync_start);
}

}  // namespace

void StopTrialProbe(const TrialEnv& env, uint64_t origin_ns, TrialResult& r) {
  if (!env.probe) return;
  r.probed = true;
  r.probe_latency = env.probe->Stop();
  r.probe_error = env.probe->error();
  for (const auto& [at, ns] : env.probe->samples())
    r.probe_points.push_back({static_cast<double>(static_cast<int64_t>(at - origin_ns)) / 1e9,
                              static_cast<double>(ns) / 1e6});
}

TrialResult RunStreamTrial(StreamStrategy s, const TrialEnv& env) {
  TrialResult r;
  auto fd = OpenTrialFile(s, env.spec, &r.path);
  if (!fd) {
    if (s == StreamStrategy::kDirect)
      r.outcome.Fail(Error{fd.error().code, fd.error().context + " with O_DIRECT"},
                     Feature::kDirectIo);
    else
      r.outcome.Fail(fd.error());
    return r;
  }
  const size_t align = env.direct_alignment;
  if (s == StreamStrategy::kDirect && (env.spec.block % align || env.spec.size % align)) {
    r.outcome.Fail(EINVAL,
                   "O_DIRECT needs --block and --size in multiples of " + std::to_string(align) +
                       " bytes (the target's direct I/O alignment)",
                   Feature::kDirectIo);
  } else if (s == StreamStrategy::kMemcg) {
    MeasureInMemcg(fd->get(), env, r);
  } else {
    Measure(s, fd->get(), env, r);
  }
  Settle(fd->get(), r, env.keep_file && r.outcome.ok());
  return r;
}

}  // namespace writelab
