// SPDX-License-Identifier: MIT
// `writelab run`'s whole command: its runs through the one trial loop
// (--compare: plain and the strategy, the order rotating over --rounds),
// then the document's results "run" (a row per strategy) and "run-files"
// (a row per file of each strategy's last run).
#include <fmt/format.h>
#include <cstdio>

#include <algorithm>
#include <filesystem>
#include <map>

#include "command/orchestrator.h"
#include "command/trials.h"
#include "core/units.h"
#include "program/run/def.h"
#include "program/run/figures.h"
#include "program/run/launch.h"
#include "telemetry/identify.h"
#include "testbed/journal.h"

namespace writelab {
namespace {

// A strategy's runs, gathered.
struct RunRow {
  RunVariant variant;
  Outcome outcome;
  std::map<std::string, std::vector<double>> values;
  std::optional<Histogram> probe;
  std::vector<std::string> notes;
  std::vector<RunFile> files;  // the last run's
};

void AddNote(std::vector<std::string>& notes, const std::string& n) {
  if (std::find(notes.begin(), notes.end(), n) == notes.end()) notes.push_back(n);
}

// Of the files CMD wrote at least --min-file to: bytes written and handled.
std::pair<uint64_t, uint64_t> Covered(const std::vector<RunFile>& files) {
  uint64_t written = 0, handled = 0;
  for (const RunFile& f : files)
    if (f.measured) written += f.written, handled += f.handled;
  return {written, handled};
}

void Keep(RunTrial& t, RunRow& row) {
  if (!t.outcome.ok()) {
    row.outcome = t.outcome;
    return;
  }
  auto add = [&](FigureKey key, double v) { row.values[key.name].push_back(v); };
  add(RunKey("mb_s"), t.elapsed_s > 0 ? static_cast<double>(t.bytes) / t.elapsed_s / 1e6 : 0);
  if (t.settled)
    add(RunKey("durable_mb_s"), static_cast<double>(t.bytes) / (t.elapsed_s + t.settle_s) / 1e6);
  add(RunKey("elapsed_s"), t.elapsed_s);
  if (t.settled || t.settle_s > 0) add(RunKey("settle_s"), t.settle_s);
  add(RunKey("bytes"), static_cast<double>(t.bytes));
  const auto [written, handled] = Covered(t.files);
  if (t.strategy != RunStrategy::kPlain && written)
    add(RunKey("coverage_pct"),
        100.0 * static_cast<double>(handled) / static_cast<double>(written));
  uint64_t cached = 0, handled_files = 0;
  bool all_measured = true;
  for (const RunFile& f : t.files) {
    if (f.cached) cached += *f.cached;
    all_measured &= !f.measured || f.cached.has_value();
    handled_files += f.handled > 0;
  }
  if (all_measured) add(RunKey("cached_end"), static_cast<double>(cached));
  add(RunKey("dirty_peak"), static_cast<double>(t.dirty_peak));
  add(RunKey("files"), static_cast<double>(t.files.size()));
  if (t.strategy != RunStrategy::kPlain)
    add(RunKey("files_handled"), static_cast<double>(handled_files));
  if (t.probe && t.probe->count()) {
    for (auto [key, p] : {std::pair{RunKey("probe_p50_ms"), 50.0}, {RunKey("probe_p99_ms"), 99.0}})
      if (auto ns = t.probe->SupportedPercentile(p)) add(key, static_cast<double>(*ns) / 1e6);
    add(RunKey("probe_max_ms"), static_cast<double>(t.probe->max()) / 1e6);
    if (row.probe)
      row.probe->Merge(*t.probe);
    else
      row.probe = *t.probe;
  }
  if (t.probe_error)
    AddNote(row.notes,
            "probe: a write or fdatasync failed: " + ErrnoError(t.probe_error, "").Message());
  add(RunKey("exit_status"), t.exit_status);
  if (t.memcg_peak) add(RunKey("memcg_peak"), static_cast<double>(*t.memcg_peak));
  if (t.oom_kills) add(RunKey("oom_kills"), static_cast<double>(*t.oom_kills));
  for (const std::string& n : t.notes) AddNote(row.notes, n);
  if (!all_measured)
    AddNote(row.notes, "left cached: a file of at least --min-file could not be measured");
  row.files = std::move(t.files);
}

Row MakeRunRow(RunRow& r) {
  Row row = MakeRow(r.variant.label, r.outcome);
  AddFigures(row.figures, kRunFigures, r.values);
  if (r.probe)
    row.latencies.push_back(Latency::From(
        *r.probe, "probe", "bystander 4 KiB pwrite + fdatasync",
        "while CMD ran and its dirty pages were written back, every 100 ms (--measure)"));
  row.notes = r.notes;
  std::map<std::string, int> hows;
  for (const RunFile& f : r.files) ++hows[f.how];
  for (const auto& [how, n] : hows)
    row.notes.push_back(fmt::format("{} file{}: {}", n, n == 1 ? "" : "s", how));
  return row;
}

// At most this many files are rows of run-files, those CMD wrote most to;
// the rest are one row that sums them (docs/run.md: what one run keeps).
constexpr size_t kMaxFileRows = 200;

Row FileRow(const RunFile& f, const std::string& prefix) {
  Outcome ok;
  Row row = MakeRow(prefix + f.path, ok);
  std::map<std::string, double> v = {{RunFileKey("written").name, static_cast<double>(f.written)},
                                     {RunFileKey("handled").name, static_cast<double>(f.handled)},
                                     {RunFileKey("size").name, static_cast<double>(f.size)}};
  if (f.cached) v[RunFileKey("cached_end").name] = static_cast<double>(*f.cached);
  AddFigures(row.figures, kRunFileFigures, v);
  row.notes.push_back(f.how);
  return row;
}

// Adds f to a row that sums files.
void AddToSum(RunFile& sum, const RunFile& f) {
  sum.written += f.written;
  sum.handled += f.handled;
  sum.size += f.size;
}

// The files CMD wrote most to, a row each, the rest summed in one row; the
// files below --min-file (left alone: a shell's redirect, a log) summed in
// another unless --all-files.
void AddFileRows(std::vector<RunFile> files, const std::string& prefix, bool all_files,
                 ExperimentResult& out) {
  std::stable_sort(files.begin(), files.end(),
                   [](const RunFile& a, const RunFile& b) { return a.written > b.written; });
  RunFile rest, small;
  size_t listed = 0, more = 0, smaller = 0;
  for (const RunFile& f : files) {
    if (!all_files && f.small) {
      ++smaller;
      AddToSum(small, f);
    } else if (listed < kMaxFileRows) {
      ++listed;
      out.rows.push_back(FileRow(f, prefix));
    } else {
      ++more;
      AddToSum(rest, f);
    }
  }
  if (more) {
    rest.path = fmt::format("({} more files)", more);
    rest.how =
        fmt::format("{} files beyond the {} CMD wrote most to, summed (not listed one by one)",
                    more, kMaxFileRows);
    out.rows.push_back(FileRow(rest, prefix));
  }
  if (smaller) {
    small.path = fmt::format("({} files below --min-file)", smaller);
    small.how = fmt::format(
        "{} files CMD wrote less than --min-file to, left alone and summed: --all-files lists "
        "each",
        smaller);
    out.rows.push_back(FileRow(small, prefix));
  }
}

// Where CMD wrote most: the directory of its largest file (else ".").
std::string BusiestDir(const std::vector<RunRow>& rows) {
  uint64_t most = 0;
  std::string dir = ".";
  for (const RunRow& r : rows)
    for (const RunFile& f : r.files)
      if (f.written >= most && !f.path.empty() && f.path.front() == '/') {
        most = f.written;
        dir = std::filesystem::path(f.path).parent_path().string();
      }
  return dir;
}

std::vector<Param> Params(const RunSpec& spec) {
  std::string strategies;
  for (const RunVariant& v : spec.variants) strategies += (strategies.empty() ? "" : ",") + v.label;
  return {{"command", SpaceJoined(spec.command), ""},
          {"strategy", strategies, ""},
          {"window", static_cast<int64_t>(spec.window), "bytes"},
          {"min_file", static_cast<int64_t>(spec.min_file), "bytes"},
          {"target", static_cast<double>(spec.pace_target_ns) / 1e6, "ms"},
          {"path", spec.path_glob, ""},
          {"user", spec.user, ""},
          {"measure", spec.measure, ""},
          {"compare", spec.compare, ""},
          {"rounds", static_cast<int64_t>(spec.rounds), "trials"},
          {"poll", static_cast<double>(spec.poll_ns) / 1e9, "s"}};
}

// The journal of a run with a memcg row (its cgroups), else none.
Result<std::unique_ptr<UndoJournal>> JournalIfNeeded(const RunSpec& spec) {
  for (const RunVariant& v : spec.variants)
    if (v.memcg_bytes) return OpenRunJournal();
  return std::unique_ptr<UndoJournal>();
}

}  // namespace

Status RunCommand(const RunSpec& spec, const RunContext& outer, Document& doc, int* exit_status) {
  auto shim = FindShim();
  if (!shim) return Unexpected(PlainError(shim.error()));
  auto journal = JournalIfNeeded(spec);
  if (!journal) return Unexpected(journal.error());
  RunContext ctx = outer;
  if (*journal) ctx.journal = journal->get();
  std::vector<RunRow> rows;
  if (spec.compare) rows.push_back({{RunStrategy::kPlain, 0, 0, "plain"}, {}, {}, {}, {}, {}});
  for (const RunVariant& v : spec.variants) rows.push_back({v, {}, {}, {}, {}, {}});
  TrialPlan plan;
  plan.cells = rows.size();
  plan.rounds = spec.rounds;
  plan.name = [&](size_t cell) { return rows[cell].variant.label; };
  bool interrupted = false;
  std::optional<Error> not_run;  // CMD could not be run: no document
  Status st = RunTrials(
      ctx, plan,
      [&](const TrialSlot& slot) {
        if (spec.compare)  // CMD's output of each run, labelled (stdout stays CMD's alone)
          std::fprintf(stderr, "writelab run: %s, round %d of %d:\n",
                       rows[slot.cell].variant.label.c_str(), slot.round + 1, spec.rounds);
        return RunOnce(spec, rows[slot.cell].variant, *shim, ctx);
      },
      [&](const TrialSlot& slot, RunTrial t) {
        if (!t.started) not_run = PlainError(t.outcome.message);
        interrupted |= !t.notes.empty() && t.notes.back().starts_with("interrupted");
        *exit_status = t.exit_status;
        Keep(t, rows[slot.cell]);
      });
  if (not_run) return Unexpected(*not_run);
  ExperimentResult run, files;
  run.name = kRunName;
  run.reproduces = kRunReproduces;
  run.row_label = "strategy";
  run.target = IdentifyTarget(BusiestDir(rows));
  run.params = Params(spec);
  run.table = KeyNames(KeysOf(
      kRunFigures, {"mb_s", "durable_mb_s", "elapsed_s", "bytes", "coverage_pct", "cached_end",
                    "dirty_peak", "settle_s", "probe_p99_ms", "probe_max_ms", "exit_status"}));
  run.compare_figure = RunKey("mb_s").name;
  files.name = kRunFilesName;
  files.reproduces = kRunReproduces;
  files.row_label = "file";
  files.target = run.target;
  files.params = run.params;
  files.table = KeyNames(KeysOf(kRunFileFigures, {"written", "handled", "cached_end", "size"}));
  for (RunRow& r : rows) {
    run.rows.push_back(MakeRunRow(r));
    const std::string prefix = spec.compare ? r.variant.label + ": " : "";
    AddFileRows(r.files, prefix, spec.all_files, files);
  }
  AddTrialNotes(ctx, RotationNote(spec.rounds), {}, run);
  if (std::any_of(spec.variants.begin(), spec.variants.end(),
                  [](const RunVariant& v) { return v.strategy == RunStrategy::kDontcache; }))
    run.notes.push_back(
        "dontcache: files the shim could not reach (static binaries, io_uring, copy_file_range "
        "and stdio between fwrites) are windowed and dropped instead: RWF_DONTCACHE needs the "
        "writer's own call");
  doc.experiments.push_back(std::move(run));
  doc.experiments.push_back(std::move(files));
  if (st && interrupted) return Unexpected(PlainError("interrupted"));
  return st;
}

}  // namespace writelab
