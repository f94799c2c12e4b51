// SPDX-License-Identifier: MIT
// The command line: the table of every command (cli/commands.h), parsing,
// and dispatch; the kit every command is made of is in src/command/.
#pragma once

#include "command/cli_fwd.h"

#include "command/definition.h"

namespace writelab {

// The commands that are not experiments (each experiment adds its own:
// ExperimentDef::add_command, cli/commands.h); the action is stored in
// *action when that subcommand is the one parsed.
void AddSurveyCommand(CLI::App& app, CommandAction* action);
void AddReportCommand(CLI::App& app, CommandAction* action);
void AddCompareCommand(CLI::App& app, CommandAction* action);
void AddCleanupCommand(CLI::App& app, CommandAction* action);
void AddHistoryCommand(CLI::App& app, CommandAction* action);

int RunCli(int argc, char** argv);

}  // namespace writelab
