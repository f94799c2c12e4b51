// SPDX-License-Identifier: MIT
// What the report asks of the command that wrote a result, by the result's
// name: the labels of its figures, its headline rule and the picture of the
// original post. Each command's definition fills one (an experiment's
// ExperimentDef, a program command's ProgramDef: command/definition.h);
// the report is handed them all as a book (cli/commands.h), and so knows
// no command by name and is built and tested without any.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace writelab {

struct RunPlan;  // a run on the report page (report/html_plan.h)

// The figure a result is judged by (the report's summary, compare's
// headline), and whether less is better.
struct Headline {
  std::string key;
  bool lower_is_better = false;
};

struct ReportHooks {
  std::string_view name = {};                // the result's name: "stream"
  std::span<const FigureSpec> figures = {};  // its rows' figures, in table order
  // The headline figure of a result, by the command's own rule (fsync: p99
  // where every row has one, else the worst); null: the result's compare
  // figure.
  Headline (*headline)(const ExperimentResult& e) = nullptr;
  // The report's picture of the original post, drawn first in its section;
  // runs are this command's results on the page. Null: none.
  void (*picture)(const std::vector<const RunPlan*>& runs,
                  std::vector<nlohmann::json>& out) = nullptr;
};

// Every command's hooks, in the order the command line lists them.
class ReportBook {
 public:
  ReportBook() = default;
  explicit ReportBook(std::vector<const ReportHooks*> hooks) : hooks_(std::move(hooks)) {}
  // The hooks of the command that writes results named name; null for a
  // result this writelab does not know (a document from another version).
  const ReportHooks* Find(std::string_view name) const {
    for (const ReportHooks* h : hooks_)
      if (h->name == name) return h;
    return nullptr;
  }

 private:
  std::vector<const ReportHooks*> hooks_;
};

}  // namespace writelab
