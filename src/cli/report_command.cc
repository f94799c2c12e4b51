// SPDX-License-Identifier: MIT
// `writelab report RESULT.json [MORE.json ...] -o report.html`: one
// self-contained HTML page with charts (docs/report.md).
#include <cstdio>

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/documents.h"
#include "command/errors.h"
#include "command/options.h"
#include "command/outputs.h"
#include "report/atomic_file.h"
#include "report/html.h"

namespace writelab {
namespace {

struct ReportOptions {
  std::vector<std::string> inputs;
  std::string output = "report.html";
};

int RunReport(const ReportOptions& o) {
  if (auto bad = CheckOutputFile("--output", o.output)) return UsageError(*bad);
  std::vector<Document> docs;
  for (const std::string& path : o.inputs) {
    auto doc = ReadDocumentFile(path);
    if (!doc) return UsageError(doc.error());
    docs.push_back(std::move(*doc));
  }
  std::string html = RenderHtml(docs, EmbeddedHtmlAssets(), Reports());
  if (Status s = WriteFileAtomically(o.output, html); !s) {
    PrintError(s.error().Message());
    return kExitRunFailed;
  }
  std::printf("report: %s\n", o.output.c_str());
  return kExitOk;
}

}  // namespace

void AddReportCommand(CLI::App& app, CommandAction* action) {
  auto o = std::make_shared<ReportOptions>();
  CLI::App* sub = app.add_subcommand(
      "report",
      "Turn result files (--json of any experiment) into one self-contained HTML page with "
      "charts and tables, which opens offline. See docs/report.md.");
  sub->add_option("results", o->inputs,
                  "Result files written with --json (- for standard input; each at most 1 GiB)")
      ->required()
      ->option_text("RESULT.json...");
  sub->add_option("-o,--output", o->output, "The HTML file to write")->capture_default_str();
  sub->callback(
      [o, action] { *action = [o](const RunContext&, Document&) { return RunReport(*o); }; });
}

}  // namespace writelab
