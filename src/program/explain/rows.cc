// SPDX-License-Identifier: MIT
#include "program/explain/rows.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "core/histogram.h"
#include "core/outcome.h"
#include "explain/wait_functions.h"
#include "program/explain/figures.h"

namespace writelab {
namespace {

double Pct(uint64_t part, uint64_t total) {
  return total ? 100.0 * static_cast<double>(part) / static_cast<double>(total) : 0.0;
}

bool IsUring(uint32_t class_id) { return class_id / 4 >= TRACE_SYSCALL_KINDS; }

bool IsSyncOrDirectWrite(uint32_t class_id) {
  const uint32_t kind = class_id / 4;
  return (kind <= TRACE_KIND_PWRITEV2 || kind == TRACE_KIND_URING_WRITE) &&
         (class_id & (TRACE_CLASS_SYNC | TRACE_CLASS_DIRECT));
}

// The lowest value of a trace.bpf.c histogram bucket, and its width.
uint64_t BucketLow(int b) {
  if (b < 8) return static_cast<uint64_t>(b);
  const int shift = (b >> TRACE_HIST_SUB_BITS) - 1;
  return static_cast<uint64_t>((b & 7) + 8) << shift;
}
uint64_t BucketWidth(int b) { return b < 8 ? 1 : uint64_t{1} << ((b >> TRACE_HIST_SUB_BITS) - 1); }

// A class's (or a file's) sums.
struct Sums {
  uint64_t calls = 0, bytes = 0, ns = 0, max_ns = 0, errors = 0;
  uint64_t part_ns[SPLIT_PARTS] = {}, during_ns[SPLIT_OVERLAPS] = {};
  uint64_t commits = 0, conversions = 0, lock_ns = 0;
  void Add(const trace_file_stats& s) {
    calls += s.calls, bytes += s.bytes, ns += s.ns;
    errors += s.errors, commits += s.commits, conversions += s.conversions;
    lock_ns += s.lock_ns;
    max_ns = std::max<uint64_t>(max_ns, s.max_ns);
    for (int i = 0; i < SPLIT_PARTS; ++i) part_ns[i] += s.part_ns[i];
    for (int i = 0; i < SPLIT_OVERLAPS; ++i) during_ns[i] += s.during_ns[i];
  }
};

constexpr const char* kNoSchedulerEvents =
    "the scheduler's events could not be attached (see the notes)";

// The shares of a call's (or many calls') time, from its parts and overlaps.
template <class Ns>  // uint64_t or the kernel's __u64
Shares SplitShares(const Ns* part_ns, const Ns* during_ns, uint64_t ns, bool split) {
  Shares out;
  out.split = split;
  for (int i = 0; i < SPLIT_PARTS; ++i) out.parts[i] = Pct(part_ns[i], ns);
  for (int i = 0; i < SPLIT_OVERLAPS; ++i) out.during[i] = Pct(during_ns[i], ns);
  return out;
}

Shares SharesOf(const Sums& s, bool split) {
  Shares out = SplitShares(s.part_ns, s.during_ns, s.ns, split);
  out.lock = Pct(s.lock_ns, s.ns);
  if (s.calls) {
    out.commits_per_call = static_cast<double>(s.commits) / static_cast<double>(s.calls);
    out.conversions_per_call = static_cast<double>(s.conversions) / static_cast<double>(s.calls);
  }
  return out;
}

void AddSumFigures(const Sums& s, const Shares& sh, std::map<std::string, double>& f) {
  f[ProgramKey("calls").name] = static_cast<double>(s.calls);
  f[ProgramKey("mb").name] = static_cast<double>(s.bytes) / 1e6;
  f[ProgramKey("time_s").name] = static_cast<double>(s.ns) / 1e9;
  if (s.calls) f[ProgramKey("mean_ms").name] = static_cast<double>(s.ns) / s.calls / 1e6;
  f[ProgramKey("max_ms").name] = static_cast<double>(s.max_ns) / 1e6;
  if (sh.split) {
    for (int i = 0; i < SPLIT_PARTS; ++i) f[kPartKeys[i].name] = sh.parts[i];
    for (int i = 0; i < SPLIT_OVERLAPS; ++i) f[kDuringKeys[i].name] = sh.during[i];
    f[ProgramKey("lock_pct").name] = sh.lock;
  }
  f[ProgramKey("commits_per_call").name] = sh.commits_per_call;
  f[ProgramKey("conversions_per_call").name] = sh.conversions_per_call;
  f[ProgramKey("errors").name] = static_cast<double>(s.errors);
}

// What a commit carried: what its journal thread wrote beyond its log; and
// its phases (jbd2_run_stats; null when no statistics came for it).
struct CommitSeen {
  const TraceCommit* commit = nullptr;
  uint64_t blocks = 0;
  double carried_mb = 0;
  const TraceCommitStats* stats = nullptr;
};

std::vector<CommitSeen> JoinCommits(const ProgramTrace& t) {
  std::vector<CommitSeen> out;
  for (const TraceCommit& c : t.commits) {
    CommitSeen s{&c, 0, 0, nullptr};
    for (const TraceCommitStats& st : t.commit_stats)
      if (st.dev == c.dev && st.tid == c.tid) s.blocks = st.blocks_logged, s.stats = &st;
    const auto bs = t.block_size.find(c.dev);
    const double logged =
        static_cast<double>(s.blocks) * (bs == t.block_size.end() ? 4096.0 : bs->second);
    s.carried_mb = std::max(0.0, static_cast<double>(c.journal_bytes) - logged) / 1e6;
    out.push_back(s);
  }
  return out;
}

bool Overlaps(const TraceCommit& c, uint64_t start, uint64_t end) {
  return c.start_ns < end && c.end_ns > start;
}

// A commit's phases in ms, from jiffies: running, locked, flushing, logging.
std::array<double, 4> PhasesMs(const TraceCommitStats& st, uint64_t hz) {
  const double per = 1000.0 / static_cast<double>(hz);
  return {static_cast<double>(st.running_j) * per, static_cast<double>(st.locked_j) * per,
          static_cast<double>(st.flushing_j) * per, static_cast<double>(st.logging_j) * per};
}

// "transaction 3008 (11.2 ms: running 4 ms, locked 0 ms, flushing 4 ms,
// logging 4 ms; 4 blocks logged, 0.0 MB carried)".
std::string DescribeCommit(const CommitSeen& cs, uint64_t hz) {
  const double took = static_cast<double>(cs.commit->end_ns - cs.commit->start_ns) / 1e6;
  std::string phases;
  if (cs.stats && hz) {
    const auto p = PhasesMs(*cs.stats, hz);
    phases = fmt::format(": running {:g} ms, locked {:g} ms, flushing {:g} ms, logging {:g} ms",
                         p[0], p[1], p[2], p[3]);
  }
  return fmt::format("transaction {} ({:.1f} ms{}; {} blocks logged, {:.1f} MB carried)",
                     cs.commit->tid, took, phases, cs.blocks, cs.carried_mb);
}

// What the slow call c waited for of the journal: each overlapping commit
// in the note, and the figures of the longest one (with its phases) and of
// all of them together; returns the note's text ("" for none).
std::string CommitsAround(const TraceCall& c, const std::vector<CommitSeen>& commits, uint64_t hz,
                          Shares& sh, std::map<std::string, double>& f) {
  std::string waited;
  const CommitSeen* longest = nullptr;
  uint64_t blocks = 0;
  for (const CommitSeen& cs : commits) {
    if (!Overlaps(*cs.commit, c.start_ns, c.start_ns + c.ns)) continue;
    const uint64_t took = cs.commit->end_ns - cs.commit->start_ns;
    if (!longest || took > longest->commit->end_ns - longest->commit->start_ns) longest = &cs;
    blocks += cs.blocks;
    sh.carried_mb += cs.carried_mb;
    waited += (waited.empty() ? "" : ", ") + DescribeCommit(cs, hz);
  }
  if (!longest) return "";
  f[SlowCallKey("commit_ms").name] =
      static_cast<double>(longest->commit->end_ns - longest->commit->start_ns) / 1e6;
  f[SlowCallKey("commit_blocks").name] = static_cast<double>(blocks);
  f[SlowCallKey("commit_carried_mb").name] = sh.carried_mb;
  if (longest->stats && hz) {
    const auto p = PhasesMs(*longest->stats, hz);
    f[SlowCallKey("commit_running_ms").name] = p[0];
    f[SlowCallKey("commit_locked_ms").name] = p[1];
    f[SlowCallKey("commit_flushing_ms").name] = p[2];
    f[SlowCallKey("commit_logging_ms").name] = p[3];
  }
  return waited;
}

}  // namespace

Histogram FromKernel(const trace_hist& k) {
  Histogram h;
  for (int b = 0; b < TRACE_HIST_BUCKETS; ++b)
    if (k.buckets[b]) h.RecordN(BucketLow(b) + BucketWidth(b) / 2, k.buckets[b]);
  return h;
}

Histogram AllCalls(const std::vector<trace_hist>& per_class) {
  trace_hist sum{};
  for (const trace_hist& h : per_class)
    for (int b = 0; b < TRACE_HIST_BUCKETS; ++b) sum.buckets[b] += h.buckets[b];
  return FromKernel(sum);
}

std::string ClassName(uint32_t class_id) {
  std::string name = TraceKindName(class_id / 4);
  const bool sync = class_id & TRACE_CLASS_SYNC, direct = class_id & TRACE_CLASS_DIRECT;
  if (sync && direct) return name + " (direct, synchronous)";
  if (sync) return name + " (synchronous)";
  if (direct) return name + " (direct)";
  return name;
}

std::string FileName(const ProgramTrace& t, uint32_t dev, uint64_t ino) {
  if (auto it = t.paths.find({dev, ino}); it != t.paths.end()) return it->second;
  return fmt::format("(deleted or closed) dev {}:{} inode {}", dev >> 20, dev & 0xfffff, ino);
}

namespace {

// What a part means for a person, with where to look next.
std::string Cause(const Shares& s, int part) {
  const double v = s.parts[part];
  switch (part) {
    case SPLIT_CPU:
      return fmt::format(
          "{:.0f}% on CPU: the calls' own work (copying into the page cache, the "
          "file system's bookkeeping)",
          v);
    case SPLIT_RUNQ:
      return fmt::format(
          "{:.0f}% waiting for a CPU: runnable but not running, the CPUs were "
          "busy with other work",
          v);
    case SPLIT_JOURNAL:
      return fmt::format(
          "{:.0f}% waiting for journal commits{}; see the fsync and stream "
          "experiments",
          v,
          s.carried_mb >= 1 ? fmt::format(" that carried {:.0f} MB of other data", s.carried_mb)
                            : "");
    case SPLIT_WRITEBACK:
      return fmt::format(
          "{:.0f}% waiting for its own writes to reach the disk: its bandwidth or "
          "queue is the limit; see stream",
          v);
    case SPLIT_FLUSH:
      return fmt::format(
          "{:.0f}% waiting for the disk's cache flushes; see fsync (fdatasync "
          "against O_DSYNC and RWF_DSYNC)",
          v);
    case SPLIT_THROTTLE:
      return fmt::format(
          "{:.0f}% asleep in balance_dirty_pages: dirty pages above their limit; "
          "see stream's window-drop and dontcache",
          v);
    default:
      if (s.lock >= 1)
        return fmt::format(
            "{:.0f}% asleep on something else, {:.0f}% of the time in waits for contended kernel "
            "locks (a rw_semaphore or mutex: who held them, below)",
            v, s.lock);
      return fmt::format("{:.0f}% asleep on something else (locks, pipes, page faults)", v);
  }
}

}  // namespace

std::string Diagnosis(const Shares& s, bool writes) {
  std::string line;
  if (!s.split) {
    line += std::string("not split: ") + s.unsplit;
  } else {
    const auto* top = std::max_element(std::begin(s.parts), std::end(s.parts));
    const int most = static_cast<int>(top - std::begin(s.parts));
    if (*top >= 50) {
      line += Cause(s, most);
    } else {
      line += "nothing dominates:";
      for (int i = 0; i < SPLIT_PARTS; ++i)
        if (s.parts[i] >= 1) line += fmt::format(" {} {:.0f}%,", SplitPartName(i), s.parts[i]);
      line.pop_back();
    }
  }
  // A synchronous or direct write that converts its extents itself: the
  // 2012 case when the file was fallocated; otherwise ext4 made the
  // unwritten extents itself. (Around an fsync, ext4's writeback converts
  // the unwritten extents it allocated for delayed allocation: no advice.)
  if (writes && s.conversions_per_call >= 0.5)
    line += fmt::format(
        "; {:.1f} extent conversions and {:.1f} journal commits per call: {}",
        s.conversions_per_call, s.commits_per_call,
        s.fallocated ? "it writes into unwritten (fallocated) extents; see prealloc"
                     : "nothing was fallocated: ext4 allocated these blocks as unwritten extents "
                       "itself (dioread_nolock) and converts each on completion");
  return line;
}

std::vector<Row> CallTypeRows(const ProgramTrace& t) {
  std::map<uint32_t, Sums> by_class;
  uint64_t all_ns = 0;
  for (const TraceFile& f : t.files) {
    by_class[f.key.class_id].Add(f.stats);
    all_ns += f.stats.ns;
  }
  const std::vector<CommitSeen> commits = JoinCommits(t);
  const BlameIndex blame(t.windows);
  std::vector<Row> rows;
  for (const auto& [class_id, sums] : by_class) {
    if (sums.calls == 0) continue;
    Row row = MakeRow(ClassName(class_id), Outcome{});
    Shares sh = SharesOf(sums, t.split && !IsUring(class_id));
    if (!t.split) sh.unsplit = kNoSchedulerEvents;
    sh.fallocated = t.totals.fallocates > 0;
    Series s{"calls", 0, 0, {{"t", "s"}, {"call", "ms"}}, {}};
    for (int i = 0; i < SPLIT_PARTS; ++i) s.columns.push_back({SplitPartName(i), "%"});
    std::vector<const CommitSeen*> seen;
    for (const TraceCall& c : t.calls) {
      if (c.class_id != class_id) continue;
      std::vector<double> point = {static_cast<double>(c.start_ns - t.start_ns) / 1e9,
                                   static_cast<double>(c.ns) / 1e6};
      for (int i = 0; i < SPLIT_PARTS; ++i) point.push_back(Pct(c.part_ns[i], c.ns));
      if (sh.split) s.points.push_back(std::move(point));
      if (c.during_ns[SPLIT_DURING_COMMIT] == 0) continue;
      for (const CommitSeen& cs : commits)
        if (Overlaps(*cs.commit, c.start_ns, c.start_ns + c.ns) &&
            std::find(seen.begin(), seen.end(), &cs) == seen.end())
          seen.push_back(&cs);
    }
    for (const CommitSeen* cs : seen) sh.carried_mb += cs->carried_mb;
    std::map<std::string, double> f;
    AddSumFigures(sums, sh, f);
    const Histogram h = FromKernel(t.hists[class_id]);
    for (auto [key, p] : {std::pair{ProgramKey("p50_ms"), 50.0}, {ProgramKey("p99_ms"), 99.0}})
      if (auto ns = h.SupportedPercentile(p)) f[key.name] = static_cast<double>(*ns) / 1e6;
    AddFigures(row.figures, kProgramFigures, f);
    if (h.count())
      row.latencies.push_back(Latency::From(h, "call", "call",
                                            "one call, sys_enter to sys_exit (io_uring: "
                                            "submission to completion); at most 1/16 high"));
    if (!s.points.empty()) row.series.push_back(std::move(s));
    if (Pct(sums.ns, all_ns) >= kDiagnosedShare)
      row.notes.push_back(Diagnosis(sh, IsSyncOrDirectWrite(class_id)));
    if (std::string who = TypeBlameNote(t, blame, class_id); !who.empty())
      row.notes.push_back(std::move(who));
    rows.push_back(std::move(row));
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return a.FindFigure("time_s")->value.median > b.FindFigure("time_s")->value.median;
  });
  return rows;
}

std::vector<Row> FileRows(const ProgramTrace& t) {
  std::map<std::pair<uint32_t, uint64_t>, Sums> by_file;
  std::map<std::pair<uint32_t, uint64_t>, std::string> kinds;
  for (const TraceFile& f : t.files) {
    const auto id = std::pair{f.key.dev, f.key.ino};
    by_file[id].Add(f.stats);
    kinds[id] += (kinds[id].empty() ? "" : ", ") + ClassName(f.key.class_id) + " " +
                 std::to_string(f.stats.calls);
  }
  std::vector<std::pair<uint64_t, Row>> rows;
  for (const auto& [id, sums] : by_file) {
    Row row = MakeRow(FileName(t, id.first, id.second), Outcome{});
    std::map<std::string, double> f;
    AddSumFigures(sums, SharesOf(sums, t.split), f);
    AddFigures(row.figures, kProgramFigures, f);
    row.notes.push_back("calls: " + kinds[id]);
    rows.push_back({sums.ns, std::move(row)});
  }
  std::sort(rows.begin(), rows.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<Row> out;
  for (auto& [ns, row] : rows) out.push_back(std::move(row));
  return out;
}

std::vector<Row> SlowCallRows(const ProgramTrace& t, int top) {
  std::vector<const TraceCall*> slow;
  for (const TraceCall& c : t.calls) slow.push_back(&c);
  std::sort(slow.begin(), slow.end(),
            [](const TraceCall* a, const TraceCall* b) { return a->ns > b->ns; });
  if (slow.size() > static_cast<size_t>(std::max(top, 0))) slow.resize(static_cast<size_t>(top));
  const std::vector<CommitSeen> commits = JoinCommits(t);
  const BlameIndex blame(t.windows);
  std::vector<Row> rows;
  for (size_t i = 0; i < slow.size(); ++i) {
    const TraceCall& c = *slow[i];
    const std::string call = ClassName(c.class_id);
    Row row = MakeRow("#" + std::to_string(i + 1) + " " + call, Outcome{});
    std::map<std::string, double> f;
    f[SlowCallKey("at_s").name] = static_cast<double>(c.start_ns - t.start_ns) / 1e9;
    f[SlowCallKey("ms").name] = static_cast<double>(c.ns) / 1e6;
    Shares sh = SplitShares(c.part_ns, c.during_ns, c.ns, t.split && !IsUring(c.class_id));
    if (!t.split) sh.unsplit = kNoSchedulerEvents;
    sh.fallocated = t.totals.fallocates > 0;
    if (sh.split) {  // the slow call's keys are the type's, by name
      for (int k = 0; k < SPLIT_PARTS; ++k) f[kPartKeys[k].name] = sh.parts[k];
      for (int k = 0; k < SPLIT_OVERLAPS; ++k) f[kDuringKeys[k].name] = sh.during[k];
      sh.lock = Pct(c.lock.wait_ns, c.ns);
      f[SlowCallKey("lock_pct").name] = sh.lock;
    }
    f[SlowCallKey("commits").name] = static_cast<double>(c.commits);
    sh.commits_per_call = static_cast<double>(c.commits);
    sh.conversions_per_call = static_cast<double>(c.conversions);
    const std::string waited = CommitsAround(c, commits, t.totals.hz, sh, f);
    const uint64_t end = c.start_ns + c.ns;
    const ContextSample* near = nullptr;
    for (const ContextSample& s : t.samples)
      if (!near || (s.t_ns >= end && (near->t_ns < end || s.t_ns < near->t_ns))) near = &s;
    if (near) {
      f[SlowCallKey("dirty_mb").name] = static_cast<double>(near->dirty) / 1e6;
      f[SlowCallKey("writeback_mb").name] = static_cast<double>(near->writeback) / 1e6;
      if (auto disk = t.disk_of.find(c.dev); disk != t.disk_of.end())
        if (auto q = near->in_flight.find(disk->second); q != near->in_flight.end())
          f[SlowCallKey("in_flight").name] = static_cast<double>(q->second);
    }
    const CallBlame who = blame.Of(c, CallDisk(t, c.dev));
    if (who.blocked_ms > 0)
      f[SlowCallKey("charged_pct").name] =
          100.0 * (who.blocked_ms - who.unattributed_ms) / who.blocked_ms;
    AddFigures(row.figures, kSlowCallFigures, f);
    row.notes.push_back(fmt::format("thread {} of process {}, fd {}, {}", c.tid, c.tgid, c.fd,
                                    c.dev ? FileName(t, c.dev, c.ino) : "no file"));
    if (!waited.empty()) row.notes.push_back("journal commits during it: " + waited);
    row.notes.push_back(Diagnosis(sh, IsSyncOrDirectWrite(c.class_id)));
    row.notes.push_back(BlameLine(who, c.tgid));
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace writelab
