// SPDX-License-Identifier: MIT
// The report page: static HTML for the descriptions and tables, a JSON block
// of chart specs, and the inlined Chart.js plus web/report.js that draw them.
#include "report/html.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "core/units.h"
#include "report/html_plan.h"
#include "report/text.h"
#include "writelab/error.h"

namespace writelab {

namespace embedded {
extern const char chart_js[];
extern const std::size_t chart_js_size;
extern const char report_js[];
extern const std::size_t report_js_size;
}  // namespace embedded

namespace {

constexpr const char* kStyle = R"(
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em auto; max-width: 1100px; color: #222; }
h1, h2, h3 { font-weight: 600; } h2 { border-bottom: 1px solid #ccc; margin-top: 2em; }
table { border-collapse: collapse; margin: .5em 0; }
th, td { padding: 2px 8px; border-bottom: 1px solid #e4e4e4; text-align: right; }
th:first-child, td:first-child { text-align: left; }
td.status { text-align: left; color: #a33; }
dl { display: grid; grid-template-columns: max-content auto; gap: 0 1em; }
dt { color: #666; } dd { margin: 0; }
pre { background: #f6f6f6; padding: .5em; overflow-x: auto; font-size: 12px; }
div.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(500px, 1fr)); gap: 1em; }
div.chart { position: relative; height: 300px; margin: .5em 0; }
figure { margin: 0; } figure.picture { grid-column: 1 / -1; }
figcaption { font-size: 12px; color: #555; }
details.more { margin: 1em 0; } details.more > summary { cursor: pointer; color: #555; }
figcaption.unsupported, td.unsupported { color: #a33; font-size: 12px; }
figcaption.changed { font-size: 12px; font-weight: 600; } tr.significant td { font-weight: 600; }
ol.recommendations li { margin: .3em 0; } ol.recommendations a { color: inherit; }
section.findings { border: 2px solid #2b6cb0; border-radius: 6px; padding: .2em 1em .6em;
  background: #f0f6ff; }
section.findings h2 { margin-top: .4em; } section.findings li { margin: .3em 0; }
.error { color: #a33; }
#writelab-check { display: none; }
)";

// Records script errors (and console.error) before anything else runs.
constexpr const char* kErrorTrap =
    "window.writelabErrors=[];"
    "window.addEventListener('error',function(e){writelabErrors.push(String(e.message||e))});"
    "(function(){var f=console.error;console.error=function(){"
    "writelabErrors.push(Array.prototype.join.call(arguments,' '));f.apply(console,arguments);};"
    "})();";

// A script's text inside <script>: "</script" (any case) cannot occur.
std::string ScriptText(std::string_view js) {
  std::string out(js);
  for (size_t at = 0; (at = out.find("</", at)) != std::string::npos; at += 3) {
    std::string next = out.substr(at + 2, 6);
    std::transform(next.begin(), next.end(), next.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    if (next == "script") out.replace(at, 2, "<\\/");
  }
  return out;
}

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::string Optional(const std::optional<uint64_t>& v) { return v ? std::to_string(*v) : ""; }

std::string TargetHtml(const ExperimentResult& e) {
  const Target& t = e.target;
  std::string rotational = t.rotational ? (*t.rotational ? "yes" : "no") : "";
  return "<dl>" + HtmlItem("path", t.path) + HtmlItem("file system", t.fs_type) +
         HtmlItem("mount point", t.mount_point) + HtmlItem("mounted from", t.mount_source) +
         HtmlItem("mount options", t.mount_options) + HtmlItem("device", t.device) +
         HtmlItem("found as", Join(t.stack)) + HtmlItem("model", t.model) +
         HtmlItem("scheduler", t.scheduler) + HtmlItem("schedulers offered", Join(t.schedulers)) +
         HtmlItem("rotational", rotational) +
         HtmlItem("logical block size", Optional(t.logical_block_size)) +
         HtmlItem("physical block size", Optional(t.physical_block_size)) +
         HtmlItem("max_sectors_kb", Optional(t.max_sectors_kb)) + "</dl>";
}

}  // namespace

std::string RangeText(double median, double min, double max, const std::string& unit) {
  const std::string m = FormatValue(median, unit), lo = FormatValue(min, unit),
                    hi = FormatValue(max, unit);
  const size_t space = m.rfind(' ');
  if (space != std::string::npos) {
    const std::string suffix = m.substr(space);
    if (lo.ends_with(suffix) && hi.ends_with(suffix))
      return m.substr(0, space) + " (" + lo.substr(0, lo.size() - suffix.size()) + "–" +
             hi.substr(0, hi.size() - suffix.size()) + ")" + suffix;
  }
  return m + " (" + lo + "–" + hi + ")";
}

namespace {

std::string HtmlCell(const Figure& f) {
  const Summary& s = f.value;
  if (s.n >= 2 && s.min != s.max) return EscapeHtml(RangeText(s.median, s.min, s.max, f.unit));
  return EscapeHtml(FormatValue(s.median, f.unit));
}

// The columns of the figure table: the table's figures that some row has
// (a column of dashes on every row says nothing), all of them when none has.
std::vector<std::string> TableColumns(const ExperimentResult& e) {
  std::vector<std::string> keys;
  for (const std::string& key : e.table)
    for (const Row& r : e.rows)
      if (r.FindFigure(key)) {
        keys.push_back(key);
        break;
      }
  return keys.empty() ? e.table : keys;
}

// Whether the label names the unit as a word of its own ("MB/s overall"
// does; "cost" does not name "s").
bool NamesUnit(const std::string& label, const std::string& unit) {
  for (size_t at = label.find(unit); at != std::string::npos; at = label.find(unit, at + 1)) {
    const size_t end = at + unit.size();
    const bool before = at == 0 || !std::isalnum(static_cast<unsigned char>(label[at - 1]));
    const bool after = end == label.size() || !std::isalnum(static_cast<unsigned char>(label[end]));
    if (before && after) return true;
  }
  return false;
}

// A column's header: the figure's label, with its unit where the label lacks it.
std::string HtmlColumnHeader(const ExperimentResult& e, const std::string& key,
                             const ReportHooks* hooks) {
  std::string label = key, unit;  // a figure no row has: its label from the definition
  if (hooks)
    for (const FigureSpec& s : hooks->figures)
      if (key == s.key) label = s.label, unit = s.unit;
  for (const Row& r : e.rows)
    if (const Figure* f = r.FindFigure(key)) label = f->label, unit = f->unit;
  if (unit.empty() || NamesUnit(label, unit)) return label;
  return label + " (" + unit + ")";
}

// The figure table of the text reporter as an HTML table.
std::string FigureTable(const ExperimentResult& e, const ReportHooks* hooks) {
  const std::vector<std::string> columns = TableColumns(e);
  std::string out = "<table><tr><th>" + EscapeHtml(e.row_label) + "</th>";
  for (const std::string& key : columns)
    out += "<th>" + EscapeHtml(HtmlColumnHeader(e, key, hooks)) + "</th>";
  out += "</tr>\n";
  for (const Row& r : e.rows) {
    out += "<tr><td>" + EscapeHtml(r.name) + "</td>";
    if (r.status != RowStatus::kOk) {
      std::string why = r.error_code ? ErrnoName(r.error_code) + ": " + r.message : r.message;
      out += fmt::format("<td class=\"status {}\" colspan=\"{}\">{}</td></tr>\n",
                         RowStatusName(r.status), columns.size(),
                         EscapeHtml(std::string(RowStatusName(r.status)) + ": " + why));
      continue;
    }
    for (const std::string& key : columns) {
      const Figure* f = r.FindFigure(key);
      out += "<td>" + (f ? HtmlCell(*f) : std::string(kNotMeasured)) + "</td>";
    }
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

}  // namespace

// The divs the charts are drawn in, in the order of ChartSpecsJson. A
// picture has an id (#picture-stride) and notes under it (rows not measured).
std::string ChartsHtml(const std::vector<nlohmann::json>& charts, int& next) {
  std::vector<const nlohmann::json*> all;
  for (const nlohmann::json& c : charts) all.push_back(&c);
  return ChartsHtml(all, next);
}

std::string ChartsHtml(const std::vector<const nlohmann::json*>& charts, int& next) {
  if (charts.empty()) return "";
  std::string out = "<div class=\"charts\">\n";
  for (const nlohmann::json* chart : charts) {
    const nlohmann::json& c = *chart;
    std::string id = c.value("picture", "");
    out += fmt::format("<figure{}><div class=\"chart\" data-chart=\"{}\"></div>",
                       id.empty() ? "" : " id=\"picture-" + EscapeHtml(id) + "\" class=\"picture\"",
                       next++);
    if (c.contains("caption"))
      out += "<figcaption>" + EscapeHtml(c["caption"].get<std::string>()) + "</figcaption>";
    for (const auto& note : c["notes"])
      out += "<figcaption class=\"unsupported\">" + EscapeHtml(note.get<std::string>()) +
             "</figcaption>";
    if (c.contains("changes"))
      for (const auto& change : c["changes"])
        out += "<figcaption class=\"changed\">" + EscapeHtml(change.get<std::string>()) +
               "</figcaption>";
    out += "</figure>\n";
  }
  return out + "</div>\n";
}

namespace {

std::string Charts(const std::vector<const nlohmann::json*>& charts, int& next) {
  return ChartsHtml(charts, next);
}

// The group's folded charts (and the charts not drawn at all) under one
// closed <details>: the page reads picture, table and CDF first.
std::string MoreCharts(const GroupPlan& g, int& next) {
  std::vector<const nlohmann::json*> folded = FoldedCharts(g);
  if (folded.empty() && g.gone.empty()) return "";
  std::vector<std::string> why;
  for (const nlohmann::json* c : folded) {
    std::string w = c->value("fold_why", "");
    if (!w.empty() && std::find(why.begin(), why.end(), w) == why.end()) why.push_back(w);
  }
  std::string out = "<details class=\"more\"><summary>" + std::to_string(folded.size()) +
                    " more charts of " + EscapeHtml(g.name) +
                    (why.empty() ? "" : ": " + EscapeHtml(ListInWords(why))) + "</summary>\n";
  if (!g.gone.empty()) {
    out += "<p>Not drawn, every line 0 throughout:</p><ul>";
    for (const std::string& line : g.gone) out += "<li>" + EscapeHtml(line) + "</li>";
    out += "</ul>\n";
  }
  return out + Charts(folded, next) + "</details>\n";
}

// A target is described in full once; later runs on the same one link to it.
std::string TargetOnce(const ExperimentResult& e, const std::string& anchor,
                       std::map<std::string, std::string>& seen) {
  std::string html = TargetHtml(e);
  auto [it, fresh] = seen.emplace(html, anchor);
  if (fresh) return html;
  return "<p>target: as <a href=\"#" + it->second + "\">above</a></p>\n";
}

std::string RunHtml(const RunPlan& p, const std::string& anchor, int& next,
                    std::map<std::string, std::string>& targets) {
  const ExperimentResult& e = *p.run;
  std::string out = "<h3 id=\"" + anchor + "\">" +
                    EscapeHtml(e.name + (e.purpose.empty() ? " on " : ": ") + p.label) + "</h3>\n";
  if (!e.testbed.empty() || !e.scheduler.empty())
    out += "<dl>" + HtmlItem("test bed", e.testbed) +
           HtmlItem("scheduler switched to", e.scheduler) + "</dl>\n";
  out += TargetOnce(e, anchor, targets);
  if (!e.table.empty()) out += FigureTable(e, p.hooks);
  out += "<details><summary>tables as in the terminal</summary><pre>" +
         EscapeHtml(RenderExperimentText(e)) + "</pre></details>\n";
  return out + Charts(OpenCharts(p.charts), next);
}

}  // namespace

std::string HtmlItem(const std::string& term, const std::string& value) {
  if (value.empty()) return "";
  return "<dt>" + EscapeHtml(term) + "</dt><dd>" + EscapeHtml(value) + "</dd>";
}

std::string EscapeHtml(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string JsonForScript(const std::string& json) {
  std::string out;
  out.reserve(json.size());
  for (size_t i = 0; i < json.size(); ++i) {
    char c = json[i];
    if (c == '<')
      out += "\\u003c";
    else if (c == '>')
      out += "\\u003e";
    else if (c == '&')
      out += "\\u0026";
    else if (json.compare(i, 3, "\xe2\x80\xa8") == 0)
      out += "\\u2028", i += 2;
    else if (json.compare(i, 3, "\xe2\x80\xa9") == 0)
      out += "\\u2029", i += 2;
    else
      out += c;
  }
  return out;
}

HtmlAssets EmbeddedHtmlAssets() {
  HtmlAssets a;
  a.chart_js = std::string_view(embedded::chart_js, embedded::chart_js_size);
  a.report_js = std::string_view(embedded::report_js, embedded::report_js_size);
  return a;
}

namespace {

std::string PageHead(const std::string& title) {
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
         "<title>" +
         EscapeHtml(title) + "</title>\n<style>" + std::string(kStyle) + "</style>\n<script>" +
         kErrorTrap + "</script>\n</head><body>\n<h1>" + EscapeHtml(title) + "</h1>\n";
}

// The chart specs, the library and the glue script that draws them.
std::string PageTail(const std::string& specs_json, const HtmlAssets& assets) {
  std::string out =
      "<pre id=\"writelab-check\"></pre>\n<script id=\"writelab-charts\" "
      "type=\"application/json\">" +
      JsonForScript(specs_json) + "</script>\n";
  out += "<script>" + ScriptText(assets.chart_js) + "</script>\n";
  return out + "<script>" + ScriptText(assets.report_js) + "</script>\n</body></html>\n";
}

}  // namespace

std::string RenderChartsPage(const std::string& title, const std::string& intro,
                             const std::vector<nlohmann::json>& charts, const std::string& outro,
                             const HtmlAssets& assets) {
  int next = 0;
  std::string out = PageHead(title) + intro + ChartsHtml(charts, next) + outro;
  nlohmann::json all = nlohmann::json::array();
  for (const nlohmann::json& c : charts) all.push_back(c);
  return out + PageTail(all.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace), assets);
}

std::string RenderHtml(const std::vector<Document>& docs, const HtmlAssets& assets,
                       const ReportBook& book, const Comparison* comparison) {
  std::string out = PageHead("writelab report");
  std::vector<GroupPlan> groups = PlanReport(docs, book, comparison);
  if (comparison) out += ComparisonHtml(*comparison);
  out += TopHtml(docs, groups);
  int next = 0;
  std::map<std::string, std::string> targets;
  for (const GroupPlan& g : groups) {
    const ExperimentResult& first = *g.runs.front().run;
    out += "<section id=\"exp-" + EscapeHtml(g.name) + "\">\n<h2>" + EscapeHtml(g.name) +
           "</h2>\n<p>reproduces " + EscapeHtml(first.reproduces) + "</p>\n";
    out += Charts(OpenCharts(g.pictures), next);
    out += Charts(OpenCharts(g.charts), next);
    for (size_t i = 0; i < g.runs.size(); ++i)
      out += RunHtml(g.runs[i], "run-" + EscapeHtml(g.name) + "-" + std::to_string(i + 1), next,
                     targets);
    out += MoreCharts(g, next) + "</section>\n";
  }
  return out + PageTail(ChartSpecsJson(groups), assets);
}

}  // namespace writelab
