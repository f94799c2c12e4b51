// SPDX-License-Identifier: MIT
// `writelab explain -- CMD` / `--pid PID`: starts CMD (held at a gate until
// the tracer has it in scope, so that its first write is seen) or attaches
// to PID and its descendants, then collects until the process exits, the
// duration ends or SIGINT, sampling the system around the calls; then turns
// what was collected into the document's rows.
#include "program/explain/watch.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include "core/clock.h"
#include "core/histogram.h"
#include "core/units.h"
#include "explain/kernel_dev.h"
#include "program/explain/def.h"
#include "program/explain/figures.h"
#include "program/explain/live_table.h"
#include "program/explain/rows.h"
#include "program/spawn.h"
#include "report/atomic_file.h"
#include "telemetry/identify.h"
#include "telemetry/procfs.h"
#include "telemetry/sysfs_block.h"
#include "testbed/journal.h"
#include "writelab/unique_fd.h"

namespace writelab {
namespace {

// The disk under a block device or partition (dev_t, kernel encoding).
__u32 DiskOfKernelDev(__u32 dev) { return KernelDev(DiskOf(UserDev(dev))); }

// Culprits whose open files are named, at most.
constexpr size_t kMaxNamedCulprits = 256;

// What the session gathers while the tracer runs.
class Collector {
 public:
  explicit Collector(ProgramTrace& t) : t_(t) {}
  TraceSink Sink() {
    TraceSink s;
    s.call = [this](const TraceCall& c) {
      if (t_.calls.size() < kMaxKeptCalls)
        t_.calls.push_back(c);
      else
        ++t_.calls_dropped;
      devs_.insert(c.dev);
    };
    s.commit = [this](const TraceCommit& c) { t_.commits.push_back(c); };
    s.stats = [this](const TraceCommitStats& c) { t_.commit_stats.push_back(c); };
    s.file = [this](const TraceFileName& f) {
      std::string path;
      for (uint32_t i = 0; i < f.parts && i < TRACE_PATH_PARTS; ++i)
        path = "/" + std::string(f.name[i]) + path;
      names_[{f.dev, f.ino}] = (f.complete ? "" : "…") + path;
      devs_.insert(f.dev);
    };
    s.charges = [this](const TraceCharges& e) { AddCharges(ChargeWindow::From(e)); };
    return s;
  }

  // A window or commit of charges: kept for the calls, and a window's bytes
  // (written, or dirtied) added to each culprit's over the run.
  void AddCharges(ChargeWindow w) {
    if (w.kind == TRACE_CHARGE_DIRTY)
      for (const trace_charge& c : w.charges) {
        CulpritWrites& to = t_.writes[CulpritId{c.cause, c.tgid}];
        if (to.comm.empty()) to.comm = c.comm;
        to.dirtied += c.bytes;
      }
    if (w.kind == TRACE_CHARGE_WINDOW)
      for (const trace_charge& c : w.charges) {
        CulpritWrites& to = t_.writes[CulpritId{c.cause, c.tgid}];
        if (to.comm.empty()) to.comm = c.comm;
        to.bytes += c.bytes;
        if (c.dev) to.files[{c.dev, c.ino}] += c.bytes;
        if (c.cause == TRACE_CAUSE_PROCESS && culprits_.size() < kMaxNamedCulprits)
          culprits_.insert(static_cast<pid_t>(c.tgid));
      }
    if (w.kind == TRACE_CHARGE_WINDOW && w.rest_bytes)
      t_.writes[CulpritId{kCauseUnnamed, 0}].bytes += w.rest_bytes;
    if (t_.windows.size() < kMaxKeptCalls)
      t_.windows.push_back(std::move(w));
    else
      ++t_.windows_dropped;
  }

  // The processes whose open files are looked up by path: the culprits too.
  std::vector<pid_t> Culprits() const { return {culprits_.begin(), culprits_.end()}; }

  // The paths of the scope's open regular files, from /proc.
  void ScanPaths(const std::vector<pid_t>& processes) {
    for (pid_t pid : processes) {
      const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
      std::error_code ec;
      for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
        auto view = ViewDescriptor(e.path());  // stat and path of one file
        if (!view || !S_ISREG(view->st.st_mode)) continue;
        t_.paths[{KernelDev(view->st.st_dev), view->st.st_ino}] = view->path;
        devs_.insert(KernelDev(view->st.st_dev));
      }
    }
  }

  void Sample(MeminfoReader& mem) {
    ContextSample s;
    s.t_ns = NowNs();
    if (auto m = mem.Read()) s.dirty = m->dirty, s.writeback = m->writeback;
    for (__u32 dev : devs_) {
      if (!dev) continue;
      const __u32 disk = DiskOfKernelDev(dev);
      t_.disk_of[dev] = disk;
      if (auto n = RequestsInFlight(UserDev(disk))) s.in_flight[disk] = *n;
    }
    if (t_.samples.size() < kMaxKeptCalls) t_.samples.push_back(std::move(s));
  }

  // Files closed before /proc showed them: the dentry names the kernel sent.
  // And each file system's block size, for the journal's blocks in bytes.
  void Finish() {
    for (const auto& [id, name] : names_)
      if (!t_.paths.count(id)) t_.paths[id] = name;
    for (const auto& [id, path] : t_.paths) {
      struct statvfs v;
      const std::string dir = std::filesystem::path(path).parent_path();
      if (!t_.block_size.count(id.first) && statvfs(dir.c_str(), &v) == 0)
        t_.block_size[id.first] = static_cast<uint32_t>(v.f_bsize);
    }
  }

 private:
  ProgramTrace& t_;
  std::set<__u32> devs_;
  std::set<pid_t> culprits_;
  std::map<std::pair<uint32_t, uint64_t>, std::string> names_;
};

// Whether the process behind pidfd has exited (a zombie its parent has not
// reaped included): its pidfd turns readable. A pidfd names one process for
// good, so a number the kernel hands to another process later is never
// taken for it.
bool ProcessExited(int pidfd) {
  pollfd p{pidfd, POLLIN, 0};
  return poll(&p, 1, 0) != 0;
}

// The refusal of a --pid process that ended before any of its calls was
// seen.
Error ExitedAtOnce(pid_t pid) {
  return PlainError("--pid: process " + std::to_string(pid) +
                    " exited at once, before any call was seen");
}

// A pidfd of the process the user named by its number: refused when the
// process that has that number now started after writelab did (the one
// named has ended and its number was given to another), read while the
// pidfd shows it alive, so that the start time read is its own.
Result<UniqueFd> HoldNamedProcess(pid_t pid) {
  const std::string what = "--pid: process " + std::to_string(pid);
  UniqueFd fd(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
  if (!fd) return Unexpected(ErrnoError(errno, what));
  const unsigned long long started = ProcessStartTime(pid), self = ProcessStartTime(getpid());
  if (ProcessExited(fd.get()) || started == 0) return Unexpected(ExitedAtOnce(pid));
  if (started > self)
    return Unexpected(
        PlainError(what +
                   " started after writelab did: the process named has ended and its number is "
                   "another's"));
  return fd;
}

uint64_t CallsSeen(const Tracer& tracer) {
  uint64_t calls = 0;
  for (const TraceFile& f : tracer.Files()) calls += f.stats.calls;
  return calls;
}

}  // namespace

Status RunExplainProgram(const ProgramSpec& spec, const RunContext& ctx, Document& doc,
                         int* exit_status) {
  // --pid: held before the programs load (a second or more on a busy
  // machine), during which the process named may end and its number go to
  // another.
  UniqueFd pidfd;
  if (spec.command.empty()) {
    auto held = HoldNamedProcess(spec.pid);
    if (!held) return Unexpected(held.error());
    pidfd = std::move(*held);
  }
  ProgramTrace trace;
  Collector collect(trace);
  std::vector<dev_t> devices;
  for (const std::string& d : spec.devices) {
    struct stat st;
    if (stat(d.c_str(), &st) == 0 && S_ISBLK(st.st_mode)) devices.push_back(DiskOf(st.st_rdev));
  }
  auto started = StartTracer(collect.Sink(), devices);
  if (!started) return Unexpected(started.error());
  std::unique_ptr<Tracer> tracer = std::move(*started);
  tracer->SetSlow(spec.slow_ns ? spec.slow_ns : 1'000'000);
  auto as = ResolveUser(spec.user);
  if (!as) return Unexpected(PlainError(as.error()));

  std::optional<Child> child;
  pid_t root = spec.pid;
  trace.start_ns = NowNs();
  if (!spec.command.empty()) {
    auto spawned = Spawn(spec.command, *as);
    if (!spawned) return Unexpected(spawned.error());
    child = *spawned;
    root = child->pid;
    if (auto st = tracer->AddProcess(root); !st) {
      kill(root, SIGKILL);
      waitpid(root, nullptr, 0);
      return st;
    }
    if (Status ran = child->Release("explain: run " + spec.command.front()); !ran) return ran;
  } else {
    const std::vector<pid_t> listed = Descendants(root);
    for (pid_t p : listed)
      if (auto st = tracer->AddProcess(p); !st) return st;
    // A descendant that ended between the listing and its adding left its
    // number in the scope (as the process named would, below), where a
    // newcomer could get it: what is no longer a descendant goes out again.
    const std::vector<pid_t> still = Descendants(root);
    for (pid_t p : listed)
      if (std::find(still.begin(), still.end(), p) == still.end()) tracer->RemoveProcess(p);
    // Ended before it was in the programs' scope (its end takes its number
    // out of the scope only once it is in), its number may be another's
    // that the scope now holds.
    if (ProcessExited(pidfd.get())) return Unexpected(ExitedAtOnce(root));
  }

  MeminfoReader mem;
  uint64_t last_second = trace.start_ns;
  LiveTable table;
  int status = 0;
  bool exited = false;
  const bool live = !spec.quiet && isatty(STDERR_FILENO);
  for (bool first = true;; first = false) {
    tracer->Poll(100);
    collect.Sample(mem);
    collect.ScanPaths(tracer->Processes());
    collect.ScanPaths(collect.Culprits());
    if (child) {
      if (waitpid(child->pid, &status, WNOHANG) == child->pid) exited = true;
    } else if (ProcessExited(pidfd.get())) {
      exited = true;
      // Gone before the first poll ended, with nothing seen: nothing to explain.
      if (first && CallsSeen(*tracer) == 0) return Unexpected(ExitedAtOnce(root));
    }
    const uint64_t now = NowNs();
    if (exited || (spec.duration_ns && now - trace.start_ns >= spec.duration_ns)) break;
    if (ctx.Interrupted()) {
      if (child) {  // CMD stops with writelab: the user's Ctrl-C is for both
        kill(child->pid, SIGINT);
        for (int i = 0; i < 20 && waitpid(child->pid, &status, WNOHANG) == 0; ++i) usleep(100'000);
        exited = true;
      }
      break;
    }
    if (now - last_second >= 1'000'000'000) {
      const std::vector<trace_hist> hists = tracer->Histograms();
      if (!spec.slow_ns)
        if (auto p99 = AllCalls(hists).SupportedPercentile(99))
          tracer->SetSlow(std::max<uint64_t>(*p99, 1));
      if (live)
        table.Draw(stderr,
                   table.Update(tracer->Files(), hists, now - trace.start_ns, now - last_second));
      last_second = now;
    }
  }
  if (live) table.Erase(stderr);
  tracer->Stop();
  tracer->Poll(0);
  for (const TraceCharges& w : tracer->OpenWindows()) collect.AddCharges(ChargeWindow::From(w));
  trace.end_ns = NowNs();
  trace.files = tracer->Files();
  trace.hists = tracer->Histograms();
  trace.totals = tracer->Totals();
  trace.split = tracer->Missing(TracePart::kSplit).empty();
  trace.wait_functions = tracer->WaitFunctionsFound();
  trace.check = tracer->Check();
  std::vector<std::string> missing;
  for (int p = 0; p < kTraceParts; ++p)
    if (std::string why = tracer->Missing(static_cast<TracePart>(p)); !why.empty())
      missing.push_back(std::string(TracePartName(static_cast<TracePart>(p))) +
                        " not measured: " + why);
  tracer.reset();  // detached: nothing is left attached
  collect.Finish();
  if (child && !exited) {  // the duration ended or an interrupt came first
    kill(child->pid, SIGTERM);
    waitpid(child->pid, &status, 0);
  }
  if (child) *exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  FillExplainDocument(spec, trace, missing, child ? std::optional<int>(*exit_status) : std::nullopt,
                      ctx.Interrupted(), doc);
  if (!spec.calls_csv.empty())
    if (Status written = WriteFileAtomically(spec.calls_csv, CallsCsv(trace)); !written)
      return Unexpected(written.error());
  return ctx.Interrupted() ? Status(Unexpected(PlainError("interrupted"))) : Status{};
}

}  // namespace writelab
