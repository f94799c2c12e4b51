// SPDX-License-Identifier: MIT
// The fsync experiment's warm-up: the background runs for --bg-warmup
// before the rows measure, and with --bg-warmup auto until its writes reach
// the device. Internal to the fsync experiment.
#pragma once

#include <optional>
#include <string>

#include "core/run_context.h"
#include "experiments/fsync/background.h"
#include "experiments/fsync/spec.h"

namespace writelab {

// Waits ns (the load, if any, must not exit meanwhile: else why it did).
// With spec.bg_warmup_auto and a load that has written, it then waits
// until writeback has begun: Dirty + Writeback at spec.warmup_threshold,
// or device (a disk's name, "" for none) written a quarter of it since the
// warm-up began; at most 30 s. *note (if given) says how long that took,
// or that the cap came first ("not reached").
std::optional<std::string> WarmUp(const FsyncSpec& spec, BackgroundLoad* load, uint64_t ns,
                                  const std::string& device, const RunContext& ctx,
                                  std::string* note = nullptr);

}  // namespace writelab
