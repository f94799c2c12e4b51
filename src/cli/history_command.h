// SPDX-License-Identifier: MIT
// `writelab history`: what its subcommands share (history_command.cc adds
// list, show, export, import and forget; history_query_command.cc trend and
// check).
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <expected>
#include <string>

#include "experiments/experiment.h"
#include "history/store.h"

namespace writelab {

// --history FILE on a history subcommand.
void AddHistoryFileOption(CLI::App& sub, std::string& file);

// The history a subcommand reads (file, else WRITELAB_HISTORY, else the
// default); created only when create. The error is one line to print.
std::expected<HistoryStore, std::string> OpenHistoryFor(const std::string& file, bool create);

// A RUN argument: a run id, a positive whole number.
std::expected<int64_t, std::string> ParseRunId(const std::string& text);

void AddHistoryQueryCommands(CLI::App& history, CommandAction* action);

}  // namespace writelab
