// SPDX-License-Identifier: MIT
#include "report/compare.h"

#include <fmt/format.h>

#include <cmath>

#include "report/text.h"

namespace writelab {
namespace {

std::string Key(const ExperimentResult& e) {
  return e.name + (e.testbed.empty() ? "" : " on " + e.testbed) +
         (e.scheduler.empty() ? "" : " under " + e.scheduler);
}

const ExperimentResult* Find(const Document& d, const std::string& key) {
  for (const ExperimentResult& e : d.experiments)
    if (Key(e) == key) return &e;
  return nullptr;
}

const Row* FindRow(const ExperimentResult& e, const std::string& name) {
  for (const Row& r : e.rows)
    if (r.name == name) return &r;
  return nullptr;
}

std::string Value(const Figure& f) {
  std::string v = FormatValue(f.value.median, f.unit);
  if (f.value.ci95) v += " ±" + FormatValue((f.value.ci95->high - f.value.ci95->low) / 2, f.unit);
  return v;
}

void CompareRow(const Row& ra, const Row& rb, TextTable& table) {
  if (ra.status != RowStatus::kOk || rb.status != RowStatus::kOk) {
    table.AddRow({ra.name, std::string("A ") + RowStatusName(ra.status) + ", B " +
                               RowStatusName(rb.status)});
    return;
  }
  for (const Figure& fa : ra.figures) {
    const Figure* fb = rb.FindFigure(fa.key);
    if (!fb) continue;
    std::string label = fa.label.find(fa.unit) != std::string::npos || fa.unit.empty()
                            ? fa.label
                            : fa.label + " (" + fa.unit + ")";
    table.AddRow({ra.name, label, Value(fa), Value(*fb),
                  PercentChange(fa.value.median, fb->value.median),
                  VerdictText(CompareSummaries(fa.value, fb->value))});
  }
}

std::string CompareExperiment(const ExperimentResult& a, const ExperimentResult& b) {
  std::string out = Key(a) + "\n";
  out += "  A: " + a.target.path + " (" + a.target.fs_type + ")\n";
  out += "  B: " + b.target.path + " (" + b.target.fs_type + ")\n";
  TextTable table({a.row_label, "figure", "A", "B", "change", "difference"});
  std::vector<std::string> only;
  for (const Row& ra : a.rows) {
    if (const Row* rb = FindRow(b, ra.name))
      CompareRow(ra, *rb, table);
    else
      only.push_back("only in A: " + ra.name);
  }
  for (const Row& rb : b.rows)
    if (!FindRow(a, rb.name)) only.push_back("only in B: " + rb.name);
  out += table.Render();
  for (const std::string& line : only) out += line + "\n";
  return out;
}

}  // namespace

Verdict CompareSummaries(const Summary& a, const Summary& b) {
  if (a.n < 2 || b.n < 2 || !a.ci95 || !b.ci95) return Verdict::kCannotTell;
  bool apart = a.ci95->high < b.ci95->low || b.ci95->high < a.ci95->low;
  return apart ? Verdict::kSignificant : Verdict::kWithinNoise;
}

const char* VerdictText(Verdict v) {
  switch (v) {
    case Verdict::kSignificant:
      return "significant";
    case Verdict::kWithinNoise:
      return "within noise";
    case Verdict::kCannotTell:
      return "one trial: cannot tell";
  }
  return "";
}

std::string PercentChange(double a, double b) {
  if (a == 0 || !std::isfinite(a) || !std::isfinite(b)) return "-";
  return fmt::format("{:+.1f}%", (b - a) / std::fabs(a) * 100);
}

std::expected<std::string, std::string> CompareDocuments(const Document& a, const Document& b) {
  std::string out = "A: " + a.command_line + " (" + a.started_at + ", " + a.host.hostname + ")\n";
  out += "B: " + b.command_line + " (" + b.started_at + ", " + b.host.hostname + ")\n";
  out +=
      "Each figure: median ±half the 95% confidence interval of the mean; change is B "
      "against A; significant when the intervals do not overlap.\n";
  int matched = 0;
  for (const ExperimentResult& ea : a.experiments) {
    const ExperimentResult* eb = Find(b, Key(ea));
    if (!eb) {
      out += "\nonly in A: " + Key(ea) + "\n";
      continue;
    }
    out += "\n" + CompareExperiment(ea, *eb);
    ++matched;
  }
  for (const ExperimentResult& eb : b.experiments)
    if (!Find(a, Key(eb))) out += "\nonly in B: " + Key(eb) + "\n";
  if (matched == 0)
    return std::unexpected(
        "the files share no experiment (name, test bed and scheduler) to compare");
  return out;
}

}  // namespace writelab
