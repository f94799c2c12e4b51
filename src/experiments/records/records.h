// SPDX-License-Identifier: MIT
// `writelab records`: small-record write strategies, after writev-speed.c
// (Andrew Morton, "Re: [patch] readv/writev rework", LKML, September 2002),
// and group commit for concurrent committers. docs/records.md explains every
// row and figure.
#pragma once

#include <cstdint>
#include <expected>
#include <span>
#include <string>
#include <vector>

#include "core/choice.h"
#include "core/result.h"
#include "core/run_context.h"
#include "experiments/records/figures.h"
#include "experiments/records/spec.h"
#include "writelab/error.h"

namespace writelab {

// Checks the spec and fills defaults; an error is a usage error (exit 2).
std::expected<void, std::string> ValidateRecordsSpec(RecordsSpec& spec);

// Runs the spec (the methods, or with spec.commit the group-commit rows) and
// fills out. Every row is present; on a run failure the error says why.
Status RunRecords(const RecordsSpec& spec, const RunContext& ctx, ExperimentResult& out);

}  // namespace writelab
