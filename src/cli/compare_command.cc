// SPDX-License-Identifier: MIT
// `writelab compare A.json B.json`: the same experiments side by side, with
// the change in percent, its interval and whether it exceeds the trials'
// noise; optionally as JSON, and failing (exit 3) on a regression.
#include <cstdio>

#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <string>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/documents.h"
#include "command/errors.h"
#include "command/options.h"
#include "command/outputs.h"
#include "report/atomic_file.h"
#include "report/compare.h"
#include "report/html.h"

namespace writelab {
namespace {

struct CompareOptions {
  std::string a;
  std::string b;
  std::string json;
  std::string html;                          // -o
  std::optional<double> fail_on_regression;  // percent
  bool all = false;                          // every figure, not only headlines and changes
};

// Writes what was asked besides the text; false after printing why.
bool WriteComparison(const CompareOptions& o, const Comparison& c, const Document& a,
                     const Document& b) {
  Status s;
  if (o.json == "-")
    std::fputs(RenderComparisonJson(c).c_str(), stdout);
  else if (!o.json.empty())
    s = WriteFileAtomically(o.json, RenderComparisonJson(c));
  if (s && !o.html.empty())
    s = WriteFileAtomically(o.html, RenderHtml({a, b}, EmbeddedHtmlAssets(), Reports(), &c));
  if (!s) PrintError(s.error().Message());
  return s.has_value();
}

int RunCompare(const CompareOptions& o) {
  if (!o.json.empty() && o.json != "-")
    if (auto bad = CheckOutputFile("--json", o.json)) return UsageError(*bad);
  if (!o.html.empty())
    if (auto bad = CheckOutputFile("--output", o.html)) return UsageError(*bad);
  auto a = ReadDocumentFile(o.a);
  if (!a) return UsageError(a.error());
  auto b = ReadDocumentFile(o.b);
  if (!b) return UsageError(b.error());
  auto c = Compare(*a, *b);
  if (!c) return UsageError(o.a + " and " + o.b + ": " + c.error());
  FILE* text_to = o.json == "-" ? stderr : stdout;
  std::fputs(RenderComparisonText(*c, o.all).c_str(), text_to);
  if (!WriteComparison(o, *c, *a, *b)) return kExitRunFailed;
  if (!o.fail_on_regression) return kExitOk;
  auto worse = Regressions(*c, *o.fail_on_regression);
  for (const FigureComparison* f : worse)
    std::fprintf(stderr, "writelab: regression: %s: %s %s %s (p %.3g)\n", f->experiment.c_str(),
                 f->row.c_str(), f->label.c_str(), PercentChange(f->a, f->b).c_str(), *f->p);
  return worse.empty() ? kExitOk : kExitRegression;
}

}  // namespace

void AddCompareCommand(CLI::App& app, CommandAction* action) {
  auto o = std::make_shared<CompareOptions>();
  CLI::App* sub = app.add_subcommand(
      "compare",
      "Two result files side by side: change in percent per figure with its 95% interval, and "
      "whether it is significant (Mann-Whitney U over the trials). See docs/report.md.");
  sub->add_option("A", o->a, "The baseline result file (- for standard input; at most 1 GiB)")
      ->required()
      ->option_text("A.json");
  sub->add_option("B", o->b, "The result file compared with it (at most 1 GiB)")
      ->required()
      ->option_text("B.json");
  sub->add_option("--json", o->json, "Also write the comparison as JSON to FILE (- for stdout)")
      ->option_text("FILE");
  sub->add_option("-o,--output", o->html,
                  "Also write an HTML page of both runs in the same charts, significant changes "
                  "marked (one offline file)")
      ->option_text("FILE");
  sub->add_flag("--all", o->all,
                "Every figure that differs on some trial (default: each experiment's headline "
                "figure and every significant change; the JSON always has them all)");
  sub->add_option("--fail-on-regression", o->fail_on_regression,
                  "Exit 3 when a headline figure, or a latency's p99 or p99.9 (calls merged), "
                  "got significantly worse by more than PCT percent (for CI jobs watching a "
                  "kernel or configuration change)")
      ->option_text("PCT")
      ->check(CLI::NonNegativeNumber);
  sub->callback(
      [o, action] { *action = [o](const RunContext&, Document&) { return RunCompare(*o); }; });
}

}  // namespace writelab
