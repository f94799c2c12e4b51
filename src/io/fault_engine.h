// SPDX-License-Identifier: MIT
// Fault injection, for tests: fail the N-th write, sync, preallocate or
// advise of a run with a chosen errno, as a failing disk or full file system
// would, and see that the experiment reports it.
//
// The CLI builds an injector from WRITELAB_FAULT=OP:N:ERRNO[@E] (docs/results.md)
// and the experiments wrap each engine they make (RunContext::Engine). N
// counts the operations of that kind from 1, across all engines of the run,
// or with @E within the E-th engine made only (for rows that run for a time,
// whose counts are not known ahead). So a test can let the first rows finish
// and fail a later one. Without the variable nothing is wrapped: the measured
// path is the plain engine.
#pragma once

#include <atomic>
#include <cstdint>
#include <expected>
#include <memory>
#include <string_view>

#include "io/engine.h"
#include "writelab/error.h"

namespace writelab {

enum class FaultOp { kWrite, kSync, kPreallocate, kAdvise };

struct FaultPlan {
  FaultOp op = FaultOp::kWrite;
  uint64_t nth = 1;     // the first operation of the kind is 1
  int error = 0;        // errno the failed operation returns
  uint64_t engine = 0;  // count only in the engine-th engine wrapped (from 1); 0: all
};

// "write:3:EIO", "sync:1:ENOSPC", "preallocate:2:28", "write:5:EIO@2". OP is
// write, sync, preallocate or advise; ERRNO a name or a number.
Result<FaultPlan> ParseFaultPlan(std::string_view text);

class FaultInjector {
 public:
  explicit FaultInjector(FaultPlan plan) : plan_(plan) {}
  // engine, wrapped: its operations count toward the plan and the N-th fails.
  std::unique_ptr<WriteEngine> Wrap(std::unique_ptr<WriteEngine> engine);
  // Counts one operation of kind op in the engine-th engine wrapped; true
  // when it is the one to fail.
  bool Fire(FaultOp op, uint64_t engine);
  int error() const { return plan_.error; }
  // Operations of the plan's kind seen so far.
  uint64_t seen() const { return seen_.load(std::memory_order_relaxed); }

 private:
  FaultPlan plan_;
  std::atomic<uint64_t> seen_{0};
  std::atomic<uint64_t> engines_{0};
};

}  // namespace writelab
