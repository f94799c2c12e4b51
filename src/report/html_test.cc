// SPDX-License-Identifier: MIT
// The HTML renderer on fixed documents: a chart per series, latency and
// table figure, escaping of hostile names, and the page's structure. The
// browser draws the charts in tests/report_test.cc.
#include "report/html.h"

#include "cli/commands.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "fixture.h"

namespace writelab {
namespace {

using nlohmann::json;

const HtmlAssets kStubAssets = {"/*chart.js stub*/", "/*report.js stub*/"};

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = 0; (at = text.find(what, at)) != std::string::npos; at += what.size()) ++n;
  return n;
}

// The chart specs embedded in the page.
json SpecsOf(const std::string& page) {
  std::string open = "<script id=\"writelab-charts\" type=\"application/json\">";
  size_t begin = page.find(open) + open.size();
  return json::parse(page.substr(begin, page.find("</script>", begin) - begin));
}

// An experiment the report knows nothing about: two rows, a two-column series
// and a three-column one with two units, one latency key, two table figures.
ExperimentResult Unknown(const std::string& row_prefix) {
  ExperimentResult e;
  e.name = "novel";
  e.reproduces = "nothing yet";
  e.row_label = "mode";
  e.table = {"ops", "cost"};
  for (int i = 0; i < 2; ++i) {
    Row r;
    r.name = row_prefix + std::to_string(i);
    r.figures = {{"ops", "ops/s", "ops/s", "all", Summarize({1.0 + i, 2.0 + i})},
                 {"cost", "cost", "s", "all", Summarize({0.5})}};
    Series a{"curve", 0, 1, {{"t", "s"}, {"speed", "MB/s"}}, {}};
    Series b{"mix", 0, 1, {{"t", "s"}, {"speed", "MB/s"}, {"dirty", "bytes"}}, {}};
    for (int t = 0; t < 6; ++t) {
      a.points.push_back({1.0 * t, 1.0 + t});
      b.points.push_back({1.0 * t, 1.0 + t, 3e9});  // bytes: drawn in GiB
    }
    Series few{"short", 0, 1, {{"t", "s"}, {"speed", "MB/s"}}, {{0, 1}, {1, 2}}};
    r.series = {a, b, few};
    Histogram h;
    for (int k = 1; k <= 10; ++k) h.Record(100000u * k);
    r.latencies.push_back(Latency::From(h, "op", "one op", "all"));
    e.rows.push_back(r);
  }
  return e;
}

// Issue 45: a range's unit once, not three times.
TEST(Html, ARangeSaysItsUnitOnce) {
  EXPECT_EQ(RangeText(1390, 523, 1578, "MB/s"), "1390 (523–1578) MB/s");
  EXPECT_EQ(RangeText(0.812, 0.64, 1.2, "ms"), "812 us (640 us–1.20 ms)");
  EXPECT_EQ(RangeText(12, 10, 14, "writes"), "12 (10–14)");
  EXPECT_EQ(RangeText(3 << 20, 2 << 20, 4 << 20, "bytes"), "3.00 (2.00–4.00) MiB");
}

// Issue 45: a column no row has is left out of the table.
TEST(Html, AColumnEmptyOnEveryRowIsLeftOut) {
  Document doc;
  doc.experiments.push_back(Unknown("m"));
  doc.experiments[0].table = {"ops", "never", "cost"};
  const std::string page = RenderHtml({doc}, kStubAssets, Reports());
  EXPECT_NE(page.find("<th>mode</th><th>ops/s</th><th>cost (s)</th></tr>"), std::string::npos);
  EXPECT_EQ(page.find("<th>never"), std::string::npos);
}

TEST(Html, UnknownExperimentGetsTablesAndEveryChart) {
  Document doc;
  doc.experiments.push_back(Unknown("m"));
  json specs = json::parse(ChartSpecsJson({doc}, Reports()));
  // In page order: the latency CDF (open), then folded under "more charts":
  // 2 table figures (bars: one run, so the table has their numbers), curve:
  // 1 overlay, mix: 1 overlay + 1 per row (rows of 6 samples: no shape);
  // "short" (2 points a row) is not drawn.
  ASSERT_EQ(specs.size(), 7u);
  for (size_t i = 0; i < specs.size(); ++i) {
    EXPECT_EQ(specs[i].value("fold", false), i > 0) << i << ": " << specs[i]["title"];
    EXPECT_FALSE(specs[i].value("caption", "").empty()) << specs[i]["title"];
  }
  EXPECT_EQ(specs[1]["kind"], "bar");
  EXPECT_EQ(specs[1]["labels"], json({"m0", "m1"}));
  EXPECT_EQ(specs[1]["datasets"][0]["data"], json({1.5, 2.5}));  // medians
  EXPECT_EQ(specs[1]["datasets"][0]["lo"], json({1.0, 2.0}));    // min-max whiskers
  EXPECT_EQ(specs[1]["datasets"][0]["hi"], json({2.0, 3.0}));
  EXPECT_EQ(specs[2]["y"][0]["title"], "ms");  // 0.5 s drawn in ms
  EXPECT_EQ(specs[2]["datasets"][0]["data"], json({500.0, 500.0}));
  EXPECT_EQ(specs[3]["datasets"].size(), 2u);  // a line per row
  EXPECT_EQ(specs[5]["y"].size(), 2u);         // MB/s and bytes axes
  EXPECT_EQ(specs[5]["y"][1]["title"], "GiB");
  EXPECT_NEAR(specs[5]["datasets"][1]["data"][0][1].get<double>(), 3e9 / (1 << 30), 1e-9);
  EXPECT_EQ(specs[5]["datasets"][1]["label"], "Dirty (page cache)") << "a label, not the key";
  for (const json& c : specs)
    EXPECT_EQ(c["title"].get<std::string>().find("short"), std::string::npos);
  const json& cdf = specs[0];
  EXPECT_EQ(cdf["x"]["type"], "logarithmic");
  EXPECT_EQ(cdf["x"]["title"], "latency (ms)");
  EXPECT_EQ(cdf["datasets"][0]["data"].back()[1], 100.0);  // every sample at or below the last
  EXPECT_EQ(cdf["datasets"].back()["marks"], true);        // p50 of each row; p99 needs 100
  std::string page = RenderHtml({doc}, kStubAssets, Reports());
  EXPECT_EQ(Count(page, "data-chart=\""), 7);
  EXPECT_NE(page.find("<th>ops/s</th><th>cost (s)</th>"), std::string::npos) << "units in headers";
  EXPECT_NE(page.find("tables as in the terminal"), std::string::npos);
  // One closed "more charts" holding the six folded ones, after the open one.
  const size_t more = page.find("<details class=\"more\"><summary>6 more charts of novel");
  ASSERT_NE(more, std::string::npos);
  EXPECT_LT(page.find("data-chart=\"0\""), more);
  EXPECT_GT(page.find("data-chart=\"1\""), more);
  EXPECT_EQ(Count(page, "<details class=\"more\""), 1);
}

// A row long enough to have a shape (1 s, 20 samples) keeps its timeline
// open; a series 0 throughout is left out and the caption says so; a chart
// of nothing but zeros is not drawn and the page says so.
TEST(Html, LongRowsStayOpenAndZeroSeriesAreNotDrawn) {
  ExperimentResult e;
  e.name = "novel";
  e.row_label = "mode";
  Row r;
  r.name = "long";
  Series s{"timeline",
           0,
           0.1,
           {{"t", "s"},
            {"throughput", "MB/s"},
            {"written", "bytes"},
            {"device_write_merges", "merges"},
            {"device_in_flight", "requests"}},
           {}};
  for (int t = 1; t <= 30; ++t) s.points.push_back({0.1 * t, 100.0 + t, 1e6 * t, 0, 0});
  r.series = {s};
  e.rows = {r};
  Document doc;
  doc.experiments.push_back(e);
  json specs = json::parse(ChartSpecsJson({doc}, Reports()));
  ASSERT_EQ(specs.size(), 1u) << specs.dump();
  EXPECT_FALSE(specs[0].value("fold", true)) << "3 s, 30 samples: a shape";
  ASSERT_EQ(specs[0]["datasets"].size(), 2u);
  EXPECT_EQ(specs[0]["datasets"][0]["label"], "writer throughput");
  std::string page = RenderHtml({doc}, kStubAssets, Reports());
  EXPECT_NE(page.find("device write merges, device requests in flight 0 throughout"),
            std::string::npos)
      << "the chart of zeros is named in the more charts";
  for (const json& d : specs[0]["datasets"])
    EXPECT_EQ(d["label"].get<std::string>().find('_'), std::string::npos);
  // A zero series beside others: left out of its chart, named in the caption.
  e.rows[0].series[0].columns[3] = {"device_writes", "MB/s"};
  doc.experiments[0] = e;
  specs = json::parse(ChartSpecsJson({doc}, Reports()));
  ASSERT_EQ(specs.size(), 1u);
  EXPECT_EQ(specs[0]["datasets"].size(), 2u) << "device writes, 0 throughout, is not drawn";
  EXPECT_NE(specs[0]["caption"].get<std::string>().find("Not drawn, 0 throughout: device "
                                                        "writes completed."),
            std::string::npos)
      << specs[0]["caption"];
}

// Several test beds: the figure charts compare what no one table holds,
// and stay open.
TEST(Html, FigureChartsComparingTestBedsStayOpen) {
  Document doc;
  for (const char* bed : {"ext4", "xfs"}) {
    doc.experiments.push_back(Unknown("m"));
    doc.experiments.back().testbed = bed;
  }
  json specs = json::parse(ChartSpecsJson({doc}, Reports()));
  int open_bars = 0;
  for (const json& c : specs) open_bars += c["kind"] == "bar" && !c.value("fold", false);
  EXPECT_EQ(open_bars, 2);
}

TEST(Html, FixedDocumentHasAChartPerSeriesAndLatency) {
  Document doc = FixedDocument();
  json specs = json::parse(ChartSpecsJson({doc}, Reports()));
  int series = 0, latencies = 0, figures = 0, pictures = 0;
  for (const json& c : specs) {
    std::string title = c["title"];
    if (c.contains("picture"))
      ++pictures;
    else if (title.find(" latency: ") != std::string::npos)
      ++latencies;
    else if (c["x"]["type"] == "linear")
      ++series;
    else
      ++figures;
  }
  // stream's trade-off picture draws all three table figures, a chart per
  // unit (MB/s, bytes, ms): never two units on one chart.
  EXPECT_EQ(pictures, 3);
  EXPECT_EQ(figures, 0);
  EXPECT_GE(series, 1);
  EXPECT_EQ(latencies, 1);
  std::string page = RenderHtml({doc}, kStubAssets, Reports());
  EXPECT_EQ(Count(page, "data-chart=\""), static_cast<int>(specs.size()));
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(page.find("/*chart.js stub*/"), std::string::npos);
  EXPECT_NE(page.find("/*report.js stub*/"), std::string::npos);
  EXPECT_NE(page.find("mq-deadline"), std::string::npos);  // target description
  EXPECT_EQ(page.find("http://"), std::string::npos);      // nothing fetched
  EXPECT_EQ(page.find("https://"), std::string::npos);
}

TEST(Html, StepsAreALineOverALogAxisPerScheduler) {
  Document doc;
  for (const char* sched : {"none", "bfq"}) {
    ExperimentResult e;
    e.name = "stride";
    e.scheduler = sched;
    e.row_label = "step";
    e.table = {"mb_s"};
    for (int step : {1, 8, 512}) {
      Row r;
      r.name = std::to_string(step);
      r.figures = {{"mb_s", "SPEED (MB/s)", "MB/s", "all", Summarize({100.0 / step})}};
      e.rows.push_back(r);
    }
    doc.experiments.push_back(e);
  }
  json specs = json::parse(ChartSpecsJson({doc}, Reports()));
  ASSERT_EQ(specs.size(), 1u);  // the picture; the figure chart would repeat it
  EXPECT_EQ(specs[0]["picture"], "stride");
  EXPECT_EQ(specs[0]["kind"], "line");
  EXPECT_EQ(specs[0]["x"]["type"], "logarithmic");
  ASSERT_EQ(specs[0]["datasets"].size(), 2u);
  EXPECT_EQ(specs[0]["datasets"][1]["label"], "/bfq qd1");
  EXPECT_EQ(specs[0]["datasets"][0]["data"][2], json({512.0, 100.0 / 512}));
}

// Steps run in any order; Chart.js takes points as sorted by x. With fewer
// than 5 steps the line becomes bars, one per step.
TEST(Html, StepsAreSortedAndFewStepsAreBars) {
  for (std::vector<int> steps :
       {std::vector<int>{16, 1, 8}, std::vector<int>{64, 2, 1, 8, 4, 16}}) {
    Document doc;
    ExperimentResult e;
    e.name = "stride";
    e.table = {"mb_s"};
    for (int step : steps) {
      Row r;
      r.name = std::to_string(step);
      r.figures = {{"mb_s", "SPEED (MB/s)", "MB/s", "all", Summarize({1.0 * step, 2.0 * step})}};
      e.rows.push_back(r);
    }
    doc.experiments.push_back(e);
    json specs = json::parse(ChartSpecsJson({doc}, Reports()));
    ASSERT_EQ(specs.size(), 1u);
    const json& c = specs[0];
    if (steps.size() < 5) {
      EXPECT_EQ(c["kind"], "bar");
      EXPECT_EQ(c["labels"], json({"1", "8", "16"}));
      EXPECT_EQ(c["datasets"][0]["data"], json({1.5, 12.0, 24.0}));
      EXPECT_EQ(c["datasets"][0]["hi"], json({2.0, 16.0, 32.0}));
      continue;
    }
    EXPECT_EQ(c["kind"], "line");
    double last = 0;
    for (const json& p : c["datasets"][0]["data"]) {
      EXPECT_GT(p[0].get<double>(), last);
      last = p[0].get<double>();
    }
    EXPECT_EQ(c["datasets"][0]["lo"][0], 1.0) << "whiskers follow their points";
  }
}

// Row names come from result files: one that strtod reads as infinity or
// underflows made std::stod throw out of `writelab report`.
TEST(Html, RowNamesThatAreNotFiniteNumbersMakeBars) {
  for (const char* odd : {"1e999", "1e-400", "nan", "inf", " 5", "0x10"}) {
    Document doc;
    ExperimentResult e;
    e.name = "stride";
    e.table = {"mb_s"};
    for (std::string name : {std::string("1"), std::string(odd)}) {
      Row r;
      r.name = name;
      r.figures = {{"mb_s", "SPEED (MB/s)", "MB/s", "all", Summarize({1.0})}};
      e.rows.push_back(r);
    }
    doc.experiments.push_back(e);
    json specs = json::parse(ChartSpecsJson({doc}, Reports()));
    ASSERT_EQ(specs.size(), 1u) << odd;
    EXPECT_EQ(specs[0]["kind"], "bar") << odd;
  }
}

TEST(Html, ExplainedRowsGetAStackedBarOfWhereTheTimeWent) {
  Document doc;
  ExperimentResult e;
  e.name = "prealloc";
  e.row_label = "mode";
  const double shares[2][7] = {{5, 1, 90, 3, 0, 0, 1}, {10, 0, 0, 57, 21, 0, 12}};
  const char* keys[] = {"x_cpu_pct",   "x_runq_pct",       "x_journal_pct", "x_writeback_pct",
                        "x_flush_pct", "x_dirty_wait_pct", "x_other_pct"};
  for (int i = 0; i < 2; ++i) {
    Row r;
    r.name = i == 0 ? "fallocate" : "zero-fill";
    for (int k = 0; k < 7; ++k)
      r.figures.push_back({keys[k], keys[k], "%", "share", Summarize({shares[i][k]})});
    e.rows.push_back(r);
  }
  Row unexplained;
  unexplained.name = "sparse";
  e.rows.push_back(unexplained);
  doc.experiments.push_back(e);
  json specs = json::parse(ChartSpecsJson({doc}, Reports()));
  ASSERT_EQ(specs.size(), 1u);
  const json& c = specs[0];
  EXPECT_EQ(c["kind"], "bar");
  EXPECT_EQ(c["stacked"], true);
  EXPECT_EQ(c["labels"], json({"fallocate", "zero-fill"})) << "only rows with attribution";
  ASSERT_EQ(c["datasets"].size(), 6u) << "dirty throttling, 0 throughout, is left out";
  EXPECT_EQ(c["datasets"][2]["label"], "journal commit");
  EXPECT_EQ(c["datasets"][2]["data"], json({90.0, 0.0}));
  EXPECT_EQ(c["datasets"][5]["label"], "other sleep");
  EXPECT_EQ(c["datasets"][5]["data"], json({1.0, 12.0}));
}

// Without a survey's verdicts, each run's finding: its headline on its first
// row, then the rows furthest from it either way, as ratios of it.
TEST(Html, FindingsWithoutASurveyCompareEachRunWithItsFirstRow) {
  Document doc = FixedDocument();
  Row window = doc.experiments[0].rows[0], direct = window;
  window.name = "window-drop";
  window.figures[0].value = Summarize({1942});
  direct.name = "direct";
  direct.figures[0].value = Summarize({247});
  doc.experiments[0].rows.push_back(window);
  doc.experiments[0].rows.push_back(direct);
  std::string page = RenderHtml({doc}, kStubAssets, Reports());
  EXPECT_NE(page.find("<li><a href=\"#run-stream-1\">stream</a>: /mnt/t, MB/s: plain 494 MB/s; "
                      "highest window-drop 1942 MB/s (3.93x), lowest direct 247 MB/s (0.5x)</li>"),
            std::string::npos)
      << page.substr(page.find("id=\"findings\""), 600);
}

// What a reader wants first: recommendations linking to their experiment,
// the headline figures, the contents; then each target described once.
TEST(Html, TopHasRecommendationsSummaryAndContents) {
  Document doc = FixedDocument();
  doc.recommendations = {
      {"stream", {"mb_s"}, "streaming: prefer window-drop", "streaming: use window-drop: 2 GB/s"},
      {"fsync", {}, "fsync: not run", ""}};
  doc.experiments.push_back(doc.experiments[0]);  // the same target again
  doc.experiments[1].scheduler = "bfq";
  std::string page = RenderHtml({doc}, kStubAssets, Reports());
  size_t recs = page.find("id=\"recommendations\"");
  ASSERT_NE(recs, std::string::npos);
  EXPECT_LT(recs, page.find("data-chart="));
  EXPECT_LT(recs, page.find("id=\"summary\""));
  EXPECT_LT(page.find("id=\"summary\""), page.find("id=\"contents\""));
  EXPECT_NE(page.find("<a href=\"#exp-stream\">streaming: prefer window-drop</a>"),
            std::string::npos);
  EXPECT_NE(page.find("<li>fsync: not run</li>"), std::string::npos) << "no fsync section to link";
  // Findings first, the verdict (or the text where there is none), linked.
  const size_t findings = page.find("<section class=\"findings\" id=\"findings\">");
  ASSERT_NE(findings, std::string::npos);
  EXPECT_LT(findings, page.find("<h2"));
  EXPECT_LT(findings, page.find("<dl>"));
  EXPECT_NE(page.find("<li><a href=\"#exp-stream\">stream</a>: streaming: use window-drop: 2 GB/s"),
            std::string::npos);
  EXPECT_EQ(Count(page, "<li>fsync: not run</li>"), 2) << "in the findings and the details";
  EXPECT_NE(page.find("<section id=\"exp-stream\">"), std::string::npos);
  // Summary: plain is both best and worst (dontcache was not measured).
  EXPECT_NE(
      page.find("<td>plain: 494 MB/s</td><td>plain: 494 MB/s</td><td>1 of 2 (1 not measured)"),
      std::string::npos);
  EXPECT_EQ(Count(page, "<dt>mounted from</dt>"), 1) << "the target is described once";
  EXPECT_NE(page.find("target: as <a href=\"#run-stream-1\">"), std::string::npos);
  // The unsupported row: in the table with its errno, under the picture.
  EXPECT_NE(page.find("class=\"status unsupported\""), std::string::npos);
  EXPECT_NE(page.find("EOPNOTSUPP: pwritev2 RWF_DONTCACHE"), std::string::npos);
  EXPECT_NE(page.find("<figcaption class=\"unsupported\">dontcache: unsupported (EOPNOTSUPP"),
            std::string::npos);
  json specs = SpecsOf(page);
  EXPECT_EQ(specs[0]["labels"][1], "dontcache (unsupported)");
}

TEST(Html, HostileNamesAreEscaped) {
  Document doc;
  doc.command_line = "writelab <b>x</b>";
  doc.experiments.push_back(Unknown("</script><script>alert(1)</script>&'\""));
  doc.experiments[0].notes.push_back("<!-- note");
  std::string page = RenderHtml({doc}, kStubAssets, Reports());
  EXPECT_EQ(page.find("alert(1)</script>"), std::string::npos);
  EXPECT_EQ(page.find("<b>"), std::string::npos);
  EXPECT_EQ(page.find("<!--"), std::string::npos);
  EXPECT_NE(page.find("&lt;/script&gt;&lt;script&gt;alert(1)"), std::string::npos);
  EXPECT_NE(page.find("\\u003c/script\\u003e"), std::string::npos);  // in the chart JSON
  // The JSON still parses back to the original names.
  json bars;
  for (const json& c : SpecsOf(page))
    if (c["kind"] == "bar" && bars.is_null()) bars = c;
  EXPECT_EQ(bars["labels"][0], "</script><script>alert(1)</script>&'\"0");
}

TEST(Html, EscapingHelpers) {
  EXPECT_EQ(EscapeHtml("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  EXPECT_EQ(JsonForScript("\"</script>&\xe2\x80\xa8\""), "\"\\u003c/script\\u003e\\u0026\\u2028\"");
}

TEST(Html, ScriptAssetsCannotCloseTheirElement) {
  HtmlAssets assets = {"var s = '</SCRIPT>';", ""};
  std::string page = RenderHtml({FixedDocument()}, assets, Reports());
  EXPECT_NE(page.find("var s = '<\\/SCRIPT>';"), std::string::npos);
}

TEST(Html, EmbeddedAssetsAreChartJsAndTheGlue) {
  HtmlAssets a = EmbeddedHtmlAssets();
  EXPECT_NE(a.chart_js.find("Chart.js v4"), std::string_view::npos);
  EXPECT_NE(a.report_js.find("writelab-check"), std::string_view::npos);
}

}  // namespace
}  // namespace writelab
