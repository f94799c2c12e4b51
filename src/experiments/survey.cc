// SPDX-License-Identifier: MIT
// The survey's plan: every experiment's steps, in the table's order, sized
// from the free space and the dirty thresholds of the host.
#include "experiments/survey.h"

#include <sys/statvfs.h>

#include <algorithm>

#include "experiments/table.h"

namespace writelab {
namespace {

uint64_t FreeBytes(const std::string& dir) {
  struct statvfs v;
  return statvfs(dir.c_str(), &v) == 0 ? static_cast<uint64_t>(v.f_bavail) * v.f_frsize : 0;
}

}  // namespace

// The random background must outgrow the dirty-background threshold, or it
// never reaches the disk while we measure (docs/fsync.md).
uint64_t RandomSpan(const Host& host, uint64_t free) {
  uint64_t threshold =
      host.vm.count("dirty_background_bytes") && host.vm.at("dirty_background_bytes")
          ? static_cast<uint64_t>(host.vm.at("dirty_background_bytes"))
          : host.memory_bytes / 100 *
                static_cast<uint64_t>(host.vm.count("dirty_background_ratio")
                                          ? host.vm.at("dirty_background_ratio")
                                          : 10);
  uint64_t span = threshold * 5 / 2;
  span = std::clamp<uint64_t>(span, 256u << 20, std::max<uint64_t>(free / 4, 256u << 20));
  return span / 4096 * 4096;
}

SurveySizes SizeSurvey(const std::string& dir, const Host& host, int ranks) {
  return {dir, host, ranks, FreeBytes(dir) / static_cast<uint64_t>(ranks)};
}

SurveyRun OnRankZero(SurveyRun run) {
  return [run](const RunContext& ctx, ExperimentResult& e) {
    if (ctx.team && ctx.team->rank() != 0) ctx.team->set_role(Role::kIdle);
    return run(ctx, e);
  };
}

std::string AllRanks(int ranks) { return "all " + std::to_string(ranks) + " ranks at once"; }

std::vector<SurveyStep> SurveyPlan(const std::string& dir, const Host& host) {
  const SurveySizes sizes = SizeSurvey(dir, host, 1);
  std::vector<SurveyStep> plan;
  for (const ExperimentDef* def : Experiments())
    if (def->survey)
      for (SurveyStep& s : def->survey(sizes)) plan.push_back(std::move(s));
  return plan;
}

std::vector<SurveyStep> SurveyPlanAcrossRanks(const std::string& dir, const Host& host, int ranks) {
  const SurveySizes sizes = SizeSurvey(dir, host, ranks);
  std::vector<SurveyStep> plan;
  for (const ExperimentDef* def : Experiments())
    if (def->survey_across_ranks)
      for (SurveyStep& s : def->survey_across_ranks(sizes)) plan.push_back(std::move(s));
  return plan;
}

}  // namespace writelab
