// SPDX-License-Identifier: MIT
// Who made it wait, against planted holders: a lock's holder (a `dd` whose
// one write holds its file's inode lock) and a journal handle's (a holder
// whose write reads a block back, slowly, with its handle open), each
// checked against the kernel's own events in an ftrace instance of the
// test's on the same run.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ftrace_instance.h"
#include "harness.h"
#include "test_fs.h"
#include "test_paths.h"
#include "testbed/cgroup.h"
#include "throttled_cgroup.h"
#include "victim_calls.h"

namespace writelab::testing {
namespace {

class ExplainHolders : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: BPF";
    if (!std::filesystem::exists("/sys/kernel/btf/vmlinux")) GTEST_SKIP() << "no kernel BTF";
  }
  ScratchDir work{"explain-holders"};
};

// What an ftrace instance of lock:contention_begin/end saw of the threads
// named comm: each one's time from a wait's begin (not the spinning a mutex
// tries first) to its end, summed per thread (ms).
std::map<long, double> LockWaitsOf(const std::string& trace, const std::string& comm) {
  struct Pending {
    std::string lock;
    double at = 0;
  };
  std::map<long, Pending> pending;
  std::map<long, double> waited;
  for (const std::string& line : Split(trace, '\n')) {
    const size_t task = line.find_first_not_of(' ');
    if (task == std::string::npos || line.compare(task, comm.size() + 1, comm + "-") != 0) continue;
    const long tid = std::atol(line.c_str() + task + comm.size() + 1);
    const bool begin = line.find(": contention_begin: ") != std::string::npos;
    const size_t tag = line.find(begin ? ": contention_begin: " : ": contention_end: ");
    if (tag == std::string::npos) continue;
    const size_t ts = line.rfind(' ', tag);
    const double at = std::atof(line.c_str() + ts + 1) * 1e3;
    const size_t lock_at = tag + (begin ? 20 : 18);
    const std::string lock = line.substr(lock_at, line.find(' ', lock_at) - lock_at);
    if (begin) {
      if (line.find("SPIN") == std::string::npos) pending[tid] = {lock, at};
      continue;
    }
    auto p = pending.find(tid);
    if (p == pending.end() || p->second.lock != lock) continue;
    waited[tid] += at - p->second.at;
    pending.erase(p);
  }
  return waited;
}

// A writer's one write() holds its file's inode lock to the end, through
// every pause dirty throttling makes: on a test bed under a 32 MiB dirty
// limit, each 64 MiB write of a `dd` holds it for the device's time to
// write about half of it. A second program's 4 KiB writes to the same file
// wait for it, asleep in the lock (other sleep). Their waits are charged
// to the lock's holder, the `dd`, by name: checked against the kernel's
// own lock events, recorded by an ftrace instance of the test's.
TEST_F(ExplainHolders, ALockWaitIsChargedToTheLocksHolder) {
  TestFs fs(work.path() + "/lock", "data=ordered", 32 << 20);
  if (!fs.ok()) GTEST_SKIP() << "could not make and mount a loop-device ext4";
  const std::string file = fs.Dir() + "/shared", victim = work.path() + "/wl_lockvictim";
  std::filesystem::copy_file("/bin/dd", victim);  // its own name, for the observer
  FtraceInstance ftrace("blame-lock", {{"lock/contention_begin", ""}, {"lock/contention_end", ""}});
  ASSERT_TRUE(ftrace.ok()) << "could not make an ftrace instance";
  // Linux 5.19 on; explain says where the kernel lacks them.
  if (!std::filesystem::exists("/sys/kernel/tracing/events/lock/contention_begin"))
    GTEST_SKIP() << "this kernel has no lock:contention_begin tracepoint";
  const std::string csv = work.path() + "/lock.csv";
  const std::string out =
      Shell(std::string(WRITELAB_BINARY) + " explain --quiet --slow 1ns --top 100 --calls " + csv +
            " -- sh -c 'dd if=/dev/zero of=" + file +
            " bs=64M count=12 status=none & echo holder $!; sleep 0.3; for i in $(seq 12); do " +
            victim + " if=/dev/zero of=" + file +
            " bs=4k count=1 seek=$i conv=notrunc status=none; sleep 0.05; done; wait' 2>" +
            work.path() + "/err.txt; echo rc=$?");
  const std::string trace = ftrace.Stop();
  ASSERT_FALSE(OverwroteEvents(trace)) << "the ftrace instance overwrote events";
  const std::map<long, double> observed = LockWaitsOf(trace, "wl_lockvictim");
  ASSERT_NE(out.find("rc=0"), std::string::npos) << out << Slurp(work.path() + "/err.txt");
  long holder = 0;
  ASSERT_EQ(std::sscanf(out.c_str(), "holder %ld", &holder), 1) << out;
  const std::string held = "lock-" + std::to_string(holder);

  // The victim's writes: each one's wait, in its split (lock_ns, a part of
  // other sleep) and charged to the holder.
  double charged_ms = 0, observed_ms = 0, lock_ms = 0;
  size_t waited = 0, holder_first = 0, mostly_charged = 0;
  for (const VictimCall& c : ReadCalls(csv)) {
    if (c.pid == holder || c.call != "write" || !observed.count(c.pid)) continue;
    observed_ms += observed.at(c.pid);
    EXPECT_LE(c.lock, c.other) << "a lock wait is a part of other sleep";
    lock_ms += c.lock / 1e6;
    for (const auto& [who, ns] : c.culprits) charged_ms += who == held ? ns / 1e6 : 0;
    if (c.blocked < 5e6) continue;
    ++waited;
    // The holder first: as the lock's holder, or as the dirtier of the
    // pages a write was also throttled for (the dd's dirtying overran the
    // per-CPU count a writer is checked by, whoever wrote the page after).
    const bool first = !c.culprits.empty() && (c.culprits.front().first == held ||
                                               c.culprits.front().first == std::to_string(holder));
    holder_first += first;
    mostly_charged += c.blocked - c.uncharged >= 0.8 * c.blocked;
    if (first) continue;
    std::printf(
        "lock: a write of %.1f ms (%.1f ms other sleep, %.1f ms in lock waits), culprits:%s\n",
        c.ns / 1e6, c.other / 1e6, c.lock / 1e6, CulpritsText(c).c_str());
  }
  std::printf(
      "lock: %zu writes waited 5 ms or more, the holder first in %zu, mostly charged in %zu; "
      "charged to the holder %.1f ms, in the split's lock waits %.1f ms, the lock waits the trace "
      "saw %.1f ms\n",
      waited, holder_first, mostly_charged, charged_ms, lock_ms, observed_ms);
  ASSERT_GE(waited, 3u) << "the planted holder did not make the writes wait";
  EXPECT_EQ(holder_first, waited) << "the holder ranks first";
  EXPECT_EQ(mostly_charged, waited) << "at least 80% of each wait charged";
  // writelab charges the sleep inside each wait; the trace's wait also
  // holds its wake-up's wait for a CPU and the time on its CPU around it.
  for (const double ms : {charged_ms, lock_ms}) {
    EXPECT_LE(ms, observed_ms + 1.0);
    EXPECT_GE(ms, 0.8 * observed_ms);
  }
  // What a person reads: the slow writes' line (every write is listed: the
  // dd's own 64 MiB writes, throttled, may be the slowest ten), and the
  // type's diagnosis.
  const std::string err = Slurp(work.path() + "/err.txt");
  EXPECT_NE(err.find("who made it wait: a lock held by dd (pid " + std::to_string(holder) + ")"),
            std::string::npos)
      << err;
}

// What an ftrace instance of jbd2's commit_locking, commit_flushing and
// handle_restart, and of the wake-ups of the journal's commit thread
// (sched_waking, filtered on its pid, in the waker's context), saw of one
// transaction: when its commit locked it, when the commit went on
// (flushing), and who woke the commit's thread in between, when (pid 0:
// no one): the thread whose handle was the last open on it, stopped or
// restarted. Times in ms, the instance's clock.
struct LockedTransaction {
  double locked = 0, stopped = 0, unlocked = 0;
  long pid = 0;
  std::string comm;
  bool restarted = false;  // pid restarted its handle onto the next transaction
};

std::map<long, LockedTransaction> LockedTransactionsOf(const std::string& trace,
                                                       const std::string& dev) {
  std::map<long, LockedTransaction> out;
  LockedTransaction* now = nullptr;  // the transaction locked now
  for (const std::string& line : Split(trace, '\n')) {
    long pid = 0;
    std::string comm;
    const size_t event = line.find(": ");
    if (line.starts_with("#") || event == std::string::npos || !TaskOf(line, pid, comm)) continue;
    const double at = std::atof(line.c_str() + line.rfind(' ', event) + 1) * 1e3;
    if (line.find(": sched_waking: ") != std::string::npos) {
      if (now) now->pid = pid, now->comm = comm, now->stopped = at;
      continue;
    }
    const bool restart = line.find(": jbd2_handle_restart: ") != std::string::npos;
    const size_t tid_at = line.find(restart ? " tid " : " transaction ");
    if (line.find(" dev " + dev + " ") == std::string::npos || tid_at == std::string::npos)
      continue;
    const long tid = std::atol(line.c_str() + tid_at + (restart ? 5 : 13));
    if (restart) {  // onto tid: the handle left tid - 1
      const auto left = out.find(tid - 1);
      if (left != out.end() && left->second.pid == pid && left->second.unlocked &&
          at - left->second.unlocked < 10)
        left->second.restarted = true;
      continue;
    }
    LockedTransaction& t = out[tid];
    if (line.find(": jbd2_commit_locking: ") != std::string::npos) t.locked = at, now = &t;
    if (line.find(": jbd2_commit_flushing: ") != std::string::npos && t.locked) {
      t.unlocked = at;
      if (now == &t) now = nullptr;
    }
  }
  return out;
}

// The pid of the commit thread of dev's journal (jbd2/NAME-8), 0 if none.
long JournalThreadOf(dev_t dev) {
  std::error_code ec;
  const std::string name =
      std::filesystem::read_symlink(
          "/sys/dev/block/" + std::to_string(major(dev)) + ":" + std::to_string(minor(dev)), ec)
          .filename()
          .string();
  if (ec || name.empty()) return 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string pid = e.path().filename().string();
    if (pid.find_first_not_of("0123456789") == std::string::npos &&
        Slurp(e.path().string() + "/comm") == "jbd2/" + name + "-8\n")
      return std::atol(pid.c_str());
  }
  return 0;
}

// How long each handle holder's locked commits (as the trace saw them: the
// thread that woke the commit's, up to its wake-up) overlapped the call:
// "handle-PID" -> ms.
std::map<std::string, double> LockedOverlaps(const VictimCall& c,
                                             const std::map<long, LockedTransaction>& locked) {
  const double from = c.start / 1e6, to = (c.start + c.ns) / 1e6;
  std::map<std::string, double> seen;
  for (const auto& [tid, t] : locked)
    if (t.pid && t.unlocked && std::min(to, t.stopped) > std::max(from, t.locked))
      seen["handle-" + std::to_string(t.pid)] += std::min(to, t.stopped) - std::max(from, t.locked);
  return seen;
}

// One fsync the planted holder made wait (seen: LockedOverlaps): each
// holder the trace saw is one of the planted holder's processes and is charged
// that overlap; the holder with the most ranks first where its overlap is
// most of the call's blocked time; at least 80% of the call's blocked time is charged to
// named culprits. What the commit does once unlocked (its data, its log,
// the flush) is the journal's own blocks, a named cause that takes as long
// as the disk does: 143 ms of a 568 ms wait once in CI, more than half of
// it beside a writer on the disk under the test bed. Returns the ms charged
// to handles.
double CheckOneHandleCharge(const VictimCall& c, const std::map<std::string, double>& seen,
                            const std::vector<std::string>& held) {
  const double journal = c.journal / 1e6;
  std::map<std::string, double> charged;
  double handles = 0, named = 0;
  for (const auto& [who, ns] : c.culprits) {
    if (who.starts_with("handle-")) charged[who] += ns / 1e6, handles += ns / 1e6;
    if (who != "unknown" && who != "others") named += ns / 1e6;
  }
  const std::string line = "an fsync of " + std::to_string(c.ns / 1e6) + " ms, " +
                           std::to_string(journal) +
                           " ms for the journal; culprits:" + CulpritsText(c);
  for (const auto& [who, ms] : seen) {
    EXPECT_NE(std::find(held.begin(), held.end(), who), held.end())
        << who << " is not one of the planted holder's processes: " << line;
    EXPECT_NEAR(charged[who], std::min(ms, journal), 2 + 0.05 * ms) << who << ": " << line;
  }
  EXPECT_EQ(charged.size(), seen.size()) << line;
  const auto most = std::max_element(
      seen.begin(), seen.end(), [](const auto& x, const auto& y) { return x.second < y.second; });
  EXPECT_FALSE(c.culprits.empty()) << line;
  if (most->second >= 0.5 * c.blocked / 1e6 && !c.culprits.empty()) {
    EXPECT_EQ(c.culprits.front().first, most->first) << line;
  }
  EXPECT_GE(named, 0.8 * c.blocked / 1e6) << line;
  return handles;
}

// The victim's fsyncs that the trace saw wait min_ms or more inside locked
// commits, each checked by CheckOneHandleCharge; at least three of them.
void CheckHandleCharges(const std::vector<VictimCall>& calls,
                        const std::map<long, LockedTransaction>& locked,
                        const std::vector<std::string>& held, double min_ms) {
  size_t slow = 0, other = 0;
  double journal_ms = 0, charged_ms = 0, seen_ms = 0;
  for (const VictimCall& c : calls) {
    if (c.call != "fsync") continue;
    const std::map<std::string, double> seen = LockedOverlaps(c, locked);
    double overlap = 0;
    for (const auto& [who, ms] : seen) overlap += std::min(ms, c.journal / 1e6);
    if (overlap < min_ms) {
      other += c.journal >= min_ms * 1e6;
      continue;
    }
    ++slow;
    journal_ms += c.journal / 1e6, seen_ms += overlap;
    charged_ms += CheckOneHandleCharge(c, seen, held);
  }
  std::printf(
      "handle: %zu fsyncs waited %.0f ms or more inside locked commits, %.1f ms for the journal "
      "in all; charged to handles %.1f ms, the trace's locked commits inside them %.1f ms; %zu "
      "other fsyncs waited %.0f ms or more for the journal\n",
      slow, min_ms, journal_ms, charged_ms, seen_ms, other, min_ms);
  EXPECT_GE(slow, 3u) << "the planted holder did not make the fsyncs wait";
}

// A test bed of the test's own and a cgroup whose reads of its device are
// slowed to read_bps, the holder's place: skip says why there is none where
// the machine lacks a part, error why there is none otherwise.
struct SlowBed {
  std::unique_ptr<TestFs> fs;
  std::unique_ptr<OwnCgroup> slow;
  dev_t dev = 0;
  std::string skip, error;
};

SlowBed MakeSlowBed(const std::string& base, const std::string& options, uint64_t read_bps) {
  SlowBed b;
  b.fs = std::make_unique<TestFs>(base, options, 0);
  struct stat st {};
  if (!b.fs->ok())
    b.skip = "could not make and mount a loop-device ext4";
  else if (stat(b.fs->Dir().c_str(), &st) != 0)
    b.error = "stat " + b.fs->Dir();
  if (!b.skip.empty() || !b.error.empty()) return b;
  b.dev = st.st_dev;
  std::string why;
  b.slow = ThrottledCgroup(b.dev, read_bps, Throttled::kReads, why);
  if (!b.slow) b.skip = "no io controller to slow one process's reads: " + why;
  return b;
}

// A victim's fsyncs under explain beside a holder: what explain and an
// ftrace instance of jbd2's events saw.
struct HeldRun {
  std::string error;                         // why the run could not be checked, if it could not
  std::string err;                           // explain's stderr
  std::vector<VictimCall> calls;             // its --calls
  std::map<long, LockedTransaction> locked;  // the trace's (LockedTransactionsOf)
  std::vector<std::string> held;             // "handle-PID" of each PID the holder printed
};

// The holder (sh running body, which prints the PID of each process of its
// that holds a handle) starts once it is in slow and the victim's first
// fsync under explain has made victim (10 s at most: explain's start would
// otherwise eat the handles it holds); the victim, under explain, appends 4
// KiB to victim and fsyncs, 25 times 100 ms apart. The holder is let go
// whatever happens, so that it never waits forever.
HeldRun RunBesideHolder(const std::string& work, OwnCgroup& slow, dev_t dev,
                        const std::string& victim, const std::string& body) {
  HeldRun run;
  const long commit_thread = JournalThreadOf(dev);
  if (!commit_thread) return run.error = "no commit thread of the test bed's journal", run;
  FtraceInstance ftrace("blame-handle",
                        {{"jbd2/jbd2_commit_locking", ""},
                         {"jbd2/jbd2_commit_flushing", ""},
                         {"jbd2/jbd2_handle_restart", ""},
                         {"sched/sched_waking", "pid == " + std::to_string(commit_thread)}},
                        "mono");
  if (!ftrace.ok()) return run.error = "could not make an ftrace instance", run;
  const std::string go = work + "/go", holders = work + "/holders";
  const std::string holder =
      Shell("sh -c 'while [ ! -e " + go + " ]; do sleep 0.01; done; i=0; while [ ! -e " + victim +
            " ] && [ $i -lt 1000 ]; do sleep 0.01; i=$((i+1)); done; " + body + "; echo done' > " +
            holders + " 2>&1 & echo $!");
  const bool placed = slow.Place(static_cast<pid_t>(std::atol(holder.c_str()))).has_value();
  Shell("touch " + go);
  if (!placed) return run.error = "the holder could not be moved into " + slow.path(), run;
  const std::string csv = work + "/handle.csv";
  const std::string out =
      Shell(std::string(WRITELAB_BINARY) + " explain --quiet --slow 1ms --calls " + csv +
            " -- sh -c 'for i in $(seq 25); do dd if=/dev/zero of=" + victim +
            " bs=4k count=1 oflag=append conv=notrunc,fsync status=none; sleep 0.1; done' 2>" +
            work + "/err.txt; echo rc=$?");
  for (int i = 0; i < 1000 && Slurp(holders).find("done") == std::string::npos; ++i) usleep(10'000);
  const std::string trace = ftrace.Stop();
  run.locked =
      LockedTransactionsOf(trace, std::to_string(major(dev)) + "," + std::to_string(minor(dev)));
  run.err = Slurp(work + "/err.txt");
  if (OverwroteEvents(trace)) return run.error = "the ftrace instance overwrote events", run;
  if (out.find("rc=0") == std::string::npos) return run.error = out + run.err, run;
  if (Slurp(holders).find("done") == std::string::npos)
    return run.error = "the holder did not end: " + Slurp(holders), run;
  for (const std::string& pid : Split(Slurp(holders), '\n'))
    if (!pid.empty() && pid != "done") run.held.push_back("handle-" + pid);
  run.calls = ReadCalls(csv);
  return run;
}

// On a data=ordered,nodelalloc test bed, a holder (outside explain's scope,
// its reads of the device slowed to 8 KiB/s) writes one byte into each of
// eight 4 KiB blocks that are not in the page cache: ext4 reads each block
// back with the write's journal handle open, for about half a second. The
// victim's fsyncs start commits, which lock their transaction and wait for
// that handle: the victim's journal waits are charged to the holder's dd,
// and checked per call against an ftrace instance of jbd2's own events on
// the same clock (the thread that woke each locked commit's thread).
TEST_F(ExplainHolders, ACommitsWaitForAnOpenJournalHandleIsChargedToItsHolder) {
  const SlowBed bed = MakeSlowBed(work.path() + "/handle", "data=ordered,nodelalloc", 8192);
  if (!bed.skip.empty()) GTEST_SKIP() << bed.skip;
  ASSERT_TRUE(bed.error.empty()) << bed.error;
  const TestFs& fs = *bed.fs;
  const std::string data = fs.Path("held"), victim = fs.Path("victim");
  Shell("dd if=/dev/urandom of=" + data + " bs=1M count=16 conv=fsync status=none");
  const int fd = open(data.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
  close(fd);
  const HeldRun run =
      RunBesideHolder(work.path(), *bed.slow, bed.dev, victim,
                      "for k in 1 2 3 4 5 6 7 8; do dd if=/dev/zero of=" + data +
                          " bs=1 count=1 seek=$((k*65536+1)) conv=notrunc status=none & echo $!; "
                          "wait; done");
  ASSERT_TRUE(run.error.empty()) << run.error;
  CheckHandleCharges(run.calls, run.locked, run.held, 100);
  // What a person reads: a slow fsync's line, or the type's diagnosis where
  // a busy disk under the bed made other fsyncs slower still.
  EXPECT_NE(run.err.find("a journal handle held by dd (pid "), std::string::npos) << run.err;
}

// A file of n 4 KiB extents, each one block apart (its extent tree n / 340
// leaves), made durable; false if it could not be.
bool MakeFragmentedFile(const std::string& path, int n) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  const std::string block(4096, 'x');
  bool ok = true;
  for (int i = 0; i < n && ok; ++i)
    ok = pwrite(fd, block.data(), block.size(), off_t{i} * 8192) == 4096;
  ok = ok && fsync(fd) == 0;
  close(fd);
  return ok;
}

// The file system of dir's journal written home (EXT4_IOC_CHECKPOINT, not in
// Debian 12's headers: linux 5.13's fs/ext4/ext4.h) and the clean pages of
// its device dropped: its metadata is read from the device again. A buffer
// still waiting in the journal would stay cached. The errno of the step
// that failed (ENOTTY: a kernel before 5.13), 0 when done.
int DropFsMetadata(const std::string& dir, const std::string& device) {
  constexpr unsigned long kExt4IocCheckpoint = _IOW('f', 43, uint32_t);
  const int d = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  uint32_t flags = 0;
  const bool checkpointed = d >= 0 && syncfs(d) == 0 && ioctl(d, kExt4IocCheckpoint, &flags) == 0;
  const int checkpoint_errno = checkpointed ? 0 : errno;
  if (d >= 0) close(d);
  if (!checkpointed) return checkpoint_errno;
  const int b = open(device.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  const int dropped = b < 0 ? errno : posix_fadvise(b, 0, 0, POSIX_FADV_DONTNEED);
  if (b >= 0) close(b);
  return dropped;
}

// A long truncate restarts its journal handle as it goes, and jbd2 traces
// no stop of a restarted handle. On a data=ordered test bed, a holder (its
// reads of the device slowed to 64 KiB/s) truncates four files of 8,000
// extents each, two at a time, whose extent trees are read back from the
// device with their handles open; the victim's fsyncs start commits that
// wait for both until each restarts, and then both restart onto the next
// transaction in either order. Each such wait is charged to the truncate
// whose handle stopped last, checked per call against an ftrace instance
// (the truncate that woke the commit's thread).
TEST_F(ExplainHolders, ACommitsWaitForARestartedJournalHandleIsChargedToItsHolder) {
  const SlowBed bed = MakeSlowBed(work.path() + "/restart", "data=ordered", 65536);
  if (!bed.skip.empty()) GTEST_SKIP() << bed.skip;
  ASSERT_TRUE(bed.error.empty()) << bed.error;
  const TestFs& fs = *bed.fs;
  std::string files;
  for (const char* name : {"f0", "f1", "f2", "f3"}) {
    ASSERT_TRUE(MakeFragmentedFile(fs.Path(name), 8000)) << fs.Path(name);
    files += " " + fs.Path(name);
  }
  const int dropped = DropFsMetadata(fs.Dir(), "/dev/" + fs.DeviceName());
  if (dropped == ENOTTY) GTEST_SKIP() << "no EXT4_IOC_CHECKPOINT (a kernel before 5.13)";
  ASSERT_EQ(dropped, 0) << std::strerror(dropped);
  const std::string victim = fs.Path("victim");
  const HeldRun run =
      RunBesideHolder(work.path(), *bed.slow, bed.dev, victim,
                      "sleep 0.3; set --" + files +
                          "; while [ $# -ge 2 ]; do truncate -s 0 $1 & echo $!; truncate -s 0 $2 " +
                          "& echo $!; wait; shift 2; done");
  ASSERT_TRUE(run.error.empty()) << run.error;
  size_t restarted = 0;  // locked waits of 50 ms or more that a restart ended
  for (const auto& [tid, t] : run.locked) restarted += t.restarted && t.unlocked - t.locked >= 50;
  std::printf("restart: %zu commits waited 50 ms or more for a restarted handle\n", restarted);
  EXPECT_GE(restarted, 3u) << "the truncates' handles did not hold up commits until restarted";
  CheckHandleCharges(run.calls, run.locked, run.held, 50);
  EXPECT_NE(run.err.find("a journal handle held by truncate (pid "), std::string::npos) << run.err;
}

}  // namespace
}  // namespace writelab::testing
