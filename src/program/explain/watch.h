// SPDX-License-Identifier: MIT
// `writelab explain -- CMD` / `--pid PID`: the session that watches a
// program, and the document it makes (docs/explain.md, "Explaining your own
// program"; docs/results.md, "explain documents").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/run_context.h"
#include "program/explain/rows.h"
#include "program/explain/spec.h"
#include "writelab/error.h"

namespace writelab {

// Runs CMD (or attaches to PID), collects until it exits, the duration
// ends or an interrupt, and appends the results to doc: "explain" (a row
// per type of call), "explain-files" (a row per file), "explain-slow"
// (the slowest calls) and "explain-culprits" (who made them wait). *exit_status: CMD's (128 +
// signal when a signal ended it). An error: nothing could be watched (not root, no BTF, CMD cannot
// be run); an interrupt keeps what was measured.
Status RunExplainProgram(const ProgramSpec& spec, const RunContext& ctx, Document& doc,
                         int* exit_status);

// Every call kept (durability calls, and those at least --slow long), one
// CSV line each: who, which, when (CLOCK_MONOTONIC ns), how long, its parts
// and overlaps in ns (split_parts.h), its file.
std::string CallsCsv(const ProgramTrace& trace);

// The four results from what was collected (also for tests).
void FillExplainDocument(const ProgramSpec& spec, const ProgramTrace& trace,
                         const std::vector<std::string>& missing, std::optional<int> exit_status,
                         bool interrupted, Document& doc);

}  // namespace writelab
