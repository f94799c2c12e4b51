// SPDX-License-Identifier: MIT
// What every build's Team does without MPI: the step protocol over AllMax,
// the trial log, and --roles' rank lists. The collectives are team_mpi.cc's.
#include "mpi/team.h"

#include <algorithm>
#include <cstdlib>

#include "core/units.h"

namespace writelab {

bool Team::Step(bool failed) {
  if (stop_code_ != kGo) return false;
  int code = failed ? kFailed : LocallyInterrupted() ? kInterrupted : kGo;
  int max_code = kGo, at_rank = -1;
  if (broken_ || !AllMax(code, &max_code, &at_rank)) {
    broken_ = true;
    stop_code_ = kInterrupted;
    stop_rank_ = rank();
    return false;
  }
  stop_code_ = max_code;
  stop_rank_ = at_rank;
  if (max_code == kInterrupted && interrupted_) interrupted_->store(true);
  return max_code == kGo;
}

Error Team::StopReason() const {
  if (broken_)
    return PlainError(
        "interrupted, and not every rank answered within " +
        FormatValue(static_cast<double>(kInterruptGraceNs) / 1e9, "s") +
        " (one may have been killed, or MPI failed): each rank's files are removed, rank 0 "
        "keeps its own rows");
  if (stop_code_ == kInterrupted) return PlainError("interrupted");
  if (stop_code_ == kFailed)
    return PlainError("stopped: rank " + std::to_string(stop_rank_) + " failed");
  return PlainError("running");
}

void Team::Record(TrialSpan span, const std::vector<TrialLatency>& latencies) {
  for (const TrialLatency& l : latencies)
    if (l.histogram && l.histogram->count()) histograms_[{span.row, l.key}].Merge(*l.histogram);
  spans_.push_back(std::move(span));
}

void Team::BeginExperiment() {
  stop_code_ = kGo;
  stop_rank_ = -1;
  role_ = Role::kMeasure;
  spans_.clear();
  histograms_.clear();
}

Launch LaunchFromEnvironment() {
  Launch l;
  // Open MPI's mpirun, PMIx launchers (srun --mpi=pmix, prterun), and PMI-1/2
  // ones (srun --mpi=pmi2, MPICH's hydra).
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"})
    if (std::getenv(name)) l.launched = true;
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"})
    if (const char* v = std::getenv(name); v && l.launched && l.size == 0)
      if (auto n = ParseCount(v, 1u << 24)) l.size = static_cast<int>(*n);
  return l;
}

std::expected<std::vector<int>, std::string> ParseRanks(const std::string& text, int size) {
  std::vector<int> ranks;
  auto bad = [&](const std::string& why) { return std::unexpected("'" + text + "': " + why); };
  size_t at = 0;
  while (at <= text.size()) {
    size_t comma = text.find(',', at);
    std::string item = text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    size_t dash = item.find('-');
    auto lo = ParseCount(item.substr(0, dash), 1u << 20);
    auto hi = dash == std::string::npos ? lo : ParseCount(item.substr(dash + 1), 1u << 20);
    if (item.empty() || !lo || !hi) return bad("expected ranks such as 0, 1-3 or 0,2-4");
    if (*hi < *lo) return bad("the range " + item + " runs backwards");
    if (*hi >= static_cast<uint64_t>(size))
      return bad("rank " + std::to_string(*hi) + " does not exist (" + std::to_string(size) +
                 " ranks: 0-" + std::to_string(size - 1) + ")");
    for (uint64_t r = *lo; r <= *hi; ++r) {
      if (std::find(ranks.begin(), ranks.end(), static_cast<int>(r)) != ranks.end())
        return bad("rank " + std::to_string(r) + " is given twice");
      ranks.push_back(static_cast<int>(r));
    }
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return ranks;
}

}  // namespace writelab
