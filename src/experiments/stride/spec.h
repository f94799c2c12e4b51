// SPDX-License-Identifier: MIT
// The spec of `writelab stride` and the tables its options choose from: the
// types its own files share (step.h, steps_option.cc), apart from the orchestrator's
// Validate and Run, so that the arrows between its files run one way.
#pragma once

#include <cstdint>
#include <expected>
#include <string>
#include <vector>
#include "core/result.h"
#include "writelab/error.h"

namespace writelab {

struct StrideSpec {
  std::string device;  // a raw block device...
  std::string file;    // ...or a file, filled with zeros up to span first
  bool force = false;  // overwrite a device that holds a signature
  uint64_t block = 4096;
  uint64_t unit = 512;  // a step counts units: 512-byte sectors as the original
  std::vector<uint64_t> steps;
  uint64_t duration_ns = 3'000'000'000;
  int rounds = 1;                // trials per step; the order of the steps rotates each round
  std::string engine = "psync";  // psync (queue depth 1) or io_uring
  std::vector<unsigned> qds;     // io_uring depths; psync: 1
  // io_uring: the most requests one io_uring_enter submits; 0 is the queue
  // depth (the ring filled, then submitted at once). Empty: {0}.
  std::vector<unsigned> batches;
  uint64_t span = 0;  // bytes the offsets cover before wrapping; 0: device size / 1 GiB
  uint64_t interval_ns = 500'000'000;
  bool pattern = false;  // stamp each block with (op index, step) for verification
};

// The largest step (in units: 512 MiB apart at 512-byte units), and the
// most steps one run takes (each runs --duration, 3 s by default: 3.4 hours).
inline constexpr uint64_t kMaxStep = 1u << 20;
inline constexpr size_t kMaxSteps = 4096;
inline constexpr uint64_t kMaxStrideBlock = 64u << 20;
inline constexpr uint64_t kMaxStrideUnit = 1u << 30;
inline constexpr uint64_t kMaxStrideSpan = 1ull << 60;

// "1-16,32,64" → {1..16, 32, 64}; error text names the bad part. Numbers are
// decimal digits only, 1..kMaxStep; at most kMaxSteps steps in all.
std::expected<std::vector<uint64_t>, std::string> ParseSteps(const std::string& text);

}  // namespace writelab
