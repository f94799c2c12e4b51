// SPDX-License-Identifier: MIT
// What the survey's recommendations under MPI are made of (docs/mpi.md):
// how a figure scales with the number of clients, read from the aggregates
// of the one-rank and all-rank steps (each experiment's
// recommend_across_ranks calls ScalingRecommendation).
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>

#include "core/units.h"
#include "mpi/figures.h"
#include "report/recommendations.h"

namespace writelab {
namespace {

constexpr FigureKey kSlowest = KeyOf(kRanksFigures, "rank_mb_s_min");

const Row* RowNamed(const ExperimentResult* e, const std::string& name) {
  return e ? e->FindRow(name) : nullptr;
}

// "2.1x rank 0 alone, 70% of linear": what N clients made of one's figure.
std::string Scaling(double alone, double together, int clients) {
  const double x = together / alone, linear = x / clients;
  const char* verdict = linear >= 0.8 ? "it scales with the clients"
                        : x < 1.2     ? "it does not scale: the clients share one limit"
                                      : "it scales in part";
  return fmt::format("{:.2g}x rank 0 alone, {:.0f}% of linear: {}", x, linear * 100, verdict);
}

}  // namespace

const ExperimentResult* Aggregate(const Document& doc, std::string_view name, int ranks) {
  const ExperimentResult* found = nullptr;
  for (const ExperimentResult& e : doc.experiments)
    if (e.name == name && e.ranks > 0 &&
        (ranks ? e.ranks == ranks : !found || e.ranks > found->ranks))
      found = &e;
  return found;
}

Recommendation ScalingRecommendation(const Document& doc, std::string_view experiment,
                                     const char* what, FigureKey key, const std::string& unit) {
  Recommendation r{std::string(experiment), {key.name}, "", ""};
  const ExperimentResult* one = Aggregate(doc, experiment, 1);
  const ExperimentResult* all = Aggregate(doc, experiment, 0);
  if (!one || !all || all->ranks < 2) {
    r.text = fmt::format("{} across clients: not enough ranks measured", what);
    return r;
  }
  const Row* best = nullptr;
  for (const Row& row : all->rows)
    if (MedianOf(row, key) && MedianOf(RowNamed(one, row.name), key) &&
        (!best || *MedianOf(row, key) > *MedianOf(*best, key)))
      best = &row;
  if (!best) {
    r.text = fmt::format("{} across clients: not enough rows measured", what);
    return r;
  }
  const double alone = *MedianOf(RowNamed(one, best->name), key), together = *MedianOf(*best, key);
  r.text = fmt::format(
      "{} across {} clients: {} is the fastest, {} together against {} "
      "on rank 0 alone ({})",
      what, all->ranks, best->name, WithUnit(together, unit), WithUnit(alone, unit),
      Scaling(alone, together, all->ranks));
  if (auto slowest = MedianOf(*best, kSlowest)) {
    r.text += fmt::format("; the slowest client got {}", FormatValue(*slowest, "MB/s"));
    r.figures.push_back(kSlowest.name);
  }
  return r;
}

}  // namespace writelab
