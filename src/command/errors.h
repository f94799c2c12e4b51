// SPDX-License-Identifier: MIT
// How a command says no: one line on stderr, and the exit codes
// (core/exit_codes.h: 0 success, 1 run failed or interrupted, 2 usage).
#pragma once

#include <optional>
#include <string>

#include "core/exit_codes.h"
#include "core/run_context.h"

namespace writelab {

// Prints "writelab: MESSAGE" as one line on stderr.
void PrintError(const std::string& message);
// PrintError, then kExitUsage.
int UsageError(const std::string& message);
// The last word on a command's usage error (nullopt: none) before it runs:
// on one machine, UsageError for one; under MPI, AgreeToStart (every rank
// learns of any rank's error, and rank 0 prints it). -1 to go on, else the
// exit code to return.
int AgreeOrRefuse(const RunContext& ctx, const std::optional<std::string>& usage);

}  // namespace writelab
