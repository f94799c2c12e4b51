// SPDX-License-Identifier: MIT
// Terminal tables from the result tree: one table per experiment shaped like
// the original post, every figure the median over trials with min-max beside
// it, unsupported rows saying why, and a legend of what each figure includes.
#pragma once

#include <string>
#include <vector>

#include "core/result.h"
#include "core/units.h"  // FormatValue

namespace writelab {

// A cell with no value: not measured, or a percentile finer than the
// samples support (the JSON says which).
inline constexpr const char* kNotMeasured = "\u2014";

std::string RenderText(const Document& doc);
std::string RenderExperimentText(const ExperimentResult& e);

// The survey's brief output (docs/survey.md): its findings first (each
// recommendation's verdict), then the host and target, then each step's
// headline figure per row on a line or two, wrapped to width; every table
// is in RenderText (`--verbose`), the JSON and the report.
std::string RenderBrief(const Document& doc, std::size_t width);

// A table column's header: the figure's label, and its unit where the cells
// do not print one ("journal commit (%)", "bytes (MB)").
std::string ColumnHeader(const Figure& f);

// "/data: ext4 from /dev/vda, device vda (model), scheduler mq-deadline, ...".
std::string TargetLine(const Target& t);

// Column-aligned plain-text table; the first column is left-aligned, the
// others right-aligned.
class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header) : header_(std::move(header)) {}
  // A cell is one line: a newline or other control character in it (a file
  // name can hold one) is shown as '?', so that no cell forges a row.
  void AddRow(std::vector<std::string> cells);
  std::string Render() const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace writelab
