// SPDX-License-Identifier: MIT
// The survey's brief output: where the eye lands first, the findings (one
// line each, as a colleague would say them, with their numbers), then one
// line per step with its headline figure per row. Tables, legends and notes
// are in the verbose text, the JSON and the report.
#include <fmt/format.h>

#include <algorithm>

#include "core/wrap.h"
#include "report/text.h"

namespace writelab {
namespace {

// "vm, Linux 6.18.44 x86_64, 2 CPUs, 23.5 GiB memory": the host without
// its dirty-page knobs (the verbose text and the report have them).
std::string ShortHost(const Host& h) {
  return fmt::format("{}, Linux {} {}, {} CPUs, {} memory", h.hostname, h.kernel, h.machine, h.cpus,
                     FormatBytes(static_cast<double>(h.memory_bytes)));
}

// The figure a step's glance line shows: the one its rows are compared by,
// else its table's first.
std::string GlanceKey(const ExperimentResult& e) {
  if (!e.compare_figure.empty()) return e.compare_figure;
  return e.table.empty() ? "" : e.table.front();
}

// A value as its row's cell in the glance: without the unit where the line's
// header names it ("605" under "MB/s"), with it where the cells say it
// ("1.25 ms", "1.65 s").
std::string GlanceValue(const Figure& f, const std::string& header) {
  std::string text = FormatValue(f.value.median, f.unit);
  const std::string suffix = " " + f.unit;
  const bool header_says_it =
      header == f.unit || header.find("(" + f.unit + ")") != std::string::npos;
  if (!f.unit.empty() && header_says_it && text.ends_with(suffix))
    text.resize(text.size() - suffix.size());
  return text;
}

// "stream, streaming strategies, MB/s (median of 5 trials): plain 605, ...".
std::string GlanceLine(const ExperimentResult& e) {
  const std::string key = GlanceKey(e);
  const Figure* shape = nullptr;
  int trials = 0;
  for (const Row& r : e.rows)
    if (const Figure* f = r.FindFigure(key)) {
      shape = shape ? shape : f;
      trials = std::max(trials, f->value.n);
    }
  std::string line = "  " + e.name + (e.purpose.empty() ? "" : " (" + e.purpose + ")");
  if (!shape) return line + ": nothing measured";
  const std::string header = ColumnHeader(*shape);
  line += fmt::format(", {}{}:", header,
                      trials > 1 ? fmt::format(", median of {} trials", trials) : "");
  std::string cells;
  for (const Row& r : e.rows) {
    const Figure* f = r.status == RowStatus::kOk ? r.FindFigure(key) : nullptr;
    const std::string value = r.status != RowStatus::kOk ? std::string(RowStatusName(r.status))
                              : f                        ? GlanceValue(*f, header)
                                                         : std::string(kNotMeasured);
    cells += (cells.empty() ? " " : ", ") + r.name + " " + value;
  }
  return line + cells;
}

}  // namespace

// The findings first (what the survey was run for), then where it ran.
std::string RenderBrief(const Document& doc, std::size_t width) {
  std::string out;
  if (!doc.recommendations.empty()) {
    out += "Findings:\n";
    for (const Recommendation& r : doc.recommendations)
      out += WrapText("  " + r.Finding(), width) + "\n";
    out += "\n";
  }
  out += "host: " + ShortHost(doc.host) + "\n";
  std::vector<std::string> targets;
  for (const ExperimentResult& e : doc.experiments) {
    if (e.rank >= 0 || e.target.fs_type.empty()) continue;
    Target t = e.target;
    if (!e.purpose.empty() && !doc.experiments.empty())  // a step's own file: its directory's
      t.path = doc.experiments.front().target.path;
    if (std::string line = TargetLine(t);
        std::find(targets.begin(), targets.end(), line) == targets.end())
      targets.push_back(line);
  }
  for (const std::string& t : targets) out += WrapText("target: " + t, width) + "\n";
  out += WrapText(
             "\nEach step's headline figure per row (every table: --verbose, the JSON, the "
             "report):",
             width) +
         "\n";
  for (const ExperimentResult& e : doc.experiments)
    if (e.rank < 0 && !GlanceKey(e).empty()) out += WrapText(GlanceLine(e), width) + "\n";
  for (const std::string& err : doc.errors) out += WrapText("error: " + err, width) + "\n";
  return Printable(out, true);
}

}  // namespace writelab
