// SPDX-License-Identifier: MIT
// The top of the report page: what a reader wants first. The findings (a
// line each), the hosts, the survey's recommendations (each linking to the
// experiment it comes from), a table of each experiment's headline figure,
// and the contents.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "core/units.h"
#include "report/html.h"
#include "report/html_plan.h"

namespace writelab {
namespace {

// Under MPI: every rank's host, directory and clock against rank 0's.
std::string RanksHtml(const Document& doc) {
  if (doc.ranks.empty()) return "";
  std::string list;
  for (const RankInfo& r : doc.ranks)
    list += fmt::format("{}rank {}: {}, Linux {}, {} CPUs, {}, clock {:+.1f} us (+-{:.1f} us)",
                        list.empty() ? "" : "; ", r.rank, r.host.hostname, r.host.kernel,
                        r.host.cpus, r.dir, static_cast<double>(r.clock_offset_ns) / 1e3,
                        static_cast<double>(r.clock_rtt_ns) / 2e3);
  return HtmlItem("MPI", std::to_string(doc.ranks.size()) + " ranks, " + doc.mpi_library) +
         HtmlItem("ranks", list);
}

std::string HostHtml(const Document& doc, const std::string& label) {
  const Host& h = doc.host;
  std::string vm;
  for (const auto& [knob, value] : h.vm)
    vm += fmt::format("{}vm.{} {}", vm.empty() ? "" : ", ", knob, value);
  return "<dl>" + HtmlItem("run label", label) + HtmlItem("command", doc.command_line) +
         HtmlItem("writelab",
                  doc.writelab_version + ", schema " + std::to_string(doc.schema_version)) +
         HtmlItem("run", doc.started_at + " to " + doc.finished_at) + HtmlItem("host", h.hostname) +
         HtmlItem("kernel", h.kernel + " " + h.machine + " " + h.version) +
         HtmlItem("CPUs", std::to_string(h.cpus)) +
         HtmlItem("memory", FormatBytes(static_cast<double>(h.memory_bytes))) +
         HtmlItem("dirty pages", vm) + RanksHtml(doc) + "</dl>\n";
}

std::string RecommendationsHtml(const std::vector<Document>& docs,
                                const std::vector<GroupPlan>& groups) {
  std::string out;
  for (size_t d = 0; d < docs.size(); ++d) {
    for (const Recommendation& r : docs[d].recommendations) {
      const std::string& name = r.experiment;
      bool linked =
          !name.empty() && std::any_of(groups.begin(), groups.end(),
                                       [&](const GroupPlan& g) { return g.name == name; });
      std::string text = (docs.size() > 1 ? DocLabel(docs, d) + ": " : "") + r.text;
      out += "<li>" +
             (linked ? "<a href=\"#exp-" + EscapeHtml(name) + "\">" + EscapeHtml(text) + "</a>"
                     : EscapeHtml(text)) +
             "</li>\n";
    }
  }
  if (out.empty()) return "";
  return "<h2 id=\"recommendations\">Recommendations in detail</h2>\n<ol "
         "class=\"recommendations\">\n" +
         out + "</ol>\n";
}

// The figure an experiment is judged by (its definition's rule), and
// whether less is better; for one this writelab does not know, its compare
// figure or first table column.
Headline HeadlineOf(const ExperimentResult& e, const ReportHooks* hooks) {
  if (hooks && hooks->headline) return hooks->headline(e);
  std::string key = !e.compare_figure.empty() ? e.compare_figure
                    : e.table.empty()         ? ""
                                              : e.table.front();
  for (const Row& r : e.rows)
    if (const Figure* f = r.FindFigure(key))
      return {key, f->unit == "s" || f->unit == "ms" || f->unit == "ns"};
  return {key, false};
}

// A run's finding where no survey made one: its headline figure on its
// first row (the baseline: plain, none/fsync, the smallest step) against
// the rows furthest from it either way, each as a ratio of it.
std::string RunFinding(const RunPlan& p) {
  const ExperimentResult& e = *p.run;
  const Headline h = HeadlineOf(e, p.hooks);
  const Row* base = nullptr;
  const Row* best = nullptr;
  const Row* worst = nullptr;
  auto value = [&](const Row* r) { return r->FindFigure(h.key)->value.median; };
  for (const Row& r : e.rows) {
    const Figure* f = r.status == RowStatus::kOk ? r.FindFigure(h.key) : nullptr;
    if (!f || !std::isfinite(f->value.median)) continue;
    if (!base) {
      base = &r;
      continue;
    }
    auto better = [&](const Row* o) {
      return h.lower_is_better ? value(&r) < value(o) : value(&r) > value(o);
    };
    if (!best || better(best)) best = &r;
    if (!worst || !better(worst)) worst = &r;
  }
  if (!base) return "";
  const Figure& shape = *base->FindFigure(h.key);
  auto side = [&](const char* what, const Row* r) {
    const double ratio = value(base) != 0 ? value(r) / value(base) : 0;
    return fmt::format("{} {} {} ({})", what, r->name, FormatValue(value(r), shape.unit),
                       ratio > 0 ? FormatValue(ratio, "") + "x" : "—");
  };
  std::string line = fmt::format("{}, {}: {} {}", p.label, shape.label, base->name,
                                 FormatValue(value(base), shape.unit));
  if (best) line += "; " + side(h.lower_is_better ? "fastest" : "highest", best);
  if (worst && worst != best) line += ", " + side(h.lower_is_better ? "slowest" : "lowest", worst);
  return line;
}

// What a reader wants first, a line each: the survey's verdicts, else each
// run's headline against its first row; each links to its section.
std::string FindingsHtml(const std::vector<Document>& docs, const std::vector<GroupPlan>& groups) {
  std::string out;
  auto item = [](const std::string& anchor, const std::string& name, const std::string& text) {
    return "<li><a href=\"#" + EscapeHtml(anchor) + "\">" + EscapeHtml(name) +
           "</a>: " + EscapeHtml(text) + "</li>\n";
  };
  bool verdicts = false;
  for (size_t d = 0; d < docs.size(); ++d)
    for (const Recommendation& r : docs[d].recommendations) {
      verdicts = true;
      std::string text = r.Finding();
      if (docs.size() > 1) text = DocLabel(docs, d) + ": " + text;
      const bool linked = std::any_of(groups.begin(), groups.end(),
                                      [&](const GroupPlan& g) { return g.name == r.experiment; });
      out += linked ? item("exp-" + r.experiment, r.experiment, text)
                    : "<li>" + EscapeHtml(text) + "</li>\n";
    }
  for (const GroupPlan& g : groups)
    for (size_t i = 0; !verdicts && i < g.runs.size(); ++i)
      if (std::string line = RunFinding(g.runs[i]); !line.empty())
        out += item("run-" + g.name + "-" + std::to_string(i + 1), g.name, line);
  if (out.empty()) return "";
  return "<section class=\"findings\" id=\"findings\"><h2>Findings</h2>\n<ul>\n" + out +
         "</ul></section>\n";
}

std::string SummaryRow(const RunPlan& p, const std::string& anchor) {
  const ExperimentResult& e = *p.run;
  Headline h = HeadlineOf(e, p.hooks);
  const Row* best = nullptr;
  const Row* worst = nullptr;
  const Figure* shape = nullptr;
  int not_ok = 0;
  for (const Row& r : e.rows) {
    not_ok += r.status != RowStatus::kOk;
    const Figure* f = r.status == RowStatus::kOk ? r.FindFigure(h.key) : nullptr;
    if (!f || !std::isfinite(f->value.median)) continue;
    shape = f;
    auto better = [&](const Row* o) {
      double v = o->FindFigure(h.key)->value.median;
      return h.lower_is_better ? f->value.median < v : f->value.median > v;
    };
    if (!best || better(best)) best = &r;
    if (!worst || !better(worst)) worst = &r;
  }
  auto cell = [&](const Row* r) {
    return r ? EscapeHtml(r->name + ": " +
                          FormatValue(r->FindFigure(h.key)->value.median, shape->unit))
             : std::string("\u2014");
  };
  return fmt::format(
      "<tr><td><a href=\"#{}\">{}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{} of "
      "{}{}</td></tr>\n",
      anchor, EscapeHtml(e.name), EscapeHtml(p.label),
      shape ? EscapeHtml(shape->label + (h.lower_is_better ? " (lower is better)" : "")) : "",
      cell(best), cell(worst), e.rows.size() - static_cast<size_t>(not_ok), e.rows.size(),
      not_ok ? fmt::format(" ({} not measured)", not_ok) : "");
}

std::string SummaryHtml(const std::vector<GroupPlan>& groups) {
  std::string rows;
  for (const GroupPlan& g : groups)
    for (size_t i = 0; i < g.runs.size(); ++i)
      rows += SummaryRow(g.runs[i], "run-" + EscapeHtml(g.name) + "-" + std::to_string(i + 1));
  if (rows.empty()) return "";
  return "<h2 id=\"summary\">Summary</h2>\n<table class=\"summary\"><tr><th>experiment</th>"
         "<th>on</th><th>headline figure</th><th>best</th><th>worst</th><th>rows measured</th>"
         "</tr>\n" +
         rows + "</table>\n";
}

std::string ContentsHtml(const std::vector<GroupPlan>& groups) {
  std::string out = "<h2 id=\"contents\">Contents</h2>\n<ul class=\"contents\">\n";
  for (const GroupPlan& g : groups) {
    out += "<li><a href=\"#exp-" + EscapeHtml(g.name) + "\">" + EscapeHtml(g.name) + "</a>";
    if (g.runs.size() > 1) {
      out += "<ul>";
      for (size_t i = 0; i < g.runs.size(); ++i)
        out += "<li><a href=\"#run-" + EscapeHtml(g.name) + "-" + std::to_string(i + 1) + "\">" +
               EscapeHtml(g.runs[i].label) + "</a></li>";
      out += "</ul>";
    }
    out += "</li>\n";
  }
  return out + "</ul>\n";
}

std::string ComparisonRow(const FigureComparison& f) {
  std::string interval =
      f.change_low_pct ? fmt::format("{:+.1f}% to {:+.1f}%", *f.change_low_pct, *f.change_high_pct)
                       : "";
  return fmt::format(
      "<tr{}><td>{}</td><td>{}</td><td>{}{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
      "<td>{}</td><td>{}</td></tr>\n",
      f.verdict == Verdict::kSignificant ? " class=\"significant\"" : "", EscapeHtml(f.experiment),
      EscapeHtml(f.row), f.headline ? "* " : "", EscapeHtml(f.label),
      EscapeHtml(FormatValue(f.a, f.unit)), EscapeHtml(FormatValue(f.b, f.unit)),
      EscapeHtml(PercentChange(f.a, f.b)), interval, f.p ? fmt::format("{:.3g}", *f.p) : "\u2014",
      VerdictText(f.verdict));
}

}  // namespace

std::string ComparisonHtml(const Comparison& c) {
  std::string out = "<h2 id=\"comparison\">Comparison</h2>\n<dl>" + HtmlItem("A", c.label_a) +
                    HtmlItem("B", c.label_b) +
                    "</dl>\n<p>Change is B against A with its 95% interval (bootstrap of the "
                    "ratio of the medians); p from a two-sided Mann-Whitney U test on the trials. "
                    "Significant changes (p &lt; 0.05) come first and are starred on the charts; "
                    "* marks each experiment's headline figure.</p>\n"
                    "<table class=\"comparison\"><tr><th>experiment</th><th>row</th>"
                    "<th>figure</th><th>A</th><th>B</th><th>change</th><th>95% interval</th>"
                    "<th>p</th><th>verdict</th></tr>\n";
  for (bool significant : {true, false})
    for (const FigureComparison& f : c.figures)
      if ((f.verdict == Verdict::kSignificant) == significant) out += ComparisonRow(f);
  out += "</table>\n";
  for (const std::string& line : c.only) out += "<p>" + EscapeHtml(line) + "</p>\n";
  return out;
}

std::string DocLabel(const std::vector<Document>& docs, size_t d) {
  auto plain = [&](size_t i) {
    const Document& doc = docs[i];
    return doc.label.empty() ? doc.host.hostname + " " + doc.host.kernel : doc.label;
  };
  std::string label = plain(d);
  for (size_t i = 0; i < docs.size(); ++i)
    if (i != d && plain(i) == label) return label + " (file " + std::to_string(d + 1) + ")";
  return label;
}

std::string TopHtml(const std::vector<Document>& docs, const std::vector<GroupPlan>& groups) {
  std::string out = FindingsHtml(docs, groups);
  std::set<std::string> hosts;
  for (size_t d = 0; d < docs.size(); ++d) {
    std::string host = HostHtml(docs[d], docs.size() > 1 ? DocLabel(docs, d) : docs[d].label);
    if (hosts.insert(host).second) out += host;
    for (const std::string& err : docs[d].errors)
      out += "<p class=\"error\">error: " + EscapeHtml(err) + "</p>\n";
  }
  return out + RecommendationsHtml(docs, groups) + SummaryHtml(groups) + ContentsHtml(groups);
}

}  // namespace writelab
