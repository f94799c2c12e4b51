// SPDX-License-Identifier: MIT
// One step of `writelab stride`: write --block at step x i x unit for
// --duration, at one queue depth, and measure what the device did.
// Internal to the stride experiment.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "core/histogram.h"
#include "core/outcome.h"
#include "core/result.h"
#include "core/run_context.h"
#include "experiments/stride/spec.h"

namespace writelab {

struct StepEnv {
  const StrideSpec& spec;
  const RunContext& ctx;
  int fd;              // the target, open O_DIRECT
  uint64_t span;       // offsets wrap to 0 past this
  size_t alignment;    // the device's logical block size
  std::string device;  // for /sys/block/DEV/stat; "" for none
};

struct StepResult {
  Outcome outcome;
  uint64_t ops = 0;
  uint64_t bytes = 0;
  uint64_t syscalls = 0;  // pwrite or io_uring_enter calls the engine made
  double seconds = 0;
  Histogram latency;
  bool have_device = false;
  uint64_t device_writes = 0;
  uint64_t device_merges = 0;
  uint64_t device_bytes = 0;
  Series timeline;
  // --explain: the attribution figures (explain/figures.h) and the
  // request sizes; empty without it.
  std::map<std::string, double> explained;
  Series request_sizes;
};

// batch: the most io_uring requests submitted by one io_uring_enter (0: qd).
StepResult RunStep(const StepEnv& env, uint64_t step, unsigned qd, unsigned batch);

}  // namespace writelab
