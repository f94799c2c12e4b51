// SPDX-License-Identifier: MIT
// A command run on many ranks (docs/mpi.md), from the command line's side:
// the ranks agree to start, meet (shared directory, clocks, hosts), run each
// experiment together, and bring what they measured to rank 0, which alone
// prints the tables and writes the document. Every function here is a
// collective: every rank calls it, in the same order.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/run_context.h"
#include "mpi/team.h"
#include "writelab/error.h"

namespace writelab {

// Before anything runs: each rank's usage error (nullopt for none), its
// writelab version and its command line (args without argv[0]) are compared
// on rank 0. Nullopt: every rank may start. Otherwise the exit code every
// rank returns, the reason printed once, by rank 0: the first rank's error
// ("rank 2: --dir: '/x' is not a directory" when the ranks disagree), a
// different version, or other options than rank 0's (--dir's value may
// differ: the same storage may be mounted at different paths).
std::optional<int> AgreeToStart(Team& team, const std::optional<std::string>& usage_error,
                                const std::vector<std::string>& args);

// After the agreement: checks that every rank sees rank 0's dir (a file rank
// 0 writes there, with a random token, is looked for by the others), measures
// every rank's clock against rank 0's, and on rank 0 fills doc.ranks and
// doc.mpi_library. An error (the same on every rank; a usage error) when a
// rank does not see the file: "--dir /x is not shared: rank 1 (b) ...".
std::optional<std::string> MeetRanks(Team& team, const std::string& dir, Document& doc);

using RankExperiment = std::function<Status(const RunContext&, ExperimentResult&)>;

// Runs one experiment on every rank, each into a result of its own; then on
// rank 0 appends to doc the aggregate (ExperimentResult::ranks) and every
// rank's result (ExperimentResult::rank), and returns the run's status: the
// first rank that failed ("rank 2 (b): window: pwrite ...: No space left on
// device"), or "interrupted". Other ranks return their own status. After an
// interrupt that some rank does not answer in time, rank 0 keeps its own
// result and says which ranks are missing.
Status RunOnRanks(Team& team, const RunContext& ctx, Document& doc, const RankExperiment& run);

// The exit code rank 0 decided, on every rank (so mpirun exits with it).
int ShareExitCode(Team& team, int code);

}  // namespace writelab
