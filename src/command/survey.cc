// SPDX-License-Identifier: MIT
// The survey's plan: every experiment's steps, in the table's order, sized
// from the free space and the dirty thresholds of the host.
#include "command/survey.h"

#include <sys/statvfs.h>

#include <algorithm>
#include <set>

#include "core/units.h"
#include "report/recommendations.h"
#include "telemetry/dirty_threshold.h"
#include "telemetry/identify.h"

namespace writelab {
namespace {

uint64_t FreeBytes(const std::string& dir) {
  struct statvfs v;
  return statvfs(dir.c_str(), &v) == 0 ? static_cast<uint64_t>(v.f_bavail) * v.f_frsize : 0;
}

}  // namespace

SurveySizes SizeSurvey(const std::string& dir, const Host& host, int ranks) {
  return {dir, host, ranks, FreeBytes(dir) / static_cast<uint64_t>(ranks),
          BackgroundThreshold(IdentifyTarget(dir).device).bytes};
}

SurveyRun OnRankZero(SurveyRun run) {
  return [run](const RunContext& ctx, ExperimentResult& e) {
    if (ctx.team && ctx.team->rank() != 0) ctx.team->set_role(Role::kIdle);
    return run(ctx, e);
  };
}

std::string AllRanks(int ranks) { return "all " + std::to_string(ranks) + " ranks at once"; }

std::vector<SurveyStep> SurveyPlan(const std::string& dir, const Host& host, Definitions defs) {
  const SurveySizes sizes = SizeSurvey(dir, host, 1);
  std::vector<SurveyStep> plan;
  for (const ExperimentDef* def : defs)
    if (def->survey)
      for (SurveyStep& s : def->survey(sizes)) plan.push_back(std::move(s));
  return plan;
}

std::vector<SurveyStep> SurveyPlanAcrossRanks(const std::string& dir, const Host& host, int ranks,
                                              Definitions defs) {
  const SurveySizes sizes = SizeSurvey(dir, host, ranks);
  std::vector<SurveyStep> plan;
  for (const ExperimentDef* def : defs)
    if (def->survey_across_ranks)
      for (SurveyStep& s : def->survey_across_ranks(sizes)) plan.push_back(std::move(s));
  return plan;
}

std::vector<Recommendation> Recommendations(const Document& doc, Definitions defs) {
  if (!doc.ranks.empty()) return RecommendationsAcrossRanks(doc, defs);
  std::vector<Recommendation> lines;
  for (const ExperimentDef* def : defs) {
    if (!def->recommend) continue;
    std::vector<const ExperimentResult*> runs;
    for (const ExperimentResult& r : doc.experiments)
      if (r.name == def->report.name) runs.push_back(&r);
    lines.push_back(!runs.empty() ? def->recommend(runs)
                                  : Recommendation{std::string(def->report.name),
                                                   {},
                                                   std::string(def->report.name) + ": not run",
                                                   ""});
    std::vector<std::string>& read = lines.back().figures;  // each once, in the order read
    for (size_t i = 0; i < read.size(); ++i)
      read.erase(std::remove(read.begin() + static_cast<long>(i) + 1, read.end(), read[i]),
                 read.end());
  }
  return lines;
}

std::vector<Recommendation> RecommendationsAcrossRanks(const Document& doc, Definitions defs) {
  std::vector<Recommendation> lines;
  std::vector<std::string> alone, measures;  // the experiments that run on one machine only
  for (const ExperimentDef* def : defs) {
    if (def->recommend_across_ranks) lines.push_back(def->recommend_across_ranks(doc));
    if (def->runs_under_mpi || !def->survey) continue;  // the survey's, left out under MPI
    alone.emplace_back(def->report.name);
    measures.emplace_back(def->measures_one_machine);
  }
  if (!alone.empty())
    lines.push_back({"",
                     {},
                     ListInWords(alone) + ": not run under MPI: they measure one machine's " +
                         ListInWords(measures) +
                         " (run writelab survey without mpirun on a machine for them)",
                     ""});
  std::set<std::string> hosts;
  for (const RankInfo& r : doc.ranks) hosts.insert(r.host.hostname);
  if (doc.ranks.size() > 1 && hosts.size() == 1)
    lines.push_back({"",
                     {},
                     "every rank ran on " + *hosts.begin() +
                         ": the clients shared one machine's CPUs, page cache and device, so a "
                         "limit above may be that machine's rather than the storage's",
                     ""});
  return lines;
}

}  // namespace writelab
