// SPDX-License-Identifier: MIT
// The document of `writelab explain -- CMD`: four results sharing the run's
// parameters and notes.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "core/units.h"
#include "explain/wait_functions.h"
#include "program/explain/def.h"
#include "program/explain/figures.h"
#include "program/explain/watch.h"
#include "report/csv.h"
#include "telemetry/identify.h"

namespace writelab {
namespace {

// Where the scope wrote most: the directory of its busiest file.
std::string BusiestDir(const ProgramTrace& t) {
  uint64_t most = 0;
  std::string dir;
  for (const TraceFile& f : t.files) {
    auto path = t.paths.find({f.key.dev, f.key.ino});
    if (path == t.paths.end() || f.stats.ns <= most || path->second.starts_with("…")) continue;
    most = f.stats.ns;
    dir = std::filesystem::path(path->second).parent_path();
  }
  return dir;
}

std::vector<std::string> Notes(const ProgramTrace& t, const std::vector<std::string>& missing,
                               std::optional<int> exit_status, bool interrupted) {
  std::vector<std::string> notes = missing;
  const trace_totals& x = t.totals;
  auto lost = [&](uint64_t n, const char* what) {
    if (n) notes.push_back(fmt::format("{} {}", n, what));
  };
  lost(x.lost_calls, "calls not timed: the map of calls in flight was full");
  lost(x.lost_files, "calls not counted by file: the map of files was full");
  lost(x.lost_events, "records lost: the ring buffer was full (slow calls, commits)");
  lost(x.lost_scope, "processes not followed: the scope was full");
  lost(t.calls_dropped, "slow or durability calls not kept (more than 200000)");
  lost(
      t.windows_dropped,
      "windows of charged writes not kept (more than 200000): later calls' culprits are not named");
  if (x.charges_lost)
    notes.push_back(
        fmt::format("{:.1f} MB written to the disks charged to no one: too many disks and file "
                    "systems written ({} windows at most)",
                    static_cast<double>(x.charges_lost) / 1e6, TRACE_BLAME_GROUPS));
  if (x.unbalanced)
    notes.push_back(
        fmt::format("{} calls' parts did not add up to the call (a bug)", x.unbalanced));
  if (t.split && t.wait_functions == 0) notes.push_back(kNoWaitFunctions);
  for (std::string& n : SplitCheckNotes(t.check)) notes.push_back(std::move(n));
  if (exit_status) notes.push_back(fmt::format("the command exited with status {}", *exit_status));
  if (interrupted) notes.push_back("interrupted: what was measured until then");
  notes.push_back(
      "what is not seen: writes through mmap that the kernel flushes, network file systems' "
      "servers, and calls of processes outside the scope that it waits on");
  return notes;
}

// A culprit in the CSV: its PID, or its cause (journal, metadata, unknown,
// others), lock-PID for a lock's holder, lock-readers, lock-flusher-PID for
// a flusher writing back PID's pages, handle-PID and handle-flusher-PID for
// a journal handle's.
std::string CulpritCsvId(const CulpritId& who) {
  switch (who.cause) {
    case TRACE_CAUSE_PROCESS:
      return std::to_string(who.tgid);
    case TRACE_CAUSE_JOURNAL:
      return "journal";
    case TRACE_CAUSE_METADATA:
      return "metadata";
    case TRACE_CAUSE_UNKNOWN:
      return "unknown";
    case TRACE_CAUSE_LOCK:
      return fmt::format("lock-{}", who.tgid);
    case TRACE_CAUSE_LOCK_READERS:
      return "lock-readers";
    case TRACE_CAUSE_LOCK_FLUSHER:
      return fmt::format("lock-flusher-{}", who.tgid);
    case TRACE_CAUSE_HANDLE:
      return fmt::format("handle-{}", who.tgid);
    case TRACE_CAUSE_HANDLE_FLUSHER:
      return fmt::format("handle-flusher-{}", who.tgid);
    default:
      return "others";
  }
}

// The CSV's blame columns: blocked and uncharged ns, then the culprits as
// "ID:NS" (CulpritCsvId) joined by ";".
std::string CulpritsCsv(const CallBlame& b) {
  auto ns = [](double ms) { return static_cast<uint64_t>(ms * 1e6 + 0.5); };
  std::string who;
  for (const CallBlame::Share& s : b.shares)
    who += fmt::format("{}{}:{}", who.empty() ? "" : ";", CulpritCsvId(s.who), ns(s.ms));
  return fmt::format("{},{},{}", ns(b.blocked_ms), ns(b.unattributed_ms), who);
}

}  // namespace

std::string CallsCsv(const ProgramTrace& t) {
  std::string out = "tid,pid,call,start_ns,ns";
  for (int i = 0; i < SPLIT_PARTS; ++i) out += fmt::format(",{}_ns", kSplitPartKeys[i]);
  for (int i = 0; i < SPLIT_OVERLAPS; ++i) out += fmt::format(",{}_ns", kSplitOverlapKeys[i]);
  out += ",lock_ns,ret,fd,file,blocked_ns,uncharged_ns,culprits\n";
  const BlameIndex blame(t.windows);
  for (const TraceCall& c : t.calls) {
    out += fmt::format("{},{},{},{},{}", c.tid, c.tgid, CsvField(ClassName(c.class_id)), c.start_ns,
                       c.ns);
    for (int i = 0; i < SPLIT_PARTS; ++i) out += fmt::format(",{}", c.part_ns[i]);
    for (int i = 0; i < SPLIT_OVERLAPS; ++i) out += fmt::format(",{}", c.during_ns[i]);
    out += fmt::format(",{},{},{},{}", c.lock.wait_ns, c.ret, c.fd,
                       CsvField(c.dev ? FileName(t, c.dev, c.ino) : std::string()));
    out += "," + CulpritsCsv(blame.Of(c, CallDisk(t, c.dev))) + "\n";
  }
  return out;
}

void FillExplainDocument(const ProgramSpec& spec, const ProgramTrace& trace,
                         const std::vector<std::string>& missing, std::optional<int> exit_status,
                         bool interrupted, Document& doc) {
  ExperimentResult calls;
  calls.name = kExplainProgramName;
  calls.reproduces = kProgramReproduces;
  calls.row_label = "call";
  const std::string dir = BusiestDir(trace);
  if (!dir.empty()) calls.target = IdentifyTarget(dir);
  calls.params = {{"command", SpaceJoined(spec.command), ""},
                  {"pid", static_cast<int64_t>(spec.pid), ""},
                  {"duration", static_cast<double>(trace.end_ns - trace.start_ns) / 1e9, "s"},
                  {"user", spec.user, ""},
                  {"slow", spec.slow_ns ? static_cast<double>(spec.slow_ns) / 1e6 : 0.0, "ms"},
                  {"top", static_cast<int64_t>(spec.top), "calls"},
                  {"exit_status", static_cast<int64_t>(exit_status.value_or(-1)), ""}};
  calls.table =
      KeyNames(KeysOf(kProgramFigures,
                      {"calls", "mb", "time_s", "p50_ms", "p99_ms", "max_ms", "cpu_pct", "runq_pct",
                       "journal_pct", "writeback_pct", "flush_pct", "throttled_pct", "other_pct"}));
  calls.compare_figure = ProgramKey("time_s").name;
  calls.rows = CallTypeRows(trace);
  calls.notes = Notes(trace, missing, exit_status, interrupted);

  ExperimentResult files = calls;
  files.name = kExplainFilesName;
  files.row_label = "file";
  files.table = KeyNames(KeysOf(
      kProgramFigures, {"calls", "mb", "time_s", "max_ms", "cpu_pct", "runq_pct", "journal_pct",
                        "writeback_pct", "flush_pct", "throttled_pct", "other_pct"}));
  files.rows = FileRows(trace);
  files.notes.clear();
  files.reproduces.clear();  // the same run: said once, in "explain"
  files.params.clear();

  ExperimentResult slow = calls;
  slow.name = kExplainSlowName;
  slow.row_label = "slow call";
  slow.table =
      KeyNames(KeysOf(kSlowCallFigures, {"at_s", "ms", "cpu_pct", "runq_pct", "journal_pct",
                                         "writeback_pct", "flush_pct", "throttled_pct", "other_pct",
                                         "commit_ms", "commit_carried_mb", "dirty_mb"}));
  slow.compare_figure = SlowCallKey("ms").name;
  slow.rows = SlowCallRows(trace, spec.top);
  std::erase_if(slow.table, [&](const std::string& key) {  // no commit overlapped any
    return std::none_of(slow.rows.begin(), slow.rows.end(),
                        [&](const Row& r) { return r.FindFigure(key) != nullptr; });
  });
  slow.reproduces.clear();
  slow.params.clear();
  slow.notes = {fmt::format(
      "the {} slowest calls among the durability calls and those above the slow threshold ({})",
      spec.top,
      spec.slow_ns ? FormatValue(static_cast<double>(spec.slow_ns) / 1e6, "ms")
                   : std::string("the 99th percentile so far"))};
  ExperimentResult culprits = slow;
  culprits.name = kExplainCulpritsName;
  culprits.row_label = "culprit";
  culprits.table = KeyNames(
      KeysOf(kCulpritFigures, {"waited_ms", "share_pct", "calls", "written_mb", "dirtied_mb"}));
  culprits.compare_figure = CulpritKey("waited_ms").name;
  culprits.rows = CulpritRows(trace);
  culprits.notes = {
      "who made the calls wait: each delivered call's sleep for a journal commit, a cache flush "
      "or its own writes charged to the processes whose writes that commit, flush or queue "
      "carried, by bytes; \"wrote\" is what each queued to the watched disks over the run"};
  doc.experiments.push_back(std::move(calls));
  doc.experiments.push_back(std::move(files));
  doc.experiments.push_back(std::move(slow));
  doc.experiments.push_back(std::move(culprits));
}

}  // namespace writelab
