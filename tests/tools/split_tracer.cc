// SPDX-License-Identifier: MIT
// An independent observer for `writelab explain` (tests/explain_truth_test.cc):
// it shares no code with writelab. It runs a command under a private ftrace
// instance of its own and reconstructs, from the kernel's text trace, what
// every write and sync call of the threads named --comm did:
//
//   raw_syscalls:sys_enter/sys_exit   the call's start and end
//   sched:sched_switch                leaving the CPU: preempted (R, R+) it
//                                     waits for a CPU; else it sleeps
//   sched:sched_waking                who wakes it, on which CPU
//   sched:sched_wakeup                a sleeper becomes runnable; what the
//                                     sleep was for is decided here, by who
//                                     woke it and what it said before it
//                                     slept, in this order:
//     the waker is a journal thread (jbd2/..., not in an  a journal commit
//     interrupt, where the task is whoever was running)
//     it was paused by writeback:balance_dirty_pages      dirty throttling
//     it waited in writeback:folio_wait_writeback         its writes
//     it queued a flush (block_bio_queue F, no data)      a cache flush
//     it queued a write (block_bio_queue W, with data)    its writes
//     (of these four, what it said last)
//     a block_rq_complete on a --disk, on the waker's CPU, within 200 us
//     before the wakeup (the completion's interrupt woke it): a cache flush
//     for a flush, its writes for a write
//     else                                                other sleep
//   block:block_rq_issue/complete/requeue, jbd2:jbd2_start_commit/end_commit
//                                     what the disks (--disk) and journals
//                                     (--fs) were doing meanwhile: flushes
//                                     counted per disk (a flush completes
//                                     with another sector than it was
//                                     issued with), writes per sector; a
//                                     completion never seen issued is not
//                                     counted
//
// No stack traces: a trigger on sched_switch would slow the very switches
// it records (by several microseconds each, seen here) and so move the
// times writelab measures.
//
//   split_tracer --comm NAME --out FILE.csv [--disk MAJ:MIN]... [--fs MAJ:MIN]... -- CMD ARGS
//
// FILE.csv: a line per call: tid, system call number, start (ns, the
// trace's CLOCK_MONOTONIC, microsecond resolution), length, the time on
// CPU, waiting for a CPU, asleep for a journal commit, for its writes, for
// a cache flush, in dirty throttling, asleep otherwise; then the time
// during which a commit ran, else a flush was in flight, else a write.
// Exits with CMD's status (or 125 when the tracer itself failed). Killed by
// SIGTERM, SIGINT or SIGHUP (a run stopped by hand, kill), it removes its
// instance first; one killed by SIGKILL (as ctest's timeout kills a test's
// processes) leaves it to scripts/test.sh, which removes a dead tracer's
// instance before the tests.
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

enum Part { kCpu, kRunq, kJournal, kWriteback, kFlush, kThrottle, kOther, kParts };
enum During { kCommit, kFlushing, kWriting, kNone };

// write, pwrite64, writev, pwritev, pwritev2, fsync, fdatasync (x86-64).
const std::set<long> kCalls = {1, 18, 20, 296, 328, 74, 75};

struct Call {
  long tid, nr;
  uint64_t start, end;
  uint64_t parts[kParts] = {};
  uint64_t during[kNone] = {};
};

// What the thread said before it slept, in the order of precedence.
enum Hint { kNoHint, kQueuedWrite, kQueuedFlush, kWaitedWriteback, kPaused };

struct Thread {
  bool in_call = false;
  bool asleep = false;  // blocked, not yet woken
  Hint hint = kNoHint;
  Call call{};
  Part seg = kCpu;
  uint64_t seg_start = 0;
  void Close(uint64_t now) {
    if (now > seg_start) call.parts[seg] += now - seg_start;
    seg_start = now;
  }
};

struct Options {
  std::string comm, out;
  std::set<std::string> disks, fss;  // "254,0"
  std::vector<std::string> command;
};

bool WriteFile(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  f.flush();
  if (!f)
    std::fprintf(stderr, "split_tracer: write '%s' to %s failed\n", text.c_str(), path.c_str());
  return static_cast<bool>(f);
}

std::string Field(const std::string& text, const std::string& name) {
  const size_t at = text.find(name + "=");
  if (at == std::string::npos) return "";
  const size_t from = at + name.size() + 1;
  return text.substr(from, text.find(' ', from) - from);
}

// "11369.048036" -> ns.
uint64_t Ns(const std::string& ts) {
  const size_t dot = ts.find('.');
  const uint64_t s = std::strtoull(ts.substr(0, dot).c_str(), nullptr, 10);
  std::string frac = dot == std::string::npos ? "" : ts.substr(dot + 1);
  frac.resize(9, '0');
  return s * 1'000'000'000ull + std::strtoull(frac.c_str(), nullptr, 10);
}

class Reconstruction {
 public:
  explicit Reconstruction(const Options& o) : o_(o) {}

  void Line(const std::string& line) {
    if (line.rfind("# entries-in-buffer/entries-written: ", 0) == 0) {
      unsigned long kept = 0, written = 0;
      std::sscanf(line.c_str() + 37, "%lu/%lu", &kept, &written);
      lost_ = written - kept;
    }
    if (line.empty() || line[0] == '#') return;
    // "  TASK-PID  [CPU] FLAGS  TS: EVENT: TEXT"
    const size_t cpu_open = line.find("] ");
    const size_t lb = line.rfind('[', cpu_open);
    if (cpu_open == std::string::npos || lb == std::string::npos) return;
    const int cpu = std::atoi(line.c_str() + lb + 1);
    std::istringstream rest(line.substr(cpu_open + 2));
    std::string flags, ts, event;
    rest >> flags >> ts >> event;
    if (ts.empty() || event.empty()) return;
    ts.pop_back();  // the ':'
    const uint64_t now = Ns(ts);
    std::string text;
    std::getline(rest, text);
    if (!text.empty() && text[0] == ' ') text.erase(0, 1);
    event.pop_back();
    std::string task = line.substr(0, lb);
    task = task.substr(task.find_first_not_of(' '));
    const size_t dash = task.rfind('-');
    const long pid = std::atol(task.c_str() + dash + 1);
    const std::string comm = task.substr(0, dash);
    if (event == "sys_enter") return Enter(pid, text, now);
    if (event == "sys_exit") return Exit(pid, text, now);
    if (event == "sched_switch") return Switch(text, now);
    if (event == "sched_waking") {  // in the waker's context, on its CPU
      // In an interrupt ("d.s5.": h or s third), the task is whoever was
      // running there, not the waker: a journal thread of another file
      // system was seen "waking" a sleeper whose flush had completed.
      const bool interrupt = flags.size() > 2 && flags[2] != '.';
      wakers_[std::atol(Field(text, "pid").c_str())] = {interrupt ? "" : comm, cpu};
      return;
    }
    if (event == "sched_wakeup") return Wakeup(cpu, comm, text, now);
    if (event == "balance_dirty_pages") return Said(pid, kPaused, Field(text, "pause") != "0");
    if (event == "folio_wait_writeback") return Said(pid, kWaitedWriteback, true);
    if (event == "block_bio_queue") return Queued(pid, text);
    if (event.rfind("block_rq_", 0) == 0) return Block(cpu, event.substr(9), text, now);
    if (event == "jbd2_start_commit" || event == "jbd2_end_commit")
      return Journal(event == "jbd2_start_commit", text, now);
  }

  // Events the buffer had no room for: then nothing is reconstructed.
  unsigned long lost() const { return lost_; }
  // What was still in flight when the trace ended: a request or commit the
  // reconstruction lost track of.
  std::string Left() const {
    std::string out;
    for (const auto& [key, n] : in_flight_) out += " [" + key + "] x" + std::to_string(n);
    for (const std::string& c : commits_) out += " [commit " + c + "]";
    return out;
  }

  // The overlaps of every call, from the state's changes; then the CSV.
  std::string Csv() {
    std::string out =
        "tid,nr,start_ns,ns,cpu_ns,runq_ns,journal_ns,writeback_ns,flush_ns,throttled_ns,other_ns,"
        "during_commit_ns,during_flush_ns,during_writes_ns\n";
    for (Call& c : calls_) {
      Overlap(c);
      out += std::to_string(c.tid) + "," + std::to_string(c.nr) + "," + std::to_string(c.start) +
             "," + std::to_string(c.end - c.start);
      for (uint64_t v : c.parts) out += "," + std::to_string(v);
      for (uint64_t v : c.during) out += "," + std::to_string(v);
      out += "\n";
    }
    return out;
  }

 private:
  void Enter(long tid, const std::string& text, uint64_t now) {
    const long nr = std::atol(text.c_str() + 3);  // "NR 75 (...)"
    if (!kCalls.count(nr)) return;
    Thread& t = threads_[tid];
    t.in_call = true;
    t.call = Call{tid, nr, now, 0};
    t.seg = kCpu;
    t.seg_start = now;
    t.asleep = false;
    t.hint = kNoHint;
  }
  void Exit(long tid, const std::string& text, uint64_t now) {
    auto it = threads_.find(tid);
    if (it == threads_.end() || !it->second.in_call) return;
    if (std::atol(text.c_str() + 3) != it->second.call.nr) return;
    it->second.Close(now);
    it->second.in_call = false;
    it->second.call.end = now;
    calls_.push_back(it->second.call);
  }
  void Switch(const std::string& text, uint64_t now) {
    const long prev = std::atol(Field(text, "prev_pid").c_str());
    const long next = std::atol(Field(text, "next_pid").c_str());
    if (auto it = threads_.find(prev); it != threads_.end() && it->second.in_call) {
      it->second.Close(now);
      const bool runnable = Field(text, "prev_state").rfind('R', 0) == 0;
      it->second.seg = runnable ? kRunq : kOther;  // its wakeup names the sleep
      it->second.asleep = !runnable;
    }
    if (auto it = threads_.find(next); it != threads_.end() && it->second.in_call) {
      it->second.Close(now);
      it->second.seg = kCpu;
    }
  }
  void Wakeup(int cpu, const std::string& waker, const std::string& text, uint64_t now) {
    const long pid = std::atol(Field(text, "pid").c_str());
    // A wakeup on another CPU is queued to it and logged there, in its
    // interrupt: the waker is the one sched_waking saw.
    std::string by = waker;
    if (auto w = wakers_.find(pid); w != wakers_.end()) {
      by = w->second.first, cpu = w->second.second;
      wakers_.erase(w);
    }
    auto it = threads_.find(pid);
    if (it == threads_.end() || !it->second.in_call || !it->second.asleep) return;
    Thread& t = it->second;
    t.seg = SleptFor(t.hint, cpu, by, now);
    t.Close(now);
    t.seg = kRunq;
    t.asleep = false;
    t.hint = kNoHint;
  }
  Part SleptFor(Hint hint, int cpu, const std::string& waker, uint64_t now) const {
    if (waker.rfind("jbd2/", 0) == 0) return kJournal;
    if (hint == kPaused) return kThrottle;
    if (hint == kWaitedWriteback) return kWriteback;
    if (hint == kQueuedFlush) return kFlush;
    if (hint == kQueuedWrite) return kWriteback;
    auto done = completed_.find(cpu);
    if (done != completed_.end() && now - done->second.first <= 200'000)
      return done->second.second == 'F' ? kFlush : kWriteback;
    return kOther;
  }
  // What a thread in a call said before it slept; the latest stands.
  void Said(long tid, Hint hint, bool yes) {
    auto it = threads_.find(tid);
    if (yes && it != threads_.end() && it->second.in_call) it->second.hint = hint;
  }
  // "254,0 FF 0 + 0 [wl_truth]": a flush with no data; "254,0 WS 8 + 8": a
  // write (a preflush before data, FWS, is a write too).
  void Queued(long tid, const std::string& text) {
    std::istringstream in(text);
    std::string dev, rwbs, sector, plus, size;
    in >> dev >> rwbs >> sector >> plus >> size;
    if (!o_.disks.count(dev) || rwbs.empty()) return;
    if (size == "0" && rwbs[0] == 'F') return Said(tid, kQueuedFlush, true);
    if (size != "0" && rwbs.find('W') != std::string::npos) Said(tid, kQueuedWrite, true);
  }
  void Block(int cpu, const std::string& what, const std::string& text, uint64_t now) {
    std::istringstream in(text);
    std::string dev, rwbs, tok;
    in >> dev >> rwbs;
    if (!o_.disks.count(dev)) return;
    std::string sector;
    while (in >> tok)
      if (tok == "()") {
        in >> sector;
        break;
      }
    size_t op = 0;  // a leading F is a preflush when an operation follows
    if (rwbs.size() > 1 && rwbs[0] == 'F' && std::strchr("WRDEFN", rwbs[1])) op = 1;
    const char kind = rwbs.empty() ? '?' : rwbs[op];
    if (kind != 'W' && kind != 'F') return;
    const std::string key = dev + " " + kind + (kind == 'F' ? "" : " " + sector);
    if (what == "complete") completed_[cpu] = {now, kind};
    if (what == "issue") {
      ++in_flight_[key];
    } else {
      auto it = in_flight_.find(key);
      if (it == in_flight_.end()) return;  // not seen issued
      if (--it->second == 0) in_flight_.erase(it);
    }
    Changed(now);
  }
  void Journal(bool start, const std::string& text, uint64_t now) {
    std::istringstream in(text);
    std::string word, dev, tx;
    in >> word >> dev >> word >> tx;  // "dev 254,1 transaction 123 ..."
    if (!o_.fss.count(dev)) return;
    if (start)
      commits_.insert(dev + " " + tx);
    else
      commits_.erase(dev + " " + tx);
    Changed(now);
  }
  During Now() const {
    if (!commits_.empty()) return kCommit;
    bool flush = false, write = false;
    for (const auto& [key, n] : in_flight_) (key.ends_with(" F") ? flush : write) = true;
    return flush ? kFlushing : write ? kWriting : kNone;
  }
  void Changed(uint64_t now) {
    const During d = Now();
    if (changes_.empty() || changes_.back().second != d) changes_.push_back({now, d});
  }
  void Overlap(Call& c) {
    auto it = std::upper_bound(changes_.begin(), changes_.end(), std::make_pair(c.start, kNone),
                               [](const auto& a, const auto& b) { return a.first < b.first; });
    During d = it == changes_.begin() ? kNone : std::prev(it)->second;
    uint64_t at = c.start;
    for (; it != changes_.end() && it->first < c.end; ++it) {
      if (d != kNone) c.during[d] += it->first - at;
      at = it->first;
      d = it->second;
    }
    if (d != kNone) c.during[d] += c.end - at;
  }

  const Options& o_;
  unsigned long lost_ = 0;
  std::map<long, Thread> threads_;
  std::map<int, std::pair<uint64_t, char>> completed_;  // CPU -> its last completion
  std::map<long, std::pair<std::string, int>> wakers_;  // thread -> its waker and the waker's CPU
  std::map<std::string, int> in_flight_;
  std::set<std::string> commits_;
  std::vector<std::pair<uint64_t, During>> changes_;
  std::vector<Call> calls_;
};

// The instance's directory, for the signal handler: removed, then the
// signal's own action taken. (Removing an instance stops its recording.)
char g_instance[128];

void RemoveAndDie(int sig) {
  rmdir(g_instance);
  signal(sig, SIG_DFL);
  raise(sig);
}

class Instance {
 public:
  explicit Instance(const Options& o) : o_(o) {
    const std::string root = "/sys/kernel/tracing";
    struct stat st;
    if (stat((root + "/instances").c_str(), &st) != 0)
      mount("nodev", root.c_str(), "tracefs", 0, nullptr);
    dir_ = root + "/instances/split_tracer_" + std::to_string(getpid());
    std::snprintf(g_instance, sizeof g_instance, "%s", dir_.c_str());
    for (const int sig : {SIGTERM, SIGINT, SIGHUP}) signal(sig, RemoveAndDie);
    if (mkdir(dir_.c_str(), 0700) != 0) return;
    const std::string comm = "\"" + o.comm + "\"";
    std::string calls;
    for (long nr : kCalls) calls += (calls.empty() ? "" : " || ") + ("id == " + std::to_string(nr));
    // Off while the events are enabled one by one: a request issued before
    // its completion's event was on would be in flight for ever.
    ok_ = On(false) && WriteFile(dir_ + "/trace_clock", "mono") &&
          WriteFile(dir_ + "/buffer_size_kb", "65536") &&
          WriteFile(dir_ + "/options/overwrite", "0") &&
          Event("raw_syscalls/sys_enter", "comm == " + comm + " && (" + calls + ")") &&
          Event("raw_syscalls/sys_exit", "comm == " + comm) &&
          Event("sched/sched_switch", "prev_comm == " + comm + " || next_comm == " + comm) &&
          Event("sched/sched_waking", "comm == " + comm) &&
          Event("sched/sched_wakeup", "comm == " + comm) &&
          Event("writeback/balance_dirty_pages", "comm == " + comm) &&
          Event("writeback/folio_wait_writeback", "comm == " + comm) &&
          Event("block/block_bio_queue", "comm == " + comm) && Event("block/block_rq_issue", "") &&
          Event("block/block_rq_complete", "") && Event("block/block_rq_requeue", "") &&
          Event("jbd2/jbd2_start_commit", "") && Event("jbd2/jbd2_end_commit", "");
  }
  ~Instance() {
    if (dir_.empty()) return;
    WriteFile(dir_ + "/events/enable", "0");
    rmdir(dir_.c_str());
  }
  bool ok() const { return ok_; }
  bool On(bool on) { return WriteFile(dir_ + "/tracing_on", on ? "1" : "0"); }
  // Events the per-CPU buffers overwrote or dropped: with them, a call may
  // have lost its end.
  unsigned long Dropped() const {
    unsigned long sum = 0;
    for (int cpu = 0;; ++cpu) {
      std::ifstream stats(dir_ + "/per_cpu/cpu" + std::to_string(cpu) + "/stats");
      if (!stats) return sum;
      for (std::string line; std::getline(stats, line);)
        for (const char* key : {"overrun: ", "commit overrun: ", "dropped events: "})
          if (line.rfind(key, 0) == 0) sum += std::strtoul(line.c_str() + strlen(key), nullptr, 10);
    }
  }
  std::string Trace() const { return dir_ + "/trace"; }

 private:
  bool Event(const std::string& name, const std::string& filter) {
    const std::string d = dir_ + "/events/" + name;
    return (filter.empty() || WriteFile(d + "/filter", filter)) && WriteFile(d + "/enable", "1");
  }
  const Options& o_;
  std::string dir_;
  bool ok_ = false;
};

int Run(const std::vector<std::string>& command) {
  const pid_t pid = fork();
  if (pid == 0) {
    std::vector<char*> argv;
    for (const std::string& a : command) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  int i = 1;
  for (; i < argc && std::strcmp(argv[i], "--") != 0; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) break;
    std::string v = argv[++i];
    std::replace(v.begin(), v.end(), ':', ',');
    if (a == "--comm") o.comm = argv[i];
    if (a == "--out") o.out = argv[i];
    if (a == "--disk") o.disks.insert(v);
    if (a == "--fs") o.fss.insert(v);
  }
  for (++i; i < argc; ++i) o.command.push_back(argv[i]);
  if (o.comm.empty() || o.out.empty() || o.command.empty()) {
    std::fprintf(stderr,
                 "usage: split_tracer --comm NAME --out FILE.csv [--disk MAJ:MIN]... "
                 "[--fs MAJ:MIN]... -- CMD ARGS\n");
    return 125;
  }
  Instance trace(o);
  if (!trace.ok() || !trace.On(true)) {
    std::fprintf(stderr, "split_tracer: could not set up an ftrace instance\n");
    return 125;
  }
  const int status = Run(o.command);
  trace.On(false);
  std::ifstream in(trace.Trace());
  Reconstruction r(o);
  std::string line;
  while (std::getline(in, line)) r.Line(line);
  if (r.lost() || trace.Dropped()) {
    std::fprintf(stderr, "split_tracer: the trace buffer lost %lu events\n",
                 r.lost() + trace.Dropped());
    return 125;
  }
  if (const char* keep = std::getenv("SPLIT_TRACER_KEEP")) {  // the raw trace, to look into
    std::ifstream raw(trace.Trace());
    std::ofstream(keep) << raw.rdbuf();
  }
  if (const std::string left = r.Left(); !left.empty())
    std::fprintf(stderr, "split_tracer: still in flight at the end:%s\n", left.c_str());
  std::ofstream out(o.out);
  out << r.Csv();
  return out ? status : 125;
}
