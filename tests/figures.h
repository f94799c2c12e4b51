// SPDX-License-Identifier: MIT
// A result row's figures, read from a document's JSON (docs/results.md).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace writelab::testing {

// key -> the figure's median.
inline std::map<std::string, double> Figures(const nlohmann::json& row) {
  std::map<std::string, double> f;
  for (const nlohmann::json& fig : row["figures"]) f[fig["key"]] = fig["value"]["median"];
  return f;
}

// key -> the whole figure object (label, unit, includes, value).
inline std::map<std::string, nlohmann::json> FigureObjects(const nlohmann::json& row) {
  std::map<std::string, nlohmann::json> f;
  for (const nlohmann::json& x : row["figures"]) f[x["key"]] = x;
  return f;
}

}  // namespace writelab::testing
