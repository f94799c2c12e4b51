// SPDX-License-Identifier: MIT
// One run of CMD: the shim preloaded (but for plain), the supervisor
// looking at CMD's files every --poll, the bystander probe beside it with
// --measure; measured from the release of CMD to its exit.
#include "program/run/launch.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>

#include "core/clock.h"
#include "core/units.h"
#include "io/bystander.h"
#include "lib/paced_words.h"
#include "port/linux_compat.h"
#include "program/run/supervisor.h"
#include "program/spawn.h"
#include "shim/protocol.h"
#include "telemetry/pagecache.h"
#include "telemetry/procfs.h"
#include "telemetry/sampler.h"
#include "testbed/memory_cgroup.h"

// Where `cmake --install` puts the shim (cmake/tool.cmake); a build that
// does not say (the fuzz targets') looks under /usr/local.
#ifndef WRITELAB_SHIM_INSTALLED
#define WRITELAB_SHIM_INSTALLED "/usr/local/lib/writelab/libwritelab-run.so"
#define WRITELAB_SHIM_RELATIVE "../lib/writelab/libwritelab-run.so"
#endif

namespace writelab {
namespace {

namespace proto = run_protocol;

// The time a file born since is CMD's, on the clock file systems stamp a
// birth with: the coarse one (a tick behind the precise clock at most), so
// that a file CMD creates within the tick it starts in is not taken for
// one that was there before (its first pages would then never be dropped).
uint64_t CoarseRealtimeNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME_COARSE, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000 + static_cast<uint64_t>(ts.tv_nsec);
}

// write_bytes of /proc/PID/io: what PID and the children it reaped caused
// to be written to storage; none when unreadable (a zombie's is, to all
// but root).
std::optional<uint64_t> WriteBytes(pid_t pid) {
  auto text = ReadSmallFile("/proc/" + std::to_string(pid) + "/io");
  if (!text) return std::nullopt;
  const size_t at = text->find("\nwrite_bytes:");
  if (at == std::string::npos) return std::nullopt;
  return std::strtoull(text->c_str() + at + 13, nullptr, 10);
}

// What CMD's environment gets for the shim: the strategy, and the socket
// at fd_as, named by device and inode so that the shim writes to nothing else.
SpawnExtras ShimExtras(const RunSpec& spec, RunStrategy s, const std::string& shim, int report,
                       int fd_as) {
  SpawnExtras x;
  std::string preload = shim;
  if (const char* old = std::getenv("LD_PRELOAD"); old && *old) preload += std::string(":") + old;
  struct stat st {};
  fstat(report, &st);
  x.env = {"LD_PRELOAD=" + preload,
           std::string(proto::kConfigEnv) + "=" + NameOf(kRunStrategies, s) + "," +
               std::to_string(spec.window) + "," + std::to_string(spec.min_file) + "," +
               std::to_string(spec.pace_target_ns),
           std::string(proto::kFdEnv) + "=" + std::to_string(fd_as) + ":" +
               std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino)};
  if (!spec.path_glob.empty()) x.env.push_back(std::string(proto::kPathEnv) + "=" + spec.path_glob);
  x.keep_fd = report;
  x.keep_as = fd_as;
  return x;
}

// The descriptor the socket gets in CMD: kReportFd, or below the limit
// on descriptors where that is lower. Raises writelab's own soft limit to
// its hard one first (the supervisor holds a descriptor per large file).
int ReportFdNumber() {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return proto::kReportFd;
  if (lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    setrlimit(RLIMIT_NOFILE, &lim);
  }
  // CMD inherits the raised limit; its own soft limit may be set lower again,
  // but the descriptor is made before it runs.
  return static_cast<int>(std::min<rlim_t>(proto::kReportFd, lim.rlim_cur - 1));
}

// paced's own flushes of a file, in words: how many, the slowest, and
// those that missed the target with the window as small as it goes.
std::string PacedWords(const ShimRecord::Paced& p) {
  std::string words = " (" + std::to_string(p.flushes) + " flush" + (p.flushes == 1 ? "" : "es") +
                      " of its own, the slowest " +
                      FormatValue(static_cast<double>(p.slowest_ns) / 1e6, "ms");
  if (p.unmet) words += "; " + std::to_string(p.unmet) + UnmetFlushesWords("CMD");
  return words + ")";
}

// A supervised paced file whose slowest flush took longer than the target:
// from outside, nothing holds the writer back (docs/run.md, "Paced from
// outside, measured": other programs' flushes waited longest of all there).
std::string OutsideTargetWords(const RunSpec& spec) {
  return "; over the target of " +
         FormatValue(static_cast<double>(spec.pace_target_ns) / 1e6, "ms") +
         ": from outside, each flush covers what CMD wrote since the last look, and nothing "
         "holds CMD's writer back, so other programs' fsync beside it can wait longer than the "
         "target";
}

// The shim's mech for a file, said in words where the word alone is not
// enough.
std::string MechWords(const std::string& mech) {
  if (mech.empty()) return "claimed, never closed (no account)";
  if (mech == "failed")
    return "failed (a sync_file_range, fadvise or, under direct, O_DIRECT write failed: from "
           "then on as CMD wrote it, the failed write made again as CMD's own call)";
  if (mech == "no-wait")
    return "no-wait (no read-only descriptor of the file could be opened to wait on: writeback "
           "started and clean pages dropped, never waited for)";
  if (mech == "direct+window-drop")
    return "direct+window-drop (bytes that could not go direct, writes not aligned for "
           "O_DIRECT or copy_file_range's or stdio's, were CMD's own, through the window-drop "
           "window)";
  if (mech == "refused-direct-unaligned")
    return "refused-direct (its first write after --min-file was not aligned as O_DIRECT needs: "
           "offset, length and buffer to the file system's direct-I/O alignment, statx "
           "DIOALIGN): as CMD wrote it";
  if (mech == "refused-direct-open")
    return "refused-direct (no O_DIRECT descriptor of it could be opened: the file system or "
           "its permissions): as CMD wrote it";
  if (mech == "refused-direct-append")
    return "refused-direct (CMD opened it O_APPEND): as CMD wrote it";
  return mech;
}

// How a file was handled, in words, and the bytes the strategy handled.
std::pair<std::string, uint64_t> How(const WatchedFile& f, const RunSpec& spec, RunStrategy s) {
  if (s == RunStrategy::kPlain) return {"plain: as CMD wrote it (the shim only counted)", 0};
  const uint64_t supervised = f.supervised ? std::min(f.supervised_bytes, f.size) - f.base : 0;
  const uint64_t handled = std::max(f.shim_handled, supervised);
  std::string how;
  if (f.shim_claimed) how = "shim: " + MechWords(f.shim_mech);
  if (f.shim_claimed && s == RunStrategy::kPaced && f.shim_paced.flushes)
    how += PacedWords(f.shim_paced);
  if (s == RunStrategy::kDirect && !f.shim_claimed && GrowthOf(f) >= spec.min_file)
    return {
        "refused-direct: written by calls the shim does not see (a static binary, io_uring, "
        "a raw system call), and O_DIRECT needs the writer's own calls: as CMD wrote it",
        0};
  if (f.supervised) {
    how += how.empty() ? "supervisor: " : "; supervisor first: ";
    how += s == RunStrategy::kDontcache ? "window-drop (RWF_DONTCACHE needs the writer's own call)"
                                        : std::string(NameOf(kRunStrategies, s));
    if (s == RunStrategy::kPaced && f.paced.flushes()) {
      how += PacedWords({f.paced.flushes(), f.paced.unmet_flushes(), f.paced.slowest_flush_ns()});
      if (f.paced.slowest_flush_ns() > spec.pace_target_ns) how += OutsideTargetWords(spec);
    }
  }
  if (!f.supervisor_error.empty()) how += " (failed: " + f.supervisor_error + ")";
  const uint64_t written = std::max(GrowthOf(f), f.shim_written);
  if (f.deleted) how += std::string(how.empty() ? "" : "; ") + "deleted while CMD ran";
  if (!how.empty()) return {how, handled};
  if (written == 0 && !f.fd && f.open_error)
    return {"not looked at: writelab could not open it (" + Printable(std::strerror(f.open_error)) +
                ")",
            handled};
  if (written < spec.min_file) return {"small: left alone (below --min-file)", handled};
  if (!f.fd)
    return {"not handled: writelab could not open it" +
                (f.open_error ? " (" + Printable(std::strerror(f.open_error)) + ")" : ""),
            handled};
  return {"not handled", handled};
}

// The page cache is measured for the files the strategy is for (CMD wrote
// at least --min-file to them): a small file has no descriptor of
// writelab's, and the promise is about the streams. A file deleted while CMD
// ran has no pages to measure.
RunFile Account(Supervisor& sup, WatchedFile& f, const RunSpec& spec, RunStrategy s) {
  RunFile out;
  out.path = f.path;
  if (std::max(GrowthOf(f), f.shim_written) >= spec.min_file && !f.deleted) {
    if (const int fd = sup.FdOf(f); fd >= 0) {
      struct stat st;
      if (fstat(fd, &st) == 0) f.size = static_cast<uint64_t>(st.st_size);
      if (auto r = MeasureResidency(fd, f.path)) out.cached = r->cached_bytes();
    }
    out.measured = !f.deleted;
  }
  out.size = f.size;
  out.written = f.shim_written ? f.shim_written : GrowthOf(f);
  out.small = out.written < spec.min_file && !f.open_error;
  std::tie(out.how, out.handled) = How(f, spec, s);
  out.handled = std::min(out.handled, out.written);
  return out;
}

// Back to where a run starts, for the next one (--compare): what CMD wrote
// to its files written back and dropped (sync_file_range and fadvise only).
void Quiesce(std::vector<WatchedFile>& files) {
  for (WatchedFile& f : files) {
    if (!f.fd || f.size <= f.base) continue;
    FdWindowCalls calls(f.fd.get());
    (void)calls.SyncRange(
        f.base, f.size - f.base,
        SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
    (void)calls.DropCache(f.base, f.size - f.base);
  }
}

constexpr uint64_t kSettleCap = 60'000'000'000;
constexpr const char* kNotSettled =
    "settle: the dirty pages of the files of at least --min-file were not all written back "
    "within 60 s of CMD's exit: no MB/s until durable (with --measure, the bystander stopped "
    "there)";
constexpr const char* kSettleUnknown =
    "settle: the kernel has no cachestat (Linux 6.5) to tell when CMD's files were written "
    "back: no MB/s until durable";

enum class Settled { kClean, kTimedOut, kUnknown };

// Waits until no page of the files of at least min_file (the streams: a
// small log CMD keeps open may stay dirty until it expires) is dirty or
// under writeback (cachestat), at most kSettleCap.
Settled Settle(std::vector<WatchedFile>& files, uint64_t min_file, const RunContext& ctx) {
  const uint64_t start = NowNs();
  while (!ctx.Interrupted() && NowNs() - start < kSettleCap) {
    bool clean = true;
    for (WatchedFile& f : files) {
      if (!f.fd || std::max(GrowthOf(f), f.shim_written) < min_file) continue;
      auto r = MeasureResidency(f.fd.get(), f.path);
      if (!r || !r->dirty_pages || !r->writeback_pages) return Settled::kUnknown;
      clean &= *r->dirty_pages + *r->writeback_pages == 0;
    }
    if (clean) return Settled::kClean;
    usleep(50'000);
  }
  return Settled::kTimedOut;
}

// A failed start of CMD in its memory cgroup: the child at its gate is
// killed and reaped.
void Abandon(Child& child) {
  kill(child.pid, SIGKILL);
  waitpid(child.pid, nullptr, 0);
  close(child.gate);
  close(child.error);
}

// What memcg:SIZE's row says of its cgroup after CMD exited.
void MemcgNotes(const MemoryCgroup& g, RunTrial& t) {
  t.memcg_peak = g.PeakBytes();
  t.oom_kills = g.OomKills();
  t.notes.push_back("memcg: CMD ran as it is in a memory cgroup of its own, limited to " +
                    FormatBytes(g.limit()) + " (" + g.limit_file() +
                    "): its page cache is charged there and reclaimed at the limit");
  if (t.oom_kills && *t.oom_kills)
    t.notes.push_back("memcg: the OOM killer ended " + std::to_string(*t.oom_kills) +
                      " process(es) of CMD's in its cgroup (oom_kill): that is this run's "
                      "outcome, its exit status " +
                      std::to_string(t.exit_status) + " included");
}

// Reaps the processes writelab took in as their subreaper that have ended,
// never CMD itself (its status and /proc/PID/io are still to be read).
void ReapOrphans(pid_t cmd) {
  for (;;) {
    siginfo_t si{};
    if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) != 0 || si.si_pid == 0 ||
        si.si_pid == cmd)
      return;
    waitpid(si.si_pid, nullptr, 0);
  }
}

// Waits for CMD's exit (without reaping it), looking at its files every
// poll; an interrupt is passed to CMD, then SIGKILL after 2 s.
void Watch(pid_t pid, const RunSpec& spec, Supervisor& sup, const RunContext& ctx,
           bool* interrupted) {
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  uint64_t signalled_at = 0;
  const uint64_t start = NowNs();
  uint64_t last_full = 0;
  for (;;) {
    // Every 5 ms in the first 200 ms, so that a fast program's files are
    // seen before it exits, but all of /proc read only every --poll: a
    // look at the processes known is cheap, a walk of /proc is not.
    const uint64_t now = NowNs();
    const bool full = now - last_full >= spec.poll_ns;
    if (full) last_full = now;
    sup.Poll(full);
    const uint64_t wait_ns = NowNs() - start < 200'000'000 ? 5'000'000 : spec.poll_ns;
    if (pidfd >= 0) {
      pollfd p{pidfd, POLLIN, 0};
      poll(&p, 1, static_cast<int>(std::max<uint64_t>(wait_ns / 1'000'000, 1)));
    } else {
      usleep(static_cast<useconds_t>(wait_ns / 1000));
    }
    siginfo_t si{};
    if (waitid(P_PID, static_cast<id_t>(pid), &si, WEXITED | WNOHANG | WNOWAIT) != 0) break;
    if (si.si_pid == pid) break;
    ReapOrphans(pid);
    if (ctx.Interrupted() && !signalled_at) {
      *interrupted = true;
      kill(pid, SIGINT);  // the user's Ctrl-C is for both
      signalled_at = NowNs();
    } else if (signalled_at && NowNs() - signalled_at > 2'000'000'000) {
      kill(pid, SIGKILL);
    }
  }
  if (pidfd >= 0) close(pidfd);
}

// At most this many processes are named in a run's notes; the rest counted.
constexpr size_t kMaxNamedProcesses = 10;

void Notes(const Supervisor& sup, RunStrategy s, RunTrial& t) {
  size_t named = 0, unnamed = 0;
  auto name = [&](pid_t pid) {
    auto exe = sup.processes().find(pid);
    return "pid " + std::to_string(pid) + " (" +
           Quoted(exe == sup.processes().end() ? "?" : exe->second) + ")";
  };
  auto add = [&](const std::string& note) {
    if (named++ < kMaxNamedProcesses)
      t.notes.push_back(note);
    else
      ++unnamed;
  };
  if (s != RunStrategy::kPlain)
    for (const auto& [pid, exe] : sup.processes())
      if (!sup.shimmed().count(pid))
        add(name(pid) +
            " ran without the shim (a static binary, one that clears LD_PRELOAD, or one started "
            "under seccomp): its files were the supervisor's");
  for (const auto& [pid, reason] : sup.left())
    add(name(pid) + " installed a " + reason +
        " filter: the shim ended its streams and stepped aside, and its files were the "
        "supervisor's from then on");
  if (unnamed)
    t.notes.push_back(std::to_string(unnamed) +
                      " more processes ran without the shim or stepped it aside (not named: at "
                      "most " +
                      std::to_string(kMaxNamedProcesses) + " are)");
  for (const std::string& e : sup.record_errors())
    t.notes.push_back("a record of the shim was not understood: " + e);
  for (const std::string& loss : sup.Losses()) t.notes.push_back(loss);
}

}  // namespace

std::expected<std::string, std::string> FindShim() {
  std::vector<std::string> where;
  if (const char* e = std::getenv("WRITELAB_RUN_SHIM"); e && *e) where.push_back(e);
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    where.push_back((exe.parent_path() / "libwritelab-run.so").string());  // the build tree
    where.push_back((exe.parent_path() / WRITELAB_SHIM_RELATIVE).lexically_normal().string());
  }
  where.push_back(WRITELAB_SHIM_INSTALLED);
  for (const std::string& path : where) {
    struct stat st;
    if (stat(path.c_str(), &st) != 0) continue;
    if (!S_ISREG(st.st_mode) || (st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & 022))
      return std::unexpected(path +
                             ": refused: the shim runs inside CMD, so it must be a regular file "
                             "of root's (or yours) that nobody else can write");
    return path;
  }
  std::string looked;
  for (const std::string& w : where) looked += (looked.empty() ? "" : ", ") + w;
  return std::unexpected("libwritelab-run.so not found (looked at " + looked + ")");
}

std::optional<std::string> ShimUnreadableBy(const RunAs& as, const std::string& shim) {
  if (!as.change) return std::nullopt;
  // Links followed, as the loader follows them: FindShim checked the file
  // they lead to, and this open only reads, as the user, and closes. It never
  // blocks: a FIFO put at the path since FindShim's check would hold a plain
  // open until someone writes to it.
  const int fd =
      OpenAsUser(as, [&] { return open(shim.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK); });
  if (fd >= 0) {
    close(fd);
    return std::nullopt;
  }
  return "run: " + as.name + ", whom CMD runs as, cannot read the shim " + shim + " (" +
         std::strerror(errno) +
         "): build or install writelab where every user can read it (e.g. under /opt or "
         "/usr/local), or set WRITELAB_RUN_SHIM to a copy that user can read";
}

std::optional<std::string> DontcacheRefusal(const std::string& dir) {
  const int fd = open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0) return std::nullopt;  // no unseen file here: each file's record will tell
  char page[4096] = {};
  iovec iov{page, sizeof page};
  const ssize_t r = pwritev2(fd, &iov, 1, 0, RWF_DONTCACHE);
  const int err = errno;
  close(fd);
  if (r >= 0) return std::nullopt;
  if (err == EOPNOTSUPP)
    return "dontcache: the file system of " + dir + " refuses RWF_DONTCACHE (EOPNOTSUPP)";
  if (err == EINVAL)
    return "dontcache: this kernel does not know RWF_DONTCACHE (EINVAL; it came in Linux 6.14)";
  return "dontcache: a test write with RWF_DONTCACHE in " + dir + " failed: " + std::strerror(err);
}

RunTrial RunOnce(const RunSpec& spec, const RunVariant& variant, const std::string& shim,
                 const RunContext& ctx) {
  RunTrial t;
  const RunStrategy strategy = variant.strategy;
  t.strategy = strategy;
  RunSpec run = spec;
  run.strategy = strategy;  // the supervisor and the shim read them
  run.pace_target_ns = variant.pace_target_ns;
  auto as = ResolveUser(spec.user);
  if (!as) return t.outcome.Fail(PlainError(as.error())), t;
  std::unique_ptr<MemoryCgroup> memcg;
  if (variant.memcg_bytes) {
    if (!ctx.journal) return t.outcome.Fail(PlainError("memcg: needs root (it makes a cgroup)")), t;
    auto made = MemoryCgroup::Make(variant.memcg_bytes, *ctx.journal);
    if (!made) return t.outcome.Fail(made.error()), t;
    memcg = std::move(*made);
  }
  // A message per record (SOCK_SEQPACKET): writers of several processes
  // never interleave, and a shim whose writelab is gone gets EPIPE, not
  // SIGPIPE. Both ends non-blocking: nobody waits for anybody.
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, pair) != 0)
    return t.outcome.Fail(errno, "socketpair"), t;
  UniqueFd report(pair[0]), report_write(pair[1]);
  // Each message then carries the pid of the process that sent it, which
  // the kernel vouches for (Supervisor::Take).
  const int on = 1;
  if (setsockopt(report.get(), SOL_SOCKET, SO_PASSCRED, &on, sizeof on) != 0)
    return t.outcome.Fail(errno, "setsockopt SO_PASSCRED"), t;
  signal(SIGCHLD, SIG_DFL);  // waitid must see CMD's exit, whatever writelab inherited
  // plain too: the shim then counts and reports, and does nothing else.
  const SpawnExtras extras = ShimExtras(run, strategy, shim, report_write.get(), ReportFdNumber());
  std::unique_ptr<BystanderProbe> probe;
  if (spec.measure) {
    auto made = BystanderProbe::Create(spec.probe_dir.empty() ? "." : spec.probe_dir, 100'000'000);
    if (!made) return t.outcome.Fail(made.error()), t;
    probe = std::move(*made);
  }
  prctl(PR_SET_CHILD_SUBREAPER, 1);                // a process CMD leaves behind stays in its scope
  const uint64_t born_since = CoarseRealtimeNs();  // before CMD can create a file
  auto child = Spawn(spec.command, *as, extras);
  if (!child) return t.outcome.Fail(child.error()), t;
  if (memcg)
    if (Status placed = memcg->Place(child->pid); !placed) {
      Abandon(*child);
      return t.outcome.Fail(placed.error()), t;
    }
  report_write.Reset();  // CMD's copy is its own
  Supervisor sup(run, child->pid, report.get(), born_since, *as);
  Sampler sampler("", spec.sample_interval_ns, nullptr);
  sampler.Start();
  if (probe) probe->Start();
  const uint64_t t0 = NowNs();
  if (Status ran = child->Release("run: " + spec.command.front()); !ran) {
    if (probe) probe->Stop();
    sampler.Stop();
    t.started = false;
    return t.outcome.Fail(ran.error()), t;
  }
  bool interrupted = false;
  Watch(child->pid, spec, sup, ctx, &interrupted);
  t.elapsed_s = static_cast<double>(NowNs() - t0) / 1e9;
  const std::optional<uint64_t> io = WriteBytes(child->pid);  // not yet reaped
  int status = 0;
  rusage ru{};
  wait4(child->pid, &status, 0, &ru);
  // ru_oublock is the same count in 512-byte units (write_bytes >> 9), CMD's
  // and its reaped children's, for whoever reaps it: root or not.
  t.bytes = io.value_or(static_cast<uint64_t>(ru.ru_oublock) * 512);
  t.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  ReapOrphans(0);  // what CMD left behind that ended (the rest goes on, then to init)
  sup.Finish();
  if (memcg) MemcgNotes(*memcg, t);
  for (WatchedFile& f : sup.files()) t.files.push_back(Account(sup, f, run, strategy));
  // What CMD left dirty is not yet on the disk, and stalls the others
  // after it exits too (plain's gigabytes): where runs are compared or the
  // bystander probes, the time until it is written back counts to
  // durability, and the bystander probes on through it. A lone run returns
  // when CMD exits, as without writelab (drop-behind's and plain's pages
  // may wait 30 s for the kernel's expiry).
  if (spec.measure || spec.compare) {
    const uint64_t exited = NowNs();
    const Settled settled = Settle(sup.files(), spec.min_file, ctx);
    if (settled != Settled::kClean && !ctx.Interrupted())  // an interrupt says so itself
      t.notes.push_back(settled == Settled::kTimedOut ? kNotSettled : kSettleUnknown);
    t.settled = settled == Settled::kClean;
    t.settle_s = static_cast<double>(NowNs() - exited) / 1e9;
  }
  if (probe) {
    t.probe = probe->Stop();
    t.probe_error = probe->error();
  }
  if (memcg)
    if (Status removed = memcg->Revert(); !removed)
      t.notes.push_back("memcg: its cgroup could not be removed: " + removed.error().Message() +
                        " (writelab cleanup retries)");
  for (const SamplePoint& p : sampler.Stop()) t.dirty_peak = std::max(t.dirty_peak, p.dirty);
  Notes(sup, strategy, t);
  if (interrupted) t.notes.push_back("interrupted: CMD was stopped with SIGINT");
  if (spec.compare) Quiesce(sup.files());
  return t;
}

}  // namespace writelab
