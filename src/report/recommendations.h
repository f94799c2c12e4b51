// SPDX-License-Identifier: MIT
// What the survey's recommendations are written with: each backed by the
// numbers a result document holds (figures named by checked keys). Each
// experiment writes its own (ExperimentDef::recommend, in its folder); the
// survey gathers them (command/survey.h, Recommendations).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace writelab {

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
