// SPDX-License-Identifier: MIT
// `writelab survey`: all five experiments, short, on one directory's file
// system, then recommendations backed by what was just measured. No root
// needed, nothing switched: test beds and schedulers are for the
// experiments' own commands. As root it adds --explain's attribution.
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>

#include "cli/cli.h"
#include "core/clock.h"
#include "experiments/survey.h"
#include "explain/explainer.h"
#include "io/trusted_dir.h"
#include "report/atomic_file.h"
#include "report/html.h"
#include "report/recommendations.h"
#include "telemetry/identify.h"

namespace writelab {
namespace {

struct SurveyOptions {
  std::string dir = ".";
  std::string html = "writelab-survey.html";
  OutputOptions out;
};

// --explain's programs for the survey's target, as root; null (and why) when
// they cannot run here.
std::unique_ptr<Explainer> SurveyExplainer(const std::string& dir, std::string* why) {
  if (auto refusal = ExplainRefusal()) {
    *why = *refusal;
    return nullptr;
  }
  auto scope = ExplainScopeOf(dir, IdentifyTarget(dir).device);
  auto started = scope ? StartExplainer(*scope) : Unexpected(scope.error());
  if (!started) {
    *why = started.error().Message();
    return nullptr;
  }
  return std::move(*started);
}

int RunSurvey(const SurveyOptions& given, const RunContext& run_ctx, Document& doc) {
  if (auto bad = CheckOutputs(given.out)) return UsageError(*bad);
  if (auto bad = CheckOutputFile("--html", given.html)) return UsageError(*bad);
  const RunContext out_ctx = ForOutputs(run_ctx, given.out);
  FILE* info = ToStdout(given.out) ? stderr : stdout;  // stdout may carry the document
  auto resolved = CheckWorkDir("--dir", given.dir);
  if (!resolved) return UsageError(resolved.error());
  SurveyOptions o = given;
  o.dir = *resolved;  // the checked directory, not a name that may point elsewhere later
  std::vector<SurveyStep> steps = SurveyPlan(o.dir, doc.host);
  int expected = 0;
  for (const SurveyStep& s : steps) expected += s.expected_s;
  std::fprintf(info, "writelab survey of %s: %zu experiments, about %d s\n", o.dir.c_str(),
               steps.size(), expected);
  std::string without;  // why the survey runs without --explain's attribution
  auto explainer = SurveyExplainer(o.dir, &without);
  if (explainer)
    std::fprintf(info, "attribution: on (--explain: where the time went, per row)\n");
  else
    std::fprintf(info, "attribution: off, the survey runs without it: %s\n", without.c_str());
  RunContext ctx = out_ctx;
  ctx.explainer = explainer.get();
  Status status;
  const uint64_t start = NowNs();
  for (size_t i = 0; i < steps.size(); ++i) {
    const SurveyStep& s = steps[i];
    std::fprintf(info, "[%zu/%zu] %s: %s (about %d s; %.0f s elapsed)\n", i + 1, steps.size(),
                 s.name, s.what, s.expected_s, static_cast<double>(NowNs() - start) / 1e9);
    std::fflush(info);
    doc.experiments.emplace_back();
    Status st = s.run(ctx, doc.experiments.back());
    if (!explainer)
      doc.experiments.back().notes.push_back("ran without attribution (--explain): " + without);
    if (!st) {
      doc.errors.push_back(std::string(s.name) + ": " + st.error().Message());
      status = std::unexpected(PlainError(std::string(s.name) + " failed"));
    }
    if (ctx.Interrupted()) {
      status = std::unexpected(PlainError("interrupted"));
      break;
    }
  }
  std::fprintf(info, "survey done in %.0f s\n\n", static_cast<double>(NowNs() - start) / 1e9);
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

}  // namespace

void AddSurveyCommand(CLI::App& app, CommandAction* action) {
  auto o = std::make_shared<SurveyOptions>();
  o->out.json = "writelab-survey.json";
  CLI::App* sub = app.add_subcommand(
      "survey",
      "The first command to run: short runs of stream, fsync, records, prealloc and stride on "
      "DIR's file system (a few minutes, no root), one results file, and recommendations "
      "backed by the numbers just measured.");
  sub->add_option("--dir", o->dir, "Directory on the file system to survey")->capture_default_str();
  AddOutputOptions(*sub, o->out);
  sub->add_option("-o,--html", o->html, "Write the HTML report with charts to FILE (\"\" for none)")
      ->capture_default_str();
  sub->callback([o, action] {
    *action = [o](const RunContext& ctx, Document& doc) { return RunSurvey(*o, ctx, doc); };
  });
}

}  // namespace writelab
