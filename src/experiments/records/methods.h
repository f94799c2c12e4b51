// SPDX-License-Identifier: MIT
// The measured loops of `writelab records`, one per method: each writes the
// planned lines to fd, applies the sync choice, and times the whole pass.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "core/outcome.h"
#include "core/result.h"
#include "core/run_context.h"
#include "experiments/records/corpus.h"
#include "experiments/records/spec.h"

namespace writelab {

struct MethodEnv {
  const Corpus& corpus;
  const OutputPlan& plan;
  const RecordSyncChoice& sync;
  int fd;  // opened with the sync choice's open flags, empty, offset 0
  uint64_t buffer;
  unsigned qd;
  unsigned batch;  // io_uring submissions of at most this many buffers (0: qd)
  const RunContext& ctx;
};

struct MethodRun {
  Outcome outcome;
  uint64_t start_ns = 0;     // when the pass began (NowNs), for MPI's aggregate
  uint64_t ns = 0;           // the pass: first write to the last flush and sync
  uint64_t write_calls = 0;  // write system calls (io_uring: io_uring_enter calls)
  uint64_t sync_calls = 0;   // fdatasync / fsync calls
  uint64_t short_writes = 0;
  uint64_t retries = 0;                     // EINTR (io_uring: also EAGAIN) retries
  std::string note;                         // "stdio buffer 4096 bytes"
  std::map<std::string, double> explained;  // --explain, synchronous rows: kExplainFigures
};

// Marks r as interrupted (a partial pass is no measurement) and returns it.
inline MethodRun& Interrupted(MethodRun& r) {
  r.outcome.interrupted = true;
  return r;
}

MethodRun RunRecordMethod(RecordMethod method, const MethodEnv& env);

}  // namespace writelab
