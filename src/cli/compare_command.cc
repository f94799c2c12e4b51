// SPDX-License-Identifier: MIT
// `writelab compare A.json B.json`: the same experiments side by side, with
// the change in percent and whether it exceeds the trials' noise.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/cli.h"
#include "cli/documents.h"
#include "report/compare.h"

namespace writelab {
namespace {

struct CompareOptions {
  std::string a;
  std::string b;
};

int RunCompare(const CompareOptions& o) {
  auto a = ReadDocumentFile(o.a);
  if (!a) return UsageError(a.error());
  auto b = ReadDocumentFile(o.b);
  if (!b) return UsageError(b.error());
  auto text = CompareDocuments(*a, *b);
  if (!text) return UsageError(o.a + " and " + o.b + ": " + text.error());
  std::fputs(text->c_str(), stdout);
  return kExitOk;
}

}  // namespace

void AddCompareCommand(CLI::App& app, CommandAction* action) {
  auto o = std::make_shared<CompareOptions>();
  CLI::App* sub = app.add_subcommand(
      "compare",
      "Two result files side by side: change in percent per figure and whether it is larger "
      "than the trials' 95% confidence intervals. See docs/report.md.");
  sub->add_option("A", o->a, "The baseline result file (- for standard input; at most 1 GiB)")
      ->required()
      ->option_text("A.json");
  sub->add_option("B", o->b, "The result file compared with it (at most 1 GiB)")
      ->required()
      ->option_text("B.json");
  sub->callback(
      [o, action] { *action = [o](const RunContext&, Document&) { return RunCompare(*o); }; });
}

}  // namespace writelab
