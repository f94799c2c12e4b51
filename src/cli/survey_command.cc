// SPDX-License-Identifier: MIT
// `writelab survey`: every experiment, short, on one directory's file
// system, then recommendations backed by what was just measured. No root
// needed, nothing switched: test beds and schedulers are for the
// experiments' own commands. As root it adds --explain's attribution.
#include <memory>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/help_format.h"
#include "command/errors.h"
#include "command/outputs.h"
#include "command/survey.h"
#include "core/units.h"

namespace writelab {
namespace {

// "stream, fsync, records, prealloc and stride": the experiments it runs.
std::string ExperimentList() {
  std::vector<std::string> names;
  for (const ExperimentDef* def : Experiments())
    if (def->survey) names.emplace_back(def->report.name);
  return ListInWords(names);
}

}  // namespace

void AddSurveyCommand(CLI::App& app, CommandAction* action) {
  auto o = std::make_shared<SurveyOptions>();
  o->out.json = "writelab-survey.json";
  CLI::App* sub = app.add_subcommand(
      "survey",
      "The first command to run: short runs of " + ExperimentList() +
          " on DIR's file system (about two minutes here, several GiB written: it says how "
          "much and where before it starts; no root), one results file, and "
          "recommendations backed by the numbers just measured.");
  sub->add_option("--dir", o->dir, "Directory on the file system to survey")->capture_default_str();
  AddOutputOptions(*sub, o->out);
  sub->add_flag("-v,--verbose", o->verbose,
                "Print every step's full table, legend and notes (default: the findings and "
                "each step's headline figure, in about 40 lines)");
  sub->add_option("-o,--html", o->html, "Write the HTML report with charts to FILE (\"\" for none)")
      ->capture_default_str();
  sub->callback([o, action] {
    o->out.brief_width = o->verbose ? 0 : HelpWidth();
    *action = [o](const RunContext& ctx, Document& doc) {
      return RunSurvey(*o, Experiments(), Reports(), ctx, doc);
    };
  });
}

}  // namespace writelab
