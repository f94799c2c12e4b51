// SPDX-License-Identifier: MIT
// The measured loop of `writelab fsync`: write, sync, sleep, COUNT times.
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <string>

#include "core/clock.h"
#include "experiments/fsync/sync_loop.h"
#include "explain/figures.h"
#include "io/runner.h"

namespace writelab {
namespace {

// The method's sync after the write, timed by the runner; 0 or -errno.
// *ns is the time in the sync calls: for sfr, sync_file_range and the
// fdatasync after it together (a figure of two calls, named so in fsync.cc).
int DoSync(SyncMethod m, WriteRunner& runner, uint64_t len, uint64_t* ns) {
  *ns = 0;
  switch (m) {
    case SyncMethod::kFsync:
    case SyncMethod::kFdatasync: {
      int rc = runner.Sync({m == SyncMethod::kFsync ? SyncKind::kFsync : SyncKind::kFdatasync});
      *ns = runner.last_ns();
      return rc;
    }
    case SyncMethod::kSfr: {
      SyncOp range{SyncKind::kRange, 0, len, SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER};
      if (int rc = runner.Sync(range); rc != 0) return rc;
      *ns = runner.last_ns();
      int rc = runner.Sync({SyncKind::kFdatasync});
      *ns += runner.last_ns();
      return rc;
    }
    default:
      return 0;  // the write was the sync
  }
}

// One iteration's sync and total latencies and its sample (at, from the
// loop's start); the write's is the runner's to record.
void Record(SyncRun& run, uint64_t at, uint64_t write_ns, uint64_t sync_ns, bool separate_sync) {
  run.end_ns = NowNs();
  if (separate_sync) run.sync_latency.Record(sync_ns);
  run.total_latency.Record(write_ns + sync_ns);
  run.samples.push_back({static_cast<double>(at) / 1e9, static_cast<double>(write_ns) / 1e9,
                         static_cast<double>(sync_ns) / 1e9});
}

// Sleeps until deadline_ns (CLOCK_MONOTONIC) or an interrupting signal.
void SleepUntil(uint64_t deadline_ns, const RunContext& ctx) {
  timespec ts{static_cast<time_t>(deadline_ns / 1'000'000'000),
              static_cast<long>(deadline_ns % 1'000'000'000)};
  while (!ctx.Interrupted() &&
         clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

// Axboe's 2009 loop, one iteration: fopen the test file afresh
// (truncating it; through /proc/self/fd, the descriptor writelab made, so
// that no name is looked up again), fprintf one line, fflush (the write),
// fsync, fclose. 0 or -errno with *what naming the call.
int ReopenOnce(const std::string& self, uint64_t* write_ns, uint64_t* sync_ns, const char** what) {
  const uint64_t t0 = NowNs();
  std::FILE* f = std::fopen(self.c_str(), "w");
  if (!f) return *what = "fopen", -errno;
  int rc = std::fprintf(f, "Some data here\n") < 0 || std::fflush(f) != 0 ? -errno : 0;
  const uint64_t t1 = NowNs();
  *write_ns = t1 - t0;
  if (rc == 0 && fsync(fileno(f)) != 0)
    rc = -errno, *what = "fsync";
  else if (rc != 0)
    *what = "fprintf";
  *sync_ns = NowNs() - t1;
  if (std::fclose(f) != 0 && rc == 0) rc = -errno, *what = "fclose";
  return rc;
}

}  // namespace

SyncRun MeasureSyncMethod(const FsyncSpec& spec, const SyncMethodInfo& method, WriteEngine& engine,
                          const void* data, const RunContext& ctx, int fd) {
  SyncRun run;
  const std::string self = "/proc/self/fd/" + std::to_string(fd);  // reopen's file
  run.samples.reserve(static_cast<size_t>(spec.count));
  WriteRunner runner(engine, run.write_latency);
  ExplainSpan explain(ctx.explainer, kFsyncExplains);
  const uint64_t start = NowNs();  // the schedule's clock; the runner times the calls
  run.start_ns = start;
  for (int i = 0; i < spec.count; ++i) {
    if (ctx.Interrupted()) {
      run.outcome.interrupted = true;
      break;
    }
    const uint64_t t0 = NowNs();  // when this iteration starts, for the timeline
    if (method.id == SyncMethod::kReopen) {
      uint64_t write_ns = 0, sync_ns = 0;
      const char* what = "";
      if (int rc = ReopenOnce(self, &write_ns, &sync_ns, &what); rc != 0) {
        run.outcome.Fail(-rc, std::string(what) + " (reopen)");
        break;
      }
      run.write_latency.Record(write_ns);  // no runner: stdio makes the write
      Record(run, t0 - start, write_ns, sync_ns, true);
      if (i + 1 < spec.count) SleepUntil(t0 + spec.interval_ns, ctx);
      continue;
    }
    int rc = runner.WriteFully(data, spec.write_size, 0);
    if (rc != 0) {
      // Only the first write can say the flag is not supported.
      Feature flag = i == 0 && method.rwf_flags ? Feature::kRwfDsync : Feature::kNone;
      run.outcome.Fail(
          -rc, std::string(method.rwf_flags ? "pwritev2" : "pwrite") + " (" + method.name + ")",
          flag);
      break;
    }
    const uint64_t write_ns = runner.last_ns();
    uint64_t sync_ns = 0;
    if (int rc = DoSync(method.id, runner, spec.write_size, &sync_ns); rc != 0) {
      run.outcome.Fail(-rc, method.name, i == 0 ? Feature::kSyncCall : Feature::kNone);
      break;
    }
    Record(run, t0 - start, write_ns, sync_ns, method.separate_sync);
    if (i + 1 < spec.count) SleepUntil(t0 + spec.interval_ns, ctx);
  }
  if (auto d = explain.End()) {
    ExplainValues(*ctx.explainer, *d,
                  {run.samples.size(), static_cast<double>(NowNs() - start) / 1e9}, kFsyncExplains,
                  run.explained);
    if (ctx.explainer->Sees(ExplainProbe::kSyncParts) &&
        ctx.explainer->Sees(ExplainProbe::kWriteback))
      ExplainAheadValues(*d, run.explained);
  }
  return run;
}

}  // namespace writelab
