// SPDX-License-Identifier: MIT
// `writelab history trend`, `history changes` and `history check`: a figure
// across the runs kept, the change points of every figure's series, and the
// newest run (or one named) against a baseline with compare's significance test
// (docs/history.md).
#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/history_command.h"
#include "command/errors.h"
#include "command/options.h"
#include "command/outputs.h"
#include "core/document_json.h"
#include "core/units.h"
#include "history/changes.h"
#include "history/trend.h"
#include "report/atomic_file.h"
#include "report/compare.h"
#include "telemetry/memory_budget.h"

namespace writelab {
namespace {

struct TrendOptions {
  std::string file;
  TrendQuery query;
  std::string html;  // -o
};

// Why a trend has no points: the experiments or figures there are.
std::string NothingToDraw(const HistoryStore& store, const TrendQuery& q) {
  std::string why = "history trend: no figure '" + q.figure + "' of experiment '" + q.experiment +
                    "'" + (q.row.empty() ? "" : " in row '" + q.row + "'") + " in " + store.path();
  auto experiments = store.Known("");
  if (experiments &&
      std::find(experiments->begin(), experiments->end(), q.experiment) == experiments->end())
    return why + " (experiments there: " + ListInWords(*experiments) + ")";
  auto figures = store.Known(q.experiment);
  if (figures && !figures->empty() &&
      std::find(figures->begin(), figures->end(), q.figure) == figures->end())
    return why + " (its figures: " + ListInWords(*figures) + ")";
  return why;
}

// "mb_s (MB/s), elapsed_s (elapsed)": the figures of an experiment the
// history holds, each with the name its tables print.
std::string FiguresNamed(const std::string& experiment, const std::vector<std::string>& keys) {
  const ExperimentDef* def = FindExperiment(experiment);
  std::vector<std::string> named;
  for (const std::string& key : keys) {
    std::string label;
    if (def)
      for (const FigureSpec& f : def->report.figures)
        if (key == f.key) label = f.label;
    named.push_back(label.empty() || label == key ? key : key + " (" + label + ")");
  }
  return ListInWords(named);
}

// Without --figure: the figures there are to choose from, as a usage error.
int ListFigures(const HistoryStore& store, const TrendQuery& q) {
  auto figures = store.Known(q.experiment);
  if (!figures) return PrintError(figures.error().Message()), kExitRunFailed;
  if (figures->empty()) return UsageError(NothingToDraw(store, q));
  return UsageError("history trend: give --figure KEY; the figures of " + q.experiment + " in " +
                    store.path() + ": " + FiguresNamed(q.experiment, *figures));
}

int RunTrend(const TrendOptions& o) {
  if (!o.html.empty())
    if (auto bad = CheckOutputFile("--output", o.html)) return UsageError(*bad);
  auto store = OpenHistoryFor(o.file, HistoryAccess::kRead);
  if (!store) return Report(store.error());
  if (o.query.figure.empty()) return ListFigures(*store, o.query);
  auto points = store->Trend(o.query);
  if (!points) return PrintError(points.error().Message()), kExitRunFailed;
  if (points->empty()) return UsageError(NothingToDraw(*store, o.query));
  std::fputs(Printable(RenderTrendText(o.query, *points), true).c_str(), stdout);
  if (o.html.empty()) return kExitOk;
  if (Status s =
          WriteFileAtomically(o.html, RenderTrendHtml(o.query, *points, EmbeddedHtmlAssets()));
      !s)
    return PrintError(s.error().Message()), kExitRunFailed;
  std::printf("trend: %s (open it in a browser; it works offline)\n", o.html.c_str());
  return kExitOk;
}

int RunChanges(const ChangesQuery& q, const std::string& file) {
  auto store = OpenHistoryFor(file, HistoryAccess::kRead);
  if (!store) return Report(store.error());
  auto known = store->Known("");
  if (!known) return PrintError(known.error().Message()), kExitRunFailed;
  if (std::find(known->begin(), known->end(), q.experiment) == known->end())
    return UsageError("history changes: no experiment '" + q.experiment + "' in " + store->path() +
                      " (experiments there: " + ListInWords(*known) + ")");
  auto found = FindChanges(*store, q);
  if (!found) return PrintError(found.error().Message()), kExitRunFailed;
  if (found->figures == 0)
    return UsageError(NothingToDraw(*store, {q.experiment, q.figure, q.row, q.runs}));
  // What the history holds is input: printed without its control characters.
  std::fputs(Printable(RenderChangesText(q, *found), true).c_str(), stdout);
  return kExitOk;
}

struct CheckOptions {
  std::string file;
  std::string run;         // the run checked ("": the newest)
  std::string baseline;    // LABEL or RUN
  std::string experiment;  // only this experiment ("": every one of the run's)
  double fail_on_regression = 0;
  size_t recent = 5;  // runs back a series' change point counts
};

// The baseline the run is checked against, and why that one; an
// error line, or nullopt with a note when there is nothing to check against.
std::expected<std::optional<StoredRun>, std::string> Baseline(const HistoryStore& store,
                                                              const CheckOptions& o,
                                                              const StoredRun& checked,
                                                              std::string* why) {
  if (o.baseline.empty()) {
    auto prev = store.PreviousOnSameMachine(checked);
    if (!prev) return std::unexpected(prev.error().Message());
    *why = "the previous " + checked.record.command + " run on this host and target (" +
           checked.record.host_fingerprint + "; " + checked.record.target_fingerprint + ")";
    return *prev;
  }
  if (auto id = ParseRunId(o.baseline);
      id && o.baseline.find_first_not_of("0123456789") == std::string::npos) {
    auto run = store.Get(*id);
    if (!run) return std::unexpected("history check: --baseline: " + run.error().Message());
    if (run->id == checked.id)
      return std::unexpected("history check: --baseline: run " + o.baseline +
                             " is the run checked itself");
    *why = "run " + o.baseline + " (--baseline)";
    return std::optional<StoredRun>(*run);
  }
  auto run = store.LatestLabelled(o.baseline, checked);
  if (!run) return std::unexpected(run.error().Message());
  if (!*run)
    return std::unexpected("history check: --baseline: no run labelled '" + o.baseline +
                           "' before run " + std::to_string(checked.id) + " in " + store.path());
  *why = "the latest run labelled '" + o.baseline + "'";
  return *run;
}

std::string Named(const StoredRun& r) {
  std::string out = "run " + std::to_string(r.id) + " (" + r.record.command;
  if (!r.record.label.empty()) out += ", " + r.record.label;
  return out + ", " + r.record.kernel + ", " + r.record.started_at + ")";
}

std::expected<Document, std::string> DocumentOf(const HistoryStore& store, const StoredRun& r) {
  auto text = store.DocumentText(r.id);
  if (!text) return std::unexpected(text.error().Message());
  auto doc = FromJson(*text, AvailableMemory());
  if (!doc)
    return std::unexpected(store.path() + ": run " + std::to_string(r.id) + ": " + doc.error());
  return doc;
}

// The run checked: the one named, else the newest (with the experiment, when
// one is named; none: an empty history).
std::expected<std::optional<StoredRun>, std::string> CheckedRun(const HistoryStore& store,
                                                                const std::string& run,
                                                                const std::string& experiment) {
  if (run.empty()) {
    auto newest = store.Newest(experiment);
    if (!newest) return std::unexpected(newest.error().Message());
    return *newest;
  }
  auto id = ParseRunId(run);
  if (!id || run.find_first_not_of("0123456789") != std::string::npos)
    return std::unexpected("history check: '" + run + "' is not a run id (writelab history list)");
  auto got = store.Get(*id);
  if (!got) return std::unexpected("history check: " + got.error().Message());
  return std::optional<StoredRun>(*got);
}

// Whether a change point is a regression check fails on: a headline figure
// of its experiment or a per-trial tail (a "p99" key), worse by more than pct.
bool SeriesRegression(const SeriesChange& c, const Document& checked, double pct) {
  bool watched = c.figure.find("p99") != std::string::npos;
  for (const ExperimentResult& e : checked.experiments)
    watched = watched || (e.name == c.experiment && HeadlineFigure(e) == c.figure);
  const double worse = HigherIsBetterUnit(c.unit) ? -c.change.change_pct : c.change.change_pct;
  return watched && worse > pct;
}

// The series up to the checked run: its experiments' change points on its
// host that still hold at it and are recent (after the baseline when one was
// named). Prints them; returns how many are regressions, or an error line.
std::expected<size_t, std::string> CheckSeries(const HistoryStore& store, const CheckOptions& o,
                                               const StoredRun& checked, const StoredRun& base,
                                               const Document& doc) {
  RecentChangesQuery q;
  for (const ExperimentResult& e : doc.experiments)
    if (std::find(q.experiments.begin(), q.experiments.end(), e.name) == q.experiments.end())
      q.experiments.push_back(e.name);
  q.host = checked.record.hostname;
  q.up_to_run = checked.id;
  q.after_run = o.baseline.empty() ? 0 : base.id;
  q.recent = o.recent;
  auto found = RecentChanges(store, q);
  if (!found) return std::unexpected(found.error().Message());
  std::string out = fmt::format(
      "\nseries: {} change point{} in {} series on {} up to run {} that still hold{} "
      "(E-divisive means with a t-test, p < {:g}; a change shows once {} runs follow it)\n",
      found->changes.size(), found->changes.size() == 1 ? "" : "s", found->series, q.host,
      checked.id,
      q.after_run > 0 ? fmt::format(", after run {}", q.after_run)
                      : fmt::format(", in the last {} runs", q.recent),
      q.options.max_p, std::max<size_t>(q.options.min_segment, 2));
  for (const StoredRun* run : {&base, &checked})
    if (auto d = found->disturbed.find(run->id); d != found->disturbed.end())
      out += fmt::format(
          "canary: run {} was made on a disturbed machine ({}): its figures may say more about "
          "the machine than about a change\n",
          run->id, d->second);
  size_t worse = 0;
  for (const SeriesChange& c : found->changes) {
    out += c.experiment + ": " + RenderChange(c);
    if (!SeriesRegression(c, doc, o.fail_on_regression)) continue;
    ++worse;
    std::fputs(Printable(fmt::format("writelab: regression: {}: {} {}: change point at run {}: "
                                     "{:+.1f}% (p {:.2g})\n",
                                     c.experiment, c.row, c.figure, c.run_at, c.change.change_pct,
                                     c.change.p_value),
                         true)
                   .c_str(),
               stderr);
  }
  std::fputs(Printable(out, true).c_str(), stdout);
  return worse;
}

int RunCheck(const CheckOptions& o) {
  auto store = OpenHistoryFor(o.file, HistoryAccess::kRead);
  if (!store) return Report(store.error());
  if (!o.experiment.empty()) {
    auto known = store->Known("");
    if (!known) return PrintError(known.error().Message()), kExitRunFailed;
    if (std::find(known->begin(), known->end(), o.experiment) == known->end())
      return UsageError("history check: no experiment '" + o.experiment + "' in " + store->path() +
                        " (experiments there: " + ListInWords(*known) + ")");
  }
  auto checked = CheckedRun(*store, o.run, o.experiment);
  if (!checked) return UsageError(checked.error());
  if (!*checked) return PrintError("history check: no run in " + store->path()), kExitRunFailed;
  std::string why;
  auto base = Baseline(*store, o, **checked, &why);
  if (!base) return UsageError(base.error());
  if (!*base) {
    const RunRecord& r = (*checked)->record;
    // What the history holds is input: printed without its control characters.
    std::fputs(Printable("history check: " + Named(**checked) + " is the first " + r.command +
                             " run on this host and target (" + r.host_fingerprint + "; " +
                             r.target_fingerprint + "): nothing to check it against\n",
                         true)
                   .c_str(),
               stdout);
    return kExitOk;
  }
  auto a = DocumentOf(*store, **base);
  if (!a) return PrintError(a.error()), kExitRunFailed;
  auto b = DocumentOf(*store, **checked);
  if (!b) return PrintError(b.error()), kExitRunFailed;
  if (!o.experiment.empty())  // the other experiments of both runs are left out
    for (Document* d : {&*a, &*b})
      std::erase_if(d->experiments,
                    [&](const ExperimentResult& e) { return e.name != o.experiment; });
  auto c = Compare(*a, *b);
  if (!c)
    return UsageError("history check: run " + std::to_string((*base)->id) + " and run " +
                      std::to_string((*checked)->id) + ": " + c.error());
  std::fputs(Printable("history check: " + Named(**checked) + " against " + Named(**base) + ", " +
                           why + "\n",
                       true)
                 .c_str(),
             stdout);
  std::fputs(RenderComparisonText(*c).c_str(), stdout);
  auto worse = Regressions(*c, o.fail_on_regression);
  for (const FigureComparison* f : worse)
    std::fprintf(stderr, "writelab: regression: %s: %s %s %s (p %.3g)\n", f->experiment.c_str(),
                 f->row.c_str(), f->label.c_str(), PercentChange(f->a, f->b).c_str(), *f->p);
  auto series = CheckSeries(*store, o, **checked, **base, *b);
  if (!series) return PrintError(series.error()), kExitRunFailed;
  if (worse.empty() && *series == 0)
    std::printf(
        "no headline figure or tail (a latency's p99 or p99.9) significantly worse by more than "
        "%g%%, against the baseline or in the series\n",
        o.fail_on_regression);
  return worse.empty() && *series == 0 ? kExitOk : kExitRegression;
}

void AddChangesCommand(CLI::App& history, CommandAction* action) {
  struct Options {
    std::string file;
    ChangesQuery q;
  };
  auto o = std::make_shared<Options>();
  CLI::App* changes = history.add_subcommand(
      "changes",
      "When each figure changed: the change points of every figure's series (one row on one "
      "host, run after run) by E-divisive means with a t-test, each with its size, interval and "
      "p, and what else changed at that run (kernel, test bed, scheduler, mount options, "
      "writelab, command line)");
  AddHistoryFileOption(*changes, o->file);
  changes->add_option("--experiment", o->q.experiment, "The experiment, e.g. fsync")
      ->required()
      ->option_text("NAME");
  changes->add_option("--figure", o->q.figure, "Only this figure's key, e.g. sync_max_ms")
      ->option_text("KEY");
  changes->add_option("--row", o->q.row, "Only this row, e.g. stream/fdatasync")
      ->option_text("ROW");
  changes->add_option("--host", o->q.runs.host, "Only runs on this host name")->option_text("HOST");
  changes
      ->add_option("--kernel", o->q.runs.kernel, "Only runs on this kernel ('6.1*' for a prefix)")
      ->option_text("KERNEL");
  changes->add_option("--label", o->q.runs.label, "Only runs with this label")
      ->option_text("LABEL");
  changes
      ->add_option("--max-p", o->q.options.max_p,
                   "Report a change when its test's p is below this (default 0.001; corrected "
                   "for the places the change could have been)")
      ->option_text("P")
      ->check(CLI::Range(1e-12, 0.5));
  changes
      ->add_option("--min-change", o->q.options.min_relative,
                   "Leave out changes smaller than PCT percent however significant (default 0)")
      ->option_text("PCT")
      ->check(CLI::NonNegativeNumber);
  changes
      ->add_option("--min-runs", o->q.options.min_segment,
                   "Fewest runs on each side of a change (default 3, at least 2)")
      ->option_text("N")
      ->check(CLI::Range(2, 1000));
  changes->callback([o, action] {
    *action = [o](const RunContext&, Document&) { return RunChanges(o->q, o->file); };
  });
}

}  // namespace

void AddHistoryQueryCommands(CLI::App& history, CommandAction* action) {
  auto t = std::make_shared<TrendOptions>();
  CLI::App* trend = history.add_subcommand(
      "trend",
      "One figure across the runs, oldest first: its median, min-max and trials per run and "
      "row, and each step's change with compare's significance test; -o draws it");
  AddHistoryFileOption(*trend, t->file);
  trend->add_option("--experiment", t->query.experiment, "The experiment, e.g. fsync")
      ->required()
      ->option_text("NAME");
  trend
      ->add_option("--figure", t->query.figure,
                   "The figure's key, e.g. sync_max_ms (without it: the experiment's figures "
                   "in the history are listed; the keys are in docs/results.md and each --json)")
      ->option_text("KEY");
  trend->add_option("--row", t->query.row, "Only this row, e.g. stream/fdatasync")
      ->option_text("ROW");
  trend->add_option("--host", t->query.runs.host, "Only runs on this host name")
      ->option_text("HOST");
  trend
      ->add_option("--kernel", t->query.runs.kernel,
                   "Only runs on this kernel ('6.1*' for a prefix)")
      ->option_text("KERNEL");
  trend->add_option("--label", t->query.runs.label, "Only runs with this label")
      ->option_text("LABEL");
  trend
      ->add_option("-o,--output", t->html,
                   "Also write the trend as an HTML page (one offline file): a line per row, "
                   "its min-max band, each run named by kernel and label")
      ->option_text("FILE");
  trend->callback(
      [t, action] { *action = [t](const RunContext&, Document&) { return RunTrend(*t); }; });

  AddChangesCommand(history, action);

  auto c = std::make_shared<CheckOptions>();
  CLI::App* check = history.add_subcommand(
      "check",
      "A run (default: the newest) against a baseline (default: the previous run of the same "
      "command on the same host and target), with compare's significance tests, and the change "
      "points of each figure's series up to the run; exit 3 when a headline figure, or a "
      "latency's p99 or p99.9, got significantly worse by more than --fail-on-regression "
      "percent");
  AddHistoryFileOption(*check, c->file);
  check->add_option("run", c->run, "The run to check, by id (writelab history list)")
      ->option_text("RUN");
  check
      ->add_option("--experiment", c->experiment,
                   "Only this experiment: the newest run that has it, checked on it alone")
      ->option_text("NAME");
  check
      ->add_option("--baseline", c->baseline,
                   "A run id, or a label: the latest run with that --label")
      ->option_text("LABEL|RUN");
  check
      ->add_option("--recent", c->recent,
                   "Fail on a change point of the series up to the run only when it is at most N "
                   "runs back (default 5; with --baseline: any after the baseline)")
      ->option_text("N")
      ->check(CLI::PositiveNumber);
  check
      ->add_option("--fail-on-regression", c->fail_on_regression,
                   "Exit 3 only for a significant regression beyond PCT percent (default 0: any)")
      ->option_text("PCT")
      ->check(CLI::NonNegativeNumber);
  check->callback(
      [c, action] { *action = [c](const RunContext&, Document&) { return RunCheck(*c); }; });
}

}  // namespace writelab
