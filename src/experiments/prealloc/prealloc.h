// SPDX-License-Identifier: MIT
// `writelab prealloc`: what preallocation costs, after the ext4 thread on
// linux-fsdevel (Zheng Liu, answered by Andreas Dilger, April 2012): make a
// 256 MiB file by fallocate or by dd, then 2000 sync+direct 4 KiB writes at a
// 16-block stride. docs/prealloc.md explains every row and figure.
#pragma once

#include <cstdint>
#include <expected>
#include <span>
#include <string>
#include <vector>

#include "core/choice.h"
#include "core/result.h"
#include "core/run_context.h"
#include "experiments/prealloc/figures.h"
#include "writelab/error.h"
#include "writelab/preallocate.h"

namespace writelab {

// The library's modes (writelab/preallocate.h); the experiment runs every
// one but kBest, which is one of the others chosen at run time.
using PreallocMode = PreallocateMode;

using PreallocModeInfo = Choice<PreallocMode>;
std::span<const PreallocModeInfo> PreallocModes();

struct PreallocSpec {
  std::string dir;
  uint64_t file_size = 256u << 20;
  int writes = 2000;
  int rounds = 1;  // trials per mode; the order of the modes rotates each round
  uint64_t block = 4096;
  uint64_t stride = 16;  // in blocks
  std::string flags = "dsync,direct";
  std::vector<PreallocMode> modes;  // empty: all
  std::vector<int64_t> zeroout_kb;  // empty: leave extent_max_zeroout_kb alone
};

// Bounds of the workload's options (docs/prealloc.md); the file must hold
// (writes - 1) x stride x block + block bytes, computed without overflow.
inline constexpr int kMaxPreallocWrites = 10'000'000;
inline constexpr uint64_t kMaxPreallocStride = 1u << 30;

// Usage errors; fills defaults. Resolves flags into open(2) flags.
std::expected<int, std::string> PreallocOpenFlags(const std::string& flags);
std::expected<void, std::string> ValidatePreallocSpec(PreallocSpec& spec);

Status RunPrealloc(const PreallocSpec& spec, const RunContext& ctx, ExperimentResult& out);

}  // namespace writelab
