// SPDX-License-Identifier: MIT
// The stream experiment's memcg anchor (issue 44): plain's writes made by a
// child process in a memory cgroup of writelab's own, as users confine a
// copy (`systemd-run -p MemoryMax=`, a v1 memory.limit_in_bytes). A memory
// cgroup charges the page cache to the process that dirties it, so the
// writer must be a process of its own; and an OOM kill must end the
// writer, not writelab and what it measured.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "core/clock.h"
#include "core/units.h"
#include "experiments/stream/trial.h"
#include "testbed/memory_cgroup.h"

namespace writelab {
namespace {

// What the writer child sends back when it is done, in one write.
struct WriterReport {
  WriteCounters counters;
  uint64_t start_ns = 0, write_end_ns = 0, sync_end_ns = 0;  // CLOCK_MONOTONIC, as NowNs
  int error = 0;                                             // errno of the failed write or fsync
  bool fsync_failed = false;
  uint64_t at = 0;  // where the failed write was
  bool time_limited = false;
  int passes = 0;
};

// One block at off, short writes resumed and EINTR retried; 0 or an errno.
int WriteBlock(int fd, const std::byte* data, uint64_t n, uint64_t off, WriterReport& c) {
  for (uint64_t done = 0; done < n;) {
    ++c.counters.calls;
    const ssize_t w = pwrite(fd, data + done, n - done, static_cast<off_t>(off + done));
    if (w < 0 && errno == EINTR) {
      ++c.counters.eintr_retries;
      continue;
    }
    if (w <= 0) {
      c.at = off + done;
      return w < 0 ? errno : EIO;
    }
    if (static_cast<uint64_t>(w) < n - done) ++c.counters.short_writes;
    done += static_cast<uint64_t>(w);
    c.counters.bytes += static_cast<uint64_t>(w);
  }
  return 0;
}

// The child: waits at the gate until it is placed in the cgroup, writes
// --size in --blocks (pass after pass until --min-time, stopped at
// --time-limit), fsyncs, reports. System calls only: writelab may have had
// other threads when it forked.
[[noreturn]] void WriterChild(int fd, const TrialEnv& env, int gate, int report) {
  char go = 0;
  if (read(gate, &go, 1) != 1) _exit(2);  // writelab gave up on it
  WriterReport c;
  const StreamSpec& spec = env.spec;
  c.start_ns = NowNs();
  for (uint64_t off = 0; c.error == 0; off += spec.block) {
    if (off >= spec.size) {
      if (!spec.min_time_ns || NowNs() - c.start_ns >= spec.min_time_ns) break;
      off = 0;
      ++c.passes;
    }
    if (spec.time_limit_ns && NowNs() - c.start_ns >= spec.time_limit_ns) {
      c.time_limited = true;
      break;
    }
    c.error = WriteBlock(fd, env.data.data(), std::min(spec.block, spec.size - off), off, c);
  }
  c.write_end_ns = NowNs();
  if (c.error == 0 && fsync(fd) != 0) c.error = errno, c.fsync_failed = true;
  c.sync_end_ns = NowNs();
  (void)!write(report, &c, sizeof c);
  _exit(0);
}

// Waits for the child's exit, passing an interrupt on as SIGKILL; its
// wait status.
int AwaitWriter(pid_t child, const TrialEnv& env, TrialResult& r) {
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, child, 0));
  int status = 0;
  while (waitpid(child, &status, WNOHANG) == 0) {
    if (env.ctx.Interrupted() && !r.outcome.interrupted) {
      r.outcome.interrupted = true;
      kill(child, SIGKILL);
    }
    pollfd p{pidfd, POLLIN, 0};
    if (pidfd < 0 || poll(&p, 1, 100) < 0) usleep(10'000);
  }
  if (pidfd >= 0) close(pidfd);
  return status;
}

// What the child measured, into r; an OOM kill or another death fails it.
void TakeReport(const WriterReport& c, int status, const MemoryCgroup& g, TrialResult& r) {
  if (WIFSIGNALED(status) && !r.outcome.interrupted) {
    const uint64_t kills = g.OomKills().value_or(0);
    if (kills)
      return r.outcome.Fail(ENOMEM, "the OOM killer ended the writer in its memory cgroup of " +
                                        FormatBytes(static_cast<double>(g.limit())) +
                                        " (oom_kill " + std::to_string(kills) + ")");
    return r.outcome.Fail(EINTR,
                          "the writer was killed by signal " + std::to_string(WTERMSIG(status)));
  }
  if (r.outcome.interrupted) return;
  if (c.start_ns == 0) return r.outcome.Fail(EIO, "the writer ended without a report");
  if (c.error)
    return r.outcome.Fail(c.error,
                          c.fsync_failed ? "fsync " + r.path : "write at " + std::to_string(c.at));
  r.counters = c.counters;
  r.bytes = c.counters.bytes;
  r.start_ns = c.start_ns;
  r.end_ns = c.sync_end_ns;
  r.write_s = static_cast<double>(c.write_end_ns - c.start_ns) / 1e9;
  r.sync_s = static_cast<double>(c.sync_end_ns - c.write_end_ns) / 1e9;
  r.time_limited = c.time_limited;
  r.passes = c.passes;
}

}  // namespace

void MeasureInMemcg(int fd, const TrialEnv& env, TrialResult& r) {
  if (!env.ctx.journal) return r.outcome.Fail(EPERM, "memcg: needs root (it makes a cgroup)");
  auto made = MemoryCgroup::Make(env.spec.memcg_bytes, *env.ctx.journal);
  if (!made) return r.outcome.Fail(made.error());
  MemoryCgroup& g = **made;  // removed when it goes, what is left in it killed
  int gate[2], report[2];
  if (pipe2(gate, O_CLOEXEC) != 0) return r.outcome.Fail(errno, "pipe");
  if (pipe2(report, O_CLOEXEC) != 0) {
    close(gate[0]), close(gate[1]);
    return r.outcome.Fail(errno, "pipe");
  }
  Sampler sampler(env.device, env.spec.interval_ns, nullptr);  // the bytes are the child's
  const pid_t child = fork();
  if (child == 0) WriterChild(fd, env, gate[0], report[1]);
  close(gate[0]), close(report[1]);
  UniqueFd go(gate[1]), back(report[0]);
  if (child < 0) return r.outcome.Fail(errno, "fork");
  if (Status placed = g.Place(child); !placed) {
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
    return r.outcome.Fail(placed.error());
  }
  if (env.probe) env.probe->Start();
  sampler.Start();
  (void)!write(go.get(), "g", 1);
  const int status = AwaitWriter(child, env, r);
  WriterReport c;
  if (read(back.get(), &c, sizeof c) != static_cast<ssize_t>(sizeof c)) c = WriterReport{};
  r.samples = sampler.Stop();
  r.origin_ns = sampler.start_ns();
  StopTrialProbe(env, sampler.start_ns(), r);
  r.memcg_peak = g.PeakBytes();
  r.memcg_note = "its writer was a process of its own in a memory cgroup limited to " +
                 FormatBytes(static_cast<double>(g.limit())) + " (" + g.limit_file() +
                 "), its page cache charged there; its write calls are not timed one by one";
  TakeReport(c, status, g, r);
  if (Status removed = g.Revert(); !removed && r.outcome.ok())
    r.memcg_note += "; the cgroup could not be removed: " + removed.error().Message();
}

}  // namespace writelab
