// SPDX-License-Identifier: MIT
// `writelab stream`: streaming-write strategies, after overwrite.c (LKML
// "Linux 2.6.29", April 2009; Linus Torvalds, Jeff Garzik). docs/stream.md
// explains every row and figure.
#pragma once

#include <cstdint>
#include <expected>
#include <span>
#include <string>
#include <vector>

#include "core/choice.h"
#include "core/result.h"
#include "core/run_context.h"
#include "experiments/stream/figures.h"
#include "experiments/stream/spec.h"
#include "writelab/error.h"

namespace writelab {

// Checks the spec and fills defaults; an error is a usage error (exit 2).
std::expected<void, std::string> ValidateStreamSpec(StreamSpec& spec);

// --size auto: two and a half times the device's dirty background threshold
// (where the kernel starts writing back: past it a stream makes the
// writeback that stalls a bystander), rounded up to whole blocks, within a
// quarter of the free space and 30 GB; 1 GiB when the threshold is not
// known (0). At least one block.
uint64_t AutoStreamSize(uint64_t threshold, uint64_t free_bytes, uint64_t block);
// How AutoStreamSize chose, for a parameter (size_from, fsync's
// bg_span_from): "auto: 2.5x the dirty background threshold of 2.29 GiB
// (how), within a quarter of the free space (…) and 30 GB"; how may be "".
std::string AutoStreamSizeFrom(uint64_t threshold, const std::string& how, uint64_t free_bytes);
inline constexpr uint64_t kAutoStreamLimit = 30'000'000'000;

// Runs every strategy `rounds` times in rotated order and fills out. On a
// run failure out holds every row measured so far and the error says why.
Status RunStream(const StreamSpec& spec, const RunContext& ctx, ExperimentResult& out);

}  // namespace writelab
