// SPDX-License-Identifier: MIT
// The HTML report: one self-contained page (no network, can be mailed) with
// the host and target description, the tables of the text reporter, and
// charts drawn by Chart.js, which is inlined with the page's glue script.
//
// The renderer is generic over the result tree: every experiment gets its
// tables, a chart per series (per row when a series has several columns, and
// one comparing rows), a percentile plot per latency key, and a chart per
// table figure comparing rows across test beds and schedulers (a line with a
// log x axis when the rows are numbers, such as stride's steps; else bars).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "report/compare.h"
#include "report/hooks.h"

namespace writelab {

struct HtmlAssets {
  std::string_view chart_js;   // the charting library (Chart.js UMD build)
  std::string_view report_js;  // web/report.js: reads the chart specs, draws, self-checks
};

// The library and glue compiled into the binary (cmake/embed_file.cmake).
HtmlAssets EmbeddedHtmlAssets();

// The whole page for the given documents, in order. With a comparison (of
// docs[0] and docs[1], `compare -o`): its table on top, both runs in the same
// charts, and each significant change marked on the charts that draw it.
// book: the report's hooks of every command (report/hooks.h), for the
// pictures, headlines and figure labels of the results it knows.
std::string RenderHtml(const std::vector<Document>& docs, const HtmlAssets& assets,
                       const ReportBook& book, const Comparison* comparison = nullptr);

// A median and its range as a table cell shows them, the unit once where all
// three share it: "1390 (523–1578) MB/s", "812 us (640 us–1.20 ms)".
std::string RangeText(double median, double min, double max, const std::string& unit);

// The chart specifications the page draws, as a JSON array (see web/report.js
// for the fields). Exposed for tests: one entry per chart.
std::string ChartSpecsJson(const std::vector<Document>& docs, const ReportBook& book,
                           const Comparison* comparison = nullptr);

// Text for HTML element content and attribute values: & < > " ' escaped.
std::string EscapeHtml(std::string_view text);
// JSON placed inside <script>: "<", ">", "&" and U+2028/2029 as \u escapes so
// that no "</script>" or "<!--" can end or change the script element.
std::string JsonForScript(const std::string& json);

}  // namespace writelab
