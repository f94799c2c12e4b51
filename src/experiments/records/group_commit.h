// SPDX-License-Identifier: MIT
// `writelab records --commit`: T threads commit records to one file, each
// waiting until its record is durable; per-thread fdatasync against the
// library's group commit, for each T of --threads.
#pragma once

#include "core/result.h"
#include "core/run_context.h"
#include "experiments/records/corpus.h"
#include "experiments/records/spec.h"

namespace writelab {

Status RunGroupCommit(const RecordsSpec& spec, const Corpus& corpus, const RunContext& ctx,
                      ExperimentResult& out);

}  // namespace writelab
