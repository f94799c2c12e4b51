// SPDX-License-Identifier: MIT
// `writelab fsync`: sync latency under background writers, after
// fsync-tester (Theodore Ts'o, March 2009; the random writer by Chris Mason)
// as run by Jens Axboe for "[PATCH 0/8][RFC] IO latency/throughput fixes"
// (LKML, April 2009). docs/fsync.md explains every row and figure.
#pragma once

#include <cstdint>
#include <expected>
#include <string>
#include <vector>

#include "core/choice.h"
#include "core/histogram.h"
#include "core/outcome.h"
#include "core/result.h"
#include "core/run_context.h"
#include "experiments/fsync/background.h"
#include "experiments/fsync/figures.h"
#include "experiments/fsync/spec.h"
#include "io/engine.h"
#include "writelab/error.h"

namespace writelab {

std::expected<void, std::string> ValidateFsyncSpec(FsyncSpec& spec);

Status RunFsync(const FsyncSpec& spec, const RunContext& ctx, ExperimentResult& out);

}  // namespace writelab
