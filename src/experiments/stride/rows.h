// SPDX-License-Identifier: MIT
// How a `writelab stride` step becomes a row: throughput, system calls per
// write, latency percentiles and, with a device, what the block layer did
// (writes, merges, KiB per request). Internal to the stride experiment; its
// own file so that the row building is tested without a device.
#pragma once

#include <string>

#include "core/result.h"
#include "experiments/stride/step.h"

namespace writelab {

// The step's row. An ok step gets figures, its latency and its timeline
// (moved out of r); any other gets only name, status, errno and message.
Row StrideRow(const std::string& name, StepResult& r);
// Over rounds: figures are medians with min-max over the trials, latencies
// merged, each trial's timeline kept (its round is its trial). The first
// trial that was not ok decides the row's status.
Row StrideRow(const std::string& name, std::vector<StepResult>& trials);

}  // namespace writelab
