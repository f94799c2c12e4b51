// SPDX-License-Identifier: MIT
#include "report/recommendations.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/units.h"

namespace writelab {

std::optional<double> MedianOf(const Row& r, FigureKey key) {
  if (r.status != RowStatus::kOk) return std::nullopt;
  const Figure* f = r.FindFigure(key.name);
  return f ? std::optional<double>(f->value.median) : std::nullopt;
}

std::optional<double> MedianOf(const Row* r, FigureKey key) {
  return r ? MedianOf(*r, key) : std::nullopt;
}

std::string ValueOf(const Row& r, FigureKey key, const std::string& unit) {
  auto v = MedianOf(r, key);
  return v ? FormatValue(*v, unit) : "n/a";
}

std::string WithUnit(double v, const std::string& unit) {
  std::string text = FormatValue(v, unit);
  return text.find(unit) == std::string::npos ? text + " " + unit : text;
}

int64_t ParamInt(const ExperimentResult& e, const std::string& key) {
  for (const Param& p : e.params)
    if (p.key == key && std::holds_alternative<int64_t>(p.value)) return std::get<int64_t>(p.value);
  return 0;
}

std::string ParamString(const ExperimentResult& e, const std::string& key) {
  for (const Param& p : e.params)
    if (p.key == key && std::holds_alternative<std::string>(p.value))
      return std::get<std::string>(p.value);
  return "";
}

std::vector<std::string> RecommendationTexts(const std::vector<Recommendation>& recs) {
  std::vector<std::string> out;
  for (const Recommendation& r : recs) out.push_back(r.text);
  return out;
}

}  // namespace writelab
