// SPDX-License-Identifier: MIT
// `writelab survey`'s run: its checks, then its plan through the one
// orchestrator, with its recommendations and HTML report at the end.
#include <cstdio>

#include "command/errors.h"
#include "command/orchestrator.h"
#include "command/survey.h"
#include "io/trusted_dir.h"
#include "report/atomic_file.h"
#include "report/html.h"

namespace writelab {
namespace {

// The usage errors of the options: one line, or nothing.
std::optional<std::string> CheckSurvey(SurveyOptions& o, bool writes_outputs) {
  if (auto bad = writes_outputs ? CheckOutputs(o.out) : std::nullopt) return bad;
  if (auto bad = writes_outputs ? CheckOutputFile("--html", o.html) : std::nullopt) return bad;
  auto resolved = CheckWorkDir("--dir", o.dir);
  if (!resolved) return resolved.error();
  o.dir = *resolved;  // the checked directory, not a name that may point elsewhere later
  return std::nullopt;
}

}  // namespace

int RunSurvey(const SurveyOptions& given, Definitions defs, const ReportBook& book,
              const RunContext& run_ctx, Document& doc) {
  SurveyOptions o = given;
  Team* team = run_ctx.team;
  if (int code = AgreeOrRefuse(run_ctx, CheckSurvey(o, !team || team->rank() == 0)); code >= 0)
    return code;
  Plan plan;
  plan.dir = o.dir;
  plan.survey = true;
  for (SurveyStep& s : team ? SurveyPlanAcrossRanks(o.dir, doc.host, team->size(), defs)
                            : SurveyPlan(o.dir, doc.host, defs))
    plan.steps.push_back({s.name, std::move(s.what), s.expected_s,
                          [run = std::move(s.run)](const RunContext& ctx, const std::string&,
                                                   ExperimentResult& e) { return run(ctx, e); },
                          s.bytes, s.time_based});
  plan.before_finish = [defs](Document& d) { d.recommendations = Recommendations(d, defs); };
  plan.after_finish = [&o, &book, &doc](int code, std::FILE* info) {
    if (o.html.empty()) return code;
    if (Status s = WriteFileAtomically(o.html, RenderHtml({doc}, EmbeddedHtmlAssets(), book)); !s) {
      PrintError(s.error().Message());
      return kExitRunFailed;
    }
    std::fprintf(info, "report: %s (open it in a browser; it works offline)\n", o.html.c_str());
    return code;
  };
  return Orchestrate(plan, ForOutputs(run_ctx, o.out), doc, o.out);
}

}  // namespace writelab
