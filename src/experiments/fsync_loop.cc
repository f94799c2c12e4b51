// The measured loop of `writelab fsync`: write, sync, sleep, COUNT times.
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>

#include "core/clock.h"
#include "experiments/fsync.h"
#include "io/runner.h"

namespace writelab {
namespace {

// The method's sync call after the write; 0 or errno.
int DoSync(SyncMethod m, int fd, uint64_t len) {
  int rc = 0;
  switch (m) {
    case SyncMethod::kFsync:
      rc = fsync(fd);
      break;
    case SyncMethod::kFdatasync:
      rc = fdatasync(fd);
      break;
    case SyncMethod::kSfr:
      rc = sync_file_range(fd, 0, static_cast<off_t>(len),
                           SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
      if (rc == 0) rc = fdatasync(fd);
      break;
    default:
      return 0;  // the write was the sync
  }
  return rc == 0 ? 0 : errno;
}

// Sleeps until deadline_ns (CLOCK_MONOTONIC) or an interrupting signal.
void SleepUntil(uint64_t deadline_ns, const RunContext& ctx) {
  timespec ts{static_cast<time_t>(deadline_ns / 1'000'000'000),
              static_cast<long>(deadline_ns % 1'000'000'000)};
  while (!ctx.Interrupted() &&
         clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

bool RefusedUpFront(int err) { return err == EOPNOTSUPP || err == EINVAL || err == ENOSYS; }

void Fail(SyncRun& run, RowStatus status, int err, std::string what) {
  run.status = status;
  run.error = err;
  run.message = ErrnoError(err, std::move(what)).Message();
}

}  // namespace

SyncRun MeasureSyncMethod(const FsyncSpec& spec, const SyncMethodInfo& method, int fd,
                          WriteEngine& engine, const void* data, const RunContext& ctx) {
  SyncRun run;
  run.samples.reserve(static_cast<size_t>(spec.count));
  WriteRunner runner(engine, run.write_latency);
  const uint64_t start = NowNs();
  for (int i = 0; i < spec.count; ++i) {
    if (ctx.Interrupted()) {
      run.interrupted = true;
      break;
    }
    uint64_t t0 = NowNs();
    int rc = runner.WriteFully(data, spec.write_size, 0);
    uint64_t t1 = NowNs();
    if (rc != 0) {
      bool refused = i == 0 && method.rwf_flags != 0 && RefusedUpFront(-rc);
      Fail(run, refused ? RowStatus::kUnsupported : RowStatus::kFailed, -rc,
           std::string(method.rwf_flags ? "pwritev2" : "pwrite") + " (" + method.name + ")");
      break;
    }
    if (int err = DoSync(method.id, fd, spec.write_size); err != 0) {
      Fail(run, i == 0 && RefusedUpFront(err) ? RowStatus::kUnsupported : RowStatus::kFailed, err,
           method.name);
      break;
    }
    uint64_t t2 = NowNs();
    if (method.separate_sync) run.sync_latency.Record(t2 - t1);
    run.total_latency.Record(t2 - t0);
    run.samples.push_back({static_cast<double>(t0 - start) / 1e9,
                           static_cast<double>(t1 - t0) / 1e9, static_cast<double>(t2 - t1) / 1e9});
    if (i + 1 < spec.count) SleepUntil(t0 + spec.interval_ns, ctx);
  }
  return run;
}

}  // namespace writelab
