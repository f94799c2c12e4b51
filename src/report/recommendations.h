// SPDX-License-Identifier: MIT
// The survey's conclusion: recommendations read from a result document, each
// backed by the numbers it holds (figures named by checked keys). Each
// experiment writes its own (ExperimentDef::recommend, in its folder); this
// is where they are gathered, and what they are written with.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace writelab {

// One per experiment of the table, from its result in doc, e.g. "streaming:
// prefer dontcache — 2496 MB/s, 0 B left cached, bystander p99 3.0 ms;
// plain: 494 MB/s, 1.0 GiB cached, p99 180 ms". An experiment that is
// missing gets "NAME: not run"; nothing is recommended without a
// measurement behind it. Under MPI (doc.ranks not empty) these are
// RecommendationsAcrossRanks.
std::vector<Recommendation> Recommendations(const Document& doc);

// The survey under MPI: how the experiments that run on every rank scale
// from rank 0 alone to every rank at once ("2.1x rank 0 alone, 70% of
// linear"), which ones were not run, and whether the ranks shared a host.
std::vector<Recommendation> RecommendationsAcrossRanks(const Document& doc);

// The texts alone, in order.
std::vector<std::string> RecommendationTexts(const std::vector<Recommendation>& recs);

// What the experiments' recommendations are written with.
// The median of an ok row's figure.
std::optional<double> MedianOf(const Row& r, FigureKey key);
std::optional<double> MedianOf(const Row* r, FigureKey key);  // null: none
// The median with its unit ("n/a" when there is none).
std::string ValueOf(const Row& r, FigureKey key, const std::string& unit);
// A value with its unit, also where FormatValue leaves a rate bare.
std::string WithUnit(double v, const std::string& unit);
// An integer parameter of the result (0 when absent).
int64_t ParamInt(const ExperimentResult& e, const std::string& key);
// A string parameter's value ("" when absent or not a string).
std::string ParamString(const ExperimentResult& e, const std::string& key);
// Under MPI: the aggregate of experiment `name` over exactly `ranks`
// measuring ranks (0: the most).
const ExperimentResult* Aggregate(const Document& doc, std::string_view name, int ranks);
// Under MPI: the best row of the all-ranks aggregate by key, set beside the
// same row on rank 0 alone: "WHAT across N clients: ... (2.1x rank 0
// alone, 70% of linear: it scales in part)".
Recommendation ScalingRecommendation(const Document& doc, std::string_view experiment,
                                     const char* what, FigureKey key, const std::string& unit);

}  // namespace writelab
