// SPDX-License-Identifier: MIT
// `writelab survey`: every experiment, short, on one directory's file
// system, then recommendations backed by what was just measured. No root
// needed, nothing switched: test beds and schedulers are for the
// experiments' own commands. As root it adds --explain's attribution.
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "cli/cli.h"
#include "cli/targets.h"
#include "core/clock.h"
#include "core/units.h"
#include "experiments/survey.h"
#include "experiments/table.h"
#include "explain/explainer.h"
#include "io/trusted_dir.h"
#include "mpi/session.h"
#include "port/no_memory.h"
#include "report/atomic_file.h"
#include "report/html.h"
#include "report/recommendations.h"
#include "telemetry/identify.h"
#include "testbed/journal.h"

namespace writelab {
namespace {

struct SurveyOptions {
  std::string dir = ".";
  std::string html = "writelab-survey.html";
  OutputOptions out;
};

// "stream, fsync, records, prealloc and stride": the experiments it runs.
std::string ExperimentList() {
  std::vector<std::string> names;
  for (const ExperimentDef* def : Experiments())
    if (def->survey) names.emplace_back(def->name);
  return ListInWords(names);
}

// --explain's programs for the survey's target, as root; null (and why) when
// they cannot run here.
std::unique_ptr<Explainer> SurveyExplainer(const std::string& dir, std::string* why) {
  if (auto refusal = ExplainRefusal()) {
    *why = *refusal;
    return nullptr;
  }
  auto started = StartExplainerAt(dir, IdentifyTarget(dir).device);
  if (!started) {
    *why = started.error().Message();
    return nullptr;
  }
  return std::move(*started);
}

// The usage errors of the options: one line, or nothing.
std::optional<std::string> CheckSurvey(SurveyOptions& o, bool writes_outputs) {
  if (auto bad = writes_outputs ? CheckOutputs(o.out) : std::nullopt) return bad;
  if (auto bad = writes_outputs ? CheckOutputFile("--html", o.html) : std::nullopt) return bad;
  auto resolved = CheckWorkDir("--dir", o.dir);
  if (!resolved) return resolved.error();
  o.dir = *resolved;  // the checked directory, not a name that may point elsewhere later
  return std::nullopt;
}

// One step: on one machine into a new result; under MPI on every rank,
// the aggregate and each rank's result appended on rank 0.
Status RunStep(const SurveyStep& s, const RunContext& ctx, Document& doc,
               const std::string& without) {
  const size_t before = doc.experiments.size();
  Status st;
  if (ctx.team) {
    st = RunOnRanks(*ctx.team, ctx, doc, s.run);
  } else {
    doc.experiments.emplace_back();
    st = FailingOnNoMemory("allocate the survey's buffers",
                           [&] { return s.run(ctx, doc.experiments.back()); });
  }
  if (!without.empty())
    for (size_t i = before; i < doc.experiments.size(); ++i)
      doc.experiments[i].notes.push_back("ran without attribution (--explain): " + without);
  return st;
}

// Rank 0 (or the one process): the recommendations, the tables, the files.
int FinishSurvey(const SurveyOptions& o, FILE* info, Document& doc, const Status& status) {
  doc.recommendations = Recommendations(doc);
  int code = Finish(doc, o.out, status);
  if (!o.html.empty()) {
    if (Status s = WriteFileAtomically(o.html, RenderHtml({doc}, EmbeddedHtmlAssets())); !s) {
      PrintError(s.error().Message());
      return kExitRunFailed;
    }
    std::fprintf(info, "report: %s (open it in a browser; it works offline)\n", o.html.c_str());
  }
  return code;
}

int RunSurvey(const SurveyOptions& given, const RunContext& run_ctx, Document& doc) {
  SurveyOptions o = given;
  Team* team = run_ctx.team;
  if (int code = AgreeOrRefuse(run_ctx, CheckSurvey(o, !team || team->rank() == 0)); code >= 0)
    return code;
  auto opened = OpenRunJournal();  // as root: the loads' groups and the run's own files
  if (!opened) {
    const int code = !team || team->rank() == 0 ? Finish(doc, o.out, Unexpected(opened.error()))
                                                : kExitRunFailed;
    return team ? ShareExitCode(*team, code) : code;
  }
  std::unique_ptr<UndoJournal> journal = std::move(*opened);
  OwnFilesJournaled own_files(journal.get());
  if (team)
    if (auto refused = MeetRanks(*team, o.dir, doc)) {
      if (team->rank() == 0) PrintError(*refused);
      return kExitUsage;
    }
  const RunContext out_ctx = ForOutputs(run_ctx, o.out);
  const bool speaks = !team || team->rank() == 0;
  FILE* info = ToStdout(o.out) ? stderr : stdout;  // stdout may carry the document
  std::vector<SurveyStep> steps =
      team ? SurveyPlanAcrossRanks(o.dir, doc.host, team->size()) : SurveyPlan(o.dir, doc.host);
  int expected = 0;
  for (const SurveyStep& s : steps) expected += s.expected_s;
  if (speaks)
    std::fprintf(info, "writelab survey of %s: %zu experiments, about %d s%s\n", o.dir.c_str(),
                 steps.size(), expected,
                 team ? (" on " + std::to_string(team->size()) + " MPI ranks").c_str() : "");
  std::string without;  // why the survey runs without --explain's attribution
  std::unique_ptr<Explainer> explainer;
  if (team)
    without = "not under MPI: its attribution is per machine and would count the other ranks' I/O";
  else
    explainer = SurveyExplainer(o.dir, &without);
  if (speaks && explainer)
    std::fprintf(info, "attribution: on (--explain: where the time went, per row)\n");
  else if (speaks)
    std::fprintf(info, "attribution: off, the survey runs without it: %s\n", without.c_str());
  RunContext ctx = out_ctx;
  ctx.explainer = explainer.get();
  ctx.journal = journal.get();
  Status status;
  const uint64_t start = NowNs();
  for (size_t i = 0; i < steps.size(); ++i) {
    const SurveyStep& s = steps[i];
    // Under MPI the ranks decide together whether the survey goes on: an
    // interrupt on any rank stops every rank before the same step.
    if (team) {
      team->BeginExperiment();
      if (!team->Step()) {
        status = std::unexpected(PlainError("interrupted"));
        break;
      }
    }
    if (speaks)
      std::fprintf(info, "[%zu/%zu] %s: %s (about %d s; %.0f s elapsed)\n", i + 1, steps.size(),
                   s.name, s.what.c_str(), s.expected_s,
                   static_cast<double>(NowNs() - start) / 1e9);
    std::fflush(info);
    if (Status st = RunStep(s, ctx, doc, explainer ? "" : without); !st) {
      doc.errors.push_back(std::string(s.name) + ": " + st.error().Message());
      status = std::unexpected(PlainError(std::string(s.name) + " failed"));
    }
    if (team ? team->broken() : ctx.Interrupted()) {
      status = std::unexpected(PlainError("interrupted"));
      break;
    }
  }
  if (speaks)
    std::fprintf(info, "survey done in %.0f s\n\n", static_cast<double>(NowNs() - start) / 1e9);
  int code = speaks ? FinishSurvey(o, info, doc, status) : status ? kExitOk : kExitRunFailed;
  return team ? ShareExitCode(*team, code) : code;
}

}  // namespace

void AddSurveyCommand(CLI::App& app, CommandAction* action) {
  auto o = std::make_shared<SurveyOptions>();
  o->out.json = "writelab-survey.json";
  CLI::App* sub = app.add_subcommand(
      "survey", "The first command to run: short runs of " + ExperimentList() +
                    " on DIR's file system (a few minutes, no root), one results file, and "
                    "recommendations backed by the numbers just measured.");
  sub->add_option("--dir", o->dir, "Directory on the file system to survey")->capture_default_str();
  AddOutputOptions(*sub, o->out);
  sub->add_option("-o,--html", o->html, "Write the HTML report with charts to FILE (\"\" for none)")
      ->capture_default_str();
  sub->callback([o, action] {
    *action = [o](const RunContext& ctx, Document& doc) { return RunSurvey(*o, ctx, doc); };
  });
}

}  // namespace writelab
