// SPDX-License-Identifier: MIT
// `writelab stride`: strided direct writes per I/O scheduler, after
// "submit_bio() question" (Damon LaCrosse, kernelnewbies, September 2006):
// 4 KiB writes at sector step x i, 3 s per step, under each scheduler.
// docs/stride.md explains every row and figure.
#pragma once

#include <cstdint>
#include <expected>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/run_context.h"
#include "experiments/stride/figures.h"
#include "experiments/stride/spec.h"
#include "writelab/error.h"

namespace writelab {

std::expected<void, std::string> ValidateStrideSpec(StrideSpec& spec);

// path: the device or file to write (for a test bed, its loop device).
Status RunStride(const StrideSpec& spec, const std::string& path, const RunContext& ctx,
                 ExperimentResult& out);

}  // namespace writelab
